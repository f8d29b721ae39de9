package orphan

import "hash/maphash"

// SetSpillAfter makes spools move to disk past n candidates and
// deletions go in batches of batch paths; the returned function restores
// the defaults.
func SetSpillAfter(n, batch int) (restore func()) {
	oldSpill, oldBatch := spillAfter, deleteBatch
	spillAfter, deleteBatch = n, batch
	return func() { spillAfter, deleteBatch = oldSpill, oldBatch }
}

// SetNameHash replaces the hash of candidate names (to force collisions);
// the returned function restores maphash.
func SetNameHash(h func(name string) uint64) (restore func()) {
	old := hashName
	hashName = func(_ maphash.Seed, name string) uint64 { return h(name) }
	return func() { hashName = old }
}
