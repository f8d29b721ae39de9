package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
)

// Changelog row fields the oracles add next to the table's columns.
const (
	// KindField is the row's RowKind: "+I", "-U", "+U" or "-D".
	KindField = "_kind"
	// SnapshotField is the snapshot whose changelog (or, for a stream's first plan, whose
	// data) the row came from.
	SnapshotField = "_snapshot"
	// BucketField is the row's bucket.
	BucketField = "_bucket"
	// PlanField numbers a streaming reader's plans (0 = its first plan).
	PlanField = "_plan"
)

// ChangelogRequest is the batch request of the changelog verb: every snapshot in (from, to]
// read on its own with Java's incremental changelog read (incremental-between='s-1,s',
// incremental-between-scan-mode=changelog), rows tagged with KindField, SnapshotField and
// BucketField, splits sorted by (partition, bucket), rows in Java's read order inside a split.
func ChangelogRequest(warehouse, table string, from, to int64) BatchRequest {
	return BatchRequest{Verb: "changelog", Flags: map[string]string{
		"warehouse": warehouse, "table": table,
		"from": strconv.FormatInt(from, 10), "to": strconv.FormatInt(to, 10)}}
}

// Changelog returns the changelog Java Paimon reads between snapshots from (exclusive) and to
// (inclusive); see ChangelogRequest for the form.
func (j *JavaOracle) Changelog(warehouse, table string, from, to int64) []Row {
	j.tb.Helper()
	r := ChangelogRequest(warehouse, table, from, to)
	return mustRows(j.tb, j.must(nil, r.Verb, flagList(r.Flags)...))
}

// ChangelogBetween is one incremental read of the whole range (incremental-between='from,to'):
// the same rows as Changelog, all with SnapshotField = to.
func (j *JavaOracle) ChangelogBetween(warehouse, table string, from, to int64) []Row {
	j.tb.Helper()
	r := ChangelogRequest(warehouse, table, from, to)
	r.Flags["per-snapshot"] = "false"
	return mustRows(j.tb, j.must(nil, r.Verb, flagList(r.Flags)...))
}

// ChangelogErr returns the changelog pypaimon's streaming reader reads for the snapshots in
// (from, to] that have one (same form as JavaOracle.Changelog); errors wrap ErrUnsupported when
// pypaimon refuses the table.
func (p *PythonOracle) ChangelogErr(ctx context.Context, warehouse, table string, from, to int64) ([]Row, error) {
	r := ChangelogRequest(warehouse, table, from, to)
	out, err := p.Run(ctx, r.Verb, flagList(r.Flags)...)
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 {
			return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		return nil, err
	}
	return ParseRows(out)
}

func flagList(m map[string]string) []string {
	// A fixed order keeps error messages stable.
	keys := []string{"warehouse", "table", "from", "to", "per-snapshot"}
	var out []string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out = append(out, "--"+k, v)
		}
	}
	return out
}

// StreamTarget is one streaming reader of a Stream.
type StreamTarget struct {
	ID        string            `json:"id"`
	Warehouse string            `json:"warehouse"`
	Table     string            `json:"table"`
	Options   map[string]string `json:"options,omitempty"` // dynamic options, e.g. scan.mode
	// Until, if positive, stops the reader once it has consumed that snapshot (as Stream.Until).
	Until int64 `json:"until,omitempty"`
}

// Stream is a running Java process with one StreamTableScan per target (verb stream): each
// reader made its first plan before StartStream returned and keeps polling for new snapshots.
type Stream struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	cancel context.CancelFunc
	// Next is each reader's next snapshot after its first plan (0: no snapshot yet).
	Next map[string]int64

	mu     sync.Mutex
	rows   map[string][]Row
	done   map[string]int64
	ended  bool
	stderr lockedBuffer
	wait   chan error
}

// StartStream starts the streaming readers and returns once every one has made its first plan
// (so that whatever is committed afterwards reaches them through their follow-up plans). Stop
// each with Until, then collect with Wait.
func (j *JavaOracle) StartStream(ctx context.Context, targets []StreamTarget) (*Stream, error) {
	spec, err := json.Marshal(targets)
	if err != nil {
		return nil, fmt.Errorf("encode stream targets: %w", err)
	}
	s := &Stream{rows: map[string][]Row{}, done: map[string]int64{}, wait: make(chan error, 1)}
	p, err := j.startVerb(ctx, "stream", []string{"--targets", string(spec), "--timeout-ms", strconv.FormatInt(Timeout.Milliseconds(), 10)}, &s.stderr)
	if err != nil {
		return nil, err
	}
	s.cmd, s.cancel, s.stdin = p.cmd, p.cancel, p.stdin
	stdout := p.stdout
	ready := make(chan map[string]*int64, 1)
	go s.readLoop(stdout, ready)
	select {
	case next, ok := <-ready:
		if !ok {
			err := <-s.wait
			s.cancel()
			return nil, fmt.Errorf("java stream exited before it was ready: %w\n%s", err, s.stderrTail())
		}
		s.Next = map[string]int64{}
		for id, n := range next {
			if n != nil {
				s.Next[id] = *n
			}
		}
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, fmt.Errorf("java stream not ready: %w\n%s", ctx.Err(), s.stderrTail())
	}
}

func (s *Stream) readLoop(stdout io.Reader, ready chan<- map[string]*int64) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	sentReady := false
	var parseErr error
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte(`{"__compactd_stream_ready"`)):
			var r struct {
				Next map[string]*int64 `json:"next"`
			}
			if err := json.Unmarshal(line, &r); err != nil && parseErr == nil {
				parseErr = fmt.Errorf("stream ready line %q: %w", line, err)
			}
			if !sentReady {
				sentReady = true
				ready <- r.Next
			}
		case bytes.HasPrefix(line, []byte(`{"__compactd_stream_done"`)):
			var d struct {
				ID   string `json:"__compactd_stream_done"`
				Next int64  `json:"next"`
			}
			if err := json.Unmarshal(line, &d); err != nil && parseErr == nil {
				parseErr = fmt.Errorf("stream done line %q: %w", line, err)
			}
			s.mu.Lock()
			s.done[d.ID] = d.Next
			s.mu.Unlock()
		case bytes.HasPrefix(line, []byte(`{"__compactd_stream_end"`)):
			s.mu.Lock()
			s.ended = true
			s.mu.Unlock()
		default:
			rows, err := ParseRows(line)
			if err != nil || len(rows) != 1 {
				if parseErr == nil {
					parseErr = fmt.Errorf("stream row %q: %w", line, err)
				}
				continue
			}
			r := rows[0]
			id, _ := r["_target"].(string)
			delete(r, "_target")
			s.mu.Lock()
			s.rows[id] = append(s.rows[id], r)
			s.mu.Unlock()
		}
	}
	if !sentReady {
		close(ready)
	}
	err := s.cmd.Wait()
	if err == nil {
		err = parseErr
	}
	if err == nil {
		err = sc.Err()
	}
	s.wait <- err
}

// Until tells reader id to stop once it has consumed snapshot snapshot ("" = every reader).
func (s *Stream) Until(id string, snapshot int64) error {
	b, _ := json.Marshal(map[string]any{"target": id, "until": snapshot}) // plain types
	if _, err := s.stdin.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("stream: send until: %w", err)
	}
	return nil
}

// Wait closes stdin (every reader must have been given an Until), waits until every reader has
// consumed its snapshot and the process has exited, and returns each reader's rows in the order
// received (with KindField, SnapshotField, BucketField and PlanField).
func (s *Stream) Wait() (map[string][]Row, error) {
	if err := s.stdin.Close(); err != nil {
		return nil, fmt.Errorf("stream: close stdin: %w", err)
	}
	err := <-s.wait
	s.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("java stream: %w\n%s", err, tail(s.stderr.String(), 4000))
	}
	if !s.ended {
		return nil, fmt.Errorf("java stream exited without its end line\n%s", tail(s.stderr.String(), 4000))
	}
	return s.rows, nil
}

// Close kills the process if it still runs (for cleanup after a failure).
func (s *Stream) Close() {
	s.cancel()
}

func (s *Stream) stderrTail() string { return tail(s.stderr.String(), 4000) }
