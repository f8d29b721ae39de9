package scan_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
)

// Strings are written exactly as encoding/json writes them, on the plain
// ASCII fast path and off it.
func TestJSONStringsMatchEncodingJSON(t *testing.T) {
	t.Parallel()
	typ := table.DataType{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true}
	for _, s := range []string{"", "abc 123", "~", "a\"b", `back\slash`, "<tag>", "a&b", "tab\there", "nl\n", "\x7f", "é", "\u2028", "\xff", "\x00"} {
		got, err := scan.AppendValue(nil, typ, s)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(s)
		if string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

// Field names are quoted as strconv.Quote quotes them, on the fast path and
// off it.
func TestJSONFieldNamesMatchStrconvQuote(t *testing.T) {
	t.Parallel()
	typ := table.DataType{Root: table.TypeBigInt, Nullable: true}
	for _, name := range []string{"id", "v_str", "a&b", "<x>", `q"`, "é", "\x01"} {
		got, err := scan.AppendJSON(nil, table.RowType{{Name: name, Type: typ}}, table.Row{int64(7)})
		if err != nil {
			t.Fatal(err)
		}
		if want := "{" + strconv.Quote(name) + ":7}"; string(got) != want {
			t.Errorf("%q: got %s, want %s", name, got, want)
		}
	}
}
