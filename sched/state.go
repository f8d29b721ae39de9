package sched

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/compactd/compactd/policy"
)

// HaltedRecord is the state file of a halted table,
// <state-dir>/halted/<db.table>@<warehouse hash>.json. `compactd resume`
// deletes it; the daemon then resumes the table at its next tick.
type HaltedRecord struct {
	Warehouse string      `json:"warehouse"`
	Table     string      `json:"table"`
	Job       policy.Kind `json:"job"`
	Reason    string      `json:"reason"`
	Time      time.Time   `json:"time"`
}

func haltedDir(stateDir string) string { return filepath.Join(stateDir, "halted") }

func haltedFile(stateDir, warehouse, tbl string) string {
	h := sha256.Sum256([]byte(warehouse))
	return filepath.Join(haltedDir(stateDir), tbl+"@"+hex.EncodeToString(h[:6])+".json")
}

func writeHalted(stateDir string, r HaltedRecord) error {
	if err := os.MkdirAll(haltedDir(stateDir), 0o755); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(r, "", "  ")
	f := haltedFile(stateDir, r.Warehouse, r.Table)
	tmp := f + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, f)
}

// ListHalted reads the halted tables recorded in a state directory.
func ListHalted(stateDir string) ([]HaltedRecord, error) {
	ents, err := os.ReadDir(haltedDir(stateDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []HaltedRecord
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(haltedDir(stateDir), e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var r HaltedRecord
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("halted record %s: %w", e.Name(), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Resume removes the halted records of table "db.table" (in every
// warehouse, or only in warehouse if not empty) and returns them. A running
// daemon resumes the table at its next tick.
func Resume(stateDir, tbl, warehouse string) ([]HaltedRecord, error) {
	recs, err := ListHalted(stateDir)
	if err != nil {
		return nil, err
	}
	var out []HaltedRecord
	for _, r := range recs {
		if r.Table != tbl || (warehouse != "" && r.Warehouse != warehouse) {
			continue
		}
		if err := os.Remove(haltedFile(stateDir, r.Warehouse, r.Table)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}
