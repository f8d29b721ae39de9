package planner

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// eachVector decodes every JSON line of a vector file (blank lines and
// "#" comments skipped) and hands it to check, which reports whether the
// vector was compared. It returns how many were.
func eachVector[T any](t *testing.T, path string, check func(line int, text string, v T) bool) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n, line := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		if check(line, text, v) {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// checkExtraVectors runs check on the vector file named by the environment
// variable env, a large batch regenerated with the oracle; it skips when
// the variable is unset.
func checkExtraVectors(t *testing.T, env string, check func(*testing.T, string) int) {
	path := os.Getenv(env)
	if path == "" {
		t.Skip(env + " not set")
	}
	n := check(t, path)
	if n == 0 {
		t.Fatalf("%s holds no vectors", path)
	}
	t.Logf("%d vectors from %s match", n, path)
}
