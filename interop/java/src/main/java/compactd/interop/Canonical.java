package compactd.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericArray;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalArray;
import org.apache.paimon.data.InternalMap;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.types.ArrayType;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.MapType;
import org.apache.paimon.types.RowType;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The canonical JSON form shared by the Java oracle, the pypaimon twin and the Go wrappers. See
 * interop/README.md for the table of encodings; this class is its Java implementation (both
 * directions: JSON to Paimon internal values for writing, internal values to JSON for reading).
 */
final class Canonical {
    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonNodeFactory F = JsonNodeFactory.instance;

    private Canonical() {}

    // ---------- internal value -> canonical JSON ----------

    static ObjectNode rowToJson(RowType type, InternalRow row) {
        ObjectNode out = F.objectNode();
        List<DataField> fields = type.getFields();
        for (int i = 0; i < fields.size(); i++) {
            DataField f = fields.get(i);
            Object v = InternalRow.createFieldGetter(f.type(), i).getFieldOrNull(row);
            out.set(f.name(), toJson(f.type(), v));
        }
        return out;
    }

    static JsonNode toJson(DataType t, Object v) {
        if (v == null) {
            return F.nullNode();
        }
        switch (t.getTypeRoot()) {
            case BOOLEAN:
                return F.booleanNode((Boolean) v);
            case TINYINT:
                return F.numberNode((long) (Byte) v);
            case SMALLINT:
                return F.numberNode((long) (Short) v);
            case INTEGER:
                return F.numberNode((long) (Integer) v);
            case BIGINT:
                return F.numberNode((Long) v);
            case FLOAT:
                return floatNode((double) (Float) v);
            case DOUBLE:
                return floatNode((Double) v);
            case CHAR:
            case VARCHAR:
                return F.textNode(v.toString());
            case BINARY:
            case VARBINARY:
                return F.textNode(Base64.getEncoder().encodeToString((byte[]) v));
            case DECIMAL:
                {
                    DecimalType dt = (DecimalType) t;
                    BigDecimal bd = ((Decimal) v).toBigDecimal();
                    return F.textNode(bd.setScale(dt.getScale(), RoundingMode.UNNECESSARY).toPlainString());
                }
            case DATE:
                return F.textNode(LocalDate.ofEpochDay((Integer) v).toString());
            case TIME_WITHOUT_TIME_ZONE:
                return F.textNode(formatTime((Integer) v));
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return F.textNode(formatTimestamp((Timestamp) v));
            case ARRAY:
                {
                    DataType et = ((ArrayType) t).getElementType();
                    InternalArray a = (InternalArray) v;
                    InternalArray.ElementGetter g = InternalArray.createElementGetter(et);
                    ArrayNode out = F.arrayNode();
                    for (int i = 0; i < a.size(); i++) {
                        out.add(toJson(et, g.getElementOrNull(a, i)));
                    }
                    return out;
                }
            case MAP:
            case MULTISET:
                {
                    DataType kt;
                    DataType vt;
                    if (t instanceof MapType) {
                        kt = ((MapType) t).getKeyType();
                        vt = ((MapType) t).getValueType();
                    } else {
                        kt = ((org.apache.paimon.types.MultisetType) t).getElementType();
                        vt = new org.apache.paimon.types.IntType(false);
                    }
                    InternalMap m = (InternalMap) v;
                    InternalArray ks = m.keyArray();
                    InternalArray vs = m.valueArray();
                    InternalArray.ElementGetter kg = InternalArray.createElementGetter(kt);
                    InternalArray.ElementGetter vg = InternalArray.createElementGetter(vt);
                    List<ArrayNode> pairs = new ArrayList<>();
                    for (int i = 0; i < m.size(); i++) {
                        ArrayNode p = F.arrayNode();
                        p.add(toJson(kt, kg.getElementOrNull(ks, i)));
                        p.add(toJson(vt, vg.getElementOrNull(vs, i)));
                        pairs.add(p);
                    }
                    // Map order is not part of a map's value: sort pairs by the key's JSON text.
                    pairs.sort((a, b) -> a.get(0).toString().compareTo(b.get(0).toString()));
                    ArrayNode out = F.arrayNode();
                    pairs.forEach(out::add);
                    return out;
                }
            case ROW:
                return rowToJson((RowType) t, (InternalRow) v);
            default:
                if (v instanceof byte[]) {
                    return F.textNode(Base64.getEncoder().encodeToString((byte[]) v));
                }
                return F.textNode(v.toString());
        }
    }

    private static JsonNode floatNode(double d) {
        if (Double.isNaN(d)) {
            return F.textNode("NaN");
        }
        if (Double.isInfinite(d)) {
            return F.textNode(d > 0 ? "Infinity" : "-Infinity");
        }
        return F.numberNode(d);
    }

    static String formatTime(int millisOfDay) {
        LocalTime lt = LocalTime.ofNanoOfDay(millisOfDay * 1_000_000L);
        return String.format(
                "%02d:%02d:%02d.%03d",
                lt.getHour(), lt.getMinute(), lt.getSecond(), lt.getNano() / 1_000_000);
    }

    static String formatTimestamp(Timestamp ts) {
        LocalDateTime ldt = ts.toLocalDateTime();
        return String.format(
                "%04d-%02d-%02dT%02d:%02d:%02d.%09d",
                ldt.getYear(),
                ldt.getMonthValue(),
                ldt.getDayOfMonth(),
                ldt.getHour(),
                ldt.getMinute(),
                ldt.getSecond(),
                ldt.getNano());
    }

    // ---------- canonical JSON -> internal value ----------

    static Object fromJson(DataType t, JsonNode n) {
        if (n == null || n.isNull()) {
            return null;
        }
        switch (t.getTypeRoot()) {
            case BOOLEAN:
                return n.asBoolean();
            case TINYINT:
                return (byte) n.asInt();
            case SMALLINT:
                return (short) n.asInt();
            case INTEGER:
                return n.asInt();
            case BIGINT:
                return n.asLong();
            case FLOAT:
                return (float) parseDouble(n);
            case DOUBLE:
                return parseDouble(n);
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(n.asText());
            case BINARY:
            case VARBINARY:
                return Base64.getDecoder().decode(n.asText());
            case DECIMAL:
                {
                    DecimalType dt = (DecimalType) t;
                    BigDecimal bd = new BigDecimal(n.asText()).setScale(dt.getScale(), RoundingMode.UNNECESSARY);
                    return Decimal.fromBigDecimal(bd, dt.getPrecision(), dt.getScale());
                }
            case DATE:
                return n.isNumber() ? n.asInt() : (int) LocalDate.parse(n.asText()).toEpochDay();
            case TIME_WITHOUT_TIME_ZONE:
                return n.isNumber()
                        ? n.asInt()
                        : (int) (LocalTime.parse(n.asText()).toNanoOfDay() / 1_000_000L);
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                if (n.isNumber()) {
                    return Timestamp.fromEpochMillis(n.asLong());
                }
                return Timestamp.fromLocalDateTime(LocalDateTime.parse(n.asText()));
            case ARRAY:
                {
                    DataType et = ((ArrayType) t).getElementType();
                    Object[] vals = new Object[n.size()];
                    for (int i = 0; i < n.size(); i++) {
                        vals[i] = fromJson(et, n.get(i));
                    }
                    return new GenericArray(vals);
                }
            case MAP:
                {
                    MapType mt = (MapType) t;
                    Map<Object, Object> m = new LinkedHashMap<>();
                    for (JsonNode p : n) {
                        m.put(fromJson(mt.getKeyType(), p.get(0)), fromJson(mt.getValueType(), p.get(1)));
                    }
                    return new GenericMap(m);
                }
            case ROW:
                return rowFromJson((RowType) t, n, org.apache.paimon.types.RowKind.INSERT);
            default:
                throw new IllegalArgumentException("unsupported type for input: " + t);
        }
    }

    private static double parseDouble(JsonNode n) {
        if (n.isTextual()) {
            switch (n.asText()) {
                case "NaN":
                    return Double.NaN;
                case "Infinity":
                    return Double.POSITIVE_INFINITY;
                case "-Infinity":
                    return Double.NEGATIVE_INFINITY;
                default:
                    return Double.parseDouble(n.asText());
            }
        }
        return n.asDouble();
    }

    static GenericRow rowFromJson(RowType type, JsonNode obj, org.apache.paimon.types.RowKind kind) {
        List<DataField> fields = type.getFields();
        GenericRow row = new GenericRow(kind, fields.size());
        for (int i = 0; i < fields.size(); i++) {
            DataField f = fields.get(i);
            row.setField(i, fromJson(f.type(), obj.get(f.name())));
        }
        return row;
    }

    static long epochMillisUTC(LocalDateTime ldt) {
        return ldt.toInstant(ZoneOffset.UTC).toEpochMilli();
    }
}
