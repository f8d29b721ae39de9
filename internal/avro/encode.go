package avro

import (
	"crypto/rand"
	"encoding/binary"
)

// SyncInterval is Java's DataFileWriter default block size: a block is cut
// once its records reach it.
const SyncInterval = 64000

// AppendLong appends an Avro long (zig-zag varint).
func AppendLong(buf []byte, v int64) []byte {
	return binary.AppendUvarint(buf, uint64(v<<1)^uint64(v>>63))
}

// AppendInt appends an Avro int.
func AppendInt(buf []byte, v int32) []byte { return AppendLong(buf, int64(v)) }

// AppendBytes appends Avro bytes (length, then the bytes).
func AppendBytes(buf, b []byte) []byte {
	return append(AppendLong(buf, int64(len(b))), b...)
}

// AppendString appends an Avro string.
func AppendString(buf []byte, s string) []byte {
	return append(AppendLong(buf, int64(len(s))), s...)
}

// WriteFile builds an object-container file as Java's DataFileWriter does:
// the header holds avro.schema then avro.codec in one map block, and blocks
// are cut at SyncInterval. encode appends record i to buf and returns it.
func WriteFile(schema, codec string, n int, encode func(buf []byte, i int) ([]byte, error)) ([]byte, error) {
	var sync [16]byte
	if _, err := rand.Read(sync[:]); err != nil {
		return nil, err
	}
	out := []byte(magic)
	out = AppendLong(out, 2)
	out = AppendString(out, "avro.schema")
	out = AppendBytes(out, []byte(schema))
	out = AppendString(out, "avro.codec")
	out = AppendBytes(out, []byte(codec))
	out = AppendLong(out, 0)
	out = append(out, sync[:]...)

	var rec []byte
	count := 0
	flush := func() error {
		if count == 0 {
			return nil
		}
		block, err := compress(codec, rec)
		if err != nil {
			return err
		}
		out = AppendLong(out, int64(count))
		out = AppendBytes(out, block)
		out = append(out, sync[:]...)
		rec = rec[:0]
		count = 0
		return nil
	}
	for i := 0; i < n; i++ {
		var err error
		if rec, err = encode(rec, i); err != nil {
			return nil, err
		}
		count++
		if len(rec) >= SyncInterval {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}
