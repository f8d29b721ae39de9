package avro

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
)

const magic = "Obj\x01"

// Block caps: the largest block (compressed, and decompressed) a reader
// accepts. Java flushes a block once it holds 64000 bytes of records, so a
// real block exceeds that only by its last record; data files get a larger
// cap for rows holding big strings or blobs.
const (
	MaxMetadataBlock = 16 << 20
	MaxDataBlock     = 256 << 20
)

// Reader streams the records of one object-container file, one block in
// memory at a time. Every length in the file is checked against the bytes
// the file has left (its size is given) and against the block cap before
// anything is allocated.
type Reader struct {
	src      *bufio.Reader
	left     int64 // bytes of the file not yet read
	maxBlock int
	sync     []byte
	schema   *Schema
	codec    string
	meta     map[string][]byte

	block     decoder
	remaining int64 // records left in block
	zeroItems int64
	err       error
}

// NewReader reads the container header of a file of size bytes from r.
// Errors caused by the bytes wrap ErrCorrupt (or ErrUnsupportedCodec).
func NewReader(r io.Reader, size int64, maxBlock int) (*Reader, error) {
	// A small file gets a buffer of its size, not 64 KiB.
	bufSize := int64(64 << 10)
	if size < bufSize {
		bufSize = max(size, 16)
	}
	c := &Reader{src: bufio.NewReaderSize(r, int(bufSize)), left: size, maxBlock: maxBlock, codec: "null"}
	c.block.zeroItems = &c.zeroItems
	m, err := c.read(4)
	if err != nil {
		return nil, err
	}
	if string(m) != magic {
		return nil, fmt.Errorf("%w: not an avro object container (bad magic)", ErrCorrupt)
	}
	c.meta = map[string][]byte{}
	for {
		n, err := c.long()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		if n < 0 {
			if _, err := c.long(); err != nil { // block size in bytes, not needed
				return nil, err
			}
			n = -n
		}
		if n < 0 || n > c.left/2 {
			return nil, fmt.Errorf("%w: header block count %d exceeds the %d bytes left", ErrCorrupt, n, c.left)
		}
		for ; n > 0; n-- {
			k, err := c.sized()
			if err != nil {
				return nil, err
			}
			v, err := c.sized()
			if err != nil {
				return nil, err
			}
			c.meta[string(k)] = v
		}
	}
	if c.sync, err = c.read(16); err != nil {
		return nil, err
	}
	if v, ok := c.meta["avro.codec"]; ok && len(v) > 0 {
		c.codec = string(v)
	}
	st, ok := c.meta["avro.schema"]
	if !ok {
		return nil, fmt.Errorf("%w: header without avro.schema", ErrCorrupt)
	}
	if c.schema, err = ParseSchema(st); err != nil {
		return nil, err
	}
	return c, nil
}

// Schema is the file's writer schema.
func (c *Reader) Schema() *Schema { return c.schema }

// Codec is the file's block codec (null, deflate, snappy, zstandard).
func (c *Reader) Codec() string { return c.codec }

// Meta is the file's header metadata.
func (c *Reader) Meta() map[string][]byte { return c.meta }

// Next decodes the next record; io.EOF after the last.
func (c *Reader) Next() (any, error) {
	for c.remaining == 0 {
		if c.err != nil {
			return nil, c.err
		}
		if c.left == 0 {
			return nil, io.EOF
		}
		if err := c.nextBlock(); err != nil {
			c.err = err
			return nil, err
		}
	}
	v := c.block.value(c.schema, 0)
	if c.block.err != nil {
		c.err = c.block.err
		return nil, c.err
	}
	c.remaining--
	return v, nil
}

func (c *Reader) nextBlock() error {
	count, err := c.long()
	if err != nil {
		return err
	}
	raw, err := c.sized()
	if err != nil {
		return err
	}
	bsync, err := c.read(16)
	if err != nil {
		return err
	}
	if !bytes.Equal(bsync, c.sync) {
		return fmt.Errorf("%w: sync marker mismatch %d bytes before the end", ErrCorrupt, c.left)
	}
	if count < 0 {
		return fmt.Errorf("%w: negative block count %d", ErrCorrupt, count)
	}
	if count == 0 {
		return nil
	}
	block, err := decompress(c.codec, raw, c.maxBlock)
	if err != nil {
		return err
	}
	if ms := c.schema.minSize; ms > 0 && count > int64(len(block)/ms) {
		return fmt.Errorf("%w: block claims %d records in %d bytes", ErrCorrupt, count, len(block))
	}
	c.block = decoder{buf: block, zeroItems: &c.zeroItems}
	if c.schema.minSize == 0 && !c.block.countZero(count) {
		return c.block.err
	}
	c.remaining = count
	return nil
}

// truncated reports the end of the stream: corrupt when the declared size
// is used up, an I/O error (the file shrank) otherwise.
func (c *Reader) truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if c.left <= 0 {
			return fmt.Errorf("%w: truncated file", ErrCorrupt)
		}
		return fmt.Errorf("read avro file: %d bytes missing: %w", c.left, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("read avro file: %w", err)
}

func (c *Reader) long() (int64, error) {
	var u uint64
	for shift := uint(0); shift < 70; shift += 7 {
		if c.left <= 0 {
			return 0, fmt.Errorf("%w: truncated varint", ErrCorrupt)
		}
		b, err := c.src.ReadByte()
		if err != nil {
			return 0, c.truncated(err)
		}
		c.left--
		u |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return int64(u>>1) ^ -int64(u&1), nil
		}
	}
	return 0, fmt.Errorf("%w: varint too long", ErrCorrupt)
}

// sized reads a length-prefixed byte string.
func (c *Reader) sized() ([]byte, error) {
	n, err := c.long()
	if err != nil {
		return nil, err
	}
	return c.read(n)
}

// read reads n bytes after checking n against the bytes left and the cap.
func (c *Reader) read(n int64) ([]byte, error) {
	if n < 0 || n > c.left {
		return nil, fmt.Errorf("%w: length %d exceeds the %d bytes left", ErrCorrupt, n, c.left)
	}
	if n > int64(c.maxBlock) {
		return nil, fmt.Errorf("%w: length %d exceeds the %d-byte block cap", ErrCorrupt, n, c.maxBlock)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.src, b); err != nil {
		return nil, c.truncated(err)
	}
	c.left -= n
	return b, nil
}

// File is a whole decoded container.
type File struct {
	Schema *Schema
	Codec  string
	Meta   map[string][]byte
	Values []any
}

// ReadFile decodes every record of a container held in memory.
func ReadFile(data []byte, maxBlock int) (*File, error) {
	r, err := NewReader(bytes.NewReader(data), int64(len(data)), maxBlock)
	if err != nil {
		return nil, err
	}
	f := &File{Schema: r.schema, Codec: r.codec, Meta: r.meta}
	for {
		v, err := r.Next()
		if errors.Is(err, io.EOF) {
			return f, nil
		}
		if err != nil {
			return nil, err
		}
		f.Values = append(f.Values, v)
	}
}

// Records returns the number of records a container held in memory
// declares, reading only block headers: a caller sizes its result with it
// before decoding, instead of growing a slice record by record. Errors
// caused by the bytes wrap ErrCorrupt.
func Records(data []byte) (int64, error) {
	r, err := NewReader(bytes.NewReader(data), int64(len(data)), math.MaxInt)
	if err != nil {
		return 0, err
	}
	var total int64
	for r.left > 0 {
		count, err := r.long()
		if err != nil {
			return 0, err
		}
		size, err := r.long()
		if err != nil {
			return 0, err
		}
		if count < 0 || size < 0 || size > r.left-16 {
			return 0, fmt.Errorf("%w: block of %d records in %d bytes with %d bytes left", ErrCorrupt, count, size, r.left)
		}
		if _, err := r.src.Discard(int(size + 16)); err != nil {
			return 0, r.truncated(err)
		}
		r.left -= size + 16
		total += count
	}
	return total, nil
}
