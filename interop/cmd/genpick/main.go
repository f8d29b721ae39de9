// Command genpick writes golden planner vectors: random sorted-run layouts and option
// combinations, each answered by Java Paimon's own UniversalCompaction (through the interop Java
// oracle's pick verb). Run from the repository root after `make interop-deps`:
//
//	go run ./interop/cmd/genpick [-n 3000] [-seed 1] [-out planner/testdata/paimon_pick_vectors.jsonl]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/compactd/compactd/interop"
)

func main() {
	n := flag.Int("n", 3000, "number of vectors")
	seed := flag.Uint64("seed", 1, "generator seed")
	out := flag.String("out", filepath.Join(filepath.Dir(interop.Dir()), "planner", "testdata", "paimon_pick_vectors.jsonl"), "output file")
	flag.Parse()
	if err := run(*n, *seed, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genpick:", err)
		os.Exit(1)
	}
}

func run(n int, seed uint64, out string) error {
	j, err := interop.NewJava()
	if err != nil {
		return err
	}
	ver, err := j.Run(context.Background(), nil, "version")
	if err != nil {
		return err
	}
	var v struct{ Paimon string }
	if err := json.Unmarshal(ver, &v); err != nil {
		return fmt.Errorf("version %q: %w", ver, err)
	}
	reqs := interop.GeneratePickRequests(seed, n)
	res, err := j.PickAll(context.Background(), reqs)
	if err != nil {
		return err
	}
	vecs, err := interop.PickVectors(v.Paimon, reqs, res)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	picked := 0
	for _, vec := range vecs {
		if vec.Result != nil {
			picked++
		}
		if err := enc.Encode(vec); err != nil {
			return err
		}
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "genpick: %d vectors (%d with a pick) from Paimon %s -> %s\n", len(vecs), picked, v.Paimon, out)
	return nil
}
