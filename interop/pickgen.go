package interop

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// PickVector is one golden planner vector: a request and Java Paimon's answer (Result nil when
// Paimon picks nothing).
type PickVector struct {
	Paimon    string            `json:"paimon"`
	NumLevels int               `json:"numLevels"`
	Options   map[string]string `json:"options"`
	Runs      []PickRun         `json:"runs"`
	Result    *PickAnswer       `json:"result"`
}

// PickAnswer is the non-empty outcome of a pick.
type PickAnswer struct {
	OutputLevel int   `json:"outputLevel"`
	Runs        []int `json:"runs"`
	DropDelete  bool  `json:"dropDelete"`
}

// GeneratePickRequests returns n deterministic planner questions for seed: random sorted-run
// layouts (level-0 runs first, then at most one run per higher level, as Levels.levelSortedRuns
// lists them) under random combinations of the options UniversalCompaction and its wrappers read.
// Time-dependent options (compaction.optimization-interval, off-peak hours) are never set, so
// Paimon's answer depends only on the request.
func GeneratePickRequests(seed uint64, n int) []PickRequest {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	reqs := make([]PickRequest, 0, n)
	for len(reqs) < n {
		numLevels := []int{2, 3, 4, 5, 5, 5, 6, 8}[rng.IntN(8)]
		opts := map[string]string{}
		maybe := func(p float64, key string, vals ...string) {
			if rng.Float64() < p {
				opts[key] = vals[rng.IntN(len(vals))]
			}
		}
		maybe(0.6, "num-sorted-run.compaction-trigger", "1", "2", "3", "4", "5", "6", "8", "10")
		maybe(0.5, "compaction.max-size-amplification-percent", "0", "10", "50", "100", "200", "300", "500")
		maybe(0.5, "compaction.size-ratio", "0", "1", "2", "5", "10", "50")
		maybe(0.1, "compaction.force-up-level-0", "true", "false")
		maybe(0.1, "changelog-producer", "lookup", "input", "none")
		maybe(0.08, "deletion-vectors.enabled", "true")
		maybe(0.05, "merge-engine", "first-row")
		if opts["changelog-producer"] == "lookup" || opts["deletion-vectors.enabled"] == "true" {
			maybe(0.3, "lookup-compact", "radical", "gentle")
			if opts["lookup-compact"] == "gentle" {
				// A fresh strategy per request: only interval 1 fires on the first call.
				opts["lookup-compact.max-interval"] = []string{"1", "2", "3"}[rng.IntN(3)]
			}
		}
		maybe(0.07, "compaction.total-size-threshold", sizeOpt(rng))
		maybe(0.07, "compaction.incremental-size-threshold", sizeOpt(rng))

		var runs []PickRun
		l0 := rng.IntN(12)
		if rng.IntN(5) == 0 {
			l0 = rng.IntN(40)
		}
		for i := 0; i < l0; i++ {
			runs = append(runs, PickRun{Level: 0, Size: runSize(rng, 1)})
		}
		for lvl := 1; lvl < numLevels; lvl++ {
			if rng.IntN(100) < 45 {
				runs = append(runs, PickRun{Level: lvl, Size: runSize(rng, lvl+1)})
			}
		}
		if len(runs) == 0 {
			continue
		}
		reqs = append(reqs, PickRequest{NumLevels: numLevels, Options: opts, Runs: runs})
	}
	return reqs
}

// runSize draws sizes spread over several orders of magnitude, growing with the level, with
// occasional exact ties.
func runSize(rng *rand.Rand, scale int) int64 {
	if rng.IntN(10) == 0 {
		return int64([]int{1, 100, 1000, 1 << 20}[rng.IntN(4)])
	}
	base := int64(1) << (10 + rng.IntN(8) + 2*scale)
	return 1 + rng.Int64N(base)
}

func sizeOpt(rng *rand.Rand) string {
	return strconv.FormatInt(int64(1)<<(12+rng.IntN(20)), 10) + " b"
}

// PickVectors asks Paimon for each request and pairs the answers with the requests.
func PickVectors(version string, reqs []PickRequest, res []PickResult) ([]PickVector, error) {
	if len(reqs) != len(res) {
		return nil, fmt.Errorf("%d answers for %d requests", len(res), len(reqs))
	}
	out := make([]PickVector, len(reqs))
	for i, r := range reqs {
		v := PickVector{Paimon: version, NumLevels: r.NumLevels, Options: r.Options, Runs: r.Runs}
		if res[i].Pick {
			v.Result = &PickAnswer{OutputLevel: res[i].OutputLevel, Runs: res[i].Runs, DropDelete: res[i].DropDelete}
		}
		out[i] = v
	}
	return out, nil
}
