package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEffectivePolicyTakesEachValueFromTheStrongestLayer(t *testing.T) {
	tableOpts := map[string]string{
		"snapshot.num-retained.min":  "5",         // Paimon key from the table
		"compactd.compact.schedule":  "@every 2m", // compactd key carried by the table
		"compactd.orphan.older-than": "48h",       // overridden below
		"compactd.unknown":           "ignored",   // not a policy key
		"bucket":                     "4",         // not a policy key
	}
	cfg := map[string]string{"expire.schedule": "@every 5m", "compact.schedule": "@every 30s"}
	over := map[string]string{"orphan.older-than": "72h", "snapshot.num-retained.max": "20"}
	e := Resolve("shop.orders", tableOpts, cfg, over)
	want := map[string]Value{
		"snapshot.num-retained.min": {Value: "5", Source: FromTable},
		"compact.schedule":          {Value: "@every 2m", Source: FromTable},
		"orphan.older-than":         {Value: "72h", Source: FromOverride},
		"snapshot.num-retained.max": {Value: "20", Source: FromOverride},
		"expire.schedule":           {Value: "@every 5m", Source: FromConfig},
		"expire.enabled":            {Value: "true", Source: FromDefault},
	}
	for k, w := range want {
		got := e.Values[k]
		if got.Value != w.Value || got.Source != w.Source {
			t.Errorf("%s = %q from %s, want %q from %s", k, got.Value, got.Source, w.Value, w.Source)
		}
	}
	if _, ok := e.Values["unknown"]; ok {
		t.Error("a non-policy compactd.* table option became a policy value")
	}
	po := e.PaimonOverrides()
	if po["snapshot.num-retained.max"] != "20" || po["snapshot.num-retained.min"] != "" {
		t.Errorf("Paimon overrides = %v, want only the overridden retention", po)
	}
	if m := e.MergedTableOptions(); m["snapshot.num-retained.min"] != "5" || m["snapshot.num-retained.max"] != "20" || m["bucket"] != "4" {
		t.Errorf("merged options = %v", m)
	}
	j, err := e.Job(Orphan)
	if err != nil || !j.Enabled || j.OlderThan != 72*time.Hour || j.Spec != "@daily" {
		t.Errorf("orphan job = %+v, %v", j, err)
	}
	c, err := e.Job(Compact)
	if err != nil || c.Schedule == nil {
		t.Fatalf("compact job = %+v, %v", c, err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if next := c.Schedule.Next(base); next.Sub(base) != 2*time.Minute {
		t.Errorf("@every 2m fires after %s", next.Sub(base))
	}
}

func TestValidationReportsEveryProblemAtOnce(t *testing.T) {
	err := ValidateValues(map[string]string{
		"compact.enabled":           "yes please",
		"compact.schedule":          "every tuesday",
		"compact.max-buckets":       "-1",
		"orphan.older-than":         "5m",
		"no.such.key":               "1",
		"tag-expire.enabled":        "maybe",
		"snapshot.num-retained.min": "abc",
		"full-compaction.schedule":  "0 3 * * *",
		"compact.max-bytes":         "256 mb",
	}, map[string]string{"bucket": "2"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"compact.enabled", "compact.schedule", "compact.max-buckets", "orphan.older-than",
		"no.such.key", "tag-expire", "snapshot.num-retained.min"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
	for _, ok := range []string{"full-compaction.schedule", "compact.max-bytes", "partition-expire"} {
		if strings.Contains(err.Error(), ok) {
			t.Errorf("valid %s reported:\n%v", ok, err)
		}
	}
}

func TestRetentionOverridesAreCheckedAgainstTheTableOptions(t *testing.T) {
	// max below the table's min is only wrong in the table's context.
	err := ValidateValues(map[string]string{"snapshot.num-retained.max": "3"}, map[string]string{"snapshot.num-retained.min": "5"})
	if err == nil || !strings.Contains(err.Error(), "retain") {
		t.Fatalf("want a retention error, got %v", err)
	}
	if err := ValidateValues(map[string]string{"snapshot.num-retained.max": "30"}, map[string]string{"snapshot.num-retained.min": "5"}); err != nil {
		t.Fatal(err)
	}
}

func TestStoreUpdatesPersistAndAnInvalidUpdateWritesNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.yaml")
	validate := func(m map[string]string) error { return ValidateValues(m, nil) }
	if _, err := Update(file, "shop.orders", map[string]string{"compact.schedule": "@every 10s", "orphan.older-than": "48h"}, validate); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(file)
	if _, err := Update(file, "shop.orders", map[string]string{"compact.schedule": "nonsense"}, validate); err == nil {
		t.Fatal("invalid update accepted")
	}
	after, _ := os.ReadFile(file)
	if string(before) != string(after) {
		t.Fatal("an invalid update changed the store")
	}
	if _, err := Update(file, "shop.orders", map[string]string{"orphan.older-than": ""}, validate); err != nil {
		t.Fatal(err)
	}
	s, err := LoadStore(file)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Overrides("shop.orders")
	if len(got) != 1 || got["compact.schedule"] != "@every 10s" {
		t.Fatalf("overrides = %v", got)
	}
	if len(s.Overrides("other.table")) != 0 {
		t.Fatal("another table has overrides")
	}
}

func TestConfigLoadsWithDefaultsAndRejectsTyposAndBadPatterns(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "c.yaml")
	os.WriteFile(good, []byte("warehouses:\n  - path: wh\n    include: [\"shop.*\"]\n    exclude: [\"shop.tmp_*\"]\ndefaults:\n  compact.schedule: \"@every 5s\"\n"), 0o644)
	c, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != DefaultListen || c.Workers != 2 || c.PolicyPath() != filepath.Join(dir, "compactd-policies.yaml") ||
		c.WarehousePath(c.Warehouses[0]) != filepath.Join(dir, "wh") {
		t.Fatalf("config = %+v", c)
	}
	if c.HTTP != (HTTP{ReadHeaderTimeout: Duration(DefaultHTTPReadHeaderTimeout), ReadTimeout: Duration(DefaultHTTPReadTimeout),
		WriteTimeout: Duration(DefaultHTTPWriteTimeout), IdleTimeout: Duration(DefaultHTTPIdleTimeout),
		MaxHeaderBytes: DefaultHTTPMaxHeaderBytes, MaxConnections: DefaultHTTPMaxConnections}) {
		t.Fatalf("http limits without an http section: %+v", c.HTTP)
	}
	set, err := ParseConfig([]byte("http:\n  idle-timeout: 5s\n  max-connections: 8\nwarehouses:\n  - path: wh\n"))
	if err != nil || set.HTTP.IdleTimeout.D() != 5*time.Second || set.HTTP.MaxConnections != 8 ||
		set.HTTP.ReadTimeout.D() != DefaultHTTPReadTimeout {
		t.Fatalf("http section: %+v, %v", set.HTTP, err)
	}
	w := c.Warehouses[0]
	for name, want := range map[string]bool{"shop.orders": true, "shop.tmp_x": false, "other.orders": false} {
		if w.Selects(name) != want {
			t.Errorf("Selects(%s) = %v", name, !want)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("workerz: 3\nwarehouses:\n  - path: wh\n"), 0o644)
	if _, err := LoadConfig(bad); err == nil || !strings.Contains(err.Error(), "workerz") {
		t.Fatalf("typo accepted: %v", err)
	}
	bad2 := filepath.Join(dir, "bad2.yaml")
	os.WriteFile(bad2, []byte("warehouses:\n  - path: wh\n    include: [\"[\"]\ndefaults:\n  compact.enabled: maybe\n"), 0o644)
	_, err = LoadConfig(bad2)
	if err == nil || !strings.Contains(err.Error(), "pattern") || !strings.Contains(err.Error(), "compact.enabled") {
		t.Fatalf("want both problems, got %v", err)
	}
}

func TestTablesWhoseWritersCompactAreNotCompactedByDefault(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    map[string]string
		over    map[string]string
		want    string
		wantSrc Source
	}{
		{"a write-only table is compacted", map[string]string{"write-only": "true"}, nil, "true", FromDefault},
		{"a table without write-only is not", map[string]string{}, nil, "false", FromTable},
		// Postponed-bucket writers never compact: a dedicated job must.
		{"a postponed-bucket table is", map[string]string{"bucket": "-2"}, nil, "true", FromDefault},
		{"write-only=false is not", map[string]string{"write-only": "false"}, nil, "false", FromTable},
		{"the table may opt in explicitly", map[string]string{"compactd.compact.enabled": "true"}, nil, "true", FromTable},
		{"an override wins", map[string]string{}, map[string]string{"compact.enabled": "true"}, "true", FromOverride},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Resolve("db.t", c.opts, nil, c.over).Values["compact.enabled"]
			if v.Value != c.want || v.Source != c.wantSrc {
				t.Fatalf("compact.enabled = %s from %s, want %s from %s", v.Value, v.Source, c.want, c.wantSrc)
			}
		})
	}
}

// The jobs read Paimon options through table.ParseOptions (Java's rules:
// no spaces around numbers, int ranges, TRUE/FALSE): policy refuses what
// they would refuse, so an accepted override never halts a table later.
func TestPaimonOverridesAreRefusedExactlyWhenTheJobsWouldRefuseThem(t *testing.T) {
	for _, c := range []struct {
		key, value string
		refused    bool
	}{
		{"num-sorted-run.stop-trigger", "x", true}, // read by table, was not checked
		{"num-sorted-run.stop-trigger", "7", false},
		{"num-sorted-run.compaction-trigger", " 5", true},
		{"num-sorted-run.compaction-trigger", "3000000000", true},
		{"num-sorted-run.compaction-trigger", "0", true},
		{"num-sorted-run.compaction-trigger", "+5", false},
		{"snapshot.clean-empty-directories", "1", true},
		{"snapshot.clean-empty-directories", "True", false},
		{"snapshot.num-retained.min", "0", true},
		{"target-file-size", "0 b", true},
		{"compaction.incremental-size-threshold", "1 parsec", true},
	} {
		err := ValidateValues(map[string]string{c.key: c.value}, nil)
		if (err != nil) != c.refused {
			t.Errorf("%s=%q: refused=%v (%v), want %v", c.key, c.value, err != nil, err, c.refused)
		}
	}
}

func TestWriteCompactionSkipCountsAsWriteOnly(t *testing.T) {
	// write.compaction-skip is write-only's older name (a fallback key).
	v := Resolve("db.t", map[string]string{"write.compaction-skip": "true"}, nil, nil).Values["compact.enabled"]
	if v.Value != "true" || v.Source != FromDefault {
		t.Fatalf("compact.enabled = %s from %s, want true from default", v.Value, v.Source)
	}
}

// compact.max-share is a fraction in (0,1] of the workers, from any layer;
// MaxUnits rounds it down to whole workers but never below one.
func TestMaxShareLimitsATablesUnitsToAShareOfTheWorkers(t *testing.T) {
	t.Parallel()
	e := Resolve("db.t", map[string]string{"compactd.compact.max-share": "0.25"}, nil, nil)
	j, err := e.Job(Compact)
	if err != nil || j.MaxShare != 0.25 {
		t.Fatalf("max-share from the table: %v, %v", j.MaxShare, err)
	}
	for workers, want := range map[int]int{1: 1, 3: 1, 8: 2, 10: 2, 12: 3} {
		if got := j.MaxUnits(workers); got != want {
			t.Errorf("0.25 of %d workers: %d units, want %d", workers, got, want)
		}
	}
	def, err := Resolve("db.t", nil, nil, nil).Job(FullCompaction)
	if err != nil || def.MaxUnits(6) != 6 {
		t.Fatalf("default share: %d of 6 (%v)", def.MaxUnits(6), err)
	}
	for _, bad := range []string{"0", "1.5", "-0.1", "half"} {
		if err := ValidateValues(map[string]string{"compact.max-share": bad}, nil); err == nil {
			t.Errorf("compact.max-share=%q accepted", bad)
		}
		if _, err := Resolve("db.t", nil, nil, map[string]string{"compact.max-share": bad}).Job(Compact); err == nil {
			t.Errorf("a job with compact.max-share=%q resolved", bad)
		}
	}
}

// max-compactions and memory-budget are read from YAML (sizes in Paimon's
// units) and a negative cap is refused.
func TestConfigReadsTheReplicaCaps(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig([]byte("warehouses: [{path: /wh}]\nmax-compactions: 3\nmemory-budget: 2 gb\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxCompactions != 3 || c.MemoryBudget != 2<<30 {
		t.Fatalf("caps: %d compactions, %d bytes", c.MaxCompactions, c.MemoryBudget)
	}
	if _, err := ParseConfig([]byte("warehouses: [{path: /wh}]\nmemory-budget: lots\n")); err == nil {
		t.Fatal("memory-budget: lots accepted")
	}
	c.MaxCompactions = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "max-compactions") {
		t.Fatalf("negative max-compactions: %v", err)
	}
}
