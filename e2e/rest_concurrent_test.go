package e2e

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/compactd/compactd/catalog/rest"
	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// TestRESTCatalogJavaWritersAndCompactd runs three Java writers committing
// in loops through a REST catalog (Paimon's RESTCatalogServer, which
// publishes each snapshot itself) while compactd compacts the same table,
// opened through catalog/rest, over and over. Every Java commit must be a
// snapshot exactly once (counted per commit user, with its identifiers), no
// snapshot may have been overwritten (compactd's COMPACT snapshots are
// still its own, ids have no gaps, no commit appears twice), and Java must
// read what it reads from the same writes into a table nobody compacted.
// The writers use disjoint keys, so the reference's order of the three
// writers' commits does not matter.
func TestRESTCatalogJavaWritersAndCompactd(t *testing.T) {
	ctx := context.Background()
	env := interop.RequireREST(t)
	plain := interop.Java(t)
	j := plain.WithCatalogOptions(env.CatalogOptions())
	cat, err := rest.Open(ctx, rest.Config{URI: env.URI, Warehouse: env.Warehouse, Token: env.Token})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cat.Close() }()
	// Count the ids compactd lost to a Java writer (a rebase each).
	var lost countingHandler
	prevLog := slog.Default()
	slog.SetDefault(slog.New(&lost))
	defer slog.SetDefault(prevLog)

	db := "e2e" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	live := db + ".t"
	spec := map[string]any{
		"columns": []map[string]string{
			{"name": "id", "type": "BIGINT NOT NULL"},
			{"name": "v", "type": "STRING"},
			{"name": "n", "type": "INT"},
		},
		"primaryKeys": []string{"id"},
		"bucket":      2,
		"options":     map[string]string{"write-only": "true"},
	}
	j.Create(env.Warehouse, live, spec, nil)
	refWarehouse := filepath.Join(t.TempDir(), "ref")
	plain.Create(refWarehouse, "db.t", spec, nil)

	const writers, commitsPerWriter, keys = 3, 25, 40
	scripts := make([][]byte, writers)
	for w := range scripts {
		var b bytes.Buffer
		for c := 0; c < commitsPerWriter; c++ {
			for k := 0; k < keys; k++ {
				id := w*1000 + (k*7+c*3)%(keys*2) // rewrites and new keys
				kind := "+I"
				if (k+c)%11 == 0 {
					kind = "-D"
				}
				fmt.Fprintf(&b, `{"id":%d,"v":"w%d-c%d-k%d","n":%d,"_kind":"%s","_user":"writer-%d","_commit":"%d"}`+"\n", id, w, c, k, c*100+k, kind, w, c)
			}
		}
		scripts[w] = b.Bytes()
	}

	var wg sync.WaitGroup
	commits := make([]int, writers)
	done := make(chan struct{})
	for w := range scripts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			commits[w] = j.Write(env.Warehouse, live, scripts[w])
		}()
	}
	go func() { wg.Wait(); close(done) }()

	user := "compactd-e2e-" + uuid.NewString()
	ours := map[int64]bool{}
	deadline := time.Now().Add(3 * time.Minute)
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the Java writers did not finish in 3 minutes")
		}
		tb, err := cat.OpenTable(ctx, db, "t")
		if err == nil {
			_, err = tb.LatestSnapshot(ctx)
		}
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		sum, err := compact.Run(ctx, tb, compact.Options{Full: len(ours)%3 == 2, CommitUser: user})
		if err != nil {
			t.Fatalf("compaction %d: %v", len(ours), err)
		}
		if sum.Snapshot != 0 {
			ours[sum.Snapshot] = true
		}
	}
	// And once more after the writers, so the end state is compacted too.
	tb, err := cat.OpenTable(ctx, db, "t")
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := compact.Run(ctx, tb, compact.Options{Full: true, CommitUser: user}); err != nil {
		t.Fatal(err)
	} else if sum.Snapshot != 0 {
		ours[sum.Snapshot] = true
	}
	if len(ours) < 3 {
		t.Fatalf("only %d compactions committed while the writers ran", len(ours))
	}

	// Every snapshot, in id order, without gaps.
	ids, err := tb.SnapshotIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type commitKey struct {
		user string
		id   int64
		kind table.CommitKind
	}
	seen := map[commitKey]int64{}
	perUser := map[string][]int64{}
	for i, id := range ids {
		if id != int64(i+1) {
			t.Fatalf("snapshot ids %v have a gap at %d", ids, i+1)
		}
		s, err := tb.Snapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		k := commitKey{s.CommitUser, s.CommitIdentifier, s.CommitKind}
		if prev, dup := seen[k]; dup && s.CommitUser != user {
			t.Fatalf("snapshots %d and %d are the same commit %+v", prev, id, k)
		}
		seen[k] = id
		switch {
		case ours[id]:
			if s.CommitUser != user || s.CommitKind != table.CommitCompact {
				t.Fatalf("compactd's snapshot %d now is %s by %s: overwritten", id, s.CommitKind, s.CommitUser)
			}
		case s.CommitUser == user:
			t.Fatalf("snapshot %d is compactd's but no compaction reported it", id)
		case s.CommitKind == table.CommitAppend:
			perUser[s.CommitUser] = append(perUser[s.CommitUser], s.CommitIdentifier)
		default:
			t.Fatalf("snapshot %d: unexpected %s by %s", id, s.CommitKind, s.CommitUser)
		}
	}
	for w := 0; w < writers; w++ {
		u := fmt.Sprintf("writer-%d", w)
		got := perUser[u]
		if commits[w] != commitsPerWriter || len(got) != commits[w] {
			t.Fatalf("%s made %d commits (want %d); the table has %d APPEND snapshots of it", u, commits[w], commitsPerWriter, len(got))
		}
		// The write verb numbers a user's commits consecutively.
		sorted := append([]int64(nil), got...)
		sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
		for i := 1; i < len(sorted); i++ {
			if sorted[i] != sorted[i-1]+1 {
				t.Fatalf("%s's commit identifiers %v are not consecutive: a commit is missing", u, sorted)
			}
		}
	}
	t.Logf("%d snapshots: %d Java commits of %d writers, %d compactd compactions, %d ids lost to a writer and rebased", len(ids), writers*commitsPerWriter, writers, len(ours), lost.n.Load())

	var all []byte
	for _, s := range scripts {
		all = append(all, s...)
	}
	plain.Write(refWarehouse, "db.t", all)
	diffRows(t, "rows through the REST catalog after compactd vs the uncompacted reference",
		canon(t, plain.Read(refWarehouse, "db.t")), canon(t, j.Read(env.Warehouse, live)))

	// compactd expires the table down to 3 snapshots; Java still reads the
	// same rows through the catalog and commits on top.
	rep, err := expire.Run(ctx, reach.TableSource(tb), expire.RunOptions{Options: expire.Options{RetainMin: 3, RetainMax: 3, Limit: 1000}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Snapshots) < len(ids)-3 {
		t.Errorf("expire removed %d of %d snapshots, want all but 3", len(rep.Snapshots), len(ids))
	}
	diffRows(t, "rows through the REST catalog after compactd's expiry",
		canon(t, plain.Read(refWarehouse, "db.t")), canon(t, j.Read(env.Warehouse, live)))
	after := []byte(`{"id":99999,"v":"after","n":1,"_user":"writer-after"}` + "\n")
	if n := j.Write(env.Warehouse, live, after); n != 1 {
		t.Fatalf("a Java commit after the expiry made %d commits", n)
	}
	plain.Write(refWarehouse, "db.t", after)
	diffRows(t, "rows after a Java commit on top", canon(t, plain.Read(refWarehouse, "db.t")), canon(t, j.Read(env.Warehouse, live)))
}

// countingHandler counts the REST catalog's lost-race records (and drops
// every record).
type countingHandler struct{ n atomic.Int64 }

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "lost the race") {
		h.n.Add(1)
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }
