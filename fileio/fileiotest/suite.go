// Package fileiotest is the acceptance suite every fileio.FileIO backend must
// pass, plus test helpers for object stores (a fault-injecting proxy).
package fileiotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
)

// Options tune the suite to a backend.
type Options struct {
	// ManyFiles is the number of files written to test listing and batch
	// deletion (default 1001: one more than an S3 list page and a
	// DeleteObjects batch).
	ManyFiles int
	// BigFileSize is the size of the file that must cross the multipart
	// threshold (default 20 MiB + 12345 bytes).
	BigFileSize int
	// ModTimeSlack is how far the store's clock may be from the local one
	// (default 1 minute).
	ModTimeSlack time.Duration
}

// Run runs the suite with default options. newStore returns a store and an
// empty root directory in it; it is called once per subtest.
func Run(t *testing.T, newStore func(t *testing.T) (fio fileio.FileIO, root string)) {
	RunWithOptions(t, newStore, Options{})
}

// RunWithOptions runs the suite.
func RunWithOptions(t *testing.T, newStore func(t *testing.T) (fileio.FileIO, string), opts Options) {
	if opts.ManyFiles == 0 {
		opts.ManyFiles = 1001
	}
	if opts.BigFileSize == 0 {
		opts.BigFileSize = 20<<20 + 12345
	}
	if opts.ModTimeSlack == 0 {
		opts.ModTimeSlack = time.Minute
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, fio fileio.FileIO, root string, opts Options)
	}{
		{"a written file reads back byte for byte", testRoundTrip},
		{"an empty file round-trips", testEmptyFile},
		{"range reads at odd offsets return exactly the requested bytes", testRangeReads},
		{"sequential reads in odd chunk sizes return the whole file", testSequentialRead},
		{"parallel ReadAt calls on one reader agree", testParallelReadAt},
		{"a created file is invisible until Close", testCreateInvisibleUntilClose},
		{"an aborted file leaves nothing behind", testAbort},
		{"Create replaces an existing file", testCreateReplaces},
		{"WriteExclusive fails with ErrExist on an existing file", testWriteExclusiveExisting},
		{"of racing WriteExclusive calls exactly one wins", testWriteExclusiveRace},
		{"List returns files and directories sorted", testListEntries},
		{"List of a missing directory is empty", testListMissing},
		{"ListEach gives List's entries in order and stops at fn's error", testListEach},
		{"List pages through many files and DeleteMany removes them", testManyFiles},
		{"Stat reports size and the store's modification time", testStat},
		{"missing files give ErrNotExist and deleting them is fine", testMissing},
		{"DeleteDir leaves a non-empty directory in place", testDeleteDir},
		{"a big file crosses the multipart threshold intact", testBigFile},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fio, root := newStore(t)
			tc.fn(t, fio, root, opts)
		})
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func mustWrite(t *testing.T, ctx context.Context, fio fileio.FileIO, path string, data []byte) {
	t.Helper()
	if err := fileio.WriteFile(ctx, fio, path, data); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}

func mustRead(t *testing.T, ctx context.Context, fio fileio.FileIO, path string) []byte {
	t.Helper()
	b, err := fileio.ReadFile(ctx, fio, path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}

func requireEqual(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: got %d bytes, want %d; first difference at byte %d", what, len(got), len(want), i)
	}
}

func testRoundTrip(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	path := fileio.Join(root, "db.db", "t", "bucket-0", "data-1.parquet")
	data := randomBytes(1, 100_003)
	mustWrite(t, ctx, fio, path, data)
	requireEqual(t, "read back", mustRead(t, ctx, fio, path), data)
	// Paimon partition directories hold '=' and escape special characters
	// as %XX, so '%' reaches the store; a store that unescapes keys twice
	// would mix up partitions.
	for i, name := range []string{"dt=2024-01-01", "name=a%2Fb c", "city=Zürich+1"} {
		p := fileio.Join(root, "db.db", "t", name, "bucket-0", "data.orc")
		mustWrite(t, ctx, fio, p, []byte(name))
		requireEqual(t, "read back "+p, mustRead(t, ctx, fio, p), []byte(name))
		ents, err := fio.List(ctx, fileio.Join(root, "db.db", "t"))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range ents {
			found = found || (e.Name == name && e.IsDir)
		}
		if !found {
			t.Fatalf("partition directory %q not listed in %+v (after %d partitions)", name, ents, i+1)
		}
	}
	r, err := fio.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(data)) {
		t.Fatalf("Size() = %d, want %d", r.Size(), len(data))
	}
}

func testEmptyFile(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	path := fileio.Join(root, "empty")
	mustWrite(t, ctx, fio, path, nil)
	if got := mustRead(t, ctx, fio, path); len(got) != 0 {
		t.Fatalf("empty file read back %d bytes", len(got))
	}
	r, err := fio.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, err := r.Read(make([]byte, 10)); n != 0 || err != io.EOF { //nolint:errorlint // io.Reader contract: EOF itself, unwrapped
		t.Fatalf("Read on empty file = %d, %v; want 0, EOF", n, err)
	}
	if n, err := r.ReadAt(make([]byte, 1), 0); n != 0 || err != io.EOF { //nolint:errorlint // io.ReaderAt contract: EOF itself, unwrapped
		t.Fatalf("ReadAt on empty file = %d, %v; want 0, EOF", n, err)
	}
}

func testRangeReads(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	path := fileio.Join(root, "ranges.bin")
	data := randomBytes(2, 1<<20+13)
	size := int64(len(data))
	mustWrite(t, ctx, fio, path, data)
	r, err := fio.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cases := []struct {
		off     int64
		n       int
		wantN   int
		wantEOF bool
	}{
		{0, 1, 1, false},
		{1, 7, 7, false},
		{7, 1000, 1000, false},
		{65535, 65537, 65537, false},
		{size - 8, 8, 8, false},
		{size - 5, 5, 5, false},
		{size - 3, 10, 3, true},
		{size, 1, 0, true},
		{size + 100, 4, 0, true},
		{12345, 0, 0, false},
	}
	for _, c := range cases {
		p := make([]byte, c.n)
		n, err := r.ReadAt(p, c.off)
		if n != c.wantN {
			t.Fatalf("ReadAt(len %d, off %d) read %d bytes, want %d (err %v)", c.n, c.off, n, c.wantN, err)
		}
		if c.wantEOF && err != io.EOF { //nolint:errorlint // io.ReaderAt contract: EOF itself, unwrapped
			t.Fatalf("ReadAt(len %d, off %d) err = %v, want io.EOF", c.n, c.off, err)
		}
		if !c.wantEOF && err != nil {
			t.Fatalf("ReadAt(len %d, off %d) err = %v", c.n, c.off, err)
		}
		if n > 0 {
			requireEqual(t, fmt.Sprintf("ReadAt(len %d, off %d)", c.n, c.off), p[:n], data[c.off:c.off+int64(n)])
		}
	}
	if _, err := r.ReadAt(make([]byte, 1), -1); err == nil {
		t.Fatal("ReadAt at a negative offset succeeded")
	}
}

func testSequentialRead(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	path := fileio.Join(root, "seq.bin")
	data := randomBytes(3, 3<<20+777)
	mustWrite(t, ctx, fio, path, data)
	for _, chunk := range []int{1, 777, 64 << 10, 5 << 20} {
		r, err := fio.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		buf := make([]byte, chunk)
		limit := len(data)
		if chunk == 1 {
			limit = 50_000 // byte-at-a-time over the whole file is slow and proves nothing more
		}
		for got.Len() < limit {
			n, err := r.Read(buf[:min(chunk, limit-got.Len())])
			got.Write(buf[:n])
			if err == io.EOF { //nolint:errorlint // io.Reader contract: EOF itself, unwrapped
				break
			}
			if err != nil {
				t.Fatalf("Read in chunks of %d after %d bytes: %v", chunk, got.Len(), err)
			}
		}
		requireEqual(t, fmt.Sprintf("sequential read in chunks of %d", chunk), got.Bytes(), data[:limit])
		if limit == len(data) {
			if n, err := r.Read(buf); n != 0 || err != io.EOF { //nolint:errorlint // io.Reader contract: EOF itself, unwrapped
				t.Fatalf("Read at end = %d, %v; want 0, EOF", n, err)
			}
		}
		// A ReadAt between sequential reads must not disturb the position.
		if chunk == 777 {
			p := make([]byte, 100)
			if _, err := r.ReadAt(p, 10); err != nil {
				t.Fatal(err)
			}
			requireEqual(t, "ReadAt after sequential reads", p, data[10:110])
		}
		r.Close()
	}
}

func testParallelReadAt(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	path := fileio.Join(root, "par.bin")
	data := randomBytes(4, 512<<10)
	mustWrite(t, ctx, fio, path, data)
	r, err := fio.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := 0; i < 10; i++ {
				off := rng.IntN(len(data) - 1)
				n := 1 + rng.IntN(min(40_000, len(data)-off))
				p := make([]byte, n)
				if _, err := r.ReadAt(p, int64(off)); err != nil && err != io.EOF { //nolint:errorlint // io.ReaderAt contract: EOF itself, unwrapped
					errs <- err
					return
				}
				if !bytes.Equal(p, data[off:off+n]) {
					errs <- fmt.Errorf("parallel ReadAt(len %d, off %d) returned wrong bytes", n, off)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func testCreateInvisibleUntilClose(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	dir := fileio.Join(root, "snapshot")
	path := fileio.Join(dir, "snapshot-1")
	w, err := fio.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	data := randomBytes(5, 10_000)
	if _, err := w.Write(data[:5000]); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data[5000:]); err != nil {
		t.Fatal(err)
	}
	if _, err := fio.Stat(ctx, path); !errors.Is(err, fileio.ErrNotExist) {
		t.Fatalf("Stat before Close: err = %v, want ErrNotExist", err)
	}
	ents, err := fio.List(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name == "snapshot-1" {
			t.Fatal("List shows the file before Close")
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	requireEqual(t, "after Close", mustRead(t, ctx, fio, path), data)
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func testAbort(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	dir := fileio.Join(root, "aborted")
	path := fileio.Join(dir, "data-x.parquet")
	w, err := fio.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(randomBytes(6, 70_000)); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	if _, err := fio.Stat(ctx, path); !errors.Is(err, fileio.ErrNotExist) {
		t.Fatalf("Stat after Abort: err = %v, want ErrNotExist", err)
	}
	ents, err := fio.List(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir {
			t.Fatalf("Abort left %s behind", e.Name)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close after Abort: %v", err)
	}
	if _, err := fio.Stat(ctx, path); !errors.Is(err, fileio.ErrNotExist) {
		t.Fatalf("Close after Abort published the file: %v", err)
	}
}

func testCreateReplaces(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	path := fileio.Join(root, "LATEST")
	mustWrite(t, ctx, fio, path, []byte("1"))
	mustWrite(t, ctx, fio, path, []byte("22"))
	requireEqual(t, "replaced file", mustRead(t, ctx, fio, path), []byte("22"))
}

func testWriteExclusiveExisting(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	path := fileio.Join(root, "snapshot", "snapshot-7")
	if err := fio.WriteExclusive(ctx, path, []byte("first")); err != nil {
		t.Fatal(err)
	}
	err := fio.WriteExclusive(ctx, path, []byte("second"))
	if !errors.Is(err, fileio.ErrExist) {
		t.Fatalf("second WriteExclusive: err = %v, want ErrExist", err)
	}
	requireEqual(t, "after a refused WriteExclusive", mustRead(t, ctx, fio, path), []byte("first"))
}

func testWriteExclusiveRace(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	const writers, rounds = 8, 5
	for round := 0; round < rounds; round++ {
		path := fileio.Join(root, "snapshot", fmt.Sprintf("snapshot-%d", round+1))
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = fio.WriteExclusive(ctx, path, []byte(fmt.Sprintf(`{"writer":%d,"round":%d}`, i, round)))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, i)
				}
				winner = i
			case !errors.Is(err, fileio.ErrExist):
				t.Fatalf("round %d: writer %d: err = %v, want nil or ErrExist", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		want := fmt.Sprintf(`{"writer":%d,"round":%d}`, winner, round)
		requireEqual(t, "winner's content", mustRead(t, ctx, fio, path), []byte(want))
	}
}

func testListEntries(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	dir := fileio.Join(root, "t")
	mustWrite(t, ctx, fio, fileio.Join(dir, "schema", "schema-0"), []byte("s"))
	mustWrite(t, ctx, fio, fileio.Join(dir, "bucket-0", "data-1.parquet"), []byte("d"))
	mustWrite(t, ctx, fio, fileio.Join(dir, "bucket-0", "sub", "deep"), []byte("d"))
	mustWrite(t, ctx, fio, fileio.Join(dir, "README"), []byte("hello"))
	mustWrite(t, ctx, fio, fileio.Join(dir, "a-file"), []byte("x"))
	ents, err := fio.List(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	type ent struct {
		name  string
		isDir bool
		size  int64
	}
	want := []ent{{"README", false, 5}, {"a-file", false, 1}, {"bucket-0", true, 0}, {"schema", true, 0}}
	if len(ents) != len(want) {
		t.Fatalf("List(%s) = %+v, want %d entries", dir, ents, len(want))
	}
	for i, w := range want {
		e := ents[i]
		if e.Name != w.name || e.IsDir != w.isDir || (!w.isDir && e.Size != w.size) {
			t.Fatalf("entry %d = %+v, want %+v", i, e, w)
		}
		if e.Path != fileio.Join(dir, w.name) {
			t.Fatalf("entry %d path = %q, want %q", i, e.Path, fileio.Join(dir, w.name))
		}
	}
	// A trailing slash on the directory lists the same entries.
	ents2, err := fio.List(ctx, dir+"/")
	if err != nil {
		t.Fatal(err)
	}
	if len(ents2) != len(want) {
		t.Fatalf("List(%s/) gave %d entries, want %d", dir, len(ents2), len(want))
	}
	// The listed paths are usable.
	requireEqual(t, "read listed path", mustRead(t, ctx, fio, ents[0].Path), []byte("hello"))
	sub, err := fio.List(ctx, ents[2].Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(sub) != 2 || sub[0].Name != "data-1.parquet" || sub[1].Name != "sub" || !sub[1].IsDir {
		t.Fatalf("List(%s) = %+v", ents[2].Path, sub)
	}
}

func testListEach(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	dir := fileio.Join(root, "t")
	for _, p := range []string{"bucket-0/data-1.parquet", "b", "a", "README", "c/d"} {
		mustWrite(t, ctx, fio, fileio.Join(dir, p), []byte(p))
	}
	want, err := fio.List(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []fileio.FileIO{fio, fileio.Observe(fio, func(string, error) {})} {
		var got []fileio.FileInfo
		if err := fileio.ListEach(ctx, f, dir, func(fi fileio.FileInfo) error {
			got = append(got, fi)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("ListEach gave %d entries, List %d", len(got), len(want))
		}
		for i := range got {
			if got[i].Path != want[i].Path || got[i].Name != want[i].Name || got[i].IsDir != want[i].IsDir ||
				got[i].Size != want[i].Size || !got[i].ModTime.Equal(want[i].ModTime) || got[i].IsSymlink != want[i].IsSymlink {
				t.Fatalf("entry %d: ListEach %+v, List %+v", i, got[i], want[i])
			}
		}
		stop := errors.New("stop")
		n := 0
		err := fileio.ListEach(ctx, f, dir, func(fileio.FileInfo) error {
			n++
			if n == 2 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || n != 2 {
			t.Fatalf("ListEach after fn failed on entry 2: %d calls, %v", n, err)
		}
		if err := fileio.ListEach(ctx, f, fileio.Join(root, "no", "such"), func(fi fileio.FileInfo) error {
			return fmt.Errorf("entry %s in a missing directory", fi.Path)
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func testListMissing(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	ents, err := fio.List(ctx, fileio.Join(root, "no", "such", "dir"))
	if err != nil || len(ents) != 0 {
		t.Fatalf("List(missing) = %v, %v; want empty, nil", ents, err)
	}
}

func testManyFiles(t *testing.T, fio fileio.FileIO, root string, opts Options) {
	ctx := ctxFor(t)
	dir := fileio.Join(root, "orphans")
	var paths []string
	for i := 0; i < opts.ManyFiles; i++ {
		paths = append(paths, fileio.Join(dir, fmt.Sprintf("data-%05d.orc", i)))
	}
	// Parallel writes: the point is the listing, not the write path.
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for _, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fileio.WriteFile(ctx, fio, p, []byte(p)); err != nil {
				mu.Lock()
				firstErr = cmpErr(firstErr, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	mustWrite(t, ctx, fio, fileio.Join(dir, "zz", "child"), []byte("c"))
	ents, err := fio.List(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != opts.ManyFiles+1 {
		t.Fatalf("List gave %d entries, want %d", len(ents), opts.ManyFiles+1)
	}
	for i, p := range paths {
		if ents[i].Path != p || ents[i].IsDir {
			t.Fatalf("entry %d = %+v, want file %s", i, ents[i], p)
		}
	}
	if last := ents[len(ents)-1]; last.Name != "zz" || !last.IsDir {
		t.Fatalf("last entry = %+v, want directory zz", last)
	}
	// Include a missing path: DeleteMany must not fail on it.
	toDelete := append(append([]string{}, paths...), fileio.Join(dir, "never-existed"))
	if err := fileio.DeleteAll(ctx, fio, toDelete); err != nil {
		t.Fatalf("DeleteAll: %v", err)
	}
	ents, err = fio.List(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name != "zz" {
		t.Fatalf("after DeleteAll List = %d entries (%+v...), want only zz", len(ents), ents[:min(3, len(ents))])
	}
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func testStat(t *testing.T, fio fileio.FileIO, root string, opts Options) {
	ctx := ctxFor(t)
	path := fileio.Join(root, "manifest", "manifest-1")
	before := time.Now()
	mustWrite(t, ctx, fio, path, make([]byte, 4321))
	after := time.Now()
	st, err := fio.Stat(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size != 4321 || st.IsDir || st.Name != "manifest-1" || st.Path != path {
		t.Fatalf("Stat = %+v", st)
	}
	if st.ModTime.Before(before.Add(-opts.ModTimeSlack)) || st.ModTime.After(after.Add(opts.ModTimeSlack)) {
		t.Fatalf("ModTime %v not within %v of the write (%v..%v)", st.ModTime, opts.ModTimeSlack, before, after)
	}
	// The time is the store's record of the write, not the time of asking.
	time.Sleep(1100 * time.Millisecond)
	st2, err := fio.Stat(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !st2.ModTime.Equal(st.ModTime) {
		t.Fatalf("ModTime changed between two Stats: %v then %v", st.ModTime, st2.ModTime)
	}
	ents, err := fio.List(ctx, fileio.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		t.Fatalf("List = %+v", ents)
	}
	if d := ents[0].ModTime.Sub(st.ModTime); d < -time.Second || d > time.Second {
		t.Fatalf("List ModTime %v and Stat ModTime %v differ by %v", ents[0].ModTime, st.ModTime, d)
	}
	dst, err := fio.Stat(ctx, fileio.Dir(path))
	if err != nil {
		t.Fatalf("Stat of a directory: %v", err)
	}
	if !dst.IsDir {
		t.Fatalf("Stat of a directory = %+v, want IsDir", dst)
	}
}

func testMissing(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	path := fileio.Join(root, "snapshot", "snapshot-404")
	if _, err := fio.Open(ctx, path); !errors.Is(err, fileio.ErrNotExist) {
		t.Fatalf("Open(missing): err = %v, want ErrNotExist", err)
	}
	if _, err := fio.Stat(ctx, path); !errors.Is(err, fileio.ErrNotExist) {
		t.Fatalf("Stat(missing): err = %v, want ErrNotExist", err)
	}
	if ok, err := fileio.Exists(ctx, fio, path); ok || err != nil {
		t.Fatalf("Exists(missing) = %v, %v", ok, err)
	}
	if err := fio.Delete(ctx, path); err != nil {
		t.Fatalf("Delete(missing): %v", err)
	}
	mustWrite(t, ctx, fio, path, []byte("x"))
	if err := fio.Delete(ctx, path); err != nil {
		t.Fatal(err)
	}
	if ok, err := fileio.Exists(ctx, fio, path); ok || err != nil {
		t.Fatalf("Exists after Delete = %v, %v", ok, err)
	}
	if err := fio.Delete(ctx, path); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
}

func testDeleteDir(t *testing.T, fio fileio.FileIO, root string, _ Options) {
	ctx := ctxFor(t)
	dir := fileio.Join(root, "bucket-3")
	path := fileio.Join(dir, "data-1.parquet")
	mustWrite(t, ctx, fio, path, []byte("x"))
	if err := fio.DeleteDir(ctx, dir); err != nil {
		t.Fatalf("DeleteDir(non-empty): %v", err)
	}
	requireEqual(t, "file in a directory DeleteDir was called on", mustRead(t, ctx, fio, path), []byte("x"))
	if err := fio.Delete(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := fio.DeleteDir(ctx, dir); err != nil {
		t.Fatalf("DeleteDir(empty): %v", err)
	}
	ents, err := fio.List(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name == "bucket-3" {
			t.Fatalf("empty directory still listed after DeleteDir")
		}
	}
	if err := fio.DeleteDir(ctx, fileio.Join(root, "never")); err != nil {
		t.Fatalf("DeleteDir(missing): %v", err)
	}
}

func testBigFile(t *testing.T, fio fileio.FileIO, root string, opts Options) {
	ctx := ctxFor(t)
	path := fileio.Join(root, "big", "data-big.parquet")
	data := randomBytes(9, opts.BigFileSize)
	w, err := fio.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// Odd write sizes so part boundaries fall inside writes.
	for off, i := 0, 0; off < len(data); i++ {
		n := min(len(data)-off, 1<<20+i*4099)
		if _, err := w.Write(data[off : off+n]); err != nil {
			t.Fatalf("write at %d: %v", off, err)
		}
		off += n
	}
	if _, err := fio.Stat(ctx, path); !errors.Is(err, fileio.ErrNotExist) {
		t.Fatalf("Stat of a big file before Close: err = %v, want ErrNotExist", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := fio.Stat(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size != int64(len(data)) {
		t.Fatalf("size %d, want %d", st.Size, len(data))
	}
	requireEqual(t, "big file", mustRead(t, ctx, fio, path), data)
	// The tail, across the last part boundary.
	r, err := fio.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := make([]byte, min(3<<20, len(data)/2))
	off := int64(len(data) - len(p) - 17)
	if _, err := r.ReadAt(p, off); err != nil {
		t.Fatal(err)
	}
	requireEqual(t, "big file tail", p, data[off:off+int64(len(p))])
}
