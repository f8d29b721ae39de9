package expire

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/compactd/compactd/table"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// hist builds snapshots with the given ids, all committed ageMin minutes ago.
func hist(ageMin int, ids ...int64) []SnapshotTime {
	var out []SnapshotTime
	for _, id := range ids {
		out = append(out, SnapshotTime{ID: id, TimeMillis: now.Add(-time.Duration(ageMin) * time.Minute).UnixMilli()})
	}
	return out
}

func rng(a, b int64) []int64 {
	var out []int64
	for i := a; i <= b; i++ {
		out = append(out, i)
	}
	return out
}

func young(s []SnapshotTime, ids ...int64) []SnapshotTime {
	for i := range s {
		if slices.Contains(ids, s[i].ID) {
			s[i].TimeMillis = now.Add(-time.Minute).UnixMilli()
		}
	}
	return s
}

func TestSelect(t *testing.T) {
	def := DefaultOptions()
	with := func(f func(*Options)) Options { o := def; f(&o); return o }
	tests := []struct {
		name      string
		in        SelectInput
		wantEnd   int64
		wantN     int
		wantCons  []string
		wantError bool
	}{
		{name: "an empty table expires nothing", in: SelectInput{Options: def}, wantEnd: 0},
		{name: "old snapshots expire down to num-retained.min",
			in: SelectInput{Snapshots: hist(120, rng(1, 15)...), Options: def}, wantEnd: 6, wantN: 5},
		{name: "a table with fewer than num-retained.min snapshots expires nothing",
			in: SelectInput{Snapshots: hist(120, rng(1, 8)...), Options: def}, wantEnd: 1},
		{name: "a snapshot whose successor is younger than time-retained is kept",
			in: SelectInput{Snapshots: young(hist(120, rng(1, 20)...), 4), Options: def}, wantEnd: 3, wantN: 2},
		{name: "num-retained.max expires young snapshots too",
			in: SelectInput{Snapshots: hist(1, rng(1, 10)...), Options: with(func(o *Options) { o.RetainMin, o.RetainMax = 3, 5 })}, wantEnd: 6, wantN: 5},
		{name: "a consumer's nextSnapshot is never expired",
			in: SelectInput{Snapshots: hist(120, rng(1, 30)...), Consumers: []table.Consumer{{ID: "c", NextSnapshot: 4, ModTime: now}}, Options: def}, wantEnd: 4, wantN: 3},
		{name: "an expired consumer no longer protects and is reported",
			in: SelectInput{Snapshots: hist(120, rng(1, 30)...), Consumers: []table.Consumer{{ID: "c", NextSnapshot: 4, ModTime: now.Add(-2 * time.Hour)}},
				Options: with(func(o *Options) { o.ConsumerExpiration = time.Hour })}, wantEnd: 21, wantN: 20, wantCons: []string{"c"}},
		{name: "consumers bound only changelog expiry when consumer.changelog-only",
			in: SelectInput{Snapshots: hist(120, rng(1, 30)...), Consumers: []table.Consumer{{ID: "c", NextSnapshot: 4, ModTime: now}},
				Options: with(func(o *Options) { o.ConsumerChangelogOnly = true })}, wantEnd: 21, wantN: 20},
		{name: "snapshot.expire.limit caps one run",
			in: SelectInput{Snapshots: hist(120, rng(1, 100)...), Options: def}, wantEnd: 51, wantN: 50},
		{name: "the limit counts from the earliest existing snapshot",
			in: SelectInput{Snapshots: hist(120, rng(40, 100)...), Options: with(func(o *Options) { o.Limit = 5 })}, wantEnd: 45, wantN: 5},
		{name: "an end falling into a gap is lowered onto an existing snapshot",
			in: SelectInput{Snapshots: hist(120, append(rng(1, 5), rng(8, 20)...)...), Options: with(func(o *Options) { o.RetainMin = 15 })}, wantEnd: 5, wantN: 4},
		{name: "a gap inside the expired range does not block expiration",
			in: SelectInput{Snapshots: hist(120, append(rng(1, 5), rng(8, 30)...)...), Options: def}, wantEnd: 21, wantN: 18},
		{name: "a missing successor does not hold a snapshot back but the next young one does",
			in: SelectInput{Snapshots: young(hist(120, append(rng(1, 3), rng(5, 30)...)...), 5), Options: def}, wantEnd: 3, wantN: 2},
		{name: "time-retained zero expires everything allowed by num-retained.min",
			in: SelectInput{Snapshots: hist(1, rng(1, 12)...), Options: with(func(o *Options) { o.TimeRetained = 0 })}, wantEnd: 3, wantN: 2},
		{name: "a successor committed exactly at now minus time-retained still counts as young",
			in: SelectInput{Snapshots: hist(0, rng(1, 12)...), Options: with(func(o *Options) { o.TimeRetained = 0 })}, wantEnd: 1},
		{name: "num-retained.max below num-retained.min is refused",
			in: SelectInput{Snapshots: hist(120, rng(1, 12)...), Options: with(func(o *Options) { o.RetainMax = 5 })}, wantError: true},
		{name: "num-retained.min zero is refused",
			in: SelectInput{Snapshots: hist(120, rng(1, 12)...), Options: with(func(o *Options) { o.RetainMin = 0 })}, wantError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Now = now
			sel, err := Select(tc.in)
			if tc.wantError {
				if err == nil {
					t.Fatalf("want error, got %+v", sel)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.End != tc.wantEnd || len(sel.Expire) != tc.wantN {
				t.Fatalf("End=%d expire=%v, want End=%d and %d expired", sel.End, sel.Expire, tc.wantEnd, tc.wantN)
			}
			if !slices.Equal(sel.ExpiredConsumers, tc.wantCons) {
				t.Fatalf("expired consumers %v, want %v", sel.ExpiredConsumers, tc.wantCons)
			}
		})
	}
}

// TestSelectInvariants checks Select against the rules it must obey over
// random histories with gaps, consumers and options.
func TestSelectInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		n := 1 + r.IntN(60)
		var snaps []SnapshotTime
		clock := now.Add(-3 * time.Hour)
		first := int64(1 + r.IntN(5))
		for id := first; id < first+int64(n); id++ {
			clock = clock.Add(time.Duration(r.IntN(10)) * time.Minute)
			if r.IntN(8) == 0 && id != first {
				continue // gap
			}
			snaps = append(snaps, SnapshotTime{ID: id, TimeMillis: clock.UnixMilli()})
		}
		o := DefaultOptions()
		o.RetainMin = 1 + r.IntN(12)
		if r.IntN(2) == 0 {
			o.RetainMax = o.RetainMin + r.IntN(20)
		}
		o.Limit = 1 + r.IntN(30)
		o.TimeRetained = time.Duration(r.IntN(200)) * time.Minute
		var cons []table.Consumer
		if r.IntN(3) == 0 {
			cons = append(cons, table.Consumer{ID: "a", NextSnapshot: first + int64(r.IntN(n+2)), ModTime: now})
		}
		r.Shuffle(len(snaps), func(i, j int) { snaps[i], snaps[j] = snaps[j], snaps[i] })
		sel, err := Select(SelectInput{Snapshots: snaps, Consumers: cons, Options: o, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		byID := map[int64]int64{}
		var ids []int64
		for _, s := range snaps {
			byID[s.ID] = s.TimeMillis
			ids = append(ids, s.ID)
		}
		slices.Sort(ids)
		latest := ids[len(ids)-1]
		if _, ok := byID[sel.End]; !ok {
			t.Fatalf("iter %d: End %d is not an existing snapshot", iter, sel.End)
		}
		var wantExpire []int64
		for _, id := range ids {
			if id < sel.End {
				wantExpire = append(wantExpire, id)
			}
		}
		if !slices.Equal(sel.Expire, wantExpire) {
			t.Fatalf("iter %d: Expire %v, want every existing id below End %d", iter, sel.Expire, sel.End)
		}
		if len(sel.Expire) == 0 {
			continue
		}
		if sel.End > latest-int64(o.RetainMin)+1 {
			t.Fatalf("iter %d: End %d keeps fewer than %d ids (latest %d)", iter, sel.End, o.RetainMin, latest)
		}
		for _, c := range cons {
			if sel.End > c.NextSnapshot {
				t.Fatalf("iter %d: End %d passes consumer at %d", iter, sel.End, c.NextSnapshot)
			}
		}
		if sel.End > ids[0]+int64(o.Limit) {
			t.Fatalf("iter %d: End %d exceeds limit %d from %d", iter, sel.End, o.Limit, ids[0])
		}
		minID := max(latest-int64(o.RetainMax)+1, ids[0])
		for _, s := range sel.Expire {
			if s < minID {
				continue
			}
			if tm, ok := byID[s+1]; ok && tm >= now.UnixMilli()-o.TimeRetained.Milliseconds() {
				t.Fatalf("iter %d: snapshot %d expired although snapshot %d is young", iter, s, s+1)
			}
		}
	}
}

func TestOptionsFromTable(t *testing.T) {
	o, err := OptionsFromTable(map[string]string{
		"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "7", "snapshot.time-retained": "30 min",
		"snapshot.expire.limit": "3", "consumer.expiration-time": "1d", "snapshot.expire.clean-empty-directories": "true",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{RetainMin: 2, RetainMax: 7, TimeRetained: 30 * time.Minute, Limit: 3, ConsumerExpiration: 24 * time.Hour, CleanEmptyDirectories: true,
		ChangelogRetainMin: 2, ChangelogRetainMax: 7, ChangelogTimeRetained: 30 * time.Minute}
	if o != want {
		t.Fatalf("got %+v, want %+v", o, want)
	}
	if o, _ := OptionsFromTable(nil); o != DefaultOptions() {
		t.Fatalf("defaults: got %+v", o)
	}
	o, err = OptionsFromTable(map[string]string{"changelog.num-retained.max": "100", "snapshot.num-retained.max": "20"})
	if err != nil || !o.ChangelogDecoupled {
		t.Fatalf("changelog retention above snapshot retention must be decoupled: %+v %v", o, err)
	}
	for _, bad := range []map[string]string{
		{"snapshot.time-retained": "1 fortnight"}, {"snapshot.num-retained.min": "x"},
		{"snapshot.num-retained.min": "5", "snapshot.num-retained.max": "4"},
	} {
		if _, err := OptionsFromTable(bad); err == nil {
			t.Errorf("%v: want error", bad)
		}
	}
	for in, want := range map[string]time.Duration{"100": 100 * time.Millisecond, "1 h": time.Hour, "2hours": 2 * time.Hour, "15 s": 15 * time.Second, "3 d": 72 * time.Hour} {
		if d, err := table.ParseDuration(in); err != nil || d != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, d, err, want)
		}
	}
}

// Changelog retention the table leaves unset follows the snapshot values,
// also after command-line overrides of those (as Java's ExpireConfig
// builder falls back); set values stay, and decoupling is recomputed.
func TestOptionsResolveChangelogFallbacks(t *testing.T) {
	o, err := OptionsFromTable(map[string]string{"snapshot.num-retained.min": "10", "changelog.num-retained.min": "20"})
	if err != nil || !o.ChangelogDecoupled || o.ChangelogRetainMax != o.RetainMax || o.ChangelogTimeRetained != o.TimeRetained {
		t.Fatalf("%+v %v", o, err)
	}
	o.RetainMin, o.RetainMax, o.TimeRetained = 30, 40, time.Minute
	r := o.Resolve()
	if r.ChangelogRetainMin != 20 || r.ChangelogRetainMax != 40 || r.ChangelogTimeRetained != time.Minute || r.ChangelogDecoupled {
		t.Fatalf("after overriding the snapshot retention: %+v", r)
	}
	o, _ = OptionsFromTable(map[string]string{"snapshot.num-retained.min": "5"})
	o.RetainMin = 2
	if r := o.Resolve(); r.ChangelogRetainMin != 2 || r.ChangelogDecoupled {
		t.Fatalf("an unset changelog.num-retained.min must follow the override: %+v", r)
	}
	if err := o.SetChangelogRetention(3, 2, 0).Validate(); err == nil {
		t.Fatal("changelog max below min: want an error")
	}
}
