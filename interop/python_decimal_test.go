package interop

import (
	"reflect"
	"testing"

	"github.com/compactd/compactd/fixtures"
)

// TestPypaimonReadsDecimalsOf38Digits: the pypaimon oracle prints DECIMAL(38, s) values with all
// 38 significant digits as Java does (Python's default decimal context keeps only 28, so the
// oracle used to fail on them with decimal.InvalidOperation).
func TestPypaimonReadsDecimalsOf38Digits(t *testing.T) {
	spec := fixtures.Spec{
		Columns: []fixtures.Column{
			{Name: "id", Type: "BIGINT NOT NULL"},
			{Name: "d", Type: "DECIMAL(38, 10)"},
			{Name: "i", Type: "DECIMAL(38, 0)"},
			{Name: "f", Type: "DECIMAL(38, 38)"},
		},
		PrimaryKeys: []string{"id"},
		Bucket:      1,
	}
	rows := []byte(`{"id":1,"d":"1234567890123456789012345678.0123456789","i":"12345678901234567890123456789012345678","f":"0.12345678901234567890123456789012345678"}
{"id":2,"d":"-9999999999999999999999999999.9999999999","i":"-99999999999999999999999999999999999999","f":"-0.99999999999999999999999999999999999999"}
{"id":3,"d":"0.0000000001","i":"1","f":"0.00000000000000000000000000000000000001"}
{"id":4,"d":null,"i":null,"f":null}
`)
	want, err := ParseRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	wh := t.TempDir()
	j, py := Java(t), Python(t)
	j.Create(wh, "db.t", spec, rows)
	if got := j.Read(wh, "db.t"); !reflect.DeepEqual(got, want) {
		t.Fatalf("Java reads\n%v\nwant\n%v", got, want)
	}
	if got := py.Read(wh, "db.t"); !reflect.DeepEqual(got, want) {
		t.Errorf("pypaimon reads\n%v\nwant\n%v", got, want)
	}
}
