package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// The lock table and its columns, as Java's JdbcUtils names them.
const (
	locksTable = "paimon_distributed_locks"
	// DefaultLockAcquireTimeout and DefaultLockCheckMaxSleep are Java's
	// lock-acquire-timeout and lock-check-max-sleep defaults.
	DefaultLockAcquireTimeout = 8 * time.Minute
	DefaultLockCheckMaxSleep  = 8 * time.Second
	// DefaultLockKeyMaxLength is Java's lock-key-max-length.
	DefaultLockKeyMaxLength = 255
)

// lockSQL are one dialect's statements, Java's with the driver's
// placeholders. The expiry is the database's clock against the row's
// acquired_at: no client clock takes part.
type lockSQL struct {
	create, releaseExpired, acquire, release string
}

func lockStatements(d Dialect) lockSQL {
	create := "CREATE TABLE " + locksTable + "(lock_id VARCHAR(%d) NOT NULL," +
		"acquired_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL," +
		"expire_time_seconds BIGINT DEFAULT 0 NOT NULL,PRIMARY KEY (lock_id))"
	if d == Postgres {
		return lockSQL{
			create:         create,
			releaseExpired: "DELETE FROM " + locksTable + " WHERE EXTRACT(EPOCH FROM AGE(NOW(), acquired_at)) > expire_time_seconds AND lock_id = $1",
			acquire:        "INSERT INTO " + locksTable + " (lock_id, expire_time_seconds) VALUES ($1, $2)",
			release:        "DELETE FROM " + locksTable + " WHERE lock_id = $1",
		}
	}
	return lockSQL{
		create:         create,
		releaseExpired: "DELETE FROM " + locksTable + " WHERE TIMESTAMPDIFF(SECOND, acquired_at, NOW()) > expire_time_seconds AND lock_id = ?",
		acquire:        "INSERT INTO " + locksTable + " (lock_id, expire_time_seconds) VALUES (?, ?)",
		release:        "DELETE FROM " + locksTable + " WHERE lock_id = ?",
	}
}

// Lock is Paimon's JDBC distributed lock (Java's JdbcCatalogLock) for the
// tables of one catalog key.
type Lock struct {
	db         *sql.DB
	sql        lockSQL
	catalogKey string
	// AcquireTimeout bounds the wait for the lock and is also the expiry
	// written into the row, in whole seconds, as Java writes it: every
	// writer of the table must use the same value.
	acquireTimeout time.Duration
	checkMaxSleep  time.Duration
	display        string
	now            func() time.Time
}

// ErrLockTimeout is wrapped when the lock could not be acquired in time.
var ErrLockTimeout = errors.New("could not acquire the catalog lock in time")

// Key is the lock row's id for a table: "<catalog-key>.<database>.<table>".
func (l *Lock) Key(database, table string) string {
	return fmt.Sprintf("%s.%s.%s", l.catalogKey, database, table)
}

// expireSeconds is what Java stores as expire_time_seconds: the acquire
// timeout in milliseconds divided by 1000.
func (l *Lock) expireSeconds() int64 { return l.acquireTimeout.Milliseconds() / 1000 }

// minPublishTime is the least lock time left in which a publish starts:
// with less, the write could land after another writer took the lock over.
func (l *Lock) minPublishTime() time.Duration {
	return min(5*time.Second, time.Duration(l.expireSeconds())*time.Second/4)
}

// Run holds the lock of database.table while fn runs, as Java's
// runWithLock does, with two things Java leaves out. fn's context ends
// before the row expires (by the database's clock the row can be taken
// over from then on), so nothing fn does under it outlives the lock. And
// the release deletes the row only while it is certainly still ours: a
// release after the expiry could delete another holder's row, so it is
// left to expire instead.
func (l *Lock) Run(ctx context.Context, database, table string, fn func(ctx context.Context) error) error {
	key := l.Key(database, table)
	held, err := l.acquire(ctx, key)
	if err != nil {
		return err
	}
	// held is taken before the INSERT that won, so it is no later than the
	// row's acquired_at: held+expiry is no later than the row's expiry. The
	// margin covers clock rate differences and second-truncated timestamps.
	expiry := time.Duration(l.expireSeconds()) * time.Second
	margin := min(expiry/4, 30*time.Second)
	safeUntil := held.Add(expiry - margin)
	fctx, cancel := context.WithDeadline(ctx, safeUntil)
	ferr := fn(fctx)
	cancel()
	if l.now().Before(safeUntil) {
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer rcancel()
		if _, err := l.db.ExecContext(rctx, l.sql.release, key); err != nil {
			// The row expires by itself; until then writers wait for it.
			slog.Warn("release catalog lock", "catalog", l.display, "lock", key, "err", err)
		}
	} else {
		slog.Warn("catalog lock held past its safe window; leaving the row to expire", "catalog", l.display, "lock", key, "held", l.now().Sub(held))
	}
	return ferr
}

// acquire takes the lock as Java's JdbcCatalogLock.lock does: one try,
// then tries with sleeps doubling from 100 ms up to checkMaxSleep until
// acquireTimeout has passed. It returns the local time taken just before
// the INSERT that won.
func (l *Lock) acquire(ctx context.Context, key string) (time.Time, error) {
	start := l.now()
	next := 50 * time.Millisecond
	var last error
	for {
		at := l.now()
		ok, err := l.tryAcquire(ctx, key)
		if ok {
			return at, nil
		}
		if err != nil {
			last = err
		}
		if l.now().Sub(start) > l.acquireTimeout {
			break
		}
		next = min(next*2, l.checkMaxSleep)
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("catalog lock %s: %w", key, ctx.Err())
		case <-time.After(next):
		}
	}
	if last != nil {
		return time.Time{}, fmt.Errorf("catalog lock %s on %s: %w after %s (last error: %w)", key, l.display, ErrLockTimeout, l.now().Sub(start).Round(time.Millisecond), last)
	}
	return time.Time{}, fmt.Errorf("catalog lock %s on %s: %w after %s (another writer holds it)", key, l.display, ErrLockTimeout, l.now().Sub(start).Round(time.Millisecond))
}

// tryAcquire is Java's JdbcUtils.acquire: delete the key's row if it
// expired, then insert it. A duplicate key means someone holds the lock
// (false, nil); Java treats every failed INSERT as "not acquired" and so
// does this, but other errors are returned for the timeout's message.
func (l *Lock) tryAcquire(ctx context.Context, key string) (bool, error) {
	if _, err := l.db.ExecContext(ctx, l.sql.releaseExpired, key); err != nil {
		return false, fmt.Errorf("clear expired lock: %w", err)
	}
	res, err := l.db.ExecContext(ctx, l.sql.acquire, key, l.expireSeconds())
	if err != nil {
		if isDuplicate(err) {
			return false, nil
		}
		return false, fmt.Errorf("insert lock row: %w", err)
	}
	n, err := res.RowsAffected()
	return err == nil && n > 0, nil
}

// isDuplicate says whether err is a primary-key violation (PostgreSQL
// SQLSTATE 23505, MySQL/MariaDB error 1062).
func isDuplicate(err error) bool { return sqlState(err, "23505", 1062) }

// isMissingTable says whether err reports an undefined table (42P01,
// MySQL/MariaDB 1146).
func isMissingTable(err error) bool { return sqlState(err, "42P01", 1146) }

// isExistingTable says whether err reports a table that already exists
// (42P07, MySQL/MariaDB 1050): another process created it first.
func isExistingTable(err error) bool { return sqlState(err, "42P07", 1050) }

func sqlState(err error, pgCode string, myNumber uint16) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == pgCode
	}
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == myNumber
}
