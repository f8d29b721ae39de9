package table

import (
	"fmt"
	"strings"

	"github.com/compactd/compactd/internal/orc"
)

// OptFileBlockSize is Paimon's file.block-size: for ORC files, the stripe
// size.
const OptFileBlockSize = "file.block-size"

// ORCWriterOptions are the ORC writer settings Paimon's OrcFileFormat
// derives from a table's options, for data files and for metadata files
// (manifest.format=orc) alike: every option starting with "orc." (prefix
// matched case-insensitively) is passed to Java's ORC writer;
// orc.compression.zstd.level defaults to file.compression.zstd-level;
// file.block-size, when set, is the stripe size (it wins over
// orc.stripe.size, as Java sets it last); compression is the format's
// compression (file.compression for data files, manifest.compression for
// metadata: compressionKey names which) unless orc.compress is set.
func ORCWriterOptions(options map[string]string, o *Options, compressionKey string) (orc.WriterOptions, error) {
	compression := o.FileCompression
	if compressionKey == OptManifestCompression {
		compression = o.ManifestCompression
	}
	conf := make(map[string]string)
	for k, v := range options {
		if len(k) > 4 && strings.EqualFold(k[:4], "orc.") {
			conf["orc."+k[4:]] = v
		}
	}
	var w orc.WriterOptions
	if _, ok := conf[orc.ConfCompress]; !ok {
		c, err := orc.ParseCompression(compression)
		if err != nil {
			return w, fmt.Errorf("%s=%s: %w", compressionKey, compression, err)
		}
		w.Compression = c
	}
	w.CompressionLevel = o.FileCompressionZstdLevel
	if v, ok := options[OptFileBlockSize]; ok {
		n, err := ParseMemorySize(v)
		if err != nil || n <= 0 {
			return w, fmt.Errorf("invalid %s %q", OptFileBlockSize, v)
		}
		conf[orc.ConfStripeSize] = fmt.Sprint(n)
	}
	if err := orc.ApplyConf(&w, conf); err != nil {
		return w, err
	}
	return w, nil
}
