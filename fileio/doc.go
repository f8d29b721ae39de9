// Package fileio is the storage layer compactd stands on: the few operations a
// Paimon maintainer needs, with one implementation per kind of store.
//
// Paths are strings with '/' separators: an absolute local path
// ("/data/wh/db.db/t") or a URL ("s3://bucket/wh/db.db/t"). Paimon stores file
// names, not paths, in its metadata, so every path compactd touches is built
// from the table root with Join.
//
// Where things are: the FileIO interface and its helpers (ReadFile,
// WriteFile, Join) are in fileio.go; the local store (NewLocal, and For,
// which picks a store by path) in local.go; the S3 store in s3.go (config and
// client: NewS3, ForWithS3Config), s3_read.go, s3_write.go, s3_exclusive.go
// (WriteExclusive by conditional PUT, the commit point) and s3_list.go, with
// its retry policy in retry.go; ListEach (listeach.go) lists a directory one
// entry at a time where the store can (local disks); CheckInside (contain.go) keeps paths inside a
// root; DeleteAll and DeleteConcurrently (delete.go) delete many files. The
// acceptance suite every store must pass is fileio/fileiotest.
package fileio
