package manifest

// slab hands out the small byte fields and optional numbers of one
// manifest's entries from shared chunks. Decoded bytes alias the
// decompressed Avro block they were read from, so without a copy one
// surviving entry keeps its whole block (all of its records' names, ints
// and stats) alive: at 100k files the blocks were ~25 MB of a plan's live
// heap (docs/perf.md). Copying into chunks keeps only the bytes, and
// taking the *int64 fields from one array saves an allocation (and an
// object for the collector to visit) per field.
type slab struct {
	bytes   []byte
	ints    []int64
	sources []FileSource
	ptrs    []*int64
	shared  map[string][]byte // repeated values (partitions), one copy each
}

const (
	slabBytes = 16 << 10 // bytes per chunk; larger values get their own
	slabInts  = 1024
)

// copyBytes returns a copy of b whose capacity is its length, so an append
// by the caller cannot overwrite a neighbouring value; nil stays nil.
func (s *slab) copyBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	n := len(b)
	if n == 0 {
		return []byte{}
	}
	if n > slabBytes/8 {
		return append([]byte(nil), b...)[:n:n]
	}
	if len(s.bytes)+n > cap(s.bytes) {
		s.bytes = make([]byte, 0, slabBytes)
	}
	off := len(s.bytes)
	s.bytes = append(s.bytes, b...)
	return s.bytes[off : off+n : off+n]
}

// intern is copyBytes for values that repeat across a manifest's entries
// (a partition's bytes): one copy serves them all. Entries never modify
// their byte fields in place (the capacity is clipped), so sharing is safe.
func (s *slab) intern(b []byte) []byte {
	if b == nil {
		return nil
	}
	if c, ok := s.shared[string(b)]; ok {
		return c
	}
	if s.shared == nil {
		s.shared = map[string][]byte{}
	}
	c := s.copyBytes(b)
	s.shared[string(c)] = c
	return c
}

// int64 returns a pointer to a fresh slot holding x.
func (s *slab) int64(x int64) *int64 {
	if len(s.ints) == cap(s.ints) {
		s.ints = make([]int64, 0, slabInts)
	}
	s.ints = append(s.ints, x)
	return &s.ints[len(s.ints)-1]
}

// int64s returns n zeroed slots, contiguous.
func (s *slab) int64s(n int) []int64 {
	if n == 0 {
		return []int64{}
	}
	if n > slabInts/8 {
		return make([]int64, n)
	}
	if len(s.ints)+n > cap(s.ints) {
		s.ints = make([]int64, 0, slabInts)
	}
	off := len(s.ints)
	s.ints = s.ints[:off+n]
	return s.ints[off : off+n : off+n]
}

// int64Ptrs returns n nil pointers, contiguous, with capacity n.
func (s *slab) int64Ptrs(n int) []*int64 {
	if n == 0 {
		return []*int64{}
	}
	if n > slabInts/8 {
		return make([]*int64, n)
	}
	if len(s.ptrs)+n > cap(s.ptrs) {
		s.ptrs = make([]*int64, 0, slabInts)
	}
	off := len(s.ptrs)
	s.ptrs = s.ptrs[:off+n]
	return s.ptrs[off : off+n : off+n]
}

// fileSource returns a pointer to a fresh slot holding x.
func (s *slab) fileSource(x FileSource) *FileSource {
	if len(s.sources) == cap(s.sources) {
		s.sources = make([]FileSource, 0, slabInts)
	}
	s.sources = append(s.sources, x)
	return &s.sources[len(s.sources)-1]
}
