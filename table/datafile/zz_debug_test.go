package datafile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestZZDump(t *testing.T) {
	dir := filepath.Join(fixtureRoot, "parquet", os.Getenv("TBL"))
	schemas := loadSchemas(t, dir)
	filepath.Walk(filepath.Dir(dir), func(p string, info os.FileInfo, err error) error {
		if filepath.Ext(p) != ".parquet" {
			return nil
		}
		fs := fileSchemaOf(t, p, schemas)
		fmt.Println(p, "schema", fs.ID)
		if len(fs.PrimaryKeys) > 0 {
			for _, kv := range readAllKV(t, p, fs.schema(), fs.schema()) {
				fmt.Printf("  %v seq=%d %s %v\n", kv.Key, kv.Seq, kv.Kind.ShortString(), kv.Value)
			}
		} else {
			for _, r := range readAllRows(t, p, fs.Fields, fs.Fields) {
				fmt.Printf("  %v\n", r)
			}
		}
		return nil
	})
}
