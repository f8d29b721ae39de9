package interop

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
)

// bucketCounts are the bucket counts every row is placed under, on both sides.
var bucketCounts = []int{1, 2, 3, 4, 7, 16, 100, 1023}

// hashTable is one table of the bucket-hash oracle: its spec and a value generator per column.
type hashTable struct {
	name string // db.<name>
	spec fixtures.Spec
}

// pkTypes are the atomic types Paimon takes in a primary key, with the precisions whose
// BinaryRow layout differs (compact vs non-compact DECIMAL and TIMESTAMP, inline vs out-of-line
// strings and binaries).
var pkTypes = []string{
	"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE",
	"DECIMAL(1,0)", "DECIMAL(9,2)", "DECIMAL(18,0)", "DECIMAL(18,18)", "DECIMAL(19,4)", "DECIMAL(20,0)",
	"DECIMAL(38,10)", "DECIMAL(38,0)",
	"CHAR(1)", "CHAR(10)", "CHAR(100)", "VARCHAR(7)", "VARCHAR(20)", "STRING",
	"BINARY(1)", "BINARY(16)", "VARBINARY(8)", "BYTES",
	"DATE", "TIME", "TIME(3)",
	"TIMESTAMP(0)", "TIMESTAMP(1)", "TIMESTAMP(2)", "TIMESTAMP(3)", "TIMESTAMP(4)", "TIMESTAMP(5)",
	"TIMESTAMP(6)", "TIMESTAMP(7)", "TIMESTAMP(8)", "TIMESTAMP(9)",
	"TIMESTAMP_LTZ(0)", "TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(4)", "TIMESTAMP_LTZ(6)", "TIMESTAMP_LTZ(9)",
}

func hashTables() []hashTable {
	var out []hashTable
	for i, typ := range pkTypes {
		out = append(out, hashTable{name: fmt.Sprintf("k%d", i), spec: fixtures.Spec{
			Columns:     []fixtures.Column{{Name: "k", Type: typ + " NOT NULL"}, {Name: "v", Type: "INT"}},
			PrimaryKeys: []string{"k"}, Bucket: 4,
		}})
	}
	multi := []fixtures.Column{
		{Name: "a", Type: "INT NOT NULL"}, {Name: "b", Type: "STRING NOT NULL"},
		{Name: "c", Type: "DECIMAL(20,3) NOT NULL"}, {Name: "d", Type: "TIMESTAMP(6) NOT NULL"},
		{Name: "e", Type: "DOUBLE NOT NULL"}, {Name: "f", Type: "BINARY(9) NOT NULL"}, {Name: "v", Type: "STRING"},
	}
	out = append(out,
		// A multi-column key: the bucket key is the whole primary key.
		hashTable{name: "multi", spec: fixtures.Spec{Columns: multi,
			PrimaryKeys: []string{"a", "b", "c", "d", "e", "f"}, Bucket: 4}},
		// bucket-key a subset of the primary key, in another order than the table's columns.
		hashTable{name: "bucketkey", spec: fixtures.Spec{Columns: multi,
			PrimaryKeys: []string{"a", "b", "c", "d", "e", "f"}, Bucket: 4,
			Options: map[string]string{"bucket-key": "d,b"}}},
		// Partitioned: the partition column leaves the bucket key (trimmed primary key).
		hashTable{name: "parted", spec: fixtures.Spec{Columns: []fixtures.Column{
			{Name: "dt", Type: "STRING NOT NULL"}, {Name: "id", Type: "BIGINT NOT NULL"},
			{Name: "s", Type: "VARCHAR(30) NOT NULL"}, {Name: "v", Type: "INT"},
		}, PrimaryKeys: []string{"dt", "id", "s"}, PartitionKeys: []string{"dt"}, Bucket: 4}},
		// Nulls in a bucket key: only an append table's bucket key may be nullable (a primary key
		// is NOT NULL), and a null non-compact DECIMAL or TIMESTAMP still reserves its chunk.
		hashTable{name: "nulls", spec: fixtures.Spec{Columns: []fixtures.Column{
			{Name: "x", Type: "DECIMAL(30,2)"}, {Name: "y", Type: "TIMESTAMP(9)"}, {Name: "z", Type: "STRING"},
			{Name: "w", Type: "BIGINT"}, {Name: "u", Type: "DECIMAL(10,2)"}, {Name: "q", Type: "TIMESTAMP_LTZ(3)"},
			{Name: "v", Type: "INT"},
		}, Bucket: 4, Options: map[string]string{"bucket-key": "x,y,z,w,u,q"}}},
	)
	return out
}

// genValue draws a random value of type t in compactd's Go representation, edges included.
func genValue(rng *rand.Rand, t table.DataType) any {
	if t.Nullable && rng.IntN(5) == 0 {
		return nil
	}
	pick := func(n int) bool { return rng.IntN(n) == 0 }
	switch t.Root {
	case table.TypeBoolean:
		return rng.IntN(2) == 0
	case table.TypeTinyInt:
		return int8(rng.Uint32())
	case table.TypeSmallInt:
		return int16(rng.Uint32())
	case table.TypeInt:
		if pick(8) {
			return []int32{0, -1, 1, math.MinInt32, math.MaxInt32}[rng.IntN(5)]
		}
		return int32(rng.Uint32())
	case table.TypeBigInt:
		if pick(8) {
			return []int64{0, -1, 1, math.MinInt64, math.MaxInt64}[rng.IntN(5)]
		}
		return int64(rng.Uint64())
	case table.TypeFloat:
		if pick(4) {
			// Java's Float.NaN, 0x7fc00000 (see the DOUBLE case).
			return []float32{0, float32(math.Copysign(0, -1)), math.Float32frombits(0x7fc00000), float32(math.Inf(1)),
				float32(math.Inf(-1)), math.MaxFloat32, math.SmallestNonzeroFloat32, 1.5, -2.25}[rng.IntN(9)]
		}
		return float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10)))
	case table.TypeDouble:
		if pick(4) {
			// The NaN is Java's Double.NaN (0x7ff8000000000000): the JSON the rows travel in
			// carries no NaN payload, and math.NaN() has another (0x7ff8000000000001). Both
			// sides hash a NaN's raw bits (Java's BinaryRowWriter stores doubleToRawLongBits).
			return []float64{0, math.Copysign(0, -1), math.Float64frombits(0x7ff8000000000000), math.Inf(1), math.Inf(-1),
				math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1, -1e300}[rng.IntN(9)]
		}
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30))
	case table.TypeDecimal:
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Precision)), nil)
		var u *big.Int
		switch {
		case pick(6):
			u = new(big.Int).Sub(limit, big.NewInt(1)) // the largest value of the precision
		case pick(6):
			u = big.NewInt(0)
		default:
			// Random digits count, so small and large magnitudes both occur.
			digits := 1 + rng.IntN(t.Precision)
			var sb strings.Builder
			for range digits {
				sb.WriteByte(byte('0' + rng.IntN(10)))
			}
			u, _ = new(big.Int).SetString(sb.String(), 10) // decimal digits only: always parses
		}
		if rng.IntN(2) == 0 {
			u.Neg(u)
		}
		return table.Decimal{Unscaled: u, Precision: t.Precision, Scale: t.Scale}
	case table.TypeChar, table.TypeVarChar:
		maxLen := t.Length
		if maxLen <= 0 || maxLen > 40 {
			maxLen = 40
		}
		// ASCII, two-, three- and four-byte UTF-8; lengths around the 7-byte inline limit.
		pool := []rune("abcXYZ019 _-é√ß中文字😀𝄞")
		n := rng.IntN(maxLen + 1)
		if pick(3) {
			n = min(maxLen, 6+rng.IntN(3))
		}
		var sb strings.Builder
		for range n {
			if rng.IntN(3) == 0 {
				sb.WriteRune(pool[rng.IntN(len(pool))])
			} else {
				sb.WriteByte(byte('a' + rng.IntN(26)))
			}
		}
		return sb.String()
	case table.TypeBinary, table.TypeVarBinary:
		maxLen := t.Length
		if maxLen <= 0 || maxLen > 30 {
			maxLen = 30
		}
		n := rng.IntN(maxLen + 1)
		if t.Root == table.TypeBinary && rng.IntN(2) == 0 {
			n = maxLen
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	case table.TypeDate:
		// 1000-01-01 .. 9999-12-31: the canonical YYYY-MM-DD form.
		return int32(-354285 + rng.IntN(2932897+354285))
	case table.TypeTime:
		return int32(rng.IntN(86_400_000))
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		lo := time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
		hi := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).UnixMilli()
		ms := lo + rng.Int64N(hi-lo)
		if pick(6) {
			ms = []int64{0, -1, 1, 86_400_000 - 1}[rng.IntN(4)]
		}
		p := t.Precision
		// Keep only the digits the precision holds (what a writer of that type stores).
		nanos := int64(rng.IntN(1_000_000_000))
		div := int64(math.Pow10(9 - p))
		nanos = nanos / div * div
		ms = ms/1000*1000 + nanos/1_000_000
		if ms < 0 && p < 3 {
			ms = ms / 1000 * 1000
		}
		return table.Timestamp{Millis: ms, NanoOfMilli: int32(nanos % 1_000_000)}
	}
	panic(fmt.Sprintf("genValue: no generator for %s", t))
}

// compactdBucketKey is how compactd routes a row (write/writer.go): the bucket-key columns encoded
// as a BinaryRow, its Murmur hash, Paimon's default bucket function.
func compactdBucketKey(s *table.TableSchema, row table.Row) ([]byte, error) {
	var types []table.DataType
	var vals table.Row
	for _, f := range s.BucketKeyType() {
		types = append(types, f.Type)
		vals = append(vals, row[s.Fields.Index(f.Name)])
	}
	return table.EncodeBinaryRow(types, vals)
}

// TestBucketOfEveryKeyTypeMatchesJava places random keys of every primary-key type (and
// multi-column keys, a bucket-key subset, a partitioned key and a nullable append bucket key)
// under several bucket counts with compactd's encoding and hash, and with Java's
// FixedBucketRowKeyExtractor: the bucket-key bytes, the hash and every bucket must agree.
func TestBucketOfEveryKeyTypeMatchesJava(t *testing.T) {
	j := Java(t)
	ctx := context.Background()
	wh := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(strings.TrimSpace(os.Getenv("COMPACTD_HASH_SEED")), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (COMPACTD_HASH_SEED reproduces)", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	const perTable = 300

	tables := hashTables()
	var creates []BatchRequest
	for _, ht := range tables {
		spec := writeTemp(t, t.TempDir(), "spec.json", mustJSON(t, ht.spec))
		creates = append(creates, BatchRequest{Verb: "create", Flags: map[string]string{
			"warehouse": wh, "table": "db." + ht.name, "spec": spec}})
	}
	res, err := j.Batch(ctx, creates)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("create %s (%v): %v", tables[i].name, tables[i].spec.Columns, r.Err)
		}
	}

	type tableRows struct {
		schema *table.TableSchema
		rows   []table.Row
		jsonl  []byte
	}
	all := make([]tableRows, len(tables))
	var asks []BatchRequest
	counts := make([]string, len(bucketCounts))
	for i, n := range bucketCounts {
		counts[i] = strconv.Itoa(n)
	}
	for i, ht := range tables {
		tb, err := table.Open(ctx, fileio.NewLocal(), wh, "db", ht.name)
		if err != nil {
			t.Fatal(err)
		}
		s := tb.Schema()
		tr := tableRows{schema: s}
		for range perTable {
			row := make(table.Row, len(s.Fields))
			for c, f := range s.Fields {
				row[c] = genValue(rng, f.Type)
			}
			if ht.name == "parted" {
				row[0] = []string{"a", "2024-01-01", "中"}[rng.IntN(3)]
			}
			b, err := scan.AppendJSON(nil, s.Fields, row)
			if err != nil {
				t.Fatalf("%s: %v", ht.name, err)
			}
			tr.rows = append(tr.rows, row)
			tr.jsonl = append(append(tr.jsonl, b...), '\n')
		}
		all[i] = tr
		f := writeTemp(t, t.TempDir(), "rows.jsonl", tr.jsonl)
		asks = append(asks, BatchRequest{Verb: "bucket-of", Flags: map[string]string{
			"warehouse": wh, "table": "db." + ht.name, "rows": f, "buckets": strings.Join(counts, ",")}})
	}
	res, err = j.Batch(ctx, asks)
	if err != nil {
		t.Fatal(err)
	}
	for i, ht := range tables {
		t.Run(ht.name+"_"+columnTypes(ht.spec), func(t *testing.T) {
			if res[i].Err != nil {
				t.Fatalf("java bucket-of: %v", res[i].Err)
			}
			tr := all[i]
			if len(res[i].Lines) != len(tr.rows) {
				t.Fatalf("java answered %d rows, want %d", len(res[i].Lines), len(tr.rows))
			}
			bad := 0
			lines := strings.Split(string(tr.jsonl), "\n")
			for r, line := range res[i].Lines {
				var jb BucketOf
				if err := json.Unmarshal(line, &jb); err != nil {
					t.Fatal(err)
				}
				key, err := compactdBucketKey(tr.schema, tr.rows[r])
				if err != nil {
					t.Fatalf("row %s: %v", lines[r], err)
				}
				h, err := table.HashBinaryRow(key)
				if err != nil {
					t.Fatal(err)
				}
				var got []int32
				for _, n := range bucketCounts {
					got = append(got, table.BucketOf(h, int32(n)))
				}
				if hex.EncodeToString(key) != jb.Key || h != jb.Hash || fmt.Sprint(got) != fmt.Sprint(jb.Buckets) {
					bad++
					if bad <= 5 {
						t.Errorf("row %s:\n compactd key %x hash %d buckets %v\n java     key %s hash %d buckets %v",
							lines[r], key, h, got, jb.Key, jb.Hash, jb.Buckets)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d rows placed differently", bad, len(tr.rows))
			}
		})
	}
}

func columnTypes(s fixtures.Spec) string {
	if len(s.Columns) != 2 {
		return ""
	}
	r := strings.NewReplacer("(", "", ")", "", ",", "_", " NOT NULL", "")
	return r.Replace(s.Columns[0].Type)
}
