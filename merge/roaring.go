package merge

import (
	"fmt"

	"github.com/compactd/compactd/internal/jroaring"
)

// rbm32Agg is FieldRoaringBitmap32Agg: VARBINARY values holding 32-bit
// RoaringBitmaps in the portable serialization; agg is their union, written
// as Java writes it (RoaringBitmap.or, then runOptimize and serialize), so
// the bytes are Java's. Retraction is not supported.
type rbm32Agg struct{ aggBase }

func (a *rbm32Agg) agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		if acc == nil {
			return in, nil
		}
		return acc, nil
	}
	x, ok1 := acc.([]byte)
	y, ok2 := in.([]byte)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s: expected VARBINARY values, got %T and %T", a.name, acc, in)
	}
	bx, err := decodeRoaring32(x)
	if err != nil {
		return nil, fmt.Errorf("%s: unable to deserialize roaring bitmap: %w", a.name, err)
	}
	by, err := decodeRoaring32(y)
	if err != nil {
		return nil, fmt.Errorf("%s: unable to deserialize roaring bitmap: %w", a.name, err)
	}
	bx.Or(by)
	return bx.AppendTo(nil), nil
}

func (a *rbm32Agg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }

// decodeRoaring32 reads a whole value: like Java's deserialize, bytes after
// the bitmap are not looked at.
func decodeRoaring32(b []byte) (*jroaring.Bitmap, error) {
	bm, _, err := jroaring.Decode(b)
	return bm, err
}
