package javacompat

// FloorDiv is a / b rounded towards negative infinity (Java's Math.floorDiv).
// Go's / and % truncate towards zero, which gives a negative remainder for
// instants before 1970; split instants with FloorDiv and FloorMod instead.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// FloorMod is a - FloorDiv(a, b)*b: the remainder with the sign of b.
func FloorMod(a, b int64) int64 { return a - FloorDiv(a, b)*b }
