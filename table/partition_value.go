package table

// Partition values as Java renders them in partition directory names.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/compactd/compactd/internal/javacompat"
)

// PartitionValueString renders a non-null partition value as Java does for
// directory names. legacy (partition.legacy-name, default true) uses the
// toString of Paimon's internal value: DATE as its day number, TIME as
// millis of day, TIMESTAMP as LocalDateTime.toString. Otherwise the value is
// cast to STRING (DATE yyyy-MM-dd, TIMESTAMP yyyy-MM-dd HH:mm:ss[.f]).
func PartitionValueString(t DataType, v any, legacy bool) (string, error) {
	switch t.Root {
	case TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			break
		}
		return strconv.FormatBool(b), nil
	case TypeTinyInt, TypeSmallInt, TypeInt, TypeBigInt:
		n, ok := asInt64(v)
		if !ok {
			break
		}
		return strconv.FormatInt(n, 10), nil
	case TypeFloat:
		f, ok := v.(float32)
		if !ok {
			break
		}
		return javacompat.FloatString(float64(f), 32), nil
	case TypeDouble:
		f, ok := v.(float64)
		if !ok {
			break
		}
		return javacompat.FloatString(f, 64), nil
	case TypeChar, TypeVarChar:
		s, ok := v.(string)
		if !ok {
			break
		}
		return s, nil
	case TypeDecimal:
		d, ok := v.(Decimal)
		if !ok || d.Unscaled == nil {
			break
		}
		return d.String(), nil
	case TypeDate:
		n, ok := v.(int32)
		if !ok {
			break
		}
		if legacy {
			return strconv.FormatInt(int64(n), 10), nil
		}
		return javacompat.LocalDateString(int64(n)), nil
	case TypeTime:
		n, ok := v.(int32)
		if !ok {
			break
		}
		if legacy {
			return strconv.FormatInt(int64(n), 10), nil
		}
		return javacompat.FormatSQLTime(n, t.Precision), nil
	case TypeTimestamp, TypeTimestampLTZ:
		ts, ok := v.(Timestamp)
		if !ok {
			break
		}
		if legacy {
			return javacompat.LocalDateTimeString(ts.Millis, ts.NanoOfMilli), nil
		}
		if t.Root == TypeTimestampLTZ {
			// Java shifts to the JVM default zone before formatting.
			_, off := time.UnixMilli(ts.Millis).Zone()
			ts.Millis += int64(off) * 1000
		}
		return javacompat.FormatSQLTimestamp(ts.Millis, ts.NanoOfMilli, t.Precision), nil
	case TypeBinary, TypeVarBinary:
		if legacy {
			return "", fmt.Errorf("binary partition values have no stable legacy name")
		}
		b, ok := v.([]byte)
		if !ok {
			break
		}
		return strings.ToValidUTF8(string(b), "\uFFFD"), nil
	default:
		return "", fmt.Errorf("type %s cannot be a partition key", t)
	}
	return "", fmt.Errorf("value %v (%T) does not match type %s", v, v, t)
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}
