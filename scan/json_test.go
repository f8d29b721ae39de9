package scan_test

import (
	"encoding/json"
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
