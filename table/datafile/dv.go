package datafile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sort"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/jroaring"
)

// Deletion vectors mark deleted row positions of one data file. They are
// stored in index files (index/index-<uuid>-<n>): a version byte 1, then per
// data file a 4-byte BE length, the payload and a 4-byte BE CRC32 of the
// payload. A 32-bit payload is the BE magic 1581511376 followed by a
// RoaringBitmap in its portable (little-endian) serialization; a 64-bit
// payload (deletion-vectors.bitmap64) is the LE magic 1681511377, an LE
// int64 bitmap count and per bitmap an LE int32 key (the high 32 bits of the
// positions) and a portable RoaringBitmap of the low 32 bits.

const (
	dvIndexVersion = 1
	dv32Magic      = 1581511376
	dv64Magic      = 1681511377
)

// DeletionVector is the set of deleted row positions of one data file.
// The zero value is an empty 32-bit vector.
type DeletionVector struct {
	// Bitmap64 selects the 64-bit serialization on write.
	Bitmap64 bool
	// highs[k] holds the positions whose high 32 bits are k; nil is empty.
	// As in Java's OptimizedRoaringBitmap64 every key below the highest
	// has an entry, so the 64-bit form writes one bitmap per key.
	highs []*jroaring.Bitmap
}

// IsDeleted reports whether the row at position pos is deleted.
func (dv *DeletionVector) IsDeleted(pos int64) bool {
	if dv == nil || pos < 0 {
		return false
	}
	hi := uint64(pos) >> 32
	if hi >= uint64(len(dv.highs)) || dv.highs[hi] == nil {
		return false
	}
	return dv.highs[hi].Contains(uint32(pos))
}

// Delete marks position pos deleted.
func (dv *DeletionVector) Delete(pos int64) {
	if pos < 0 {
		return
	}
	hi := int(uint64(pos) >> 32)
	for len(dv.highs) <= hi {
		dv.highs = append(dv.highs, nil)
	}
	if dv.highs[hi] == nil {
		dv.highs[hi] = jroaring.New()
	}
	dv.highs[hi].Add(uint32(pos))
}

// Cardinality is the number of deleted positions.
func (dv *DeletionVector) Cardinality() int64 {
	if dv == nil {
		return 0
	}
	var n int64
	for _, b := range dv.highs {
		if b != nil {
			n += int64(b.Cardinality())
		}
	}
	return n
}

// Positions returns the deleted positions in ascending order.
func (dv *DeletionVector) Positions() []int64 {
	var out []int64
	for hi, b := range dv.highs {
		if b == nil {
			continue
		}
		b.Iterate(func(v uint32) bool {
			out = append(out, int64(hi)<<32|int64(v))
			return true
		})
	}
	return out
}

var errDVCorrupt = errors.New("corrupt deletion vector")

// appendBitmap appends b (nil: empty) as Java serializes it.
func appendBitmap(out []byte, b *jroaring.Bitmap) []byte {
	if b == nil {
		b = jroaring.New()
	}
	return b.AppendTo(out)
}

// DecodeDeletionVector parses one serialized vector as stored in an index
// file at a DeletionVectorMeta offset: the 4-byte length, the payload and
// the CRC. It returns the bytes consumed.
func DecodeDeletionVector(b []byte) (*DeletionVector, int, error) {
	if len(b) < 8 {
		return nil, 0, errDVCorrupt
	}
	size := int(int32(binary.BigEndian.Uint32(b)))
	if size < 4 || len(b) < 4+size+4 {
		return nil, 0, fmt.Errorf("%w: length %d", errDVCorrupt, size)
	}
	payload := b[4 : 4+size]
	if crc := binary.BigEndian.Uint32(b[4+size:]); crc != crc32.ChecksumIEEE(payload) {
		return nil, 0, fmt.Errorf("%w: CRC mismatch", errDVCorrupt)
	}
	dv := &DeletionVector{}
	switch {
	case binary.BigEndian.Uint32(payload) == dv32Magic:
		bm, used, err := jroaring.Decode(payload[4:])
		if err != nil {
			return nil, 0, fmt.Errorf("%w: %w", errDVCorrupt, err)
		}
		if 4+used != size {
			return nil, 0, fmt.Errorf("%w: %d trailing bytes", errDVCorrupt, size-4-used)
		}
		dv.highs = []*jroaring.Bitmap{bm}
	case binary.LittleEndian.Uint32(payload) == dv64Magic:
		dv.Bitmap64 = true
		p := payload[4:]
		if len(p) < 8 {
			return nil, 0, errDVCorrupt
		}
		count := binary.LittleEndian.Uint64(p)
		p = p[8:]
		last := -1
		for range count {
			if len(p) < 4 {
				return nil, 0, errDVCorrupt
			}
			key := int(int32(binary.LittleEndian.Uint32(p)))
			if key <= last {
				return nil, 0, fmt.Errorf("%w: bitmap keys out of order", errDVCorrupt)
			}
			bm, used, err := jroaring.Decode(p[4:])
			if err != nil {
				return nil, 0, fmt.Errorf("%w: %w", errDVCorrupt, err)
			}
			for len(dv.highs) < key {
				dv.highs = append(dv.highs, nil)
			}
			dv.highs = append(dv.highs, bm)
			last = key
			p = p[4+used:]
		}
		if len(p) != 0 {
			return nil, 0, fmt.Errorf("%w: %d trailing bytes", errDVCorrupt, len(p))
		}
	default:
		return nil, 0, fmt.Errorf("%w: unknown magic %d", errDVCorrupt, binary.BigEndian.Uint32(payload))
	}
	return dv, 4 + size + 4, nil
}

// Encode appends the stored form of dv (length, payload, CRC) to out.
func (dv *DeletionVector) Encode(out []byte) []byte {
	var payload []byte
	if dv.Bitmap64 {
		// Java's layout, kept by hand: roaring64's portable form drops empty
		// buckets on read and omits them on write, Java writes one per key
		// below the highest.
		payload = binary.LittleEndian.AppendUint32(payload, dv64Magic)
		payload = binary.LittleEndian.AppendUint64(payload, uint64(len(dv.highs)))
		for k, b := range dv.highs {
			payload = binary.LittleEndian.AppendUint32(payload, uint32(k))
			payload = appendBitmap(payload, b)
		}
	} else {
		payload = binary.BigEndian.AppendUint32(payload, dv32Magic)
		var b *jroaring.Bitmap
		if len(dv.highs) > 0 {
			b = dv.highs[0]
		}
		payload = appendBitmap(payload, b)
	}
	out = binary.BigEndian.AppendUint32(out, uint32(len(payload)))
	out = append(out, payload...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(payload))
}

// ReadDeletionVector reads the vector at offset in the index file at path.
// length is the DeletionVectorMeta length (f2) of the index manifest: for
// 32-bit vectors the payload length, for 64-bit ones (as Java's reader
// expects) the payload plus the length and CRC fields; 0 or less skips the
// check.
func ReadDeletionVector(ctx context.Context, fio fileio.FileIO, path string, offset, length int64) (*DeletionVector, error) {
	f, err := fio.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open deletion vector file %s: %w", path, err)
	}
	defer f.Close()
	if offset < 1 || offset+8 > f.Size() {
		return nil, fmt.Errorf("deletion vector file %s: offset %d outside the file (%d bytes)", path, offset, f.Size())
	}
	var head [4]byte
	if _, err := f.ReadAt(head[:], offset); err != nil {
		return nil, fmt.Errorf("read deletion vector file %s: %w", path, err)
	}
	size := int64(int32(binary.BigEndian.Uint32(head[:])))
	if size < 4 || offset+4+size+4 > f.Size() {
		return nil, fmt.Errorf("deletion vector file %s at %d: %w: length %d", path, offset, errDVCorrupt, size)
	}
	buf := make([]byte, 4+size+4)
	if _, err := f.ReadAt(buf, offset); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read deletion vector file %s: %w", path, err)
	}
	dv, _, err := DecodeDeletionVector(buf)
	if err != nil {
		return nil, fmt.Errorf("deletion vector file %s at %d: %w", path, offset, err)
	}
	if length > 0 {
		want := size
		if dv.Bitmap64 {
			want = size + 8
		}
		if length != want {
			return nil, fmt.Errorf("deletion vector file %s at %d: length %d in the index manifest, %d in the file", path, offset, length, want)
		}
	}
	return dv, nil
}

// DeletionVectorRange locates one data file's vector in an index file, the
// content of a _DELETIONS_VECTORS_RANGES entry.
type DeletionVectorRange struct {
	DataFile    string
	Offset      int32
	Length      int32
	Cardinality int64
}

// EncodeDeletionVectorsIndexFile serializes vectors (data file name →
// vector, written in name order) into the content of a DELETION_VECTORS
// index file and returns the ranges to record in the index manifest.
func EncodeDeletionVectorsIndexFile(vectors map[string]*DeletionVector) ([]byte, []DeletionVectorRange) {
	names := make([]string, 0, len(vectors))
	for n := range vectors {
		names = append(names, n)
	}
	sort.Strings(names)
	out, ranges, _ := EncodeDeletionVectorsIndex(names, vectors)
	return out, ranges
}

// EncodeDeletionVectorsIndex serializes the vectors of names, in that
// order, as Java's DeletionFileWriter does: the version byte, then each
// vector's length, payload and CRC. Java writes its HashMap's order, which
// carries no meaning (readers seek to each range); the ranges returned are
// what the index manifest records (offset of the length field, length as
// Java's reader checks it, cardinality). A name without a vector, or a
// 32-bit vector holding a position Java's 32-bit bitmap cannot hold, is an
// error.
func EncodeDeletionVectorsIndex(names []string, vectors map[string]*DeletionVector) ([]byte, []DeletionVectorRange, error) {
	out := []byte{dvIndexVersion}
	ranges := make([]DeletionVectorRange, 0, len(names))
	for _, n := range names {
		dv := vectors[n]
		if dv == nil {
			return nil, nil, fmt.Errorf("deletion vector of %s: missing", n)
		}
		if !dv.Bitmap64 && len(dv.highs) > 1 {
			return nil, nil, fmt.Errorf("deletion vector of %s: a 32-bit vector holds positions of 2^32 and more", n)
		}
		start := len(out)
		if start > math.MaxInt32 {
			return nil, nil, fmt.Errorf("deletion vector of %s: index file over 2 GiB", n)
		}
		out = dv.Encode(out)
		size := int32(binary.BigEndian.Uint32(out[start:]))
		length := size
		if dv.Bitmap64 {
			length = size + 8
		}
		ranges = append(ranges, DeletionVectorRange{DataFile: n, Offset: int32(start), Length: length, Cardinality: dv.Cardinality()})
	}
	return out, ranges, nil
}

// DeletionVectorIndexVersion is the version byte that starts a
// DELETION_VECTORS index file.
const DeletionVectorIndexVersion = dvIndexVersion

// MaxPosition is the highest deleted position, -1 for an empty vector.
func (dv *DeletionVector) MaxPosition() int64 {
	if dv == nil {
		return -1
	}
	for hi := len(dv.highs) - 1; hi >= 0; hi-- {
		b := dv.highs[hi]
		if b == nil || b.IsEmpty() {
			continue
		}
		return int64(hi)<<32 | int64(b.Maximum())
	}
	return -1
}

// Clone returns an independent copy of dv.
func (dv *DeletionVector) Clone() *DeletionVector {
	c := &DeletionVector{Bitmap64: dv.Bitmap64, highs: make([]*jroaring.Bitmap, len(dv.highs))}
	for i, b := range dv.highs {
		if b != nil {
			c.highs[i] = b.Clone()
		}
	}
	return c
}
