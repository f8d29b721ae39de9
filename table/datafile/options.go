package datafile

import (
	"fmt"
	"strconv"
	"strings"
)

// perLevelOptions are Java's level-specific overrides ("0:lz4,1:zstd") and
// the option each one replaces for files of that level.
var perLevelOptions = [][2]string{
	{"file.format.per.level", "file.format"},
	{"file.compression.per.level", "file.compression"},
	{"metadata.stats-mode.per.level", "metadata.stats-mode"},
}

// OptionsForLevel returns the table options with the per-level overrides
// (file.format.per.level, file.compression.per.level,
// metadata.stats-mode.per.level) of level applied, for a writer of a file
// at that LSM level. The input map is not modified.
func OptionsForLevel(options map[string]string, level int) (map[string]string, error) {
	out := make(map[string]string, len(options))
	for k, v := range options {
		out[k] = v
	}
	for _, o := range perLevelOptions {
		spec, ok := options[o[0]]
		if !ok || strings.TrimSpace(spec) == "" {
			continue
		}
		for _, entry := range strings.Split(spec, ",") {
			k, v, ok := strings.Cut(entry, ":")
			if !ok {
				return nil, fmt.Errorf("option %s: invalid entry %q", o[0], entry)
			}
			l, err := strconv.Atoi(strings.TrimSpace(k))
			if err != nil {
				return nil, fmt.Errorf("option %s: invalid level %q", o[0], k)
			}
			if l == level {
				v = strings.TrimSpace(v)
				if o[1] == "file.format" {
					v = strings.ToLower(v)
				}
				out[o[1]] = v
			}
		}
	}
	return out, nil
}
