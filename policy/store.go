package policy

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"
)

// Store is the policy store: per-table overrides in a YAML file next to
// the config,
//
//	tables:
//	  shop.orders:
//	    compact.schedule: "@every 30s"
//
// written atomically (rename) under an advisory lock, so the daemon, which
// reloads it when it changes, never reads half a file.
type Store struct {
	Tables map[string]map[string]string `yaml:"tables"`
}

// LoadStore reads the store; a missing file is an empty store.
func LoadStore(file string) (*Store, error) {
	s := &Store{Tables: map[string]map[string]string{}}
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read policy store: %w", err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("policy store %s: %w", file, err)
	}
	if s.Tables == nil {
		s.Tables = map[string]map[string]string{}
	}
	return s, nil
}

// Overrides returns the overrides of table "db.table" (never nil).
func (s *Store) Overrides(name string) map[string]string {
	if m := s.Tables[name]; m != nil {
		return maps.Clone(m)
	}
	return map[string]string{}
}

// Update changes the overrides of one table: each key=value sets it, an
// empty value removes it. validate, if not nil, sees the table's resulting
// overrides and may reject them; nothing is written then. The whole
// read-validate-write runs under an exclusive lock on file+".lock".
func Update(file, name string, changes map[string]string, validate func(map[string]string) error) (map[string]string, error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return nil, fmt.Errorf("policy store: %w", err)
	}
	unlock, err := lockFile(file + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	s, err := LoadStore(file)
	if err != nil {
		return nil, err
	}
	next := s.Overrides(name)
	for k, v := range changes {
		if v == "" {
			delete(next, k)
		} else {
			next[k] = v
		}
	}
	if validate != nil {
		if err := validate(next); err != nil {
			return nil, err
		}
	}
	if len(next) == 0 {
		delete(s.Tables, name)
	} else {
		s.Tables[name] = next
	}
	return next, s.write(file)
}

func (s *Store) write(file string) error {
	var b strings.Builder
	b.WriteString("# compactd policy store: per-table overrides (compactd policy set <table> key=value).\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	// Sorted for stable diffs.
	root := &yaml.Node{Kind: yaml.MappingNode}
	tables := &yaml.Node{Kind: yaml.MappingNode}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "tables"}, tables)
	for _, t := range slices.Sorted(maps.Keys(s.Tables)) {
		m := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range slices.Sorted(maps.Keys(s.Tables[t])) {
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k},
				&yaml.Node{Kind: yaml.ScalarNode, Value: s.Tables[t][k], Style: yaml.DoubleQuotedStyle})
		}
		tables.Content = append(tables.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: t}, m)
	}
	if err := enc.Encode(root); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".policies-*.tmp")
	if err != nil {
		return fmt.Errorf("write policy store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return fmt.Errorf("write policy store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write policy store: %w", err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("write policy store: %w", err)
	}
	return nil
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock policy store: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock policy store: %w", err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// ParseAssignments parses "key=value" arguments, reporting every malformed one.
func ParseAssignments(args []string) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			errs = append(errs, fmt.Errorf("%q: want key=value (key= removes an override)", a))
			continue
		}
		out[k] = v
	}
	return out, errors.Join(errs...)
}
