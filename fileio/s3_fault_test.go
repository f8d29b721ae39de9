package fileio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/fileio/fileiotest"
)

// faultEnv puts a fault proxy between a fresh S3 store and the test server.
// direct is a store that talks to the server without the proxy.
func faultEnv(t *testing.T) (s, direct *fileio.S3, proxy *fileiotest.FaultProxy, root string) {
	env := requireS3(t)
	proxy = fileiotest.NewFaultProxy(t, env.endpoint)
	s = newS3(t, env.testConfig(proxy.URL))
	direct = newS3(t, env.testConfig(env.endpoint))
	root = env.newRoot(t, direct)
	// Probe conditional writes now, so that the probe's requests do not
	// count against the faults a test injects.
	if err := s.CheckConditionalWrites(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	s = newS3(t, withTrust(env.testConfig(proxy.URL)))
	return s, direct, proxy, root
}

func withTrust(cfg fileio.S3Config) fileio.S3Config {
	cfg.TrustConditionalWrites = true
	return cfg
}

func readBack(t *testing.T, fio fileio.FileIO, path string, want []byte) {
	t.Helper()
	got, err := fileio.ReadFile(context.Background(), fio, path)
	if err != nil {
		t.Fatalf("read back %s: %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read back %s: %d bytes differ from the %d written", path, len(got), len(want))
	}
}

func TestS3RetriesThroughFaults(t *testing.T) {
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), (11<<20)/16+5) // three parts of 5 MiB
	tests := []struct {
		name  string
		fault fileiotest.Fault
		run   func(t *testing.T, s *fileio.S3, path string)
		setup func(p *fileiotest.FaultProxy)
	}{
		{
			name:  "a PUT throttled twice with 503 SlowDown succeeds",
			fault: fileiotest.Fault{Kind: fileiotest.SlowDown, Match: fileiotest.IsPutObject, Times: 2},
			run: func(t *testing.T, s *fileio.S3, path string) {
				if err := fileio.WriteFile(ctx, s, path, []byte("throttled")); err != nil {
					t.Fatal(err)
				}
				readBack(t, s, path, []byte("throttled"))
			},
		},
		{
			name:  "the third range GET throttled still reads the right bytes",
			fault: fileiotest.Fault{Kind: fileiotest.SlowDown, Match: fileiotest.IsRangeGet, After: 2},
			run: func(t *testing.T, s *fileio.S3, path string) {
				// Larger than the tail Open fetches, so the reads below
				// the tail are range GETs.
				data := bytes.Repeat([]byte("abc"), 200_000)
				if err := fileio.WriteFile(ctx, s, path, data); err != nil {
					t.Fatal(err)
				}
				r, err := s.Open(ctx, path)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				for i := 0; i < 4; i++ {
					p := make([]byte, 100)
					if _, err := r.ReadAt(p, int64(7+i*500)); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(p, data[7+i*500:107+i*500]) {
						t.Fatalf("ReadAt %d returned wrong bytes", i)
					}
				}
			},
		},
		{
			name:  "an upload part cut off mid-body is sent again",
			fault: fileiotest.Fault{Kind: fileiotest.DropBeforeForward, Match: fileiotest.IsUploadPart(2)},
			run: func(t *testing.T, s *fileio.S3, path string) {
				if err := fileio.WriteFile(ctx, s, path, big); err != nil {
					t.Fatal(err)
				}
				readBack(t, s, path, big)
			},
		},
		{
			name:  "a completed multipart upload whose answer was lost is not failed",
			fault: fileiotest.Fault{Kind: fileiotest.DropAfterForward, Match: fileiotest.IsCompleteMultipart},
			run: func(t *testing.T, s *fileio.S3, path string) {
				if err := fileio.WriteFile(ctx, s, path, big); err != nil {
					t.Fatal(err)
				}
				readBack(t, s, path, big)
			},
		},
		{
			// versitygw answers a repeated Complete with success; AWS may
			// answer NoSuchUpload instead, simulated here.
			name:  "a multipart upload whose Complete is answered NoSuchUpload after landing is not failed",
			fault: fileiotest.Fault{Kind: fileiotest.RespondError, Match: fileiotest.IsCompleteMultipart, After: 1, Status: http.StatusNotFound, Code: "NoSuchUpload"},
			run: func(t *testing.T, s *fileio.S3, path string) {
				if err := fileio.WriteFile(ctx, s, path, big); err != nil {
					t.Fatal(err)
				}
				readBack(t, s, path, big)
			},
			setup: func(p *fileiotest.FaultProxy) {
				p.Inject(fileiotest.Fault{Kind: fileiotest.DropAfterForward, Match: fileiotest.IsCompleteMultipart})
			},
		},
		{
			name:  "a GET body cut in the middle is resumed",
			fault: fileiotest.Fault{Kind: fileiotest.CutResponseBody, Match: fileiotest.IsRangeGet},
			run: func(t *testing.T, s *fileio.S3, path string) {
				data := bytes.Repeat([]byte("xyz!"), 100_000)
				if err := fileio.WriteFile(ctx, s, path, data); err != nil {
					t.Fatal(err)
				}
				readBack(t, s, path, data)
			},
		},
		{
			name:  "a delayed list still answers",
			fault: fileiotest.Fault{Kind: fileiotest.Delay, Match: fileiotest.IsList, Delay: 300 * time.Millisecond},
			run: func(t *testing.T, s *fileio.S3, path string) {
				if err := fileio.WriteFile(ctx, s, path, []byte("x")); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				ents, err := s.List(ctx, fileio.Dir(path))
				if err != nil || len(ents) != 1 {
					t.Fatalf("List = %+v, %v", ents, err)
				}
				if time.Since(start) < 300*time.Millisecond {
					t.Fatal("the delay fault did not apply")
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, proxy, root := faultEnv(t)
			if tc.setup != nil {
				tc.setup(proxy)
			}
			proxy.Inject(tc.fault)
			tc.run(t, s, fileio.Join(root, "f"))
			if proxy.Injected(tc.fault.Kind) == 0 {
				t.Fatalf("fault %v never fired", tc.fault.Kind)
			}
		})
	}
}

func TestS3HonoursContextDuringAStall(t *testing.T) {
	s, direct, proxy, root := faultEnv(t)
	path := fileio.Join(root, "f")
	if err := fileio.WriteFile(context.Background(), direct, path, []byte("x")); err != nil {
		t.Fatal(err)
	}
	proxy.Inject(fileiotest.Fault{Kind: fileiotest.Delay, Delay: 10 * time.Second, Times: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Stat(ctx, path)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stat under a stalled server: err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Stat took %v after its context expired", d)
	}
}

func TestS3WriteExclusiveUnderAmbiguousFailures(t *testing.T) {
	ctx := context.Background()
	t.Run("the answer of a successful commit is lost: reported as success, written once", func(t *testing.T) {
		s, direct, proxy, root := faultEnv(t)
		path := fileio.Join(root, "snapshot", "snapshot-1")
		proxy.Inject(fileiotest.Fault{Kind: fileiotest.DropAfterForward, Match: fileiotest.IsConditionalPut})
		if err := s.WriteExclusive(ctx, path, []byte("ours")); err != nil {
			t.Fatalf("WriteExclusive after a lost answer: %v (a commit that happened reported as failed)", err)
		}
		if proxy.Injected(fileiotest.DropAfterForward) != 1 {
			t.Fatal("the fault did not fire")
		}
		readBack(t, direct, path, []byte("ours"))
		if err := direct.WriteExclusive(ctx, path, []byte("theirs")); !errors.Is(err, fileio.ErrExist) {
			t.Fatalf("a second committer: err = %v, want ErrExist", err)
		}
	})
	t.Run("a 500 after the commit landed: reported as success", func(t *testing.T) {
		s, direct, proxy, root := faultEnv(t)
		path := fileio.Join(root, "snapshot", "snapshot-2")
		proxy.Inject(fileiotest.Fault{Kind: fileiotest.ErrorAfterForward, Match: fileiotest.IsConditionalPut})
		if err := s.WriteExclusive(ctx, path, []byte("ours")); err != nil {
			t.Fatalf("WriteExclusive after a 500: %v", err)
		}
		readBack(t, direct, path, []byte("ours"))
	})
	t.Run("our attempt was lost and a rival committed meanwhile: ErrExist, not success", func(t *testing.T) {
		s, direct, proxy, root := faultEnv(t)
		path := fileio.Join(root, "snapshot", "snapshot-3")
		proxy.Inject(fileiotest.Fault{
			Kind: fileiotest.DropBeforeForward, Match: fileiotest.IsConditionalPut,
			OnHit: func() {
				if err := direct.WriteExclusive(ctx, path, []byte("rival")); err != nil {
					t.Errorf("rival commit: %v", err)
				}
			},
		})
		err := s.WriteExclusive(ctx, path, []byte("ours"))
		if !errors.Is(err, fileio.ErrExist) {
			t.Fatalf("WriteExclusive: err = %v, want ErrExist (the rival won)", err)
		}
		readBack(t, direct, path, []byte("rival"))
	})
	t.Run("a rival with identical metadata-free bytes is not mistaken for us when metadata is kept", func(t *testing.T) {
		s, direct, proxy, root := faultEnv(t)
		path := fileio.Join(root, "snapshot", "snapshot-4")
		proxy.Inject(fileiotest.Fault{
			Kind: fileiotest.DropBeforeForward, Match: fileiotest.IsConditionalPut,
			OnHit: func() {
				if err := direct.WriteExclusive(ctx, path, []byte("same")); err != nil {
					t.Errorf("rival commit: %v", err)
				}
			},
		})
		if err := s.WriteExclusive(ctx, path, []byte("same")); !errors.Is(err, fileio.ErrExist) {
			t.Fatalf("WriteExclusive: err = %v, want ErrExist: the write id tells the rival apart", err)
		}
	})
	t.Run("throttled conditional PUTs are retried", func(t *testing.T) {
		s, direct, proxy, root := faultEnv(t)
		path := fileio.Join(root, "snapshot", "snapshot-5")
		proxy.Inject(fileiotest.Fault{Kind: fileiotest.SlowDown, Match: fileiotest.IsConditionalPut, Times: 3})
		if err := s.WriteExclusive(ctx, path, []byte("ours")); err != nil {
			t.Fatal(err)
		}
		if n := proxy.Injected(fileiotest.SlowDown); n != 3 {
			t.Fatalf("%d throttles injected, want 3", n)
		}
		readBack(t, direct, path, []byte("ours"))
	})
}

func TestS3RefusesToCommitWhereConditionalWritesAreIgnored(t *testing.T) {
	env := requireS3(t)
	ctx := context.Background()
	proxy := fileiotest.NewFaultProxy(t, env.endpoint)
	proxy.Inject(fileiotest.Fault{Kind: fileiotest.IgnoreConditional, Times: -1})
	s := newS3(t, env.testConfig(proxy.URL))
	root := env.newRoot(t, s)

	err := s.CheckConditionalWrites(ctx, root)
	if !errors.Is(err, fileio.ErrConditionalWritesUnsupported) {
		t.Fatalf("CheckConditionalWrites: err = %v, want ErrConditionalWritesUnsupported", err)
	}
	path := fileio.Join(root, "snapshot", "snapshot-1")
	err = s.WriteExclusive(ctx, path, []byte("unsafe"))
	if !errors.Is(err, fileio.ErrConditionalWritesUnsupported) {
		t.Fatalf("WriteExclusive: err = %v, want ErrConditionalWritesUnsupported", err)
	}
	if ok, err := fileio.Exists(ctx, s, path); ok || err != nil {
		t.Fatalf("the refused commit was written anyway (exists=%v, err=%v)", ok, err)
	}
	ents, err := s.List(ctx, fileio.Join(root, "snapshot"))
	if err != nil || len(ents) != 0 {
		t.Fatalf("probe left %+v (err %v)", ents, err)
	}
	// Trusting the store explicitly skips the probe.
	trusting := newS3(t, withTrust(env.testConfig(proxy.URL)))
	if err := trusting.WriteExclusive(ctx, path, []byte("trusted")); err != nil {
		t.Fatalf("WriteExclusive with TrustConditionalWrites: %v", err)
	}
}

func TestS3ListPaginates(t *testing.T) {
	s, direct, proxy, root := faultEnv(t)
	ctx := context.Background()
	for i := 0; i < 150; i++ {
		if err := fileio.WriteFile(ctx, direct, fileio.Join(root, fmt.Sprintf("f-%03d", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	lists := countRequests(proxy, fileiotest.IsList)
	ents, err := s.List(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 150 || ents[149].Name != "f-149" {
		t.Fatalf("List gave %d entries", len(ents))
	}
	if n := lists(); n != 2 {
		t.Fatalf("List used %d requests, want 2 pages of at most 100", n)
	}
}

func TestS3DeleteManyBatchesByThousand(t *testing.T) {
	s, direct, proxy, root := faultEnv(t)
	ctx := context.Background()
	var paths, existing []string
	for i := 0; i < 2001; i++ {
		p := fileio.Join(root, fmt.Sprintf("d-%04d", i))
		paths = append(paths, p)
		if i%500 == 0 {
			existing = append(existing, p)
			if err := fileio.WriteFile(ctx, direct, p, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	deletes := countRequests(proxy, func(r *http.Request) bool {
		return r.Method == http.MethodPost && r.URL.Query().Has("delete")
	})
	if err := fileio.DeleteAll(ctx, s, paths); err != nil {
		t.Fatal(err)
	}
	if n := deletes(); n != 3 {
		t.Fatalf("%d DeleteObjects requests for 2001 keys, want 3", n)
	}
	for _, p := range existing {
		if ok, err := fileio.Exists(ctx, direct, p); ok || err != nil {
			t.Fatalf("%s survived DeleteAll (err %v)", p, err)
		}
	}
}

// countRequests counts the requests matching match that pass the proxy.
func countRequests(p *fileiotest.FaultProxy, match func(*http.Request) bool) func() int {
	var mu sync.Mutex
	n := 0
	p.Inject(fileiotest.Fault{Kind: fileiotest.Delay, Match: func(r *http.Request) bool {
		if match(r) {
			mu.Lock()
			n++
			mu.Unlock()
		}
		return false
	}})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// The conditional-write probe runs once per store and bucket in a process:
// a second S3 of the same store (the daemon opens one per warehouse or
// catalog table) commits with one request. PrepareExclusive starts the
// probe ahead of the commit.
func TestS3ProbesConditionalWritesOncePerProcess(t *testing.T) {
	env := requireS3(t)
	ctx := context.Background()
	proxy := fileiotest.NewFaultProxy(t, env.endpoint) // a store of its own (its URL)
	first := newS3(t, env.testConfig(proxy.URL))
	root := env.newRoot(t, first)
	dir := fileio.Join(root, "snapshot")
	fileio.PrepareExclusive(ctx, fileio.Observe(first, func(string, error) {}), dir)
	if err := first.WriteExclusive(ctx, fileio.Join(dir, "snapshot-1"), []byte("one")); err != nil {
		t.Fatal(err)
	}
	if n := proxy.Requests(); n != 4 {
		t.Fatalf("first commit: %d requests, want 4 (probe: PUT, PUT, DELETE; then the PUT)", n)
	}
	second := newS3(t, env.testConfig(proxy.URL))
	fileio.PrepareExclusive(ctx, second, dir)
	if err := second.WriteExclusive(ctx, fileio.Join(dir, "snapshot-2"), []byte("two")); err != nil {
		t.Fatal(err)
	}
	if n := proxy.Requests(); n != 5 {
		t.Fatalf("second store's commit: %d requests in all, want 5 (no second probe)", n)
	}
	ents, err := first.List(ctx, dir)
	if err != nil || len(ents) != 2 {
		t.Fatalf("snapshot dir holds %+v (err %v), want the two snapshots and no probe", ents, err)
	}
}
