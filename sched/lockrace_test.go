package sched

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
)

// stepper runs contenders one store operation at a time, in an order drawn
// from a seeded random source: every operation of a contender's stepFIO
// waits for its turn, and a turn is given only when every contender still
// running is waiting for one, so a seed fixes the whole interleaving. Each
// turn may also move the contenders' shared clock forward.
type stepper struct {
	mu      sync.Mutex
	cond    *sync.Cond
	rng     *rand.Rand
	waiting map[int]string // contender -> the operation it waits to do
	granted int            // contender whose operation runs, or -1
	live    int
	clock   time.Time
	tickMax time.Duration // each turn advances the clock by [0, tickMax)
	trace   []string
}

func newStepper(seed uint64, contenders int, clock time.Time, tickMax time.Duration) *stepper {
	s := &stepper{rng: rand.New(rand.NewPCG(seed, 12)), waiting: map[int]string{}, granted: -1, live: contenders,
		clock: clock, tickMax: tickMax}
	s.cond = sync.NewCond(&s.mu)
	go s.run()
	return s
}

func (s *stepper) now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock
}

func (s *stepper) run() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for s.live > 0 && !(s.granted == -1 && len(s.waiting) == s.live) {
			s.cond.Wait()
		}
		if s.live == 0 {
			return
		}
		ids := slices.Sorted(func(yield func(int) bool) {
			for id := range s.waiting {
				if !yield(id) {
					return
				}
			}
		})
		id := ids[s.rng.IntN(len(ids))]
		if s.tickMax > 0 {
			s.clock = s.clock.Add(time.Duration(s.rng.Int64N(int64(s.tickMax))))
		}
		op, p, _ := strings.Cut(s.waiting[id], " ")
		s.trace = append(s.trace, fmt.Sprintf("%d:%s %s", id, op, path.Base(p)))
		delete(s.waiting, id)
		s.granted = id
		s.cond.Broadcast()
	}
}

// before waits for id's turn to do op; once every contender finished,
// operations (a winner's Release) run freely.
func (s *stepper) before(id int, op string) {
	s.mu.Lock()
	if s.live == 0 {
		s.mu.Unlock()
		return
	}
	s.waiting[id] = op
	s.cond.Broadcast()
	for s.granted != id {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

func (s *stepper) after() {
	s.mu.Lock()
	if s.live == 0 {
		s.mu.Unlock()
		return
	}
	s.granted = -1
	s.cond.Broadcast()
	s.mu.Unlock()
}

func (s *stepper) finish() {
	s.mu.Lock()
	s.live--
	s.cond.Broadcast()
	s.mu.Unlock()
}

// stepFIO is one contender's view of the store: each operation waits for
// its turn of the stepper.
type stepFIO struct {
	fileio.FileIO
	s  *stepper
	id int
	// created is the clock when the last exclusive create succeeded.
	created time.Time
}

func (f *stepFIO) Open(ctx context.Context, p string) (fileio.Reader, error) {
	f.s.before(f.id, "open "+p)
	defer f.s.after()
	// Read it whole within the turn: a read is one step.
	data, err := fileio.ReadFile(ctx, f.FileIO, p)
	if err != nil {
		return nil, err
	}
	return &bytesReader{data: data}, nil
}

func (f *stepFIO) Create(ctx context.Context, p string) (fileio.Writer, error) {
	return &stepWriter{f: f, ctx: ctx, path: p}, nil
}

func (f *stepFIO) WriteExclusive(ctx context.Context, p string, data []byte) error {
	f.s.before(f.id, "create-exclusive "+p)
	defer f.s.after()
	err := f.FileIO.WriteExclusive(ctx, p, data)
	if err == nil {
		f.created = f.s.clock // our turn: the clock stands still
	}
	return err
}

func (f *stepFIO) List(ctx context.Context, dir string) ([]fileio.FileInfo, error) {
	f.s.before(f.id, "list "+dir)
	defer f.s.after()
	return f.FileIO.List(ctx, dir)
}

func (f *stepFIO) Stat(ctx context.Context, p string) (fileio.FileInfo, error) {
	f.s.before(f.id, "stat "+p)
	defer f.s.after()
	return f.FileIO.Stat(ctx, p)
}

func (f *stepFIO) Delete(ctx context.Context, p string) error {
	f.s.before(f.id, "delete "+p)
	defer f.s.after()
	return f.FileIO.Delete(ctx, p)
}

// stepWriter publishes its whole file in one step, at Close.
type stepWriter struct {
	f    *stepFIO
	ctx  context.Context
	path string
	buf  []byte
}

func (w *stepWriter) Write(p []byte) (int, error) { w.buf = append(w.buf, p...); return len(p), nil }
func (w *stepWriter) Abort() error                { return nil }
func (w *stepWriter) Close() error {
	w.f.s.before(w.f.id, "write "+w.path)
	defer w.f.s.after()
	return fileio.WriteFile(w.ctx, w.f.FileIO, w.path, w.buf)
}

type bytesReader struct {
	data []byte
	off  int64
}

func (r *bytesReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (r *bytesReader) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.off)
	r.off += int64(n)
	return n, err
}
func (r *bytesReader) Close() error { return nil }
func (r *bytesReader) Size() int64  { return int64(len(r.data)) }

// raceTakeOver lets contenders race for the lock of a holder whose lease
// expired, in the interleaving of seed, and returns how many of them
// acquired it.
func raceTakeOver(t *testing.T, fio fileio.FileIO, wh string, seed uint64, contenders int) (int, []string) {
	t.Helper()
	ctx := context.Background()
	const leaseFor = 30 * time.Second
	// The holder dies now; the contenders come two leases later (by their
	// clock: the lock file's mtime is real time, so is their clock).
	dead, err := AcquireLock(ctx, fio, wh, leaseFor, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := newStepper(seed, contenders, time.Now().Add(2*leaseFor), 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []*Lock
	var errs []string
	for i := 0; i < contenders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer st.finish()
			l, err := AcquireLock(ctx, &stepFIO{FileIO: fio, s: st, id: i}, wh, leaseFor, st.now)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won = append(won, l)
			} else if !errors.Is(err, ErrLocked) {
				errs = append(errs, err.Error())
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("seed %d: contenders failed: %q", seed, errs)
	}
	for _, l := range won {
		_ = l.Release(ctx)
	}
	_ = dead.Release(ctx)
	return len(won), st.trace
}

// Two (and three) daemons find the lock of a dead holder expired and take
// it over at once, their store operations interleaved in every order the
// seeds draw: exactly one of them may end up holding it. (The lock of old
// used read-compare-delete then create: two takers that both compared
// before either deleted both held it.)
func TestTakingOverAnExpiredLockHasExactlyOneWinner(t *testing.T) {
	testTakeOverHasOneWinner(t, fileio.NewLocal(), func(t *testing.T) string { return t.TempDir() })
}

func testTakeOverHasOneWinner(t *testing.T, fio fileio.FileIO, newWarehouse func(t *testing.T) string) {
	for _, contenders := range []int{2, 3} {
		for seed := uint64(0); seed < 60; seed++ {
			wh := newWarehouse(t)
			won, trace := raceTakeOver(t, fio, wh, seed, contenders)
			if won != 1 {
				t.Fatalf("%d contenders, seed %d: %d took the lock over; operations:\n%q", contenders, seed, won, trace)
			}
		}
	}
}

// A holder renews late, its clock racing past the deadline while a taker
// tries to take the lock over (the shared clock moves on by up to an eighth
// of the lease at every store operation): at no instant may the taker hold
// the lock while the holder still believes it does — the taker's
// acquisition must come after the holder's deadline (LockMargin before its
// lease's end), whatever the holder's renewals reported.
func TestALateRenewalNeverOverlapsATakeOver(t *testing.T) {
	testLateRenewal(t, fileio.NewLocal(), func(t *testing.T) string { return t.TempDir() }, 400)
}

func testLateRenewal(t *testing.T, fio fileio.FileIO, newWarehouse func(t *testing.T) string, seeds uint64) {
	ctx := context.Background()
	const leaseFor = 30 * time.Second
	took := uint64(0)
	for seed := uint64(0); seed < seeds; seed++ {
		wh := newWarehouse(t)
		t0 := time.Now()
		st := newStepper(seed, 2, t0, 0)
		h, err := AcquireLock(ctx, fio, wh, leaseFor, st.now)
		if err != nil {
			t.Fatal(err)
		}
		// From somewhere between 0.6 and 1 lease on, in steps of up to an
		// eighth of the lease.
		st.mu.Lock()
		st.clock = t0.Add(leaseFor*6/10 + time.Duration(st.rng.Int64N(int64(leaseFor*4/10))))
		st.tickMax = leaseFor / 8
		st.mu.Unlock()
		h.fio = &stepFIO{FileIO: fio, s: st, id: 0}
		var wg sync.WaitGroup
		var beats []error
		var c *Lock
		var cErr error
		var tc time.Time
		wg.Add(2)
		go func() {
			defer wg.Done()
			defer st.finish()
			for i := 0; i < 2; i++ {
				beats = append(beats, h.Heartbeat(ctx))
			}
		}()
		go func() {
			defer wg.Done()
			defer st.finish()
			cf := &stepFIO{FileIO: fio, s: st, id: 1}
			c, cErr = AcquireLock(ctx, cf, wh, leaseFor, st.now)
			tc = cf.created
		}()
		wg.Wait()
		if cErr != nil && !errors.Is(cErr, ErrLocked) {
			t.Fatalf("seed %d: taker: %v", seed, cErr)
		}
		if c != nil {
			took++
			if d := h.Deadline(); tc.Before(d) {
				t.Fatalf("seed %d: taken over at %s while the holder (beats %v) holds until %s; operations:\n%q",
					seed, tc.Sub(t0), beats, d.Sub(t0), st.trace)
			}
		}
	}
	// The seeds must reach both outcomes, or the test proves nothing.
	if took == 0 || took == seeds {
		t.Fatalf("the taker took the lock over in %d of %d interleavings", took, seeds)
	}
	t.Logf("taken over in %d of %d interleavings", took, seeds)
}
