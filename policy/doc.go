// Package policy is the daemon's configuration: the YAML config file
// (warehouses, table selection, workers, listen address, compactd defaults),
// the policy store of per-table overrides, and the effective policy of a
// table for each job kind, resolved as
//
//	override in the policy store > the Paimon table's own options > config defaults > built-in defaults
//
// with the origin of every value kept for `compactd policy show`.
//
// Where things are: LoadConfig and ParseConfig (config.go) read the config
// file; Resolve and Effective (policy.go) compute a table's effective policy
// and every key compactd knows (Keys, Help, ValidateValues); LoadStore and
// Update (store.go) read and change the per-table overrides.
package policy
