package orc

import (
	"fmt"
	"strconv"
	"strings"
)

// Java's OrcConf keys that change what the writer writes. Paimon passes
// every table option starting with "orc." to Java's ORC writer, for data
// files and (manifest.format=orc) metadata files alike.
const (
	ConfCompress           = "orc.compress"
	ConfZstdLevel          = "orc.compression.zstd.level"
	ConfCompressSize       = "orc.compress.size"
	ConfStripeSize         = "orc.stripe.size"
	ConfRowIndexStride     = "orc.row.index.stride"
	ConfDictionaryKeyRatio = "orc.dictionary.key.threshold"
	ConfBufferSizeEnforce  = "orc.buffer.size.enforce"
)

// ParseCompression maps a compression name as Java's
// CompressionKind.valueOf takes it (case-insensitive) to the kinds this
// writer can produce; "uncompressed" is Paimon's alias of none. LZO and
// Brotli, which Java knows, are refused: there is no writer for them here.
func ParseCompression(name string) (Compression, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "none", "uncompressed":
		return CompressionNone, nil
	case "zlib":
		return CompressionZlib, nil
	case "snappy":
		return CompressionSnappy, nil
	case "lz4":
		return CompressionLZ4, nil
	case "zstd":
		return CompressionZstd, nil
	}
	return 0, fmt.Errorf("ORC compression %q is not supported (none, zlib, snappy, lz4, zstd)", name)
}

// ApplyConf sets o from Java OrcConf properties (the keys above; others
// are ignored, as Java ignores what it does not read). A value Java would
// refuse is an error naming the key.
func ApplyConf(o *WriterOptions, conf map[string]string) error {
	if v, ok := conf[ConfCompress]; ok {
		c, err := ParseCompression(v)
		if err != nil {
			return fmt.Errorf("%s: %w", ConfCompress, err)
		}
		o.Compression = c
	}
	if v, ok := conf[ConfZstdLevel]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("invalid %s %q", ConfZstdLevel, v)
		}
		o.CompressionLevel = n
	}
	if v, ok := conf[ConfCompressSize]; ok {
		n, err := confBytes(ConfCompressSize, v)
		if err != nil {
			return err
		}
		o.BlockSize = int(min(n, 1<<30))
	}
	if v, ok := conf[ConfStripeSize]; ok {
		n, err := confBytes(ConfStripeSize, v)
		if err != nil {
			return err
		}
		o.StripeSize = n
	}
	if v, ok := conf[ConfRowIndexStride]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		// Java's WriterImpl refuses 1..999 ("Row stride must be at least 1000").
		if err != nil || n < 0 || (n > 0 && n < 1000) {
			return fmt.Errorf("invalid %s %q (0 or at least 1000)", ConfRowIndexStride, v)
		}
		o.RowIndexStride = n
		if n == 0 {
			o.RowIndexStride = -1 // Java: 0 disables the row index
		}
	}
	if v, ok := conf[ConfDictionaryKeyRatio]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 || f > 1 {
			return fmt.Errorf("invalid %s %q", ConfDictionaryKeyRatio, v)
		}
		o.DictionaryKeyRatio = &f
	}
	// Java fits the chunk size to the column count unless told not to.
	o.FitBlockSize = !strings.EqualFold(strings.TrimSpace(conf[ConfBufferSizeEnforce]), "true")
	if o.Compression == CompressionZlib {
		// Java's zlib level follows orc.compression.strategy, not the
		// zstd level.
		o.CompressionLevel = 0
	}
	return nil
}

// confBytes parses an OrcConf size: a plain byte count (OrcConf.getLong).
func confBytes(key, v string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("invalid %s %q (a number of bytes)", key, v)
	}
	return n, nil
}

// fitBlockSize is Java WriterImpl's getEstimatedBufferSize: the
// compression chunk shrinks with the column count, so that a stripe holds
// about ten chunks of each of two streams per column, rounded up to a
// power of two between 4 KiB and 256 KiB, and never above the configured
// size.
func fitBlockSize(stripeSize int64, columns, blockSize int) int {
	est := stripeSize / (20 * int64(max(columns, 1)))
	size := 4 << 10
	for size < 256<<10 && int64(size) < est {
		size <<= 1
	}
	return min(size, blockSize)
}
