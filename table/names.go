package table

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/compactd/compactd/fileio"
)

// ErrInvalidName is wrapped by every refusal of a database or table name.
var ErrInvalidName = errors.New("invalid name")

// Names as Paimon's catalog sees them (Java Identifier, CatalogUtils):
// "<db>.<object>" splits at the first '.', the object is
// "<table>[$branch_<b>][$<system table>]", and "sys" is the system database.
const (
	SystemDatabase     = "sys"
	systemTableSplit   = "$"
	systemBranchPrefix = "branch_"
)

// CheckDatabaseName refuses database names that are not one directory
// element below the warehouse, or that compactd cannot address as the
// <db> of "<db>.<table>".
func CheckDatabaseName(db string) error {
	if err := checkPathElement("database", db); err != nil {
		return err
	}
	if strings.Contains(db, ".") {
		return fmt.Errorf("database %q: %w: contains '.' (\"<database>.<table>\" splits at the first '.', as Paimon's Identifier does)", db, ErrInvalidName)
	}
	if db == SystemDatabase {
		return fmt.Errorf("database %q: %w: sys is Paimon's system database, which holds no tables to maintain", db, ErrInvalidName)
	}
	return nil
}

// CheckTableName refuses table names that are not one directory element
// below the database directory, and Paimon's branch and system-table names
// ("t$branch_b", "t$snapshots"): compactd maintains the main branch of data
// tables only.
func CheckTableName(name string) error {
	if err := checkPathElement("table", name); err != nil {
		return err
	}
	if base, suffix, ok := strings.Cut(name, systemTableSplit); ok {
		if branch, ok := strings.CutPrefix(suffix, systemBranchPrefix); ok {
			return fmt.Errorf("table %q: %w: names branch %q of table %q; compactd maintains the main branch only (name the table %q)", name, ErrInvalidName, strings.SplitN(branch, systemTableSplit, 2)[0], base, base)
		}
		return fmt.Errorf("table %q: %w: names system table %q of table %q; compactd maintains data tables only (name the table %q)", name, ErrInvalidName, suffix, base, base)
	}
	return nil
}

// checkPathElement refuses what cannot be a single path element on every
// store compactd supports: empty names, separators, "..", control
// characters and invalid UTF-8.
func checkPathElement(kind, name string) error {
	if name == "" {
		return fmt.Errorf("%s name is empty: %w", kind, ErrInvalidName)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("%s %q: %w: not valid UTF-8", kind, name, ErrInvalidName)
	}
	for _, r := range name {
		switch {
		case r == '/' || r == '\\':
			return fmt.Errorf("%s %q: %w: contains %q (a name is one directory, not a path)", kind, name, ErrInvalidName, r)
		case r < 0x20 || r >= 0x7F && r <= 0x9F:
			return fmt.Errorf("%s %q: %w: contains control character U+%04X", kind, name, ErrInvalidName, r)
		}
	}
	if strings.Contains(name, "..") || name == "." {
		return fmt.Errorf("%s %q: %w: contains \"..\" or is \".\"", kind, name, ErrInvalidName)
	}
	return nil
}

// ParseFullName splits "<database>.<table>" at the first '.' (as Paimon's
// Identifier.fromString does) and checks both names. Paths typed instead of
// names ("shop.db/orders", "wh/shop.db/orders") are refused with the name
// that was probably meant.
func ParseFullName(full string) (database, name string, err error) {
	db, tbl, ok := strings.Cut(full, ".")
	if !ok {
		err = fmt.Errorf("want <database>.<table>: %w", ErrInvalidName)
	} else if err = CheckDatabaseName(db); err == nil {
		err = CheckTableName(tbl)
	}
	if err != nil {
		msg := fmt.Sprintf("table name %q: %v", full, err)
		if s := SuggestFullName(full); s != "" {
			msg += fmt.Sprintf("; did you mean %s?", s)
		}
		return "", "", &fullNameError{msg: msg, err: err}
	}
	return db, tbl, nil
}

// fullNameError is the refusal of a full name: its own message (with the
// suggestion appended) over the chain of the name check.
type fullNameError struct {
	msg string
	err error
}

func (e *fullNameError) Error() string { return e.msg }
func (e *fullNameError) Unwrap() error { return e.err }

// SuggestFullName returns "<db>.<table>" when full looks like a table
// directory typed as a name: "<db>.db/<table>" (optionally below a path,
// with a trailing '/') or "<db>.db.<table>". "" when nothing fits.
func SuggestFullName(full string) string {
	s := strings.TrimRight(full, "/")
	var db, tbl string
	if i := strings.LastIndex(s, DatabaseSuffix+"/"); i > 0 {
		db, tbl = s[:i], s[i+len(DatabaseSuffix)+1:]
		if j := strings.LastIndexByte(db, '/'); j >= 0 {
			db = db[j+1:]
		}
	} else if d, rest, ok := strings.Cut(s, "."); ok && strings.HasPrefix(rest, "db.") {
		db, tbl = d, strings.TrimPrefix(rest, "db.")
	} else {
		return ""
	}
	if CheckDatabaseName(db) != nil || CheckTableName(tbl) != nil {
		return ""
	}
	return db + "." + tbl
}

// ResolveTablePath checks the names and returns <warehouse>/<db>.db/<table>,
// refusing (errors wrapping ErrInvalidName or fileio.ErrOutsideRoot) any
// table directory that does not lie inside the warehouse: lexically on
// every store, and on local disks also after resolving symbolic links.
func ResolveTablePath(ctx context.Context, fio fileio.FileIO, warehouse, database, name string) (string, error) {
	if err := CheckDatabaseName(database); err != nil {
		return "", fmt.Errorf("table %s.%s: %w", database, name, err)
	}
	if err := CheckTableName(name); err != nil {
		return "", fmt.Errorf("table %s.%s: %w", database, name, err)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	p := TablePath(warehouse, database, name)
	if err := fileio.CheckInside(ctx, fio, warehouse, p); err != nil {
		return "", fmt.Errorf("table %s.%s in warehouse %s: %w", database, name, warehouse, err)
	}
	return p, nil
}
