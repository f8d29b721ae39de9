// Package e2e holds the end-to-end tests that check compactd against the
// oracles (Java Paimon and pypaimon): scans of real tables and the rows and
// validity of tables compactd compacted.
//
// The tests are in this package's _test.go files, one per theme
// (compaction_test.go, concurrent_test.go, firstrow_test.go,
// expire_oracle_test.go, maint_oracle_test.go, s3_test.go, ...; the
// deletion-vector proof of issue 14 in dv_test.go, dv_fixture_test.go and
// avro_level0_test.go; dynamic-bucket tables of issue 17 in
// dynbucket_oracle_test.go). They need
// the oracles built (interop/install.sh) and fail, not skip, without them;
// the S3 tests need the S3 test server (scripts/s3-server.sh) and skip
// without it unless COMPACTD_REQUIRE_S3=1.
package e2e
