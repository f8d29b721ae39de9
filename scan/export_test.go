package scan

// ForceRecordPath makes sc merge and read record by record, so tests can
// compare the batch path against the record path.
func ForceRecordPath(sc *Scanner) { sc.rowPath = true }

// BatchPath reports whether sc reads its buckets on the batch path.
func BatchPath(sc *Scanner) bool { return !sc.rowPath && (sc.codec != nil || sc.rowCodec != nil) }
