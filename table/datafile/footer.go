package datafile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// parquet-go treats a field id of 0 as "unset" and omits it, but Paimon
// numbers columns from 0 and Java stamps an id on every column. The writer
// therefore lets parquet-go write the file, holds back the tail that contains
// the footer, and re-encodes the FileMetaData with the ids set explicitly.
// Only the footer and its length change; every offset stays valid.

// schemaElementOut mirrors format.SchemaElement with an explicitly optional
// field id so 0 is written.
type schemaElementOut struct {
	Type           thrift.Null[format.Type]                `thrift:"1,optional"`
	TypeLength     thrift.Null[int32]                      `thrift:"2,optional"`
	RepetitionType thrift.Null[format.FieldRepetitionType] `thrift:"3,optional"`
	Name           string                                  `thrift:"4,required"`
	NumChildren    thrift.Null[int32]                      `thrift:"5,optional"`
	ConvertedType  thrift.Null[deprecated.ConvertedType]   `thrift:"6,optional"`
	Scale          thrift.Null[int32]                      `thrift:"7,optional"`
	Precision      thrift.Null[int32]                      `thrift:"8,optional"`
	FieldID        thrift.Null[int32]                      `thrift:"9,optional"`
	LogicalType    format.LogicalType                      `thrift:"10,optional"`
}

// fileMetaDataOut mirrors format.FileMetaData (without encryption, which the
// writer never enables).
type fileMetaDataOut struct {
	Version          int32                            `thrift:"1,required"`
	Schema           []schemaElementOut               `thrift:"2,required"`
	NumRows          int64                            `thrift:"3,required"`
	RowGroups        thrift.Slice[format.RowGroup]    `thrift:"4,required"`
	KeyValueMetadata thrift.Slice[format.KeyValue]    `thrift:"5,optional"`
	CreatedBy        string                           `thrift:"6,optional"`
	ColumnOrders     thrift.Slice[format.ColumnOrder] `thrift:"7,optional"`
}

// createdBy follows parquet-mr's "<app> version <v> (build <b>)" so Java's
// VersionParser accepts it; statistics from non-parquet-mr writers are used.
const createdBy = "compactd version 0.1.0 (build compactd)"

// tailWriter passes bytes through to w until hold is set, then keeps them so
// the footer can be rewritten.
type tailWriter struct {
	w    io.Writer
	n    int64
	hold bool
	tail bytes.Buffer
}

func (t *tailWriter) Write(p []byte) (int, error) {
	if t.hold {
		return t.tail.Write(p)
	}
	n, err := t.w.Write(p)
	t.n += int64(n)
	return n, err
}

// finish rewrites the held tail with field ids stamped on the schema
// elements: ids[i] is the id of schema element i, -1 for none (the root).
// mapKeyValue marks the repeated key_value groups, which Java annotates
// MAP_KEY_VALUE.
func (t *tailWriter) finish(ids []int, mapKeyValue []bool) error {
	b := t.tail.Bytes()
	if len(b) < 8 || string(b[len(b)-4:]) != "PAR1" {
		return errors.New("parquet tail without footer")
	}
	footerLen := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if footerLen > len(b)-8 {
		return errors.New("parquet footer larger than the held tail")
	}
	prefix := b[:len(b)-8-footerLen]
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[len(b)-8-footerLen:len(b)-8], &md); err != nil {
		return fmt.Errorf("decode own footer: %w", err)
	}
	if len(md.Schema) != len(ids) {
		return fmt.Errorf("footer has %d schema elements, expected %d", len(md.Schema), len(ids))
	}
	out := fileMetaDataOut{
		Version:          md.Version,
		NumRows:          md.NumRows,
		RowGroups:        md.RowGroups,
		KeyValueMetadata: md.KeyValueMetadata,
		CreatedBy:        createdBy,
		ColumnOrders:     md.ColumnOrders,
		Schema:           make([]schemaElementOut, len(md.Schema)),
	}
	for i, e := range md.Schema {
		o := schemaElementOut{
			Type:           e.Type,
			TypeLength:     e.TypeLength,
			RepetitionType: e.RepetitionType,
			Name:           e.Name,
			NumChildren:    e.NumChildren,
			ConvertedType:  e.ConvertedType,
			Scale:          e.Scale,
			Precision:      e.Precision,
			LogicalType:    e.LogicalType,
		}
		// parquet-go records the bit width of every primitive as its type
		// length and annotates plain INT32/INT64 as INT(32/64); Java sets a
		// length only on FIXED_LEN_BYTE_ARRAY and leaves INT/BIGINT bare.
		if !(o.Type.Valid && o.Type.V == format.FixedLenByteArray) {
			o.TypeLength = thrift.Null[int32]{}
		}
		if it, ok := o.LogicalType.Value.(*format.IntType); ok && (it.BitWidth == 32 || it.BitWidth == 64) && !o.ConvertedType.Valid {
			o.LogicalType = format.LogicalType{}
		}
		if i > 0 && ids[i] >= 0 {
			o.FieldID.Set(int32(ids[i]))
		}
		if mapKeyValue[i] && !o.ConvertedType.Valid {
			o.ConvertedType.Set(deprecated.MapKeyValue)
		}
		out.Schema[i] = o
	}
	dropUnorderedStats(&out)
	enc, err := thrift.Marshal(new(thrift.CompactProtocol), &out)
	if err != nil {
		return fmt.Errorf("encode footer: %w", err)
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], uint32(len(enc)))
	copy(trailer[4:], "PAR1")
	for _, p := range [][]byte{prefix, enc, trailer[:]} {
		n, err := t.w.Write(p)
		t.n += int64(n)
		if err != nil {
			return err
		}
	}
	return nil
}

// dropUnorderedStats removes min/max statistics and column indexes that
// parquet-go orders wrongly: it compares FIXED_LEN_BYTE_ARRAY decimals as
// unsigned bytes (so -5 sorts above 3), while Java's filter push-down reads
// them as signed two's complement and would skip row groups that match. INT96
// has no defined order at all. Null counts stay. When any column loses its
// column index, every column does: readers such as parquet-go expect the
// column indexes of a file to form one contiguous section. The unreferenced
// bytes stay in the file.
func dropUnorderedStats(md *fileMetaDataOut) {
	leaf := 0
	dropIndexes := false
	for _, e := range md.Schema {
		if !e.Type.Valid || e.NumChildren.Valid {
			continue
		}
		_, isDecimal := e.LogicalType.Value.(*format.DecimalType)
		unordered := e.Type.V == format.Int96 ||
			(isDecimal && (e.Type.V == format.FixedLenByteArray || e.Type.V == format.ByteArray))
		if unordered {
			dropIndexes = true
			for r := range md.RowGroups {
				if leaf >= len(md.RowGroups[r].Columns) {
					continue
				}
				st := &md.RowGroups[r].Columns[leaf].MetaData.Statistics
				st.Min, st.Max, st.MinValue, st.MaxValue = nil, nil, nil, nil
			}
		}
		leaf++
	}
	if dropIndexes {
		for r := range md.RowGroups {
			for c := range md.RowGroups[r].Columns {
				md.RowGroups[r].Columns[c].ColumnIndexOffset = 0
				md.RowGroups[r].Columns[c].ColumnIndexLength = 0
			}
		}
	}
}
