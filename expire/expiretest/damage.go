package expiretest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Damage is one way a metadata file can be broken on local storage.
type Damage string

const (
	// Missing moves the file out of the table (to movedTo).
	Missing Damage = "missing"
	// Truncated cuts the file to half its length.
	Truncated Damage = "truncated"
	// Corrupt inverts the last 16 bytes (an Avro file's final sync marker).
	Corrupt Damage = "corrupt"
	// Unreadable replaces the file by a directory of the same name. Tests
	// run as root, where mode 000 does not stop a read; a directory in the
	// file's place makes every open for reading fail.
	Unreadable Damage = "unreadable"
)

// Damages are every Damage.
var Damages = []Damage{Missing, Truncated, Corrupt, Unreadable}

// Apply breaks the file at path; a moved-away file goes into movedTo.
func (d Damage) Apply(t testing.TB, path, movedTo string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("damage %s: %v", path, err)
	}
	switch d {
	case Missing:
		err = os.Rename(path, filepath.Join(movedTo, filepath.Base(path)))
	case Truncated:
		err = os.Truncate(path, int64(len(data)/2))
	case Corrupt:
		if len(data) < 32 {
			t.Fatalf("damage %s: only %d bytes", path, len(data))
		}
		for i := len(data) - 16; i < len(data); i++ {
			data[i] ^= 0xFF
		}
		err = os.WriteFile(path, data, 0o644)
	case Unreadable:
		if err = os.Remove(path); err == nil {
			err = os.Mkdir(path, 0o755)
		}
	default:
		err = fmt.Errorf("unknown damage %q", d)
	}
	if err != nil {
		t.Fatalf("damage %s (%s): %v", path, d, err)
	}
}

// Tree describes a directory tree byte for byte: every file and directory
// by relative path, with a SHA-256 of each file's content (and the target
// of each symbolic link).
func Tree(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out = append(out, rel+" -> "+target)
		case d.IsDir():
			out = append(out, rel+"/")
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			out = append(out, rel+" "+hex.EncodeToString(sum[:]))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("tree %s: %v", root, err)
	}
	slices.Sort(out)
	return out
}

// DiffTrees describes how two Trees differ, "" when they are equal.
func DiffTrees(before, after []string) string {
	var b strings.Builder
	for _, l := range before {
		if !slices.Contains(after, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range after {
		if !slices.Contains(before, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
