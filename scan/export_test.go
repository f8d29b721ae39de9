package scan

// ReadKeysByRows makes h read every file through the row reader, as it does
// for files whose key columns are not in compactd's layout.
func ReadKeysByRows(h *HigherLevels) { h.keyCodec = nil }
