package merge

import (
	"bytes"
	"cmp"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// seqPos is what places a record among the records of its key: the fields
// compareSeq reads.
type seqPos struct {
	value table.Row // read only by the user sequence comparison
	seq   int64     // _SEQUENCE_NUMBER
	add   bool      // +I or +U
	run   int       // index of the record's run in the merge's input
}

// compareSeq is Paimon's merge order of two records of one key
// (SortMergeReaderWithMinHeap / WithLoserTree): the user sequence fields
// when the table has them (seqCmp, Options.SeqCompare; nil otherwise), then
// _SEQUENCE_NUMBER ascending, then (Paimon after 2.0.0) retractions before
// additions. Paimon leaves any remaining tie to reader position; here the
// run given first wins it (is treated as older). Both merges order records
// only through this function.
func compareSeq(seqCmp func(a, b table.Row) int, a, b seqPos) int {
	if seqCmp != nil {
		if c := seqCmp(a.value, b.value); c != 0 {
			return c
		}
	}
	return compareSysSeq(a, b)
}

// compareSysSeq is compareSeq after the user sequence fields (all of it for
// a table without them). It inlines, so sorting a group on the batch path
// makes no call per comparison.
func compareSysSeq(a, b seqPos) int {
	switch {
	case a.seq != b.seq:
		return cmpLess(a.seq < b.seq)
	case a.add != b.add:
		return cmpLess(!a.add)
	case a.run != b.run:
		return cmpLess(a.run < b.run)
	}
	return 0
}

// cmpLess is -1 when less, else 1.
func cmpLess(less bool) int {
	if less {
		return -1
	}
	return 1
}

// compare is the heap's order of two cursors, negative when a's record
// comes first:
//   - Reader (rows): key in Paimon's comparison of the key types, then
//     compareSeq;
//   - BatchReader (batch): key on its physical values (BatchKeysSupported
//     lists the key types where that is Paimon's order), then run. The
//     records of one key are put in compareSeq order after they are
//     collected (BatchReader.sortGroup), so the heap need not read them.
//
// Its magnitude says why: 2 when the keys differ, at most 1 when only the
// tie-break does (sameKey). Every batch has the codec's layout, whose key
// kinds o.keys holds.
func (o *heapOrder) compare(a, b *cursor) int {
	if !o.batch {
		if c := table.CompareRows(o.keyTypes, a.kv.Key, b.kv.Key); c != 0 {
			return 2 * sign(c)
		}
		return sign(compareSeq(o.seqCmp, a.pos(), b.pos()))
	}
	for k, kind := range o.keys {
		x, y := &a.b.Cols[k], &b.b.Cols[k]
		var c int
		switch kind {
		case datafile.KindInt64:
			c = cmp.Compare(x.I64[a.i], y.I64[b.i])
		case datafile.KindInt32:
			c = cmp.Compare(int64(x.I32[a.i]), int64(y.I32[b.i]))
		case datafile.KindBytes:
			c = bytes.Compare(x.BytesAt(a.i), y.BytesAt(b.i))
		case datafile.KindBoolean:
			c = cmp.Compare(b2i(x.Bool[a.i]), b2i(y.Bool[b.i]))
		}
		if c != 0 {
			return 2 * c
		}
	}
	return cmp.Compare(a.run, b.run)
}

func (c *cursor) pos() seqPos {
	return seqPos{value: c.kv.Value, seq: c.kv.Seq, add: c.kv.Kind.IsAdd(), run: c.run}
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// BatchKeysSupported reports whether the batch merge can order keys of these
// types on their physical values (integers, strings, binary, booleans,
// decimals up to 18 digits, timestamps up to microseconds). Other key types
// (floating point, wide decimals, nanosecond timestamps) take the row path.
func BatchKeysSupported(types []table.DataType) bool {
	for _, t := range types {
		switch t.Root {
		case table.TypeBoolean, table.TypeTinyInt, table.TypeSmallInt, table.TypeInt, table.TypeBigInt,
			table.TypeDate, table.TypeTime, table.TypeChar, table.TypeVarChar, table.TypeBinary, table.TypeVarBinary:
		case table.TypeDecimal:
			if t.Precision > 18 {
				return false
			}
		case table.TypeTimestamp, table.TypeTimestampLTZ:
			if t.Precision > 6 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
