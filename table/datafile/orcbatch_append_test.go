package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/orc"
	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
)

// TestAppendORCMatchesReference decodes a file of every atomic type with
// nulls, chunk by chunk, and appends each column's entries in random steps
// with appendORC and with the implementation it replaced: the same
// vectors, the same value positions.
func TestAppendORCMatchesReference(t *testing.T) {
	t.Parallel()
	var fields table.RowType
	for _, f := range allTypesSchema(t) {
		switch f.Type.Root {
		case table.TypeArray, table.TypeMap, table.TypeMultiset, table.TypeRow:
			continue
		}
		fields = append(fields, f)
	}
	t.Run("all types", func(t *testing.T) {
		t.Parallel()
		testAppendORCMatchesReference(t, fields, randValue)
	})
	// Strings direct and dictionary encoded, with and without nulls, and
	// long stretches of nulls (chunks without a value).
	strs := table.RowType{
		{ID: 0, Name: "direct", Type: mustType(t, "STRING NOT NULL")},
		{ID: 1, Name: "dict", Type: mustType(t, "STRING")},
		{ID: 2, Name: "dictnn", Type: mustType(t, "BYTES NOT NULL")},
		{ID: 3, Name: "sparse", Type: mustType(t, "STRING")},
		{ID: 4, Name: "sparsedict", Type: mustType(t, "STRING")},
	}
	row := 0
	t.Run("strings", func(t *testing.T) {
		t.Parallel()
		testAppendORCMatchesReference(t, strs, func(r *rand.Rand, typ table.DataType) any {
			k := row % len(strs)
			row++
			switch k {
			case 0:
				return fmt.Sprintf("v%d-%d", r.Uint64(), r.IntN(1000))
			case 1:
				if r.IntN(10) == 0 {
					return nil
				}
				return fmt.Sprintf("d%d", r.IntN(7))
			case 2:
				return []byte{byte(r.IntN(3))}
			case 3, 4:
				if (row/len(strs))%1500 < 1400 {
					return nil
				}
				if k == 4 {
					return "x"
				}
				return fmt.Sprintf("s%d", r.Uint64())
			}
			return nil
		})
	})
}

func testAppendORCMatchesReference(t *testing.T, fields table.RowType, gen func(*rand.Rand, table.DataType) any) {
	r := rand.New(rand.NewPCG(7, 8))
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "data-a-0.orc")
	w, err := NewRowWriter(ctx, fileio.NewLocal(), path, fields, map[string]string{"file.format": "orc", "orc.stripe.size": "32768", "orc.row.index.stride": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3000 {
		row := make(table.Row, len(fields))
		for i, f := range fields {
			row[i] = gen(r, f.Type)
		}
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	codec, err := NewCodec(fields)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := openORCBatches(ctx, fileio.NewLocal(), path, fields, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.close()
	rows := 0
	for s := range ob.of.Stripes {
		sr, err := ob.of.OpenStripeRows(s, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for {
			st, err := sr.Next(1 + r.IntN(700))
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got, want := codec.NewBatch(), codec.NewBatch()
			for i, id := range ob.col {
				gp, wp := 0, 0
				for lo := 0; lo < st.NumRows; {
					n := min(1+r.IntN(200), st.NumRows-lo)
					gerr := appendORC(&got.Cols[i], st, st.Columns[id], ob.typ[i], lo, n, &gp)
					werr := appendORCRef(&want.Cols[i], st, st.Columns[id], ob.typ[i], lo, n, &wp)
					if gerr != nil || werr != nil {
						t.Fatalf("column %s: err %v, reference %v", ob.name[i], gerr, werr)
					}
					if gp != wp {
						t.Fatalf("column %s rows %d..%d: next value %d, reference %d", ob.name[i], lo, lo+n, gp, wp)
					}
					lo += n
				}
				if !reflect.DeepEqual(got.Cols[i], want.Cols[i]) {
					t.Fatalf("column %s (%s): %+v, reference %+v", ob.name[i], ob.typ[i], got.Cols[i], want.Cols[i])
				}
			}
			rows += st.NumRows
		}
	}
	if rows != 3000 {
		t.Fatalf("read %d rows", rows)
	}
}

// TestAppendORCErrorsMatchReference: a null for a NOT NULL vector, a
// DECIMAL that overflows an INT32 vector and one that overflows an int64
// fail as they did.
func TestAppendORCErrorsMatchReference(t *testing.T) {
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	for name, c := range map[string]struct {
		col  orc.Column
		vec  Vec
		typ  string
		want error
	}{
		"null in NOT NULL":       {orc.Column{Present: []bool{true, false, true}, Ints: []int64{1, 2}}, Vec{Kind: parquet.Int64}, "BIGINT NOT NULL", errORCNull},
		"INT32 decimal overflow": {orc.Column{Present: []bool{true, false, true}, Dec64: []int64{5, 1 << 40}}, Vec{Kind: parquet.Int32, Null: []bool{}}, "DECIMAL(9, 2)", nil},
		"int64 decimal overflow": {orc.Column{Decimals: []*big.Int{big.NewInt(3), huge, big.NewInt(4)}}, Vec{Kind: parquet.Int64}, "DECIMAL(18, 0) NOT NULL", nil},
	} {
		t.Run(name, func(t *testing.T) {
			typ := mustType(t, c.typ)
			gv, wv := c.vec, c.vec
			gp, wp := 0, 0
			gerr := appendORC(&gv, &orc.Stripe{}, &c.col, typ, 0, 3, &gp)
			werr := appendORCRef(&wv, &orc.Stripe{}, &c.col, typ, 0, 3, &wp)
			if gerr == nil || werr == nil || gerr.Error() != werr.Error() {
				t.Fatalf("err %v, reference %v", gerr, werr)
			}
			if c.want != nil && !errors.Is(gerr, c.want) {
				t.Fatalf("err %v, want %v", gerr, c.want)
			}
		})
	}
}
