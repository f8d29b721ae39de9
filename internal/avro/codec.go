package avro

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
)

// zstdDecoders holds one decoder per block cap (its memory limit).
var zstdDecoders sync.Map // int -> *zstdDecoder

type zstdDecoder struct {
	once sync.Once
	dec  *zstd.Decoder
	err  error
}

func zstdFor(maxBlock int) (*zstd.Decoder, error) {
	v, _ := zstdDecoders.LoadOrStore(maxBlock, &zstdDecoder{})
	d := v.(*zstdDecoder)
	d.once.Do(func() {
		// DecodeAll is safe for concurrent use; the default concurrency
		// (GOMAXPROCS) lets that many decodes run in parallel.
		d.dec, d.err = zstd.NewReader(nil,
			zstd.WithDecoderMaxMemory(uint64(maxBlock)),
			zstd.WithDecoderMaxWindow(uint64(maxBlock)))
	})
	return d.dec, d.err
}

// decompress returns the records of one block, at most maxBlock bytes.
// block is freshly allocated by the reader, so the null codec returns it.
func decompress(codec string, block []byte, maxBlock int) ([]byte, error) {
	switch codec {
	case "null":
		return block, nil
	case "deflate":
		fr := flate.NewReader(bytes.NewReader(block))
		defer fr.Close()
		out, err := io.ReadAll(io.LimitReader(fr, int64(maxBlock)+1))
		if err != nil {
			return nil, fmt.Errorf("%w: deflate block: %w", ErrCorrupt, err)
		}
		if len(out) > maxBlock {
			return nil, fmt.Errorf("%w: deflate block larger than %d bytes", ErrCorrupt, maxBlock)
		}
		return out, nil
	case "snappy":
		// Avro's snappy blocks end with the big-endian CRC32 of the
		// uncompressed data.
		if len(block) < 4 {
			return nil, fmt.Errorf("%w: snappy block too short", ErrCorrupt)
		}
		body, sum := block[:len(block)-4], binary.BigEndian.Uint32(block[len(block)-4:])
		n, err := snappy.DecodedLen(body)
		if err != nil || n > maxBlock {
			return nil, fmt.Errorf("%w: snappy block: bad length", ErrCorrupt)
		}
		out, err := snappy.Decode(nil, body)
		if err != nil {
			return nil, fmt.Errorf("%w: snappy block: %w", ErrCorrupt, err)
		}
		if crc32.ChecksumIEEE(out) != sum {
			return nil, fmt.Errorf("%w: snappy block checksum mismatch", ErrCorrupt)
		}
		return out, nil
	case "zstandard":
		dec, err := zstdFor(maxBlock)
		if err != nil {
			return nil, err
		}
		out, err := dec.DecodeAll(block, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: zstandard block: %w", ErrCorrupt, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnsupportedCodec, codec)
}

var (
	zstdEncoderOnce sync.Once
	zstdEncoder     *zstd.Encoder
	zstdEncoderErr  error
)

func compress(codec string, block []byte) ([]byte, error) {
	switch codec {
	case "null":
		return block, nil
	case "deflate":
		var b bytes.Buffer
		fw, err := flate.NewWriter(&b, flate.DefaultCompression)
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write(block); err != nil {
			return nil, err
		}
		if err := fw.Close(); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	case "snappy":
		out := snappy.Encode(nil, block)
		return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(block)), nil
	case "zstandard":
		// Paimon writes level 1 (file.compression.zstd-level default).
		zstdEncoderOnce.Do(func() {
			zstdEncoder, zstdEncoderErr = zstd.NewWriter(nil,
				zstd.WithEncoderLevel(zstd.SpeedFastest))
		})
		if zstdEncoderErr != nil {
			return nil, zstdEncoderErr
		}
		return zstdEncoder.EncodeAll(block, nil), nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnsupportedCodec, codec)
}
