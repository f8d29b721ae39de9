package orc

import (
	"bytes"
	"fmt"
	"io"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression is the postscript's CompressionKind.
type Compression int

const (
	CompressionNone   Compression = 0
	CompressionZlib   Compression = 1
	CompressionSnappy Compression = 2
	CompressionLZO    Compression = 3
	CompressionLZ4    Compression = 4
	CompressionZstd   Compression = 5
)

func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionZlib:
		return "zlib"
	case CompressionSnappy:
		return "snappy"
	case CompressionLZO:
		return "lzo"
	case CompressionLZ4:
		return "lz4"
	case CompressionZstd:
		return "zstd"
	}
	return fmt.Sprintf("compression(%d)", int(c))
}

var zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(64<<20))

// decompress undoes ORC's chunked compression: every chunk has a 3-byte
// little-endian header (length << 1 | original) and holds at most
// blockSize bytes once decompressed. limit bounds the output (the
// decoded size a stream can plausibly have), so a forged header cannot
// make the reader allocate without bound.
func decompress(c Compression, blockSize uint64, in []byte, limit int) ([]byte, error) {
	if c == CompressionNone {
		return in, nil
	}
	var out []byte
	for len(in) > 0 {
		if len(in) < 3 {
			return nil, fmt.Errorf("%w: truncated compression chunk header", ErrCorrupt)
		}
		h := uint32(in[0]) | uint32(in[1])<<8 | uint32(in[2])<<16
		in = in[3:]
		n := int(h >> 1)
		if n > len(in) {
			return nil, fmt.Errorf("%w: compression chunk of %d bytes, %d left", ErrCorrupt, n, len(in))
		}
		chunk := in[:n]
		in = in[n:]
		if h&1 == 1 {
			out = append(out, chunk...)
		} else {
			var err error
			if out, err = decompressChunk(c, blockSize, chunk, out); err != nil {
				return nil, err
			}
		}
		if len(out) > limit {
			return nil, fmt.Errorf("%w: stream decompresses to more than %d bytes", ErrCorrupt, limit)
		}
	}
	return out, nil
}

func decompressChunk(c Compression, blockSize uint64, chunk, out []byte) ([]byte, error) {
	if blockSize == 0 || blockSize > 1<<30 {
		blockSize = 256 << 10
	}
	switch c {
	case CompressionZlib:
		// ORC's zlib is raw deflate, without the zlib header.
		r := flate.NewReader(bytes.NewReader(chunk))
		defer r.Close()
		var b bytes.Buffer
		if _, err := io.Copy(&b, io.LimitReader(r, int64(blockSize)+1)); err != nil {
			return nil, fmt.Errorf("%w: zlib: %w", ErrCorrupt, err)
		}
		if uint64(b.Len()) > blockSize {
			return nil, fmt.Errorf("%w: zlib chunk larger than the compression block size %d", ErrCorrupt, blockSize)
		}
		return append(out, b.Bytes()...), nil
	case CompressionSnappy:
		// The decoded length is the chunk's own claim, and snappy.Decode
		// allocates it before decoding: bound it by the block size and by
		// snappy's best ratio (a 64-byte copy in 2 bytes), so a forged
		// header in a tiny chunk cannot allocate up to the block size.
		n, err := snappy.DecodedLen(chunk)
		if err != nil || n < 0 || uint64(n) > blockSize || n > 32*len(chunk)+64 {
			return nil, fmt.Errorf("%w: snappy chunk header", ErrCorrupt)
		}
		d, err := snappy.Decode(nil, chunk)
		if err != nil {
			return nil, fmt.Errorf("%w: snappy: %w", ErrCorrupt, err)
		}
		return append(out, d...), nil
	case CompressionLZ4:
		// LZ4 expands at most about 255:1; a buffer of the block size the
		// (possibly forged) postscript names could be a GiB per chunk.
		buf := make([]byte, min(blockSize, uint64(255*len(chunk)+64)))
		n, err := lz4.UncompressBlock(chunk, buf)
		if err != nil {
			return nil, fmt.Errorf("%w: lz4: %w", ErrCorrupt, err)
		}
		return append(out, buf[:n]...), nil
	case CompressionZstd:
		// Decoded in place after out: a chunk decoded apart and copied was
		// a block-sized garbage buffer per chunk.
		d, err := zstdDec.DecodeAll(chunk, out)
		if err != nil {
			return nil, fmt.Errorf("%w: zstd: %w", ErrCorrupt, err)
		}
		if uint64(len(d)-len(out)) > blockSize {
			return nil, fmt.Errorf("%w: zstd chunk larger than the compression block size %d", ErrCorrupt, blockSize)
		}
		return d, nil
	}
	return nil, fmt.Errorf("%w: compression %s", ErrUnsupported, c)
}
