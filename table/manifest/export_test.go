package manifest

// Hooks for this package's external tests (package manifest_test), which
// build their sample entries through package table and so cannot be
// internal tests.

// Writer schemas and versions, to compare with what Java writes.
const (
	ManifestEntrySchema       = manifestEntrySchema
	ManifestListSchema        = manifestListSchema
	IndexManifestSchema       = indexManifestSchema
	IndexManifestSchemaGlobal = indexManifestSchemaGlobal
	AvroStatsFields           = avroStatsFields
	ManifestVersion           = manifestVersion
)

// AvroFile is a decoded metadata container: its header metadata and its
// records.
type AvroFile struct {
	Meta   map[string][]byte
	Values []any
}

// ReadAvroFile decodes a whole metadata container as the codec does.
func ReadAvroFile(data []byte) (*AvroFile, error) {
	f, err := readAvroFile(data)
	if err != nil {
		return nil, err
	}
	return &AvroFile{Meta: f.meta, Values: f.values}, nil
}

// AvroWriter exposes the record encoder, for files in layouts compactd
// does not write.
type AvroWriter struct{ w *avroWriter }

func (w AvroWriter) Int(v int32)               { w.w.int(v) }
func (w AvroWriter) Long(v int64)              { w.w.long(v) }
func (w AvroWriter) Bytes(b []byte)            { w.w.bytes(b) }
func (w AvroWriter) String(s string)           { w.w.string(s) }
func (w AvroWriter) Null()                     { w.w.null() }
func (w AvroWriter) Present()                  { w.w.present() }
func (w AvroWriter) OptLong(v *int64)          { w.w.optLong(v) }
func (w AvroWriter) OptBytes(v []byte)         { w.w.optBytes(v) }
func (w AvroWriter) StringArray(a []string)    { w.w.stringArray(a) }
func (w AvroWriter) SimpleStats(s SimpleStats) { w.w.simpleStats(s) }

// WriteAvroFile builds an object container of n records under schema.
func WriteAvroFile(schema, codec string, n int, encode func(w AvroWriter, i int) error) ([]byte, error) {
	return writeAvroFile(schema, codec, n, func(w *avroWriter, i int) error { return encode(AvroWriter{w}, i) })
}
