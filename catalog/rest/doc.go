// Package rest is compactd's client of a Paimon REST catalog (the
// protocol of Java Paimon's RESTCatalog / RESTApi, "metastore=rest").
//
// Open asks GET /v1/config?warehouse=<name> for the catalog's options
// (the server's defaults, then Config.Options, then the server's
// overrides, as Java merges them) and takes from them the path prefix
// ("prefix": every later path is /v1/<prefix>/...) and extra headers
// ("header.<Name>"). Requests carry "Authorization: Bearer <token>" when a
// token is configured (Config.Token, or read from Config.TokenFile or the
// environment variable Config.TokenEnv).
//
// The catalog lists databases and tables (GET .../databases and
// .../databases/<db>/tables, following nextPageToken; names come back
// sorted) and opens a table from GET .../databases/<db>/tables/<t>: the
// response's path is opened with table.OpenNamed on fileio.For(path),
// and the table's commit point (table.SnapshotCommit) becomes POST
// .../databases/<db>/tables/<t>/commit with {"tableId": <the response's
// id>, "snapshot": <the snapshot JSON>, "statistics": <per partition, the
// delta's signed row count, file size and file count, as Java's commit
// computes them (PartitionEntry.merge of the delta files)>}, so the
// catalog's partition totals follow compactd's compactions. The server
// writes the snapshot: {"success": false} means the snapshot id is taken
// (an error wrapping fileio.ErrExist: the table's Commit rebases); a
// tableId the server no longer knows (the table was dropped or replaced)
// is a definite failure.
//
// Retries (github.com/hashicorp/go-retryablehttp): GETs are retried on
// transport errors, 429 and 5xx with exponential backoff. A commit POST
// is retried only when its connection could not be made (nothing reached
// the server): retrying one whose first attempt may have landed would be
// answered {"success": false}, and the caller would take its own landed
// snapshot for a conflict and delete the metadata it references. Every
// failure after the request may have reached the server (a transport
// error, a timeout or cancellation mid-request, 408, 429, 5xx, an
// unreadable answer) wraps table.ErrCommitOutcomeUnknown; the table's
// Commit then looks for its snapshot (commit user and identifier) before
// trying again.
//
// Fail closed: OpenTable refuses, naming the table, anything compactd
// does not maintain or cannot commit safely: a table type other than
// Paimon's "table" (format, object, view-like tables), an external table,
// a response without id or path, a path of a storage compactd has no file
// IO for, a catalog that hands out data tokens ("data-token.enabled":
// compactd uses its own storage credentials), a schema id that disagrees
// with the table's files, and a token provider other than "bear".
//
// Not supported: DLF signing and other token providers, data tokens
// (vended storage credentials), branches other than main, and the
// catalog's snapshot / rollback / tag / partition APIs (compactd reads
// snapshots from the table's files, which the server writes).
//
// The token is never logged and never part of an error or of Name; a
// server error message quoting it is redacted.
package rest
