package expire

// SetSpillAfter makes PathLists spill to disk past n paths and returns a
// function that restores the default.
func SetSpillAfter(n int) (restore func()) {
	old := spillAfter
	spillAfter = n
	return func() { spillAfter = old }
}
