// Package orc reads and writes Apache ORC files as Java's ORC library (1.x, the one
// Paimon bundles) writes them: the file tail (postscript, footer, types),
// stripes, the compression codecs none, zlib, snappy, lz4 and zstd,
// integer RLE v1 and v2, byte and boolean RLE, direct and dictionary
// strings, and the types BOOLEAN to TIMESTAMP_INSTANT including nested
// STRUCT, LIST and MAP. UNION columns, encrypted columns and LZO are
// refused with an error.
//
// No Go ORC library is served by the module proxy this project uses (the
// best known, github.com/scritchley/orc, is not), so the reader is the
// project's own, written from the ORC specification (ORC v1 file format)
// and checked against Java- and C++-written files. The protobuf messages of
// the tail are decoded by hand (protobuf.go): only the few fields a reader
// needs are taken, which avoids generated code for a handful of messages.
//
// The writer (writer.go, encode.go, colstats.go) writes what Java's
// writer writes for Paimon: ORC 0.12 files with RLE v2 integers, byte and
// boolean RLE, direct or dictionary strings (chosen per stripe by the
// distinct-to-values ratio, orc.dictionary.key.threshold), row indexes
// every RowIndexStride rows with per-group statistics, stripe and file
// column statistics, and the five codecs in compression chunks. It
// buffers one stripe and encodes it column by column at the end, ending
// every RLE run at a row group boundary so that each row index position
// is a byte offset (plus the bit offset of a boolean stream).
//
// ReadStripe decodes a stripe whole (Stripe): memory is bounded by one
// stripe's streams and decoded columns. StripeRows (rows.go) decodes it a
// bounded number of rows at a time into the same Column form, keeping each
// stream's decompressor and run-length decoder between calls: memory is a
// decompressed compression chunk per stream and the rows of one call (the
// data file batch path reads this way). Every length read from the file is checked
// against the file or stream it points into, so corrupt input yields
// ErrCorrupt, never a panic or an allocation larger than the input implies.
package orc
