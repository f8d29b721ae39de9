package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// snapshotCommit is a table's commit point through the catalog: POST
// .../databases/<db>/tables/<t>/commit (table.SnapshotCommit).
type snapshotCommit struct {
	cat            *Catalog
	database, name string
	tableID        string // the catalog's id of the table it was opened as
}

// commitRequest is Paimon's CommitTableRequest.
type commitRequest struct {
	TableID    string          `json:"tableId"`
	Snapshot   json.RawMessage `json:"snapshot"`
	Statistics []struct{}      `json:"statistics"`
}

// CommitSnapshot asks the catalog to publish data as snapshot s.ID (see
// table.SnapshotCommit for the error contract).
func (sc *snapshotCommit) CommitSnapshot(ctx context.Context, t *table.Table, s *table.Snapshot, data []byte) error {
	full := sc.database + "." + sc.name
	if err := sc.cat.checkOpen(); err != nil {
		return fmt.Errorf("commit to %s: %w", full, err)
	}
	if !json.Valid(data) {
		return fmt.Errorf("commit to %s: snapshot %d is not valid JSON", full, s.ID)
	}
	body, err := bodyJSON(commitRequest{TableID: sc.tableID, Snapshot: data, Statistics: []struct{}{}})
	if err != nil {
		return fmt.Errorf("commit to %s: encode request: %w", full, err)
	}
	// Nothing is sent on a context already done: nothing was published.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit to %s: snapshot %d: %w", full, s.ID, err)
	}
	r := request{
		method: http.MethodPost,
		path:   sc.cat.path("databases", segment(sc.database), "tables", segment(sc.name), "commit"),
		body:   body,
		commit: true,
	}
	status, answer, err := sc.cat.c.do(ctx, r)
	if err != nil {
		var te *transportError
		if errors.As(err, &te) && isDialError(te.err) {
			// The connection was never made (after the dial retries):
			// the server saw nothing.
			return fmt.Errorf("commit to %s via %s: snapshot %d: %w", full, sc.cat.name, s.ID, err)
		}
		return fmt.Errorf("commit to %s via %s: snapshot %d: %w: %w", full, sc.cat.name, s.ID, err, table.ErrCommitOutcomeUnknown)
	}
	switch {
	case status == http.StatusOK:
	case status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500 || status < 200:
		// The server (or a proxy in front of it) may have processed it.
		return fmt.Errorf("commit to %s via %s: snapshot %d: %w: %w", full, sc.cat.name, s.ID, sc.cat.c.statusError(r, status, answer), table.ErrCommitOutcomeUnknown)
	default:
		// A 4xx other than those is the server's refusal: nothing was
		// published (404: the table, or the id it was opened as, is gone).
		return fmt.Errorf("commit to %s via %s: snapshot %d refused: %w", full, sc.cat.name, s.ID, sc.cat.c.statusError(r, status, answer))
	}
	var res struct {
		Success *bool `json:"success"`
	}
	if err := json.Unmarshal(answer, &res); err != nil || res.Success == nil {
		return fmt.Errorf("commit to %s via %s: snapshot %d: unreadable answer %q: %w", full, sc.cat.name, s.ID, sc.cat.c.redact(string(answer)), table.ErrCommitOutcomeUnknown)
	}
	if !*res.Success {
		slog.Debug("REST catalog commit lost the race for the snapshot id", "table", full, "catalog", sc.cat.name, "snapshot", s.ID)
		return fmt.Errorf("commit to %s via %s: snapshot %d already exists: %w", full, sc.cat.name, s.ID, fileio.ErrExist)
	}
	slog.Debug("committed through REST catalog", "table", full, "catalog", sc.cat.name, "snapshot", s.ID, "kind", s.CommitKind)
	return nil
}
