package manifest

// Manifests, manifest lists and index manifests are Avro object containers
// read and written through internal/avro, compactd's one Avro stack (also
// used for Avro data files). Manifests are read whole; records decode
// generically under the file's own (writer) schema and are then matched to
// Paimon fields by name, which is how Java reads every layout from 0.8 on.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/avro"
)

// ErrUnsupportedFormat is returned for manifest files that are neither
// Avro nor ORC (Paimon's manifest.format=parquet) or use a codec or ORC
// column type compactd cannot read.
var ErrUnsupportedFormat = errors.New("unsupported manifest format")

// ErrCorrupt is wrapped by every error caused by the bytes of a
// manifest, manifest list or index manifest (as opposed to I/O errors), so
// callers can stop touching a table whose metadata is damaged. It is
// internal/avro's ErrCorrupt.
var ErrCorrupt = avro.ErrCorrupt

// avroRec is a generically decoded Avro record.
type avroRec = avro.Record

// avroFile is a decoded metadata container.
type avroFile struct {
	codec  string
	meta   map[string][]byte
	values []any
}

// readAvroFile decodes a whole metadata container.
func readAvroFile(data []byte) (*avroFile, error) {
	switch {
	case bytes.HasPrefix(data, []byte("ORC")):
		return readORCFile(data)
	case bytes.HasPrefix(data, []byte("PAR1")):
		return nil, fmt.Errorf("%w: file is Parquet (manifest.format=parquet); only avro manifests are supported", ErrUnsupportedFormat)
	}
	f, err := avro.ReadFile(data, avro.MaxMetadataBlock)
	if errors.Is(err, avro.ErrUnsupportedCodec) {
		return nil, fmt.Errorf("%w: %w", ErrUnsupportedFormat, err)
	}
	if err != nil {
		return nil, err
	}
	return &avroFile{codec: f.Codec, meta: f.Meta, values: f.Values}, nil
}

// avroCodecName maps Paimon's manifest.compression option to an Avro codec.
// The empty string means the default, zstd.
func avroCodecName(compression string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(compression)) {
	case "", "zstd", "zstandard":
		return "zstandard", nil
	case "snappy":
		return "snappy", nil
	case "deflate":
		return "deflate", nil
	case "null", "none", "uncompressed":
		return "null", nil
	}
	return "", fmt.Errorf("manifest compression %q is not supported (zstd, snappy, deflate, none)", compression)
}

// avroWriter appends the Avro binary values of one record.
type avroWriter struct {
	buf []byte
}

func (w *avroWriter) long(v int64)    { w.buf = avro.AppendLong(w.buf, v) }
func (w *avroWriter) int(v int32)     { w.buf = avro.AppendInt(w.buf, v) }
func (w *avroWriter) bytes(b []byte)  { w.buf = avro.AppendBytes(w.buf, b) }
func (w *avroWriter) string(s string) { w.buf = avro.AppendString(w.buf, s) }

// Nullable unions are always ["null", T]: branch 0 null, branch 1 value.
func (w *avroWriter) null()    { w.long(0) }
func (w *avroWriter) present() { w.long(1) }

func (w *avroWriter) optLong(v *int64) {
	if v == nil {
		w.null()
		return
	}
	w.present()
	w.long(*v)
}

func (w *avroWriter) optInt(v *int32) {
	if v == nil {
		w.null()
		return
	}
	w.present()
	w.int(*v)
}

func (w *avroWriter) optString(v *string) {
	if v == nil {
		w.null()
		return
	}
	w.present()
	w.string(*v)
}

func (w *avroWriter) optBytes(v []byte) {
	if v == nil {
		w.null()
		return
	}
	w.present()
	w.bytes(v)
}

func (w *avroWriter) stringArray(a []string) {
	if len(a) > 0 {
		w.long(int64(len(a)))
		for _, s := range a {
			w.string(s)
		}
	}
	w.long(0)
}

func (w *avroWriter) optStringArray(a []string) {
	if a == nil {
		w.null()
		return
	}
	w.present()
	w.stringArray(a)
}

// writeAvroFile builds an object-container file as Java does; encode
// appends record i to the writer.
func writeAvroFile(schema, codec string, n int, encode func(w *avroWriter, i int) error) ([]byte, error) {
	w := &avroWriter{}
	return avro.WriteFile(schema, codec, n, func(buf []byte, i int) ([]byte, error) {
		w.buf = buf
		err := encode(w, i)
		return w.buf, err
	})
}

// readMetadataFile reads and decodes one Avro metadata file, naming it in
// every error.
func readMetadataFile[T any](ctx context.Context, fio fileio.FileIO, path, what string, decode func([]byte) ([]T, error)) ([]T, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	data, err := fileio.ReadFile(ctx, fio, path)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	out, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return out, nil
}

// decodeEntries decodes every record of an Avro container with decodeOne.
func decodeEntries[T any](data []byte, decodeOne func(any) (T, error)) ([]T, error) {
	if isAvro(data) {
		return streamEntries(data, decodeOne)
	}
	f, err := readAvroFile(data)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(f.values))
	for i, v := range f.values {
		e, err := decodeOne(v)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %w", ErrCorrupt, i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// isAvro reports whether data starts as an Avro object container.
func isAvro(data []byte) bool { return bytes.HasPrefix(data, []byte("Obj\x01")) }

// maxEntriesHint caps the result a container's declared record count may
// size up front; a larger (or lying) file grows the slice as it decodes.
const maxEntriesHint = 1 << 20

// streamEntries is decodeEntries for an Avro container, one record at a
// time: the generic value of a record is dropped as soon as it is
// converted, where decoding the whole file first held every record's
// value tree at once (several times the entries themselves: the largest
// transient of a plan at 100k files, docs/perf.md).
func streamEntries[T any](data []byte, decodeOne func(any) (T, error)) ([]T, error) {
	n, err := avro.Records(data)
	if err != nil {
		return nil, avroErr(err)
	}
	r, err := avro.NewReader(bytes.NewReader(data), int64(len(data)), avro.MaxMetadataBlock)
	if err != nil {
		return nil, avroErr(err)
	}
	out := make([]T, 0, min(n, maxEntriesHint))
	for i := 0; ; i++ {
		v, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, avroErr(err)
		}
		e, err := decodeOne(v)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %w", ErrCorrupt, i, err)
		}
		out = append(out, e)
	}
}

// avroErr marks an unsupported codec as readAvroFile does.
func avroErr(err error) error {
	if errors.Is(err, avro.ErrUnsupportedCodec) {
		return fmt.Errorf("%w: %w", ErrUnsupportedFormat, err)
	}
	return err
}

// writeMetadataFile encodes and writes one Avro metadata file, naming it in
// every error, and returns its size.
func writeMetadataFile(ctx context.Context, fio fileio.FileIO, path, what string, encode func() ([]byte, error)) (int64, error) {
	data, err := encode()
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = fileio.WriteFile(ctx, fio, path, data)
	}
	if err != nil {
		return 0, fmt.Errorf("write %s %s: %w", what, path, err)
	}
	return int64(len(data)), nil
}
