package deploy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"gopkg.in/yaml.v3"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// promtool is Prometheus' own rule checker, from PATH or where
// scripts/install-test-tools.sh (run by make test) puts it. Without it
// the tests fail: the alert rules are checked or the suite is red.
func promtool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	p := filepath.Join(cache, "compactd", "bin", "promtool")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("promtool is needed to check deploy/alerts.yaml and is neither on PATH nor at %s: run bash scripts/install-test-tools.sh", p)
	}
	return p
}

func TestTheAlertRulesPassPromtool(t *testing.T) {
	bin := promtool(t)
	out, err := exec.Command(bin, "check", "rules", "alerts.yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules alerts.yaml: %v\n%s", err, out)
	}
	// Each alert fires on its event and not on a healthy daemon.
	out, err = exec.Command(bin, "test", "rules", "alerts_test.yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules alerts_test.yaml: %v\n%s", err, out)
	}
}

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert string `yaml:"alert"`
			Expr  string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func alertExprs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.Unmarshal(data, &rf); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			out["alert "+r.Alert] = r.Expr
		}
	}
	return out
}

// dashboardExprs are the queries of the dashboard's panels and template
// variables.
func dashboardExprs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	out := map[string]string{}
	for _, p := range d.Panels {
		for i, tg := range p.Targets {
			out[fmt.Sprintf("panel %q query %d", p.Title, i)] = tg.Expr
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			// label_values(<series selector>, label) names a selector.
			sel := strings.TrimSuffix(strings.TrimPrefix(v.Definition, "label_values("), ")")
			if i := strings.LastIndex(sel, ","); i >= 0 {
				sel = sel[:i]
			}
			out["variable "+v.Name] = sel
		}
	}
	return out
}

// grafanaToPromQL replaces Grafana's variables by values PromQL accepts.
func grafanaToPromQL(expr string) string {
	return strings.NewReplacer("$__rate_interval", "5m", "$warehouse", ".*", "$table", ".*").Replace(expr)
}

// The dashboard's queries are PromQL: promtool checks them as the
// expressions of recording rules.
func TestTheDashboardQueriesParse(t *testing.T) {
	bin := promtool(t)
	exprs := dashboardExprs(t)
	if len(exprs) < 20 {
		t.Fatalf("the dashboard has %d queries", len(exprs))
	}
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range exprs {
			if !yield(k) {
				return
			}
		}
	})
	for i, k := range names {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:query_%d", i), Expr: grafanaToPromQL(exprs[k])})
	}
	data, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "check", "rules", f).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules over the dashboard's queries: %v\n%s\n%s", err, out, data)
	}
}

// metricNames are the metric names an expression uses: the names before
// a selector's braces and every name with a prefix of compactd's or its
// process collectors'.
func metricNames(expr string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{`).FindAllStringSubmatch(expr, -1) {
		out = append(out, m[1])
	}
	out = append(out, regexp.MustCompile(`\b(?:compactd|process|go)_[a-zA-Z0-9_:]+`).FindAllString(expr, -1)...)
	slices.Sort(out)
	return slices.Compact(out)
}

// failFirst fails the first compaction of each table with a transient
// error (a retry the metrics count), then runs the real one.
type failFirst struct {
	sched.PackageRunner
	failed atomic.Bool
}

func (r *failFirst) Compact(ctx context.Context, t *table.Table, o compact.Options) (*compact.Summary, error) {
	if r.failed.CompareAndSwap(false, true) {
		return nil, &table.ConflictError{Table: t.FullName(), Reason: "injected"}
	}
	return compact.Run(ctx, t, o)
}

// Every metric the alert rules and the dashboard use is one compactd
// exports: the registry of a short daemon run (compaction, a retry,
// expiration, orphan cleanup), with the process collectors the daemon
// command adds, holds each of them.
func TestTheAlertsAndTheDashboardUseOnlyExportedMetrics(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	fields := table.RowType{
		{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}},
		{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
	}
	s, err := table.NewTableSchema(0, fields, 1, nil, []string{"k"}, map[string]string{"bucket": "2", "write-only": "true"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(ctx, fileio.NewLocal(), wh, "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	w, err := write.NewWriter(ctx, tb, "writer")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for c := 0; c < 7; c++ {
		for i := 0; i < 20; i++ {
			if err := w.Write(table.RowKindInsert, table.Row{rng.Int64N(100), rng.Int64()}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	cfg := &policy.Config{Path: filepath.Join(dir, "compactd.yaml"), Workers: 2,
		Tick: policy.Duration(50 * time.Millisecond), DiscoveryInterval: policy.Duration(200 * time.Millisecond),
		GracePeriod: policy.Duration(5 * time.Second), LockLease: policy.Duration(time.Second),
		Retry:      policy.Retry{Initial: policy.Duration(50 * time.Millisecond), Max: policy.Duration(200 * time.Millisecond), Attempts: 3},
		Warehouses: []policy.Warehouse{{Path: wh}},
		Defaults: map[string]string{"compact.schedule": "@every 1s", "expire.schedule": "@every 1s", "orphan.schedule": "@every 1s",
			"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "snapshot.time-retained": "1ms"}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	d, err := sched.New(cfg, sched.Options{Registerer: reg, Runner: &failFirst{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx) }()
	exported := map[string]bool{}
	gather := func() {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			exported[f.GetName()] = true
			if f.GetType().String() == "HISTOGRAM" {
				for _, suffix := range []string{"_bucket", "_count", "_sum"} {
					exported[f.GetName()+suffix] = true
				}
			}
		}
	}
	used := map[string][]string{}
	for where, expr := range dashboardExprs(t) {
		for _, n := range metricNames(expr) {
			used[n] = append(used[n], where)
		}
	}
	for where, expr := range alertExprs(t) {
		for _, n := range metricNames(expr) {
			used[n] = append(used[n], where)
		}
	}
	missing := func() []string {
		gather()
		var out []string
		for n := range used {
			if !exported[n] {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return out
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(missing()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	for _, n := range missing() {
		t.Errorf("%s (used by %s) is not exported by compactd", n, strings.Join(used[n], ", "))
	}
	if len(used) < 25 {
		t.Errorf("only %d metric names found in the alerts and the dashboard: %v", len(used), used)
	}
}
