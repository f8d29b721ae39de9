package avro

import (
	"errors"
	"testing"
)

func TestRecordsCountsBlocksWithoutDecoding(t *testing.T) {
	for _, codec := range []string{"null", "deflate", "snappy", "zstandard"} {
		data, err := WriteFile(`{"type":"record","name":"r","fields":[{"name":"x","type":"long"}]}`, codec, 2500,
			func(buf []byte, i int) ([]byte, error) { return AppendLong(buf, int64(i)), nil })
		if err != nil {
			t.Fatal(err)
		}
		n, err := Records(data)
		if err != nil || n != 2500 {
			t.Fatalf("%s: Records = %d, %v; want 2500", codec, n, err)
		}
		if _, err := Records(data[:len(data)-3]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: truncated file: %v, want ErrCorrupt", codec, err)
		}
	}
}
