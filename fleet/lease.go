package fleet

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

// lease is a unit's advisory locks, held by the session of conn: they
// end when the unit releases them or when the connection dies (a killed
// replica's, a replica cut off from the database).
type lease struct {
	conn *pgxpool.Conn
	f    *Fleet
	done bool // released: a second release does nothing
}

// lockKey is an advisory lock's key: a 64-bit hash of what it guards. Two
// names hashing alike only make two units wait for each other.
func lockKey(parts ...string) int64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return int64(h.Sum64())
}

// keys are the locks a unit takes: shared ones, exclusive ones. An
// open-ended bucket range locks MaxBucketsPerUnit buckets from its start
// and the table's tail (every leader's ranges start at multiples of one
// buckets-per-unit, so an open range never starts below another's end).
func keys(u sched.Unit) (shared, exclusive []int64) {
	tbl := lockKey("table", u.Warehouse, u.Table)
	if u.Buckets == nil || (u.Kind != policy.Compact && u.Kind != policy.FullCompaction) {
		return nil, []int64{tbl}
	}
	to := u.Buckets.To
	if to <= 0 {
		to = u.Buckets.From + policy.MaxBucketsPerUnit
		exclusive = append(exclusive, lockKey("tail", u.Warehouse, u.Table))
	}
	for b := u.Buckets.From; b < to; b++ {
		exclusive = append(exclusive, lockKey("bucket", u.Warehouse, u.Table, fmt.Sprint(b)))
	}
	return []int64{tbl}, exclusive
}

// slotKeys are the quota slots of u's table and kind when at most limit
// of its bucket-range units may run at once: a unit holds one of them
// (exclusive) for its run, so the count of running units is kept by
// PostgreSQL across replicas and ends with a dead replica's connection.
// Whole-table units hold the table's lock exclusively, so they need none.
func slotKeys(u sched.Unit, limit int) []int64 {
	if limit <= 0 || u.Buckets == nil {
		return nil
	}
	ks := make([]int64, limit)
	for i := range ks {
		ks[i] = lockKey("slot", u.Warehouse, u.Table, string(u.Kind), fmt.Sprint(i))
	}
	return ks
}

// lease takes u's locks on a connection of its own, all or none, and with
// limit > 0 one of the limit quota slots of its table (slotKeys); ok is
// false when another unit holds one of its locks or every slot.
func (f *Fleet) lease(ctx context.Context, u sched.Unit, limit int) (*lease, bool, error) {
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	conn, err := f.pool.Acquire(actx)
	cancel()
	if err != nil {
		return nil, false, fmt.Errorf("coordinator: lease connection for %s: %w", u, err)
	}
	shared, exclusive := keys(u)
	var ok bool
	// One statement, so the locks are taken together or not at all: a
	// false anywhere releases those taken.
	err = conn.QueryRow(ctx, `SELECT coalesce(bool_and(pg_try_advisory_lock_shared(k)), true) FROM unnest($1::bigint[]) k`, shared).Scan(&ok)
	if err == nil && ok {
		err = conn.QueryRow(ctx, `SELECT coalesce(bool_and(pg_try_advisory_lock(k)), true) FROM unnest($1::bigint[]) k`, exclusive).Scan(&ok)
	}
	if slots := slotKeys(u, limit); err == nil && ok && len(slots) > 0 {
		// One slot, tried in turn (a statement could take several).
		ok = false
		for _, k := range slots {
			if err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, k).Scan(&ok); err != nil || ok {
				break
			}
		}
	}
	if err != nil || !ok {
		// Whatever was taken goes with the session's other locks.
		_, uerr := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock_all()")
		if uerr != nil {
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck // dropping the session drops its locks
		}
		conn.Release()
		if err != nil {
			return nil, false, fmt.Errorf("coordinator: lease %s: %w", u, err)
		}
		return nil, false, nil
	}
	return &lease{conn: conn, f: f}, true, nil
}

// release gives the locks up; if that fails the session is closed, which
// releases them too.
func (l *lease) release() {
	if l.done {
		return
	}
	l.done = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock_all()"); err != nil {
		l.conn.Conn().Close(ctx) //nolint:errcheck // closing ends the session and its locks
	}
	l.conn.Release()
}

// watch pings the lease's connection every period; when a ping fails the
// locks may be gone, so the unit is cancelled (cancel) before another
// replica can take its buckets for long.
func (l *lease) watch(ctx context.Context, period time.Duration, cancel context.CancelCauseFunc) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Not cancelled with the unit: pgx closes a connection whose
		// query's context ends mid-flight, so a ping under way when the
		// unit finished closed the lease connection, and the unit log's
		// finish (written on it next) was lost. The caller waits for this
		// ping (at most period) before it uses the connection again.
		pctx, pcancel := context.WithTimeout(context.WithoutCancel(ctx), period)
		err := l.conn.Ping(pctx)
		pcancel()
		if err != nil && ctx.Err() == nil {
			l.f.log.Error("lease connection lost: cancelling the unit", "err", err)
			cancel(fmt.Errorf("coordinator: lease connection lost: %w", err))
			return
		}
	}
}
