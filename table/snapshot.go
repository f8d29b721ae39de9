package table

import (
	"fmt"
	"sort"
	"strconv"
)

// SnapshotVersion is the snapshot file format version every Paimon release
// from 0.8 to 2.0 writes.
const SnapshotVersion = 3

// BatchCommitIdentifier is the commitIdentifier of batch / one-shot commits
// (Java's Long.MAX_VALUE).
const BatchCommitIdentifier int64 = 9223372036854775807

// CommitKind is the kind of change a snapshot records.
type CommitKind string

const (
	CommitAppend    CommitKind = "APPEND"
	CommitCompact   CommitKind = "COMPACT"
	CommitOverwrite CommitKind = "OVERWRITE"
	CommitAnalyze   CommitKind = "ANALYZE"
)

// Valid reports whether k is one of the kinds Java knows.
func (k CommitKind) Valid() bool {
	switch k {
	case CommitAppend, CommitCompact, CommitOverwrite, CommitAnalyze:
		return true
	}
	return false
}

// Snapshot is a snapshot/snapshot-<id> file (also the body of tags and of
// long-lived changelog files). Pointer fields are nullable in Java and are
// omitted from the JSON when nil, as Java 2.0 does.
type Snapshot struct {
	Version                   int
	UUID                      *string // 2.0+
	ID                        int64
	SchemaID                  int64
	BaseManifestList          string
	BaseManifestListSize      *int64 // 1.1+
	DeltaManifestList         string
	DeltaManifestListSize     *int64 // 1.1+
	ChangelogManifestList     *string
	ChangelogManifestListSize *int64 // 1.1+
	IndexManifest             *string
	CommitUser                string
	WriterVersion             *string // unreleased (after 2.0); informational
	CommitIdentifier          int64
	CommitKind                CommitKind
	TimeMillis                int64
	// LogOffsets is written by releases up to 1.3 (usually empty); nil means
	// absent. Java 1.4+ neither reads nor writes it.
	LogOffsets           map[int32]int64
	TotalRecordCount     int64
	DeltaRecordCount     int64
	ChangelogRecordCount *int64
	Watermark            *int64
	Statistics           *string
	Properties           map[string]string // 1.2+; nil means absent
	NextRowID            *int64            // 1.3+
	Operation            *string           // 2.0+

	// legacy remembers how a parsed file spelled things Java 2.0 no longer
	// writes (explicit nulls of older releases, key orders of maps), so a
	// parsed snapshot re-serialises byte for byte. Zero for new snapshots.
	legacy snapshotLegacy
}

type snapshotLegacy struct {
	nullKeys  map[string]bool
	logOrder  []int32
	propOrder []string
	extraKeys []string // unknown keys, kept in order for round trips
	extraVals []jnode
}

// WithoutLegacy returns a copy that serialises as Java 2.0 would write it:
// no explicit nulls, no logOffsets, no unknown keys. Use it when deriving a
// new snapshot or tag from a parsed one.
func (s Snapshot) WithoutLegacy() Snapshot {
	s.legacy = snapshotLegacy{}
	s.LogOffsets = nil
	return s
}

// snapshot JSON keys, in the order Java writes them.
const (
	skVersion                   = "version"
	skUUID                      = "uuid"
	skID                        = "id"
	skSchemaID                  = "schemaId"
	skBaseManifestList          = "baseManifestList"
	skBaseManifestListSize      = "baseManifestListSize"
	skDeltaManifestList         = "deltaManifestList"
	skDeltaManifestListSize     = "deltaManifestListSize"
	skChangelogManifestList     = "changelogManifestList"
	skChangelogManifestListSize = "changelogManifestListSize"
	skIndexManifest             = "indexManifest"
	skCommitUser                = "commitUser"
	skWriterVersion             = "writerVersion"
	skCommitIdentifier          = "commitIdentifier"
	skCommitKind                = "commitKind"
	skTimeMillis                = "timeMillis"
	skLogOffsets                = "logOffsets"
	skTotalRecordCount          = "totalRecordCount"
	skDeltaRecordCount          = "deltaRecordCount"
	skChangelogRecordCount      = "changelogRecordCount"
	skWatermark                 = "watermark"
	skStatistics                = "statistics"
	skProperties                = "properties"
	skNextRowID                 = "nextRowId"
	skOperation                 = "operation"
)

// SameFiles reports whether s and o are the same snapshot as far as its
// files go: the same id, base and delta manifest lists, index manifest,
// commit time and (when both have one) UUID. Manifest lists and index
// manifests are immutable files whose names are unique per writer, so the
// live files and index entries of two such snapshots are the same; a
// snapshot file that was replaced under the same id (a rollback and new
// commits, a writer that overwrote it) names other lists and is not.
func (s *Snapshot) SameFiles(o *Snapshot) bool {
	if s == nil || o == nil {
		return false
	}
	if s.ID != o.ID || s.BaseManifestList != o.BaseManifestList || s.DeltaManifestList != o.DeltaManifestList ||
		s.TimeMillis != o.TimeMillis || !equalPtr(s.IndexManifest, o.IndexManifest) {
		return false
	}
	return s.UUID == nil || o.UUID == nil || *s.UUID == *o.UUID
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ParseSnapshot parses a snapshot file. Unknown keys are kept (and written
// back by MarshalJSON) but otherwise ignored, as Java ignores them.
func ParseSnapshot(data []byte) (*Snapshot, error) {
	root, err := parseOrdered(data)
	if err != nil {
		return nil, fmt.Errorf("parse snapshot JSON: %w", err)
	}
	s := &Snapshot{}
	if err := s.fromNode(root, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// fromNode fills s from a snapshot-shaped object; keys accepted by extra
// (tag fields) are skipped.
func (s *Snapshot) fromNode(root jnode, extra map[string]bool) error {
	if root.kind != jObject {
		return fmt.Errorf("snapshot: expected a JSON object, got %s", root.kindName())
	}
	seen := map[string]bool{}
	for i, key := range root.keys {
		v := root.vals[i]
		if seen[key] {
			return fmt.Errorf("snapshot: duplicate key %q", key)
		}
		seen[key] = true
		if extra[key] {
			continue
		}
		if v.kind == jNull {
			if s.legacy.nullKeys == nil {
				s.legacy.nullKeys = map[string]bool{}
			}
			s.legacy.nullKeys[key] = true
			if !snapshotKnownKey(key) {
				s.legacy.extraKeys = append(s.legacy.extraKeys, key)
				s.legacy.extraVals = append(s.legacy.extraVals, v)
			}
			continue
		}
		var err error
		switch key {
		case skVersion:
			var n int64
			n, err = v.asInt64(key)
			s.Version = int(n)
		case skUUID:
			s.UUID, err = optString(v, key)
		case skID:
			s.ID, err = v.asInt64(key)
		case skSchemaID:
			s.SchemaID, err = v.asInt64(key)
		case skBaseManifestList:
			s.BaseManifestList, err = v.asString(key)
		case skBaseManifestListSize:
			s.BaseManifestListSize, err = optInt64(v, key)
		case skDeltaManifestList:
			s.DeltaManifestList, err = v.asString(key)
		case skDeltaManifestListSize:
			s.DeltaManifestListSize, err = optInt64(v, key)
		case skChangelogManifestList:
			s.ChangelogManifestList, err = optString(v, key)
		case skChangelogManifestListSize:
			s.ChangelogManifestListSize, err = optInt64(v, key)
		case skIndexManifest:
			s.IndexManifest, err = optString(v, key)
		case skCommitUser:
			s.CommitUser, err = v.asString(key)
		case skWriterVersion:
			s.WriterVersion, err = optString(v, key)
		case skCommitIdentifier:
			s.CommitIdentifier, err = v.asInt64(key)
		case skCommitKind:
			var k string
			k, err = v.asString(key)
			s.CommitKind = CommitKind(k)
			if err == nil && !s.CommitKind.Valid() {
				err = fmt.Errorf("%q: unknown commit kind %q", key, k)
			}
		case skTimeMillis:
			s.TimeMillis, err = v.asInt64(key)
		case skLogOffsets:
			if v.kind != jObject {
				err = fmt.Errorf("%q: expected an object, got %s", key, v.kindName())
				break
			}
			s.LogOffsets = make(map[int32]int64, len(v.keys))
			for j, k := range v.keys {
				bucket, perr := strconv.ParseInt(k, 10, 32)
				if perr != nil {
					err = fmt.Errorf("%q: bad bucket %q", key, k)
					break
				}
				off, perr := v.vals[j].asInt64(key)
				if perr != nil {
					err = perr
					break
				}
				s.LogOffsets[int32(bucket)] = off
				s.legacy.logOrder = append(s.legacy.logOrder, int32(bucket))
			}
		case skTotalRecordCount:
			s.TotalRecordCount, err = v.asInt64(key)
		case skDeltaRecordCount:
			s.DeltaRecordCount, err = v.asInt64(key)
		case skChangelogRecordCount:
			s.ChangelogRecordCount, err = optInt64(v, key)
		case skWatermark:
			s.Watermark, err = optInt64(v, key)
		case skStatistics:
			s.Statistics, err = optString(v, key)
		case skProperties:
			if v.kind != jObject {
				err = fmt.Errorf("%q: expected an object, got %s", key, v.kindName())
				break
			}
			s.Properties = make(map[string]string, len(v.keys))
			for j, k := range v.keys {
				pv, perr := v.vals[j].asString(key)
				if perr != nil {
					err = perr
					break
				}
				s.Properties[k] = pv
				s.legacy.propOrder = append(s.legacy.propOrder, k)
			}
		case skNextRowID:
			s.NextRowID, err = optInt64(v, key)
		case skOperation:
			s.Operation, err = optString(v, key)
		default:
			s.legacy.extraKeys = append(s.legacy.extraKeys, key)
			s.legacy.extraVals = append(s.legacy.extraVals, v)
		}
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	// Java's creator takes primitives for these, so a missing key reads as
	// 0; a snapshot without id, lists or kind is unusable though.
	for _, k := range []string{skID, skBaseManifestList, skDeltaManifestList, skCommitKind} {
		if !seen[k] || s.legacy.nullKeys[k] {
			return fmt.Errorf("snapshot: missing %q", k)
		}
	}
	return nil
}

func snapshotKnownKey(k string) bool {
	switch k {
	case skVersion, skUUID, skID, skSchemaID, skBaseManifestList, skBaseManifestListSize,
		skDeltaManifestList, skDeltaManifestListSize, skChangelogManifestList,
		skChangelogManifestListSize, skIndexManifest, skCommitUser, skWriterVersion,
		skCommitIdentifier, skCommitKind, skTimeMillis, skLogOffsets, skTotalRecordCount,
		skDeltaRecordCount, skChangelogRecordCount, skWatermark, skStatistics, skProperties,
		skNextRowID, skOperation:
		return true
	}
	return false
}

func optString(v jnode, key string) (*string, error) {
	s, err := v.asString(key)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

func optInt64(v jnode, key string) (*int64, error) {
	n, err := v.asInt64(key)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// toNode builds the JSON object in Java's key order.
func (s *Snapshot) toNode() jnode {
	o := jnode{kind: jObject}
	nulls := s.legacy.nullKeys
	optS := func(key string, v *string) {
		if v != nil {
			o.add(key, jStr(*v))
		} else if nulls[key] {
			o.add(key, jNullNode())
		}
	}
	optI := func(key string, v *int64) {
		if v != nil {
			o.add(key, jInt(*v))
		} else if nulls[key] {
			o.add(key, jNullNode())
		}
	}
	o.add(skVersion, jInt(int64(s.Version)))
	optS(skUUID, s.UUID)
	o.add(skID, jInt(s.ID))
	o.add(skSchemaID, jInt(s.SchemaID))
	o.add(skBaseManifestList, jStr(s.BaseManifestList))
	optI(skBaseManifestListSize, s.BaseManifestListSize)
	o.add(skDeltaManifestList, jStr(s.DeltaManifestList))
	optI(skDeltaManifestListSize, s.DeltaManifestListSize)
	optS(skChangelogManifestList, s.ChangelogManifestList)
	optI(skChangelogManifestListSize, s.ChangelogManifestListSize)
	optS(skIndexManifest, s.IndexManifest)
	if nulls[skCommitUser] && s.CommitUser == "" {
		o.add(skCommitUser, jNullNode())
	} else {
		o.add(skCommitUser, jStr(s.CommitUser))
	}
	optS(skWriterVersion, s.WriterVersion)
	o.add(skCommitIdentifier, jInt(s.CommitIdentifier))
	o.add(skCommitKind, jStr(string(s.CommitKind)))
	o.add(skTimeMillis, jInt(s.TimeMillis))
	if s.LogOffsets != nil {
		lo := jnode{kind: jObject}
		for _, b := range orderedKeys(s.LogOffsets, s.legacy.logOrder, func(a, b int32) bool { return a < b }) {
			lo.add(strconv.FormatInt(int64(b), 10), jInt(s.LogOffsets[b]))
		}
		o.add(skLogOffsets, lo)
	} else if nulls[skLogOffsets] {
		o.add(skLogOffsets, jNullNode())
	}
	o.add(skTotalRecordCount, jInt(s.TotalRecordCount))
	o.add(skDeltaRecordCount, jInt(s.DeltaRecordCount))
	optI(skChangelogRecordCount, s.ChangelogRecordCount)
	optI(skWatermark, s.Watermark)
	optS(skStatistics, s.Statistics)
	if s.Properties != nil {
		p := jnode{kind: jObject}
		for _, k := range orderedKeys(s.Properties, s.legacy.propOrder, func(a, b string) bool { return a < b }) {
			p.add(k, jStr(s.Properties[k]))
		}
		o.add(skProperties, p)
	} else if nulls[skProperties] {
		o.add(skProperties, jNullNode())
	}
	optI(skNextRowID, s.NextRowID)
	optS(skOperation, s.Operation)
	for i, k := range s.legacy.extraKeys {
		o.add(k, s.legacy.extraVals[i])
	}
	return o
}

// orderedKeys returns the keys of m: first those in order that are still
// present, then the others sorted.
func orderedKeys[K comparable, V any](m map[K]V, order []K, less func(a, b K) bool) []K {
	out := make([]K, 0, len(m))
	used := make(map[K]bool, len(m))
	for _, k := range order {
		if _, ok := m[k]; ok && !used[k] {
			out = append(out, k)
			used[k] = true
		}
	}
	var rest []K
	for k := range m {
		if !used[k] {
			rest = append(rest, k)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return less(rest[i], rest[j]) })
	return append(out, rest...)
}

// MarshalJSON writes the snapshot as Java's JsonSerdeUtil does (Jackson
// pretty printer, Java's key order, nulls omitted). A snapshot returned by
// ParseSnapshot is reproduced byte for byte when the file came from Java.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	return renderJackson(s.toNode()), nil
}

// UnmarshalJSON parses a snapshot.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	p, err := ParseSnapshot(data)
	if err != nil {
		return err
	}
	*s = *p
	return nil
}

// SnapshotFileName is the name of snapshot id inside snapshot/.
func SnapshotFileName(id int64) string { return snapshotPrefix + strconv.FormatInt(id, 10) }

const (
	snapshotPrefix = "snapshot-"
	hintLatest     = "LATEST"
	hintEarliest   = "EARLIEST"
)
