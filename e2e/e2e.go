// Package e2e holds the end-to-end tests that check compactd against the
// oracles (Java Paimon and pypaimon): scans of real tables and the rows and
// validity of tables compactd compacted.
package e2e
