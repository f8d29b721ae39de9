package deletionvector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/compactd/compactd/deletionvector"
)

// TestMaintainerAgainstANaiveModel runs seeded random jobs (new deletions,
// repeated ones, out-of-range ones, rewritten files) over several rounds,
// each starting from the index file the previous round wrote, and checks
// after every round which rows of which file are deleted against a model
// of plain sets. 64-bit tables also take positions beyond 2^32.
func TestMaintainerAgainstANaiveModel(t *testing.T) {
	ctx := context.Background()
	for _, b64 := range []bool{false, true} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("bitmap64=%v/seed=%d", b64, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 99))
				tb := dvTable(t, b64, 4, 50)
				b := *latestFiles(t, tb).Buckets()[0]
				b.Files = slices.Clone(b.Files)
				limit := int64(70000) // two containers
				if b64 {
					limit = 3 << 32
				}
				for i := range b.Files {
					b.Files[i].File.RowCount = limit
				}
				model := map[string]map[int64]bool{}
				pos := func() int64 {
					switch rng.IntN(4) {
					case 0:
						return rng.Int64N(100) // dense: runs and repeats
					case 1:
						return limit - 1 - rng.Int64N(10)
					default:
						return rng.Int64N(limit)
					}
				}
				for round := range 6 {
					m, err := deletionvector.Load(ctx, tb, &b)
					if err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
					touched := map[string]bool{}
					changed := false
					for range 400 {
						f := b.Files[rng.IntN(len(b.Files))].File.FileName
						switch op := rng.IntN(20); {
						case op == 0 && !touched[f]:
							if err := m.RemoveDeletionVectorOf(f); err != nil {
								t.Fatal(err)
							}
							if len(model[f]) > 0 {
								changed = true
							}
							delete(model, f)
							touched[f] = true // removed: no deletions after
						case op == 1:
							if err := m.NotifyNewDeletion(f, limit+rng.Int64N(3)); err == nil {
								t.Fatal("a row past the file's end was deleted")
							}
						default:
							p := pos()
							err := m.NotifyNewDeletion(f, p)
							if touched[f] && model[f] == nil {
								if err == nil {
									t.Fatalf("deletion in rewritten file %s accepted", f)
								}
								continue
							}
							if err != nil {
								t.Fatal(err)
							}
							if model[f] == nil {
								model[f] = map[int64]bool{}
							}
							if !model[f][p] {
								changed = true
							}
							model[f][p] = true
							touched[f] = true
						}
					}
					if m.Modified() != changed {
						t.Fatalf("round %d: modified %v, the model changed %v", round, m.Modified(), changed)
					}
					ch, _, err := m.Write(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if ch != nil {
						b.IndexFiles = ch.Files
					}
					check, err := deletionvector.Load(ctx, tb, &b)
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range b.Files {
						f := e.File.FileName
						want := slices.Sorted(func(yield func(int64) bool) {
							for p := range model[f] {
								if !yield(p) {
									return
								}
							}
						})
						dv := check.DeletionVectorOf(f)
						var got []int64
						if dv != nil {
							got = dv.Positions()
							if dv.Bitmap64 != b64 {
								t.Fatalf("%s: 64-bit %v", f, dv.Bitmap64)
							}
						}
						if !slices.Equal(got, want) {
							t.Fatalf("round %d, %s: %d rows deleted, the model has %d", round, f, len(got), len(want))
						}
					}
				}
			})
		}
	}
}
