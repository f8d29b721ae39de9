//go:build ignore

// port-table-split rewrites Go code written against the old table package
// to the split of issue 13 item 3: the manifest codec in table/manifest,
// Java's arithmetic and text forms in internal/javacompat, and the
// schema-evolution casts in table/cast. Run it through
// scripts/port-table-split.sh on a branch that predates the split.
//
// It rewrites code, not guesses: a selector table.X whose X moved, and, in
// files of package table, an identifier X that the file does not declare
// itself (the parser's unresolved identifiers: no field names, no struct
// literal keys, no locals). Qualified mentions in comments (table.X) are
// rewritten too. Imports are added and removed to match, then the file is
// gofmt-ed. What it cannot do is listed by -manual.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const (
	modTable      = "github.com/compactd/compactd/table"
	modManifest   = "github.com/compactd/compactd/table/manifest"
	modJavacompat = "github.com/compactd/compactd/internal/javacompat"
	modDatafile   = "github.com/compactd/compactd/table/datafile"
	modCast       = "github.com/compactd/compactd/table/cast"
)

type target struct{ pkg, name string } // pkg "" = stays in table under a new name

// renames maps every exported name of package table that moved or changed.
var renames = map[string]target{
	// table/manifest: the codec's records.
	"ManifestEntry":                {"manifest", "Entry"},
	"DataFileMeta":                 {"manifest", "DataFileMeta"},
	"ManifestFileMeta":             {"manifest", "ListEntry"},
	"IndexManifestEntry":           {"manifest", "IndexEntry"},
	"IndexFileMeta":                {"manifest", "IndexFileMeta"},
	"DeletionVectorMeta":           {"manifest", "DeletionVectorMeta"},
	"GlobalIndexMeta":              {"manifest", "GlobalIndexMeta"},
	"FileKind":                     {"manifest", "FileKind"},
	"FileKindAdd":                  {"manifest", "FileKindAdd"},
	"FileKindDelete":               {"manifest", "FileKindDelete"},
	"FileSource":                   {"manifest", "FileSource"},
	"FileSourceAppend":             {"manifest", "FileSourceAppend"},
	"FileSourceCompact":            {"manifest", "FileSourceCompact"},
	"FileIdentifier":               {"manifest", "FileIdentifier"},
	"LocalMillis":                  {"manifest", "LocalMillis"},
	"IndexTypeHash":                {"manifest", "IndexTypeHash"},
	"IndexTypeDeletionVectors":     {"manifest", "IndexTypeDeletionVectors"},
	"SimpleStats":                  {"manifest", "SimpleStats"},
	"EmptySimpleStats":             {"manifest", "EmptySimpleStats"},
	"ErrCorruptManifest":           {"manifest", "ErrCorrupt"},
	"ErrUnsupportedManifestFormat": {"manifest", "ErrUnsupportedFormat"},
	// table/manifest: reading and writing the three kinds of file.
	"ReadManifest":        {"manifest", "Read"},
	"DecodeManifest":      {"manifest", "Decode"},
	"EncodeManifest":      {"manifest", "Encode"},
	"WriteManifest":       {"manifest", "Write"},
	"ReadManifestList":    {"manifest", "ReadList"},
	"DecodeManifestList":  {"manifest", "DecodeList"},
	"EncodeManifestList":  {"manifest", "EncodeList"},
	"WriteManifestList":   {"manifest", "WriteList"},
	"ReadIndexManifest":   {"manifest", "ReadIndex"},
	"DecodeIndexManifest": {"manifest", "DecodeIndex"},
	"EncodeIndexManifest": {"manifest", "EncodeIndex"},
	"WriteIndexManifest":  {"manifest", "WriteIndex"},
	// Stays in table (needs the partition types), renamed for its result.
	"NewManifestFileMeta": {"", "NewManifestListEntry"},
	// internal/javacompat.
	"FloorDiv":        {"javacompat", "FloorDiv"},
	"FloorMod":        {"javacompat", "FloorMod"},
	"JavaFloatString": {"javacompat", "FloatString"},
}

// datafileRenames maps the names of package table/datafile that moved to
// table/cast (the unexported ones matter inside package datafile).
var datafileRenames = map[string]target{
	"ErrUnsupportedEvolution": {"cast", "ErrUnsupportedEvolution"},
	"castFor":                 {"cast", "For"},
	"castFunc":                {"cast", "Func"},
}

// sources are the packages names moved out of.
var sources = []struct {
	path, name string
	renames    map[string]target
	comment    *regexp.Regexp
}{
	{modTable, "table", renames, regexp.MustCompile(`\btable\.[A-Z][A-Za-z0-9]*\b`)},
	{modDatafile, "datafile", datafileRenames, regexp.MustCompile(`\bdatafile\.[A-Z][A-Za-z0-9]*\b`)},
}

var importPath = map[string]string{"manifest": modManifest, "javacompat": modJavacompat, "cast": modCast}

// manual is what the tool does not rewrite.
const manual = `Not rewritten (do by hand):
  - SimpleStats.Decode(types) became a function: s.Decode(types) -> table.DecodeSimpleStats(s, types)
    (inside package table: DecodeSimpleStats(s, types)).
  - Unexported helpers that moved: table/javafmt.go (civil, formatLocalDate, localDateTimeString,
    formatSQLTimestamp, formatSQLTime) -> javacompat.CivilFromDays, LocalDateString,
    LocalDateTimeString(millis, nanoOfMilli), FormatSQLTimestamp(millis, nanoOfMilli, p), FormatSQLTime;
    table/datafile/cast_temporal.go (civil, unixDate, formatDate, formatTime, formatTimestamp(ts, p),
    javaTrim) -> javacompat.FormatDate, UnixDate, FormatTime, FormatTimestamp(ts.Millis, ts.NanoOfMilli, p),
    Trim; isJavaBlank/javaIsBlank/javaIsWhitespace (table/paths.go, merge/fieldagg.go) ->
    javacompat.IsBlank, IsWhitespace.
  - The casts moved from table/datafile/cast*.go to table/cast (cast.go, number.go, decimal.go,
    string.go, temporal.go; tests in table/cast/cast_test.go except TestReadingAnOldFileAppliesTheCasts,
    now table/datafile/evolution_test.go). datafile.ErrUnsupportedEvolution, castFor and castFunc
    are rewritten; edits to the other cast helpers must be re-applied in table/cast by hand.
  - Edits a branch made to the moved files themselves (table/manifest.go, manifest_list.go,
    indexmanifest.go, datafilemeta.go, manifest_avro.go, manifest_fields.go, javafmt.go) must be
    re-applied in table/manifest/*.go, table/manifest_summary.go or internal/javacompat by hand.
  - table's unexported statsTypes is exported as table.StatsTypes (write/meta.go's copy is gone).
  - The codec's tests moved to table/manifest (manifest_test.go, bench_test.go,
    avro_stack_measure_test.go: package manifest_test, internals through export_test.go;
    the FuzzDecodeManifest corpus to table/manifest/testdata); table/manifest_fixture_test.go stays.
    Tests a branch added to table/manifest_test.go must move there by hand.
  - Unqualified mentions in comments inside package table.`

func main() {
	showManual := flag.Bool("manual", false, "print what the tool does not rewrite and exit")
	dryRun := flag.Bool("n", false, "list the files that would change, write nothing")
	flag.Parse()
	if *showManual {
		fmt.Println(manual)
		return
	}
	roots := flag.Args()
	if len(roots) == 0 {
		roots = []string{"."}
	}
	changed := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				switch d.Name() {
				case ".git", "vendor", "testdata", "node_modules":
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || filepath.Base(p) == "port-table-split.go" {
				return nil
			}
			did, err := portFile(p, *dryRun)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if did {
				changed++
				fmt.Println(p)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "port-table-split:", err)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "port-table-split: %d files changed; see -manual for what is left\n", changed)
}

func portFile(path string, dryRun bool) (bool, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return false, err
	}
	used := map[string]bool{}
	touched := false
	var emptied []string // imports whose last use was renamed away
	for _, from := range sources {
		qual := importName(f, from.path)
		inPkg := f.Name.Name == from.name && filepath.Base(filepath.Dir(path)) == from.name
		if qual == "" && !inPkg {
			continue
		}
		// Qualified uses: table.X.
		if qual != "" {
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok || x.Name != qual || x.Obj != nil {
					return true
				}
				t, ok := from.renames[sel.Sel.Name]
				if !ok {
					return true
				}
				if t.pkg != "" {
					x.Name = t.pkg
					used[t.pkg] = true
				}
				sel.Sel.Name = t.name
				touched = true
				return true
			})
		}
		// Unqualified uses inside the package itself: identifiers the file
		// does not declare (declared in the package's other files, or moved
		// away).
		if inPkg {
			for _, id := range f.Unresolved {
				t, ok := from.renames[id.Name]
				if !ok {
					continue
				}
				if t.pkg != "" {
					id.Name = t.pkg + "." + t.name // printed verbatim
					used[t.pkg] = true
				} else {
					id.Name = t.name
				}
				touched = true
			}
		}
		// Comments: table.X.
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				nt := from.comment.ReplaceAllStringFunc(c.Text, func(m string) string {
					t, ok := from.renames[m[len(from.name)+1:]]
					if !ok {
						return m
					}
					if t.pkg == "" {
						return from.name + "." + t.name
					}
					return t.pkg + "." + t.name
				})
				if nt != c.Text {
					c.Text = nt
					touched = true
				}
			}
		}
		if qual != "" && !stillUses(f, qual) {
			emptied = append(emptied, from.path)
		}
	}
	if !touched {
		return false, nil
	}
	var add []string
	for pkg := range used {
		if importName(f, importPath[pkg]) == "" {
			add = append(add, importPath[pkg])
		}
	}
	sort.Strings(add)
	for _, p := range emptied {
		removeImport(f, p)
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return false, err
	}
	text := buf.Bytes()
	for _, p := range add {
		text = addImport(text, p)
	}
	out, err := format.Source(text) // re-sort the import block
	if err != nil {
		return false, fmt.Errorf("after rewrite: %w", err)
	}
	if bytes.Equal(out, src) {
		return false, nil
	}
	if dryRun {
		return true, nil
	}
	return true, os.WriteFile(path, out, 0o644)
}

// importName is the name under which f imports path ("" if it does not).
func importName(f *ast.File, path string) string {
	for _, s := range f.Imports {
		p, _ := strconv.Unquote(s.Path.Value)
		if p != path {
			continue
		}
		if s.Name != nil {
			return s.Name.Name
		}
		return path[strings.LastIndex(path, "/")+1:]
	}
	return ""
}

func stillUses(f *ast.File, name string) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && x.Obj == nil {
				found = true
			}
		}
		return !found
	})
	return found
}

// addImport adds path to the import block of a formatted file: next to
// compactd's own imports, else after the last non-standard import, else as
// a group of its own after the standard library.
func addImport(src []byte, path string) []byte {
	lines := strings.Split(string(src), "\n")
	spec := "\t" + strconv.Quote(path)
	start, end := -1, -1
	for i, l := range lines {
		if start < 0 && l == "import (" {
			start = i
		} else if start >= 0 && l == ")" {
			end = i
			break
		}
	}
	if start < 0 {
		// No block: a single import line, or none at all.
		for i, l := range lines {
			if strings.HasPrefix(l, "import ") {
				return []byte(strings.Join(append(lines[:i+1:i+1], append([]string{"import " + strconv.Quote(path)}, lines[i+1:]...)...), "\n"))
			}
			if strings.HasPrefix(l, "package ") {
				return []byte(strings.Join(append(lines[:i+1:i+1], append([]string{"", "import " + strconv.Quote(path)}, lines[i+1:]...)...), "\n"))
			}
		}
		return src
	}
	at, own, other := -1, -1, -1
	for i := start + 1; i < end; i++ {
		l := strings.TrimSpace(lines[i])
		q := strings.IndexByte(l, '"')
		if q < 0 {
			continue
		}
		p, err := strconv.Unquote(l[q:])
		if err != nil {
			continue
		}
		if strings.HasPrefix(p, "github.com/compactd/compactd/") && own < 0 {
			own = i
		}
		if first := strings.SplitN(p, "/", 2)[0]; strings.Contains(first, ".") {
			other = i
		}
	}
	var ins []string
	switch {
	case own >= 0:
		at, ins = own, []string{spec}
	case other >= 0:
		at, ins = other+1, []string{spec}
	default:
		at, ins = end, []string{"", spec}
	}
	out := append(append(append([]string{}, lines[:at]...), ins...), lines[at:]...)
	return []byte(strings.Join(out, "\n"))
}

func removeImport(f *ast.File, path string) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		for i, s := range g.Specs {
			p, _ := strconv.Unquote(s.(*ast.ImportSpec).Path.Value)
			if p == path {
				g.Specs = append(g.Specs[:i], g.Specs[i+1:]...)
				break
			}
		}
	}
	for i, s := range f.Imports {
		p, _ := strconv.Unquote(s.Path.Value)
		if p == path {
			f.Imports = append(f.Imports[:i], f.Imports[i+1:]...)
			break
		}
	}
}
