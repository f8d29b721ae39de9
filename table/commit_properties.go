package table

import (
	"context"
	"fmt"
	"strconv"

	"github.com/compactd/compactd/table/manifest"
)

// MaxSequenceProperty is the snapshot property in which Paimon 2.0
// records the largest sequence number committed so far when the table
// has write.sequence-number-init-mode=snapshot: write-only writers start
// from it instead of scanning the table's files.
const MaxSequenceProperty = "sequence.generation.max-sequence-number"

// commitProperties are the properties of the snapshot a commit publishes.
// A compaction's commit carries none of its own, as Java's dedicated
// compaction does. With write.sequence-number-init-mode=snapshot it
// carries the maximum sequence number forward as Java 2.0's commit does:
// the latest snapshot's property, or failing that the largest of every
// ADD entry of its data manifests, raised by the commit's own ADDs.
// Dropping it would let the next writer restart its sequence numbers
// below the table's, and its rows would lose every merge they should win.
func (t *Table) commitProperties(ctx context.Context, latest *Snapshot, base []manifest.ListEntry, delta []manifest.Entry) (map[string]string, error) {
	if !t.Options().SequenceFromSnapshot {
		return nil, nil
	}
	var have bool
	var maxSeq int64
	raise := func(v int64) {
		if !have || v > maxSeq {
			maxSeq, have = v, true
		}
	}
	if latest != nil {
		if v, ok := latest.Properties[MaxSequenceProperty]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("commit to %s: snapshot %d property %s=%q is not a number: %w", t.FullName(), latest.ID, MaxSequenceProperty, v, ErrCorrupt)
			}
			raise(n)
		} else {
			entries, err := t.ReadManifests(ctx, base)
			if err != nil {
				return nil, fmt.Errorf("commit to %s: %w", t.FullName(), err)
			}
			for j := range entries {
				if entries[j].Kind == manifest.FileKindAdd {
					raise(entries[j].File.MaxSequenceNumber)
				}
			}
		}
	}
	for i := range delta {
		if delta[i].Kind == manifest.FileKindAdd {
			raise(delta[i].File.MaxSequenceNumber)
		}
	}
	if !have {
		return nil, nil
	}
	return map[string]string{MaxSequenceProperty: strconv.FormatInt(maxSeq, 10)}, nil
}
