package expiretest

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// CopyDir copies a directory tree, so a test can change a copy of a
// read-only fixture table.
func CopyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// SetSchemaOption sets a table option in schema file schema-<id> of the
// table at root (a test's copy), as if the table had been created with it.
func SetSchemaOption(t testing.TB, root string, id int, key, value string) {
	t.Helper()
	path := filepath.Join(root, "schema", "schema-"+strconv.Itoa(id))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	opts, _ := schema["options"].(map[string]any)
	if opts == nil {
		opts = map[string]any{}
		schema["options"] = opts
	}
	opts[key] = value
	if data, err = json.MarshalIndent(schema, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
