package table

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
)

func TestFullNamesThatArePaimonIdentifiersAreAccepted(t *testing.T) {
	for _, c := range []struct{ full, db, table string }{
		{"shop.orders", "shop", "orders"},
		{"db.t", "db", "t"},
		{"my_db.MyTable", "my_db", "MyTable"},
		{"d.t.x", "d", "t.x"}, // Identifier.fromString splits at the first '.'
		{"d.t-1", "d", "t-1"},
		{"d.表", "d", "表"},
		{"d.a b", "d", "a b"},
		{"d.db", "d", "db"},
	} {
		db, tbl, err := ParseFullName(c.full)
		if err != nil || db != c.db || tbl != c.table {
			t.Errorf("ParseFullName(%q) = %q, %q, %v; want %q, %q", c.full, db, tbl, err, c.db, c.table)
		}
	}
}

func TestFullNamesThatAreNotTableNamesAreRefusedSayingWhy(t *testing.T) {
	for _, c := range []struct{ full, want string }{
		{"db.t/../../../victim/t", `contains '/'`},
		{"shop.db/orders", "did you mean shop.orders?"},
		{"db.db/t", "did you mean db.t?"},
		{"/wh/shop.db/orders/", "did you mean shop.orders?"},
		{"wh/shop.db/orders", "did you mean shop.orders?"},
		{"db.t\\x", `contains '\\'`},
		{"db.a..b", "contains \"..\""},
		{"db.t..", "contains \"..\""},
		{"db...", "contains \"..\""},
		{"db.", "table name is empty"},
		{".t", "database name is empty"},
		{"t", "want <database>.<table>"},
		{"", "want <database>.<table>"},
		{"db.t\x00", "control character U+0000"},
		{"db.t\n", "control character U+000A"},
		{"db.t\x7f", "control character U+007F"},
		{"db.t\u0085", "control character U+0085"},
		{"db.t\xff", "not valid UTF-8"},
		{"d\x01.t", "control character U+0001"},
		{"db.t$branch_dev", `names branch "dev" of table "t"`},
		{"db.t$branch_dev$files", `names branch "dev" of table "t"`},
		{"db.t$snapshots", `names system table "snapshots" of table "t"`},
		{"db.t$", `names system table "" of table "t"`},
		{"sys.tables", "system database"},
	} {
		_, _, err := ParseFullName(c.full)
		if err == nil {
			t.Errorf("ParseFullName(%q) accepted", c.full)
			continue
		}
		if !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseFullName(%q): %v; want an ErrInvalidName saying %s", c.full, err, c.want)
		}
	}
	if err := CheckDatabaseName("a.b"); err == nil || !strings.Contains(err.Error(), "contains '.'") {
		t.Errorf("database a.b: %v", err)
	}
}

func TestSuggestFullNameOnlySuggestsValidNames(t *testing.T) {
	for full, want := range map[string]string{
		"shop.db.orders":       "shop.orders",
		"shop.db/orders":       "shop.orders",
		"/a/b/shop.db/orders/": "shop.orders",
		"shop.orders":          "",
		"x.db/a/b":             "",
		"x.db/../t":            "",
		".db/t":                "",
	} {
		if got := SuggestFullName(full); got != want {
			t.Errorf("SuggestFullName(%q) = %q, want %q", full, got, want)
		}
	}
}

func TestResolveTablePathKeepsTablesInsideTheWarehouse(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(wh, "db.db", "t"), filepath.Join(wh, "real.db", "t"), filepath.Join(outside, "t")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := ResolveTablePath(ctx, fio, wh, "db", "t"); err != nil || p != filepath.Join(wh, "db.db", "t") {
		t.Fatalf("plain table: %q, %v", p, err)
	}
	if _, err := ResolveTablePath(ctx, fio, wh, "db", "missing"); err != nil {
		t.Fatalf("a missing table resolves (opening it then fails as not a table): %v", err)
	}
	if _, err := ResolveTablePath(ctx, fio, filepath.Join(dir, "nowarehouse"), "db", "t"); err != nil {
		t.Fatalf("missing warehouse: %v", err)
	}
	// A symlink that stays inside the warehouse is fine.
	if err := os.Symlink(filepath.Join(wh, "real.db", "t"), filepath.Join(wh, "db.db", "alias")); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveTablePath(ctx, fio, wh, "db", "alias"); err != nil {
		t.Fatalf("symlink inside the warehouse: %v", err)
	}
	// A symlinked table or database directory leading out is refused, and
	// so is a dangling one (creating through it would write outside).
	links := map[string]string{
		filepath.Join(wh, "db.db", "out"):      filepath.Join(outside, "t"),
		filepath.Join(wh, "evil.db"):           outside,
		filepath.Join(wh, "db.db", "dangling"): filepath.Join(outside, "nothing"),
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range [][2]string{{"db", "out"}, {"evil", "t"}, {"evil", "missing"}, {"db", "dangling"}} {
		_, err := ResolveTablePath(ctx, fio, wh, c[0], c[1])
		if err == nil {
			t.Errorf("%s.%s: symlink out of the warehouse accepted", c[0], c[1])
			continue
		}
		if !strings.Contains(err.Error(), c[0]+"."+c[1]) {
			t.Errorf("%s.%s: error does not name the table: %v", c[0], c[1], err)
		}
	}
	_, err := ResolveTablePath(ctx, fio, wh, "db", "out")
	if !errors.Is(err, fileio.ErrOutsideRoot) {
		t.Errorf("want ErrOutsideRoot, got %v", err)
	}
	// Open refuses too, before reading anything.
	if _, err := Open(ctx, fio, wh, "db", "../../outside/t"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Open with a traversal name: %v", err)
	}
	if _, err := Open(ctx, fio, wh, "db", "out"); !errors.Is(err, fileio.ErrOutsideRoot) {
		t.Errorf("Open through a symlink out of the warehouse: %v", err)
	}
}

func TestListingSkipsDirectoriesThatAreNotAddressableNames(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	wh := t.TempDir()
	for _, d := range []string{"db.db/good", "db.db/t$branch_x", "a.b.db/t", "sys.db/t"} {
		if err := os.MkdirAll(filepath.Join(wh, d, SchemaDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wh, d, SchemaDir, SchemaFileName(0)), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dbs, skipped, err := ListDatabases(ctx, fio, wh)
	if err != nil || len(dbs) != 1 || dbs[0] != "db" {
		t.Fatalf("databases %v, %v", dbs, err)
	}
	if len(skipped) != 2 || skipped[0].Path != filepath.Join(wh, "a.b.db") || skipped[1].Path != filepath.Join(wh, "sys.db") ||
		!errors.Is(skipped[0].Err, ErrInvalidName) {
		t.Fatalf("skipped databases %v", skipped)
	}
	tables, skipped, err := ListTables(ctx, fio, wh, "db")
	if err != nil || len(tables) != 1 || tables[0] != "good" {
		t.Fatalf("tables %v, %v", tables, err)
	}
	if len(skipped) != 1 || skipped[0].Path != filepath.Join(wh, "db.db", "t$branch_x") || !strings.Contains(skipped[0].Err.Error(), "branch") {
		t.Fatalf("skipped tables %v", skipped)
	}
	if _, _, err := ListTables(ctx, fio, wh, "../x"); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("ListTables of a traversal database: %v", err)
	}
}

// FuzzParseFullName: any full name ParseFullName accepts resolves to a
// table directory exactly two elements below the warehouse, on a local
// and an S3 warehouse, lexically and after cleaning.
func FuzzParseFullName(f *testing.F) {
	for _, s := range []string{
		"shop.orders", "db.t/../../../victim/t", "db.db/t", "shop.db/orders", "a..b", "db.t.x",
		"db.t$branch_x", "db.t$snapshots", "sys.t", "d.\x00", "d.t\\..\\x", "d...", "d. ", "d.%2e%2e",
		"d.t/", "d./t", ".", "..", "d..", "d.表", "d.\u2028",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, full string) {
		db, tbl, err := ParseFullName(full)
		if err != nil {
			if !errors.Is(err, ErrInvalidName) {
				t.Fatalf("ParseFullName(%q): refusal does not wrap ErrInvalidName: %v", full, err)
			}
			return
		}
		if db+"."+tbl != full {
			t.Fatalf("ParseFullName(%q) = %q, %q: does not split the name", full, db, tbl)
		}
		for _, wh := range []string{"/data/wh", "s3://bucket/wh", "file:///data/wh"} {
			p := TablePath(wh, db, tbl)
			if !fileio.LexicallyInside(wh, p) {
				t.Fatalf("%q in %s resolves to %q, outside the warehouse", full, wh, p)
			}
			_, rest, _ := strings.Cut(p, "://")
			if !strings.Contains(wh, "://") {
				rest = p
			}
			_, whRest, _ := strings.Cut(wh, "://")
			if !strings.Contains(wh, "://") {
				whRest = wh
			}
			clean := path.Clean(rest)
			if clean != rest || path.Dir(path.Dir(clean)) != whRest {
				t.Fatalf("%q in %s resolves to %q (clean %q), not two elements below the warehouse", full, wh, p, clean)
			}
		}
	})
}

// objectStore is a store without symbolic links (as S3): RealPath returns
// the path unchanged, so only the lexical check can refuse, and nothing else
// is asked of the store.
type objectStore struct{ fileio.FileIO }

func (objectStore) RealPath(ctx context.Context, p string) (string, error) { return p, ctx.Err() }

func TestResolveTablePathOnAnObjectStoreIsLexical(t *testing.T) {
	ctx := context.Background()
	fio := objectStore{}
	p, err := ResolveTablePath(ctx, fio, "s3://bucket/wh", "shop", "orders")
	if err != nil || p != "s3://bucket/wh/shop.db/orders" {
		t.Fatalf("%q, %v", p, err)
	}
	for _, tbl := range []string{"t/../../../victim/t", "..", "t\\x", "t$branch_b"} {
		if _, err := ResolveTablePath(ctx, fio, "s3://bucket/wh", "db", tbl); !errors.Is(err, ErrInvalidName) {
			t.Errorf("%q: %v", tbl, err)
		}
	}
	if _, err := Open(ctx, fio, "s3://bucket/wh", "db", "t/../../x"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Open: %v", err)
	}
}
