package sched

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compactd/compactd/internal/human"
	"github.com/compactd/compactd/policy"
)

// statusFormat decides between the JSON of /status (for machines, the
// default) and its HTML page (for people): ?format=html or ?format=json
// decide; without it, HTML only when the Accept header prefers text/html
// to JSON, as a browser's does. A client that names neither, or accepts
// anything (curl's */*), gets JSON as before.
func statusFormat(r *http.Request) (html bool, err error) {
	switch f := r.URL.Query().Get("format"); f {
	case "html":
		return true, nil
	case "json":
		return false, nil
	case "":
		return prefersHTML(r.Header.Values("Accept")), nil
	default:
		return false, fmt.Errorf("unknown format %q: use format=html or format=json", f)
	}
}

// prefersHTML reports whether an Accept header gives text/html (or XHTML)
// a higher quality than JSON. JSON's quality is that of the most specific
// range naming it (application/json, else application/*, else */*); HTML
// counts only where it is named: a wildcard is no sign of a browser. A tie
// goes to JSON.
func prefersHTML(accept []string) bool {
	htmlQ, jsonQ := 0.0, 0.0
	jsonSpecific := -1 // specificity of the range jsonQ came from
	for _, h := range accept {
		for _, part := range strings.Split(h, ",") {
			mt, params, _ := strings.Cut(part, ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, v, ok := strings.Cut(p, "=")
				if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
					continue
				}
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f >= 0 && f <= 1 {
					q = f
				} else {
					q = 0 // a malformed quality counts as not acceptable
				}
			}
			switch mt {
			case "text/html", "application/xhtml+xml":
				htmlQ = max(htmlQ, q)
			}
			spec := -1
			switch mt {
			case "application/json":
				spec = 2
			case "application/*":
				spec = 1
			case "*/*":
				spec = 0
			}
			if spec > jsonSpecific {
				jsonQ, jsonSpecific = q, spec
			} else if spec == jsonSpecific && spec >= 0 {
				jsonQ = max(jsonQ, q)
			}
		}
	}
	return htmlQ > 0 && htmlQ > jsonQ
}

// serveStatusPage writes the HTML page of /status. Every value goes
// through html/template's contextual escaping: table names, paths, halted
// reasons and job errors come from warehouses and stores and are not
// trusted. The page has no script and its policy forbids any.
func (s *Scheduler) serveStatusPage(w http.ResponseWriter, _ *http.Request) {
	page := s.statusPage()
	var buf bytes.Buffer
	if err := statusTemplate.Execute(&buf, page); err != nil {
		s.log.Error("render /status page", "err", err)
		http.Error(w, "render status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

// statusPage is what the page shows, prepared from Status.
type statusPage struct {
	Now     time.Time
	Status  Status
	Ready   string // empty when ready
	Halted  int
	Running int
	Tables  []tablePage
	Recent  []JobRecord // newest first
	// ManyWarehouses: the tables' rows name their warehouse.
	ManyWarehouses bool
}

type tablePage struct {
	TableStatus
	State string // ok, running, halted
	Jobs  []kindPage
}

// kindPage is one job kind of a table: its last run, last success and
// next schedule.
type kindPage struct {
	Kind        policy.Kind
	Last        *JobRecord
	LastSuccess time.Time
	Next        time.Time
	Failures    int
}

func (s *Scheduler) statusPage() statusPage {
	st := s.Status()
	p := statusPage{Now: s.opts.Now(), Status: st, ManyWarehouses: len(st.Warehouses) > 1}
	if err := s.Ready(); err != nil {
		p.Ready = err.Error()
	}
	for _, ts := range st.Tables {
		tp := tablePage{TableStatus: ts, State: "ok"}
		switch {
		case ts.Halted != "":
			tp.State = "halted"
			p.Halted++
		case ts.Running != "":
			tp.State = "running"
			p.Running++
		}
		for _, k := range policy.Kinds {
			kp := kindPage{Kind: k, LastSuccess: ts.LastSuccess[k], Next: ts.Next[k], Failures: ts.Failures[k]}
			for i := len(ts.LastJobs) - 1; i >= 0; i-- {
				if ts.LastJobs[i].Kind == k {
					kp.Last = &ts.LastJobs[i]
					break
				}
			}
			if kp.Last == nil && kp.LastSuccess.IsZero() && kp.Next.IsZero() && kp.Failures == 0 {
				continue // disabled and never ran
			}
			tp.Jobs = append(tp.Jobs, kp)
		}
		p.Tables = append(p.Tables, tp)
	}
	// Halted tables first, then running ones: what needs a person on top.
	rank := map[string]int{"halted": 0, "running": 1, "ok": 2}
	slices.SortStableFunc(p.Tables, func(a, b tablePage) int { return cmp.Compare(rank[a.State], rank[b.State]) })
	p.Recent = slices.Clone(st.Recent)
	slices.Reverse(p.Recent)
	return p
}

var statusTemplate = template.Must(template.New("status").Funcs(template.FuncMap{
	// at is an absolute time, UTC, to the second.
	"at": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"rel": func(t, now time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return human.Relative(t, now)
	},
	"since": func(t, now time.Time) string { return human.Duration(now.Sub(t)) },
	"secs":  func(s float64) string { return human.Duration(time.Duration(s * float64(time.Second))) },
	"bytes": human.Bytes,
	"plural": func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + many
	},
	"num": func(n int64) string {
		// Thousands separated by thin spaces: 1 234 567.
		s := strconv.FormatInt(n, 10)
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteString("\u2009")
			}
			b.WriteRune(c)
		}
		if neg {
			return "-" + b.String()
		}
		return b.String()
	},
}).Parse(statusHTML))

const statusHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>compactd status{{if .Halted}} ({{.Halted}} halted){{end}}</title>
<style>
:root { color-scheme: light; --fg: #1d2330; --muted: #5d6675; --line: #d9dde4; --bg: #f6f7f9;
  --ok: #1a7f37; --okbg: #e6f4ea; --bad: #b42318; --badbg: #fdecea; --run: #0b5cad; --runbg: #e7f0fb; --warn: #8a5a00; --warnbg: #fff4d6; }
* { box-sizing: border-box; }
body { margin: 0; padding: 20px 28px 40px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 8px; }
.muted { color: var(--muted); }
.summary { display: flex; flex-wrap: wrap; gap: 6px 22px; margin: 6px 0 12px; }
.banner { padding: 8px 12px; border-radius: 6px; margin: 8px 0; border: 1px solid; }
.banner.ok { color: var(--ok); background: var(--okbg); border-color: #b7dfc3; }
.banner.bad { color: var(--bad); background: var(--badbg); border-color: #f3b8b2; }
.banner.warn { color: var(--warn); background: var(--warnbg); border-color: #f0d48a; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; vertical-align: top; padding: 6px 9px; border-bottom: 1px solid var(--line); }
th { background: #eef0f4; font-weight: 600; font-size: 13px; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.reason td { background: var(--badbg); color: var(--bad); border-top: 0; padding-top: 2px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.badge.ok, .badge.success { color: var(--ok); background: var(--okbg); }
.badge.halted, .badge.failed { color: var(--bad); background: var(--badbg); }
.badge.running { color: var(--run); background: var(--runbg); }
.badge.cancelled, .badge.policy { color: var(--warn); background: var(--warnbg); }
code, .mono { font-family: ui-monospace, "SFMono-Regular", "Liberation Mono", Menlo, monospace; font-size: 12.5px; }
.err { color: var(--bad); white-space: pre-wrap; word-break: break-word; }
.jobs { border: 0; width: auto; background: transparent; }
.jobs td { border: 0; padding: 1px 12px 1px 0; font-size: 13px; }
.jobs td:first-child, .jobs td:last-child, .nw { white-space: nowrap; }
.over { color: var(--bad); font-weight: 600; }
.wrap { word-break: break-all; }
</style>
</head>
<body>
{{- $now := .Now}}
<h1>compactd</h1>
<div class="summary muted">
  <span>now {{at $now}}</span>
  {{if .Status.Started.IsZero}}<span>not started</span>{{else}}<span>started {{at .Status.Started}} (up {{since .Status.Started $now}})</span>{{end}}
  {{if .Status.Config}}<span>config <code>{{.Status.Config}}</code></span>{{end}}
  <span>workers {{.Status.Busy}} busy of {{.Status.Workers}}, {{.Status.Queue}} queued</span>
  <span>{{plural (len .Status.Tables) "table" "tables"}}: {{.Running}} running, {{.Halted}} halted</span>
  <span><a href="?format=json">JSON</a> · <a href="metrics">metrics</a> · <a href="readyz">readyz</a></span>
</div>
{{if .Ready}}<div class="banner bad" id="readiness"><strong>not ready:</strong> {{.Ready}}</div>
{{else if .Status.Fleet}}<div class="banner ok" id="readiness"><strong>ready</strong>: in the fleet, every warehouse discovered (a fleet takes no warehouse lock: units lease their tables and buckets in PostgreSQL)</div>
{{else}}<div class="banner ok" id="readiness"><strong>ready</strong>: every warehouse locked and discovered</div>{{end}}
{{if .Status.PolicyError}}<div class="banner warn"><strong>policy store unreadable</strong> (previous policies kept): <span class="err">{{.Status.PolicyError}}</span></div>{{end}}

{{with .Status.Fleet}}
<h2>Fleet</h2>
<div class="summary" id="fleet" data-replica="{{.Replica}}" data-leader="{{.Leader}}">
  <span>this replica <code>{{.Replica}}</code>{{if and .Leader (eq .Leader .Replica)}} <span class="badge running">leader</span>{{end}}</span>
  <span>leader {{if .Leader}}<code>{{.Leader}}</code>{{else}}<span class="over">none elected</span>{{end}}</span>
  <span>{{plural (len .Replicas) "live replica" "live replicas"}}, {{plural .Workers "worker" "workers"}}</span>
  <span id="queue">queue: {{plural .QueueDepth "unit" "units"}} waiting{{if .QueueDepth}}, the oldest due for {{secs .OldestDueSeconds}}{{end}}</span>
  <span>{{plural (len .Running) "unit" "units"}} running</span>
  {{if not .Observed.IsZero}}<span class="muted">seen {{rel .Observed $now}}</span>{{end}}
</div>
{{if .Error}}<div class="banner bad" id="fleet-error"><strong>coordinator unreachable</strong> (this replica takes no work): <span class="err">{{.Error}}</span></div>{{end}}
<table id="replicas">
<tr><th>Replica</th><th>Host</th><th class="num">Workers</th><th>Started</th><th>Last seen</th></tr>
{{- $fleet := .}}
{{range .Replicas}}
<tr data-replica="{{.ID}}">
  <td class="mono wrap"><strong>{{.ID}}</strong>{{if eq .ID $fleet.Leader}} <span class="badge running">leader</span>{{end}}{{if eq .ID $fleet.Replica}} <span class="muted">(this one)</span>{{end}}</td>
  <td class="mono wrap">{{.Host}}</td>
  <td class="num">{{.Workers}}</td>
  <td title="{{iso .Started}}">{{rel .Started $now}}</td>
  <td title="{{iso .LastSeen}}">{{rel .LastSeen $now}}</td>
</tr>
{{else}}
<tr><td colspan="5" class="muted">no replica reported</td></tr>
{{end}}
</table>
<h2>Running units</h2>
<table id="units">
<tr><th>Table</th><th>Job</th><th>Buckets</th><th>Replica</th><th>Running for</th><th class="num">Attempt</th></tr>
{{range .Running}}
<tr data-unit="{{.Unit.String}}">
  <td class="mono nw">{{.Table}}</td>
  <td>{{.Kind}}</td>
  <td class="mono">{{with .Buckets}}{{.String}}{{else}}<span class="muted">whole table</span>{{end}}</td>
  <td class="mono wrap">{{.Replica}}</td>
  <td title="{{iso .Since}}">{{since .Since $now}}</td>
  <td class="num">{{.Attempt}}</td>
</tr>
{{else}}
<tr><td colspan="6" class="muted">no unit running</td></tr>
{{end}}
</table>
{{end}}

<h2>Warehouses</h2>
<table id="warehouses">
<tr><th>Path</th><th>Catalog</th><th>Lock</th><th>Lease ends</th><th>Renewal deadline</th><th>Discovery</th></tr>
{{range .Status.Warehouses}}
<tr>
  <td class="mono wrap">{{.Path}}</td>
  <td class="mono wrap">{{.Catalog}}</td>
  <td class="mono wrap">{{.Lock}}</td>
  <td title="{{iso .LeaseExpires}}">{{rel .LeaseExpires $now}}</td>
  <td title="{{iso .LeaseDeadline}}">{{rel .LeaseDeadline $now}}</td>
  <td>{{if .Error}}<span class="err">{{.Error}}</span>{{else}}<span class="badge ok">ok</span>{{end}}</td>
</tr>
{{else}}
<tr><td colspan="6" class="muted">no warehouse locked yet</td></tr>
{{end}}
</table>

<h2>Tables</h2>
<table id="tables">
<tr><th>Table</th><th>State</th><th class="num">Sorted runs<br><span class="muted">max / total (trigger)</span></th>
<th class="num">Level-0 files<br><span class="muted">max / total</span></th><th class="num">Pending</th>
<th class="num">Postponed<br><span class="muted">rows (files)</span></th><th class="num">Snapshots<br><span class="muted">latest (retained)</span></th>
<th>Jobs<br><span class="muted">last run · next</span></th></tr>
{{- $many := .ManyWarehouses}}
{{range .Tables}}{{$t := .}}
<tr class="table" data-table="{{.Table}}" data-state="{{.State}}">
  <td title="{{.Warehouse}}"><strong class="mono">{{.Table}}</strong>{{if $many}}<br><span class="muted mono wrap">{{.Warehouse}}</span>{{end}}</td>
  <td>
    {{if eq .State "halted"}}<span class="badge halted">halted</span>{{if .HaltedAt}}<br><span class="muted nw" title="{{iso .HaltedAt}}">{{rel .HaltedAt $now}}</span>{{end}}
    {{else if eq .State "running"}}<span class="badge running">running {{.Running}}</span>
    {{else}}<span class="badge ok">ok</span>{{end}}
    {{if .PolicyError}}<br><span class="badge policy">policy error</span>{{end}}
  </td>
  {{with .Backlog}}
  {{if .Observed.IsZero}}<td class="num muted" colspan="5">not observed yet</td>{{else}}
  <td class="num" title="observed {{at .Observed}}">{{if and .Trigger (gt .SortedRunsMax .Trigger)}}<span class="over">{{.SortedRunsMax}}</span>{{else}}{{.SortedRunsMax}}{{end}} / {{.SortedRunsSum}}{{if .Trigger}} ({{.Trigger}}){{end}}
    {{if .RunsOverTrigger}}<br><span class="over">{{plural .RunsOverTrigger "bucket" "buckets"}} over</span>{{end}}<br><span class="muted">{{plural .Buckets "bucket" "buckets"}}</span></td>
  <td class="num">{{.Level0Max}} / {{.Level0Sum}}</td>
  <td class="num">{{bytes .PendingBytes}}</td>
  <td class="num">{{if or .PostponedRows .PostponedFiles}}{{num .PostponedRows}} ({{.PostponedFiles}}){{else}}<span class="muted">none</span>{{end}}</td>
  <td class="num">{{.Snapshot}} ({{.Snapshots}})<br><span class="muted">seen {{rel .Observed $now}}</span></td>
  {{end}}
  {{end}}
  <td>{{if .Jobs}}<table class="jobs">
    {{range .Jobs}}<tr><td><strong>{{.Kind}}</strong></td>
      <td>{{with .Last}}<span class="badge {{.Outcome}}">{{.Outcome}}</span> {{rel .Start $now}} ({{secs .Seconds}}){{else}}<span class="muted">not run yet</span>{{end}}
        {{- if .Failures}} · <span class="over">{{plural .Failures "failure" "failures"}} in a row</span>{{end}}
        {{- if and .Last (ne .Last.Outcome "success")}}<br><span class="muted">{{if .LastSuccess.IsZero}}no success since start{{else}}last success {{rel .LastSuccess $now}}{{end}}</span>{{end}}</td>
      <td>{{if $t.Halted}}<span class="muted">held: halted</span>{{else if .Next.IsZero}}<span class="muted">not scheduled</span>{{else}}next {{rel .Next $now}}{{end}}</td></tr>
    {{end}}</table>{{else}}<span class="muted">no job enabled</span>{{end}}</td>
</tr>
{{if .Halted}}<tr class="reason"><td colspan="8"><strong>halted:</strong> <span class="err">{{.Halted}}</span><br><span class="muted">resume with <code>compactd resume {{.Table}}</code> once fixed</span></td></tr>{{end}}
{{if .PolicyError}}<tr class="reason"><td colspan="8"><strong>policy error:</strong> <span class="err">{{.PolicyError}}</span></td></tr>{{end}}
{{else}}
<tr><td colspan="8" class="muted">no table discovered yet</td></tr>
{{end}}
</table>

<h2>Recent jobs</h2>
<table id="jobs">
<tr><th>Started</th><th>Table</th><th>Job</th><th>Outcome</th><th class="num">Took</th><th>Result</th></tr>
{{range .Recent}}
<tr>
  <td class="nw" title="{{iso .Start}}">{{rel .Start $now}}</td>
  <td class="mono nw">{{.Table}}</td>
  <td>{{.Kind}}</td>
  <td><span class="badge {{.Outcome}}">{{.Outcome}}</span>{{if .Class}} <span class="muted">{{.Class}}</span>{{end}}</td>
  <td class="num">{{secs .Seconds}}</td>
  <td>{{if .Error}}<span class="err">{{.Error}}</span>{{else}}
    {{if .Snapshot}}snapshot {{.Snapshot}}{{end}}{{if .Buckets}}, {{plural .Buckets "bucket" "buckets"}}{{end}}
    {{if or .RowsIn .RowsOut}}· rows {{num .RowsIn}} → {{num .RowsOut}}{{end}}
    {{if or .BytesIn .BytesOut}}· {{bytes .BytesIn}} → {{bytes .BytesOut}}{{end}}
    {{if .FilesDeleted}}· {{plural .FilesDeleted "file" "files"}} deleted{{end}}
    {{if .Note}}<span class="muted">{{.Note}}</span>{{end}}{{end}}</td>
</tr>
{{else}}
<tr><td colspan="6" class="muted">no job finished yet</td></tr>
{{end}}
</table>
</body>
</html>
`
