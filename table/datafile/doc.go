// Package datafile reads and writes Paimon data files: Parquet and ORC
// (read and write), Avro (read) and deletion vectors. Primary-key tables store
// KeyValue records (trimmed key columns, sequence number, row kind, value
// columns); append tables store the table columns only.
//
// Where things are: Schema and FormatOf (schema.go) describe a file's
// columns; reader.go (OpenKeyValue, OpenRows) and writer.go
// (NewKeyValueWriter, NewRowWriter) are the record path; batch.go (Batch,
// Codec, KVCodec), batchreader.go (OpenKeyValueBatches, OpenRowBatches,
// OpenKeyBatches) and batchwriter.go are the batch path; pqschema.go maps
// Paimon types to Parquet with field ids (stamped into the footer by
// footer.go); stats.go collects file statistics; avro.go reads Avro data
// files; orc.go reads ORC data files through internal/orc (orcbatch.go as
// batches) and orcwriter.go writes them (behind the formatWriter interface
// of writer.go); dv.go reads
// and writes deletion vectors. Files of older schemas are read through the
// schema-evolution casts of package table/cast.
package datafile
