package sched_test

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/compactd/compactd/sched"
)

// The scheduler registers its metrics on the registerer it is given and
// serves /metrics from the given gatherer; a second scheduler on the same
// registry is refused with an error (no panic), one on a fresh registry is
// not.
func TestMetricsGoToThePassedRegistry(t *testing.T) {
	wh := t.TempDir()
	reg := prometheus.NewRegistry()
	s, err := sched.New(config(t, wh, compactOnly(nil)), sched.Options{Logger: logger(t), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	for _, want := range []string{"compactd_queue_length", "compactd_workers_busy", "compactd_workers", "compactd_tables"} {
		if !names[want] {
			t.Errorf("registry lacks %s (has %v)", want, names)
		}
	}
	for name := range names {
		if !strings.HasPrefix(name, "compactd_") {
			t.Errorf("the scheduler registered %s: process-wide collectors belong to the caller", name)
		}
	}
	// /metrics serves what the registry gathers.
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "beside_the_scheduler", Help: "test"}))
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if !strings.Contains(string(body), "beside_the_scheduler 0") || !strings.Contains(string(body), "compactd_workers ") {
		t.Errorf("/metrics does not serve the passed registry:\n%s", body)
	}

	if _, err := sched.New(config(t, wh, compactOnly(nil)), sched.Options{Logger: logger(t), Registerer: reg}); err == nil ||
		!strings.Contains(err.Error(), "register metrics") {
		t.Errorf("second scheduler on the same registry: err = %v, want a registration error", err)
	}
	if _, err := sched.New(config(t, wh, compactOnly(nil)), sched.Options{Logger: logger(t), Registerer: prometheus.NewRegistry()}); err != nil {
		t.Errorf("scheduler on a fresh registry: %v", err)
	}
	if _, err := sched.New(config(t, wh, compactOnly(nil)), sched.Options{Logger: logger(t)}); err != nil {
		t.Errorf("scheduler on its own registry: %v", err)
	}
	// A registerer that cannot gather needs a Gatherer to serve /metrics.
	wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"x": "y"}, prometheus.NewRegistry())
	if _, err := sched.New(config(t, wh, compactOnly(nil)), sched.Options{Logger: logger(t), Registerer: wrapped}); err == nil {
		t.Error("a Registerer without a Gatherer was accepted")
	}
	if _, err := sched.New(config(t, wh, compactOnly(nil)), sched.Options{Logger: logger(t), Registerer: wrapped, Gatherer: prometheus.NewRegistry()}); err != nil {
		t.Errorf("Registerer and Gatherer apart: %v", err)
	}
}

// /status has no nulls before anything ran (docs/json.md): empty lists
// are [].
func TestStatusOfAFreshDaemonHasNoNulls(t *testing.T) {
	s, err := sched.New(config(t, t.TempDir(), compactOnly(nil)), sched.Options{Logger: logger(t), Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(s.Status())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "null") {
		t.Fatalf("/status of a fresh daemon: %s", data)
	}
}
