package orphan

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultOlderThan is the default minimum age of a deletable file, as in
// Paimon's remove_orphan_files.
const DefaultOlderThan = 24 * time.Hour

// MinOlderThan is the smallest age accepted without Force: a file younger
// than that may belong to a commit in progress.
const MinOlderThan = time.Hour

// DirKind says what a listed directory holds, which decides the file names
// recognised there.
type DirKind int

const (
	DirManifest   DirKind = iota // manifest/: manifests, manifest lists, index manifests
	DirIndex                     // index/: index files
	DirStatistics                // statistics/: statistics files
	DirBucket                    // <partition>/bucket-<b>/: data, changelog, extra and index files
	DirSnapshot                  // snapshot/ or changelog/ of a branch: only temporary files
)

// File is one listed file.
type File struct {
	Path    string    `json:"path"`
	Name    string    `json:"name"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modTime"`
}

// Listing is the content of one directory.
type Listing struct {
	Dir   string
	Kind  DirKind
	Files []File
}

// SelectInput is everything Select decides on.
type SelectInput struct {
	Root     string // table root; nothing outside it is ever selected
	Listings []Listing
	// Referenced holds the file names used by any snapshot, tag or changelog
	// of any branch. Matching is by name only, as in Paimon: names carry a
	// UUID, and a name used anywhere protects every file of that name.
	Referenced map[string]bool
	// Cutoff: only files modified strictly before it are deletable.
	Cutoff time.Time
	// DataFilePrefix and ChangelogFilePrefix are the table's data-file.prefix
	// and changelog-file.prefix ("data-" and "changelog-" when empty).
	DataFilePrefix, ChangelogFilePrefix string
}

// Select returns the deletable files: in a directory of a known kind under
// Root, named like a file Paimon writes there (or a hidden temporary file
// ".<name>.tmp" of an interrupted atomic write), not referenced, and older
// than the cutoff. Snapshot, changelog, hint, schema, tag and consumer files
// are never selected: expiry and tag management own them.
func Select(in SelectInput) []File {
	r := newRule(in)
	var out []File
	for _, l := range in.Listings {
		for _, f := range l.Files {
			if r.candidate(l.Kind, f) && !in.Referenced[f.Name] {
				out = append(out, f)
			}
		}
	}
	return out
}

// rule is Select's decision for one file, references aside: Run applies it
// to each file as it lists, so that only candidates are kept, never the
// whole listing.
type rule struct {
	root                 string // the table root with a trailing '/'
	cutoff               time.Time
	dataPrefix, clPrefix string
}

func newRule(in SelectInput) rule {
	return rule{
		root:   strings.TrimRight(in.Root, "/") + "/",
		cutoff: in.Cutoff, dataPrefix: or(in.DataFilePrefix, "data-"), clPrefix: or(in.ChangelogFilePrefix, "changelog-"),
	}
}

// candidate reports whether f, listed in a directory of the given kind, is
// deletable unless something references its name.
func (r rule) candidate(kind DirKind, f File) bool {
	if !strings.HasPrefix(f.Path, r.root) || f.Name == "" || f.Name != baseName(f.Path) {
		return false
	}
	return f.ModTime.Before(r.cutoff) && Recognised(kind, f.Name, r.dataPrefix, r.clPrefix)
}

// Recognised reports whether name is a file Paimon writes in a directory of
// the given kind and that orphan cleanup may therefore remove.
func Recognised(kind DirKind, name, dataPrefix, changelogPrefix string) bool {
	if IsTemp(name) {
		return true
	}
	switch kind {
	case DirManifest:
		// manifest-list- and index-manifest- are covered by the prefixes.
		return strings.HasPrefix(name, "manifest-") || strings.HasPrefix(name, "index-manifest-")
	case DirIndex:
		return strings.HasPrefix(name, "index-") || isGlobalIndex(name)
	case DirStatistics:
		return strings.HasPrefix(name, "stat-")
	case DirBucket:
		if strings.HasSuffix(name, ".managed.blob") {
			return false // managed blob packs are never orphans (Paimon 2.x)
		}
		return strings.HasPrefix(name, dataPrefix) || strings.HasPrefix(name, changelogPrefix) ||
			strings.HasPrefix(name, "index-") || isGlobalIndex(name)
	}
	return false
}

// isGlobalIndex matches global index files, "<type>-global-index-<uuid>.index"
// (Paimon 1.4+, GlobalIndexFileReadWrite.newFileName).
func isGlobalIndex(name string) bool {
	return strings.Contains(name, "-global-index-") && strings.HasSuffix(name, ".index")
}

// IsTemp reports whether name is a hidden temporary file of an atomic
// write, ".<target>.<uuid>.tmp" (Paimon's and compactd's pattern).
func IsTemp(name string) bool {
	return len(name) > len("..tmp") && name[0] == '.' && strings.HasSuffix(name, ".tmp")
}

// Cutoff computes the deletion cutoff from now and the requested minimum
// age. Like Paimon it refuses a cutoff that is not in the past; unlike
// Paimon it also refuses an age under MinOlderThan unless force is set,
// because a younger file may belong to a commit still in flight.
func Cutoff(now time.Time, olderThan time.Duration, force bool) (time.Time, error) {
	if olderThan <= 0 {
		return time.Time{}, errors.New("orphan: older-than must be positive: a file being written now would be deleted")
	}
	if olderThan < MinOlderThan && !force {
		return time.Time{}, fmt.Errorf("orphan: older-than %s is under %s; in-flight commits could lose files (use force to override)", olderThan, MinOlderThan)
	}
	return now.Add(-olderThan), nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
