package fileio_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/fileio/fileiotest"
)

// On an object store every request costs a round trip: Open learns the size
// and the file's tail with one GET, so a small file costs one request in all
// and a large one a request per range outside its tail.
func TestS3OpenFetchesTheTailWithTheSize(t *testing.T) {
	t.Parallel()
	env := requireS3(t)
	ctx := context.Background()
	proxy := fileiotest.NewFaultProxy(t, env.endpoint)
	s := newS3(t, env.testConfig(proxy.URL))
	seen := 0
	requests := func() int { n := proxy.Requests() - seen; seen += n; return n }
	root := env.newRoot(t, s)

	small := []byte("a small metadata file")
	large := make([]byte, 600_000)
	for i := range large {
		large[i] = byte(i * 7)
	}
	for name, data := range map[string][]byte{"small": small, "large": large, "empty": nil} {
		if err := fileio.WriteFile(ctx, s, root+"/"+name, data); err != nil {
			t.Fatal(err)
		}
	}
	requests()

	got, err := fileio.ReadFile(ctx, s, root+"/small")
	if err != nil || !bytes.Equal(got, small) {
		t.Fatalf("ReadFile(small) = %q, %v", got, err)
	}
	if n := requests(); n != 1 {
		t.Fatalf("reading a small file sent %d requests, want one", n)
	}

	r, err := s.Open(ctx, root+"/large")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(large)) {
		t.Fatalf("Size() = %d, want %d", r.Size(), len(large))
	}
	p := make([]byte, 1000)
	if _, err := r.ReadAt(p, int64(len(large)-1000)); err != nil || !bytes.Equal(p, large[len(large)-1000:]) {
		t.Fatalf("ReadAt in the tail: %v (bytes equal %v)", err, bytes.Equal(p, large[len(large)-1000:]))
	}
	if n := requests(); n != 1 {
		t.Fatalf("Open and a read inside the tail sent %d requests, want only Open's", n)
	}
	// A range across the tail's start: the part before it is fetched, the
	// rest comes from memory.
	off := len(large) - 256<<10 - 500
	p = make([]byte, 2000)
	if _, err := r.ReadAt(p, int64(off)); err != nil || !bytes.Equal(p, large[off:off+2000]) {
		t.Fatalf("ReadAt across the tail: %v", err)
	}
	whole := make([]byte, len(large))
	if _, err := r.ReadAt(whole, 0); err != nil || !bytes.Equal(whole, large) {
		t.Fatalf("ReadAt of the whole file: %v", err)
	}
	if n := requests(); n != 2 {
		t.Fatalf("two reads reaching below the tail sent %d requests, want two", n)
	}

	got, err = fileio.ReadFile(ctx, s, root+"/empty")
	if err != nil || len(got) != 0 {
		t.Fatalf("ReadFile(empty) = %q, %v", got, err)
	}
	if _, err := s.Open(ctx, root+"/missing"); !errors.Is(err, fileio.ErrNotExist) {
		t.Fatalf("Open(missing) = %v, want ErrNotExist", err)
	}
}
