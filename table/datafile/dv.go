package datafile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"slices"
	"sort"

	"github.com/compactd/compactd/fileio"
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
	dvIndexVersion           = 1
	dv32Magic                = 1581511376
	dv64Magic                = 1681511377
	roaringCookie            = 12346 // no run containers
	roaringRunCookie         = 12347
	roaringNoOffsetThreshold = 4
	arrayMaxCard             = 4096
)

// DeletionVector is the set of deleted row positions of one data file.
// The zero value is an empty 32-bit vector.
type DeletionVector struct {
	// Bitmap64 selects the 64-bit serialization on write.
	Bitmap64 bool
	// highs[k] holds the positions whose high 32 bits are k.
	highs []bitmap32
}

type bitmap32 struct {
	keys  []uint16 // sorted high 16 bits of the low 32 bits
	conts []*container
}

// container holds the low 16 bits of positions sharing a key in one of
// Roaring's three forms.
type container struct {
	array  []uint16 // sorted, when bitmap and runs are nil
	bitmap []uint64 // 1024 words
	runs   []uint16 // start, length-1 pairs
}

func (c *container) contains(v uint16) bool {
	switch {
	case c.bitmap != nil:
		return c.bitmap[v>>6]&(1<<(v&63)) != 0
	case c.runs != nil:
		// runs are sorted by start
		i := sort.Search(len(c.runs)/2, func(i int) bool { return c.runs[2*i] > v }) - 1
		return i >= 0 && uint32(v) <= uint32(c.runs[2*i])+uint32(c.runs[2*i+1])
	}
	_, ok := slices.BinarySearch(c.array, v)
	return ok
}

func (c *container) card() int {
	switch {
	case c.bitmap != nil:
		n := 0
		for _, w := range c.bitmap {
			n += bits.OnesCount64(w)
		}
		return n
	case c.runs != nil:
		n := 0
		for i := 0; i < len(c.runs); i += 2 {
			n += int(c.runs[i+1]) + 1
		}
		return n
	}
	return len(c.array)
}

func (c *container) add(v uint16) {
	if c.runs != nil {
		c.toBitmap()
	}
	if c.bitmap != nil {
		c.bitmap[v>>6] |= 1 << (v & 63)
		return
	}
	i, ok := slices.BinarySearch(c.array, v)
	if ok {
		return
	}
	c.array = slices.Insert(c.array, i, v)
	if len(c.array) > arrayMaxCard {
		c.toBitmap()
	}
}

func (c *container) toBitmap() {
	b := make([]uint64, 1024)
	c.each(func(v uint16) { b[v>>6] |= 1 << (v & 63) })
	c.bitmap, c.array, c.runs = b, nil, nil
}

func (c *container) each(f func(uint16)) {
	switch {
	case c.bitmap != nil:
		for i, w := range c.bitmap {
			for w != 0 {
				t := bits.TrailingZeros64(w)
				f(uint16(i*64 + t))
				w &= w - 1
			}
		}
	case c.runs != nil:
		for i := 0; i < len(c.runs); i += 2 {
			for v := uint32(c.runs[i]); v <= uint32(c.runs[i])+uint32(c.runs[i+1]); v++ {
				f(uint16(v))
			}
		}
	default:
		for _, v := range c.array {
			f(v)
		}
	}
}

func (b *bitmap32) contains(v uint32) bool {
	i, ok := slices.BinarySearch(b.keys, uint16(v>>16))
	return ok && b.conts[i].contains(uint16(v))
}

func (b *bitmap32) add(v uint32) {
	k := uint16(v >> 16)
	i, ok := slices.BinarySearch(b.keys, k)
	if !ok {
		b.keys = slices.Insert(b.keys, i, k)
		b.conts = slices.Insert(b.conts, i, &container{})
	}
	b.conts[i].add(uint16(v))
}

// IsDeleted reports whether the row at position pos is deleted.
func (dv *DeletionVector) IsDeleted(pos int64) bool {
	if dv == nil || pos < 0 {
		return false
	}
	hi := uint64(pos) >> 32
	if hi >= uint64(len(dv.highs)) {
		return false
	}
	return dv.highs[hi].contains(uint32(pos))
}

// Delete marks position pos deleted.
func (dv *DeletionVector) Delete(pos int64) {
	if pos < 0 {
		return
	}
	hi := int(uint64(pos) >> 32)
	for len(dv.highs) <= hi {
		dv.highs = append(dv.highs, bitmap32{})
	}
	dv.highs[hi].add(uint32(pos))
}

// Cardinality is the number of deleted positions.
func (dv *DeletionVector) Cardinality() int64 {
	if dv == nil {
		return 0
	}
	var n int64
	for _, b := range dv.highs {
		for _, c := range b.conts {
			n += int64(c.card())
		}
	}
	return n
}

// Positions returns the deleted positions in ascending order.
func (dv *DeletionVector) Positions() []int64 {
	var out []int64
	for hi, b := range dv.highs {
		for i, c := range b.conts {
			base := int64(hi)<<32 | int64(b.keys[i])<<16
			c.each(func(v uint16) { out = append(out, base|int64(v)) })
		}
	}
	return out
}

var errDVCorrupt = errors.New("corrupt deletion vector")

// decodeRoaring parses one portable RoaringBitmap from b and returns the
// bytes consumed.
func decodeRoaring(b []byte) (bitmap32, int, error) {
	var bm bitmap32
	if len(b) < 4 {
		return bm, 0, errDVCorrupt
	}
	cookie := binary.LittleEndian.Uint32(b)
	p := 4
	var n int
	var runFlags []byte
	hasRuns := false
	switch {
	case cookie&0xffff == roaringRunCookie:
		hasRuns = true
		n = int(cookie>>16) + 1
		fl := (n + 7) / 8
		if len(b) < p+fl {
			return bm, 0, errDVCorrupt
		}
		runFlags = b[p : p+fl]
		p += fl
	case cookie == roaringCookie:
		if len(b) < 8 {
			return bm, 0, errDVCorrupt
		}
		n = int(binary.LittleEndian.Uint32(b[4:]))
		p = 8
	default:
		return bm, 0, fmt.Errorf("%w: roaring cookie %d", errDVCorrupt, cookie)
	}
	if n < 0 || n > 1<<16 || len(b) < p+4*n {
		return bm, 0, errDVCorrupt
	}
	cards := make([]int, n)
	bm.keys = make([]uint16, n)
	for i := range n {
		bm.keys[i] = binary.LittleEndian.Uint16(b[p:])
		cards[i] = int(binary.LittleEndian.Uint16(b[p+2:])) + 1
		p += 4
	}
	if !hasRuns || n >= roaringNoOffsetThreshold {
		p += 4 * n // offsets: containers follow in order anyway
	}
	bm.conts = make([]*container, n)
	for i := range n {
		c := &container{}
		switch {
		case hasRuns && runFlags[i/8]&(1<<(i%8)) != 0:
			if len(b) < p+2 {
				return bm, 0, errDVCorrupt
			}
			nr := int(binary.LittleEndian.Uint16(b[p:]))
			p += 2
			if len(b) < p+4*nr {
				return bm, 0, errDVCorrupt
			}
			c.runs = make([]uint16, 2*nr)
			for j := range c.runs {
				c.runs[j] = binary.LittleEndian.Uint16(b[p+2*j:])
			}
			p += 4 * nr
		case cards[i] > arrayMaxCard:
			if len(b) < p+8192 {
				return bm, 0, errDVCorrupt
			}
			c.bitmap = make([]uint64, 1024)
			for j := range c.bitmap {
				c.bitmap[j] = binary.LittleEndian.Uint64(b[p+8*j:])
			}
			p += 8192
		default:
			if len(b) < p+2*cards[i] {
				return bm, 0, errDVCorrupt
			}
			c.array = make([]uint16, cards[i])
			for j := range c.array {
				c.array[j] = binary.LittleEndian.Uint16(b[p+2*j:])
			}
			p += 2 * cards[i]
		}
		bm.conts[i] = c
	}
	return bm, p, nil
}

// encodeRoaring appends the portable serialization (without run
// containers, which Java reads as well) of bm.
func encodeRoaring(out []byte, bm bitmap32) []byte {
	base := len(out) // offsets count from the start of this bitmap
	n := len(bm.keys)
	out = binary.LittleEndian.AppendUint32(out, roaringCookie)
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	for i, k := range bm.keys {
		out = binary.LittleEndian.AppendUint16(out, k)
		out = binary.LittleEndian.AppendUint16(out, uint16(bm.conts[i].card()-1))
	}
	offset := len(out) - base + 4*n
	for _, c := range bm.conts {
		out = binary.LittleEndian.AppendUint32(out, uint32(offset))
		if c.card() > arrayMaxCard {
			offset += 8192
		} else {
			offset += 2 * c.card()
		}
	}
	for _, c := range bm.conts {
		if c.card() > arrayMaxCard {
			if c.bitmap == nil {
				c.toBitmap()
			}
			for _, w := range c.bitmap {
				out = binary.LittleEndian.AppendUint64(out, w)
			}
		} else {
			c.each(func(v uint16) { out = binary.LittleEndian.AppendUint16(out, v) })
		}
	}
	return out
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
		bm, used, err := decodeRoaring(payload[4:])
		if err != nil {
			return nil, 0, err
		}
		if 4+used != size {
			return nil, 0, fmt.Errorf("%w: %d trailing bytes", errDVCorrupt, size-4-used)
		}
		dv.highs = []bitmap32{bm}
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
			bm, used, err := decodeRoaring(p[4:])
			if err != nil {
				return nil, 0, err
			}
			for len(dv.highs) < key {
				dv.highs = append(dv.highs, bitmap32{})
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
		payload = binary.LittleEndian.AppendUint32(payload, dv64Magic)
		var n uint64
		for _, b := range dv.highs {
			if len(b.keys) > 0 {
				n++
			}
		}
		payload = binary.LittleEndian.AppendUint64(payload, n)
		for k, b := range dv.highs {
			if len(b.keys) == 0 {
				continue
			}
			payload = binary.LittleEndian.AppendUint32(payload, uint32(k))
			payload = encodeRoaring(payload, b)
		}
	} else {
		payload = binary.BigEndian.AppendUint32(payload, dv32Magic)
		var b bitmap32
		if len(dv.highs) > 0 {
			b = dv.highs[0]
		}
		payload = encodeRoaring(payload, b)
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
	out := []byte{dvIndexVersion}
	var ranges []DeletionVectorRange
	for _, n := range names {
		dv := vectors[n]
		start := len(out)
		out = dv.Encode(out)
		size := int32(binary.BigEndian.Uint32(out[start:]))
		length := size
		if dv.Bitmap64 {
			length = size + 8
		}
		ranges = append(ranges, DeletionVectorRange{DataFile: n, Offset: int32(start), Length: length, Cardinality: dv.Cardinality()})
	}
	return out, ranges
}
