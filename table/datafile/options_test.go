package datafile

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
)

func TestOptionsForLevel(t *testing.T) {
	opts := map[string]string{
		"file.compression":              "zstd",
		"file.compression.per.level":    "0:lz4, 2:snappy",
		"file.format.per.level":         "0:AVRO,3:parquet",
		"metadata.stats-mode.per.level": "0:none",
	}
	l0, err := OptionsForLevel(opts, 0)
	if err != nil {
		t.Fatal(err)
	}
	if l0["file.compression"] != "lz4" || l0["file.format"] != "avro" || l0["metadata.stats-mode"] != "none" {
		t.Errorf("level 0: %v", l0)
	}
	l1, _ := OptionsForLevel(opts, 1)
	if l1["file.compression"] != "zstd" || l1["file.format"] != "" || l1["metadata.stats-mode"] != "" {
		t.Errorf("level 1: %v", l1)
	}
	l2, _ := OptionsForLevel(opts, 2)
	if l2["file.compression"] != "snappy" {
		t.Errorf("level 2: %v", l2)
	}
	if opts["file.compression"] != "zstd" {
		t.Error("input modified")
	}
	if _, err := OptionsForLevel(map[string]string{"file.format.per.level": "x"}, 0); err == nil {
		t.Error("malformed per-level option accepted")
	}
	// A level whose format is not Parquet is refused by the writer.
	_, err = NewKeyValueWriter(context.Background(), fileio.NewLocal(), filepath.Join(t.TempDir(), "data-x-0.parquet"), benchSchema(t), l0)
	if err == nil || !strings.Contains(err.Error(), "file.format=avro") {
		t.Errorf("avro level accepted: %v", err)
	}
}
