package compactd.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.hadoop.conf.Configuration;
import org.apache.paimon.shade.org.apache.hadoop.hive.ql.exec.vector.BytesColumnVector;
import org.apache.paimon.shade.org.apache.hadoop.hive.ql.exec.vector.ColumnVector;
import org.apache.paimon.shade.org.apache.hadoop.hive.ql.exec.vector.DecimalColumnVector;
import org.apache.paimon.shade.org.apache.hadoop.hive.ql.exec.vector.DoubleColumnVector;
import org.apache.paimon.shade.org.apache.hadoop.hive.ql.exec.vector.ListColumnVector;
import org.apache.paimon.shade.org.apache.hadoop.hive.ql.exec.vector.LongColumnVector;
import org.apache.paimon.shade.org.apache.hadoop.hive.ql.exec.vector.MapColumnVector;
import org.apache.paimon.shade.org.apache.hadoop.hive.ql.exec.vector.StructColumnVector;
import org.apache.paimon.shade.org.apache.hadoop.hive.ql.exec.vector.TimestampColumnVector;
import org.apache.paimon.shade.org.apache.hadoop.hive.ql.exec.vector.VectorizedRowBatch;
import org.apache.paimon.shade.org.apache.orc.BinaryColumnStatistics;
import org.apache.paimon.shade.org.apache.orc.BooleanColumnStatistics;
import org.apache.paimon.shade.org.apache.orc.CollectionColumnStatistics;
import org.apache.paimon.shade.org.apache.orc.ColumnStatistics;
import org.apache.paimon.shade.org.apache.orc.DateColumnStatistics;
import org.apache.paimon.shade.org.apache.orc.DecimalColumnStatistics;
import org.apache.paimon.shade.org.apache.orc.DoubleColumnStatistics;
import org.apache.paimon.shade.org.apache.orc.IntegerColumnStatistics;
import org.apache.paimon.shade.org.apache.orc.OrcFile;
import org.apache.paimon.shade.org.apache.orc.Reader;
import org.apache.paimon.shade.org.apache.orc.RecordReader;
import org.apache.paimon.shade.org.apache.orc.StringColumnStatistics;
import org.apache.paimon.shade.org.apache.orc.StripeStatistics;
import org.apache.paimon.shade.org.apache.orc.TimestampColumnStatistics;
import org.apache.paimon.shade.org.apache.orc.OrcProto;
import org.apache.paimon.shade.org.apache.orc.StripeInformation;
import org.apache.paimon.shade.org.apache.orc.TypeDescription;
import org.apache.paimon.shade.org.apache.orc.impl.ColumnStatisticsImpl;
import org.apache.paimon.shade.org.apache.orc.impl.OrcIndex;
import org.apache.paimon.shade.org.apache.orc.impl.RecordReaderImpl;

import java.io.PrintWriter;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * {@code orc-read-rows --file F [--seek-check true]}: reads one ORC file with Java's ORC library
 * (the copy Paimon bundles, org.apache.orc 1.9) and prints each row as a JSON object keyed by the
 * root struct's field names, in the harness's canonical encodings applied to ORC types (integers
 * as numbers, decimals as plain strings at the column's scale, DATE as yyyy-mm-dd, both timestamp
 * kinds as yyyy-mm-ddThh:mm:ss.nnnnnnnnn (TIMESTAMP its wall-clock, TIMESTAMP_INSTANT in UTC), binaries base64, lists as arrays, maps as arrays
 * of [key, value] in file order, structs as objects). Then one line {"__orc_stats": ...} with the
 * footer's column statistics per column id and the number of stripe statistics. With
 * --seek-check, every row-index group start is also read after RecordReader.seekToRow, which
 * follows the row index positions, and every row group's index statistics are checked against
 * its rows (checkRowGroupStats); a difference fails the verb.
 */
final class OrcReadRowsVerb {
    private final Map<String, String> flags;
    private final PrintWriter out;

    OrcReadRowsVerb(Map<String, String> flags, PrintWriter out) {
        this.flags = flags;
        this.out = out;
    }

    void run() throws Exception {
        String file = flags.get("file");
        if (file == null) {
            throw new IllegalArgumentException("missing --file");
        }
        Configuration conf = new Configuration(false);
        // Paimon's own reader set-up (OrcReaderFactory.createReader: its RecordReaderImpl and its
        // FileIO-backed file system), without a row selection.
        Reader reader =
                org.apache.paimon.format.orc.OrcReaderFactory.createReader(
                        conf, org.apache.paimon.fs.local.LocalFileIO.create(), new org.apache.paimon.fs.Path(file), null);
        TypeDescription schema = reader.getSchema();
        List<ObjectNode> rows = new ArrayList<>();
        try (RecordReader rr = reader.rows(new Reader.Options().useSelected(false))) {
            VectorizedRowBatch batch = schema.createRowBatch(1024);
            while (rr.nextBatch(batch)) {
                for (int r = 0; r < batch.size; r++) {
                    rows.add(row(schema, batch, r));
                }
            }
        }
        if (rows.size() != reader.getNumberOfRows()) {
            throw new IllegalStateException("read " + rows.size() + " rows, footer says " + reader.getNumberOfRows());
        }
        if ("true".equals(flags.get("seek-check"))) {
            long stride = reader.getRowIndexStride();
            if (stride <= 0) {
                throw new IllegalStateException("--seek-check on a file without row index");
            }
            try (RecordReader rr = reader.rows(new Reader.Options().useSelected(false))) {
                VectorizedRowBatch batch = schema.createRowBatch(1);
                // Backwards, so every seek moves to another row group.
                for (long r = (rows.size() - 1) / stride * stride; r >= 0; r -= stride) {
                    rr.seekToRow(r);
                    if (!rr.nextBatch(batch) || batch.size < 1) {
                        throw new IllegalStateException("no row after seekToRow(" + r + ")");
                    }
                    ObjectNode got = row(schema, batch, 0);
                    if (!got.equals(rows.get((int) r))) {
                        throw new IllegalStateException(
                                "row " + r + " after seekToRow: " + got + ", sequential read: " + rows.get((int) r));
                    }
                }
            }
        }
        if ("true".equals(flags.get("seek-check"))) {
            checkRowGroupStats(reader, schema, rows);
        }
        for (ObjectNode o : rows) {
            out.println(Canonical.JSON.writeValueAsString(o));
        }
        ObjectNode st = Canonical.F.objectNode();
        ArrayNode cols = st.putArray("columns");
        for (ColumnStatistics cs : reader.getStatistics()) {
            cols.add(stats(cs));
        }
        List<StripeStatistics> ss = reader.getStripeStatistics();
        st.put("stripes", reader.getStripes().size());
        st.put("stripe_stats", ss.size());
        st.put("compression", reader.getCompressionKind().toString());
        st.put("row_index_stride", reader.getRowIndexStride());
        ArrayNode attrs = st.putArray("paimon_ids");
        for (TypeDescription t : schema.getChildren()) {
            attrs.add(t.getAttributeValue("paimon.id"));
        }
        ObjectNode wrap = Canonical.F.objectNode();
        wrap.set("__orc_stats", st);
        out.println(Canonical.JSON.writeValueAsString(wrap));
    }

    /**
     * Every row group's statistics in the row index (what Paimon's predicate push-down prunes row
     * groups by) must say what the group's rows hold: per top-level column the number of non-null
     * values, whether there are nulls, and for integer, string and boolean columns min, max and the
     * true count.
     */
    private static void checkRowGroupStats(Reader reader, TypeDescription schema, List<ObjectNode> rows)
            throws Exception {
        long stride = reader.getRowIndexStride();
        boolean[] included = new boolean[schema.getMaximumId() + 1];
        java.util.Arrays.fill(included, true);
        try (RecordReader rr = reader.rows(new Reader.Options())) {
            RecordReaderImpl rri = (RecordReaderImpl) rr;
            List<StripeInformation> stripes = reader.getStripes();
            long base = 0;
            for (int s = 0; s < stripes.size(); s++) {
                OrcIndex idx = rri.readRowIndex(s, included, null);
                long nrows = stripes.get(s).getNumberOfRows();
                int groups = (int) ((nrows + stride - 1) / stride);
                for (int k = 0; k < schema.getChildren().size(); k++) {
                    TypeDescription ct = schema.getChildren().get(k);
                    String name = schema.getFieldNames().get(k);
                    OrcProto.RowIndex ri = idx.getRowGroupIndex()[ct.getId()];
                    if (ri.getEntryCount() != groups) {
                        throw new IllegalStateException("stripe " + s + " column " + name + ": " + ri.getEntryCount()
                                + " row index entries for " + groups + " row groups");
                    }
                    for (int g = 0; g < groups; g++) {
                        ColumnStatistics cs = ColumnStatisticsImpl.deserialize(ct, ri.getEntry(g).getStatistics());
                        long n = 0, trues = 0;
                        boolean nulls = false;
                        Long lo = null, hi = null;
                        String slo = null, shi = null;
                        long from = base + g * stride, to = Math.min(base + nrows, from + stride);
                        for (long r = from; r < to; r++) {
                            JsonNode v = rows.get((int) r).get(name);
                            if (v == null || v.isNull()) {
                                nulls = true;
                                continue;
                            }
                            n++;
                            if (v.isBoolean() && v.asBoolean()) {
                                trues++;
                            }
                            if (v.isIntegralNumber()) {
                                lo = lo == null ? v.asLong() : Math.min(lo, v.asLong());
                                hi = hi == null ? v.asLong() : Math.max(hi, v.asLong());
                            }
                            if (v.isTextual()) {
                                String x = v.asText();
                                slo = slo == null || x.compareTo(slo) < 0 ? x : slo;
                                shi = shi == null || x.compareTo(shi) > 0 ? x : shi;
                            }
                        }
                        String where = "stripe " + s + " row group " + g + " column " + name + ": ";
                        if (cs.getNumberOfValues() != n || cs.hasNull() != nulls) {
                            throw new IllegalStateException(where + cs + ", rows have " + n + " values, nulls " + nulls);
                        }
                        if (cs instanceof BooleanColumnStatistics && ((BooleanColumnStatistics) cs).getTrueCount() != trues) {
                            throw new IllegalStateException(where + cs + ", rows have " + trues + " true");
                        }
                        if (cs instanceof IntegerColumnStatistics && n > 0) {
                            IntegerColumnStatistics is = (IntegerColumnStatistics) cs;
                            if (is.getMinimum() != lo || is.getMaximum() != hi) {
                                throw new IllegalStateException(where + cs + ", rows have min " + lo + " max " + hi);
                            }
                        }
                        if (cs instanceof StringColumnStatistics && n > 0 && ct.getCategory() == TypeDescription.Category.STRING) {
                            StringColumnStatistics ss = (StringColumnStatistics) cs;
                            if (!slo.equals(ss.getMinimum()) || !shi.equals(ss.getMaximum())) {
                                throw new IllegalStateException(where + cs + ", rows have min " + slo + " max " + shi);
                            }
                        }
                    }
                }
                base += nrows;
            }
        }
    }

    private static ObjectNode row(TypeDescription schema, VectorizedRowBatch b, int r) {
        ObjectNode o = Canonical.F.objectNode();
        List<String> names = schema.getFieldNames();
        for (int k = 0; k < names.size(); k++) {
            o.set(names.get(k), value(schema.getChildren().get(k), b.cols[k], r));
        }
        return o;
    }

    private static JsonNode value(TypeDescription t, ColumnVector v, int i) {
        int j = v.isRepeating ? 0 : i;
        if (!v.noNulls && v.isNull[j]) {
            return Canonical.F.nullNode();
        }
        switch (t.getCategory()) {
            case BOOLEAN:
                return Canonical.F.booleanNode(((LongColumnVector) v).vector[j] != 0);
            case BYTE:
            case SHORT:
            case INT:
            case LONG:
                return Canonical.F.numberNode(((LongColumnVector) v).vector[j]);
            case DATE:
                return Canonical.F.textNode(LocalDate.ofEpochDay(((LongColumnVector) v).vector[j]).toString());
            case FLOAT:
            case DOUBLE:
                {
                    double d = ((DoubleColumnVector) v).vector[j];
                    if (Double.isNaN(d) || Double.isInfinite(d)) {
                        return Canonical.F.textNode(Double.toString(d));
                    }
                    return Canonical.F.numberNode(d);
                }
            case STRING:
            case VARCHAR:
            case CHAR:
                {
                    BytesColumnVector bv = (BytesColumnVector) v;
                    return Canonical.F.textNode(new String(bv.vector[j], bv.start[j], bv.length[j], StandardCharsets.UTF_8));
                }
            case BINARY:
                {
                    BytesColumnVector bv = (BytesColumnVector) v;
                    byte[] x = new byte[bv.length[j]];
                    System.arraycopy(bv.vector[j], bv.start[j], x, 0, x.length);
                    return Canonical.F.textNode(Base64.getEncoder().encodeToString(x));
                }
            case DECIMAL:
                return Canonical.F.textNode(((DecimalColumnVector) v).vector[j].getHiveDecimal().bigDecimalValue()
                        .setScale(t.getScale(), RoundingMode.UNNECESSARY).toPlainString());
            case TIMESTAMP:
            case TIMESTAMP_INSTANT:
                {
                    TimestampColumnVector tv = (TimestampColumnVector) v;
                    // TIMESTAMP: the wall-clock in the reader's zone (as Paimon reads it);
                    // TIMESTAMP_INSTANT: the instant in UTC.
                    LocalDateTime ldt =
                            t.getCategory() == TypeDescription.Category.TIMESTAMP
                                    ? tv.asScratchTimestamp(j).toLocalDateTime()
                                    : LocalDateTime.ofEpochSecond(Math.floorDiv(tv.time[j], 1000L), tv.nanos[j], ZoneOffset.UTC);
                    return Canonical.F.textNode(String.format("%04d-%02d-%02dT%02d:%02d:%02d.%09d", ldt.getYear(),
                            ldt.getMonthValue(), ldt.getDayOfMonth(), ldt.getHour(), ldt.getMinute(), ldt.getSecond(),
                            ldt.getNano()));
                }
            case LIST:
                {
                    ListColumnVector lv = (ListColumnVector) v;
                    ArrayNode a = Canonical.F.arrayNode();
                    for (long k = 0; k < lv.lengths[j]; k++) {
                        a.add(value(t.getChildren().get(0), lv.child, (int) (lv.offsets[j] + k)));
                    }
                    return a;
                }
            case MAP:
                {
                    MapColumnVector mv = (MapColumnVector) v;
                    ArrayNode a = Canonical.F.arrayNode();
                    for (long k = 0; k < mv.lengths[j]; k++) {
                        ArrayNode p = Canonical.F.arrayNode();
                        p.add(value(t.getChildren().get(0), mv.keys, (int) (mv.offsets[j] + k)));
                        p.add(value(t.getChildren().get(1), mv.values, (int) (mv.offsets[j] + k)));
                        a.add(p);
                    }
                    return a;
                }
            case STRUCT:
                {
                    StructColumnVector sv = (StructColumnVector) v;
                    ObjectNode o = Canonical.F.objectNode();
                    for (int k = 0; k < t.getFieldNames().size(); k++) {
                        o.set(t.getFieldNames().get(k), value(t.getChildren().get(k), sv.fields[k], j));
                    }
                    return o;
                }
            default:
                throw new IllegalArgumentException("ORC type " + t + " not supported by orc-read-rows");
        }
    }

    private static ObjectNode stats(ColumnStatistics cs) {
        ObjectNode o = Canonical.F.objectNode();
        o.put("n", cs.getNumberOfValues());
        o.put("has_null", cs.hasNull());
        if (cs instanceof BooleanColumnStatistics) {
            o.put("true_count", ((BooleanColumnStatistics) cs).getTrueCount());
        } else if (cs instanceof IntegerColumnStatistics) {
            IntegerColumnStatistics s = (IntegerColumnStatistics) cs;
            if (cs.getNumberOfValues() > 0) {
                o.put("min", Long.toString(s.getMinimum()));
                o.put("max", Long.toString(s.getMaximum()));
            }
            if (s.isSumDefined()) {
                o.put("sum", Long.toString(s.getSum()));
            }
        } else if (cs instanceof DoubleColumnStatistics) {
            DoubleColumnStatistics s = (DoubleColumnStatistics) cs;
            if (cs.getNumberOfValues() > 0) {
                o.put("min", Double.toString(s.getMinimum()));
                o.put("max", Double.toString(s.getMaximum()));
            }
        } else if (cs instanceof StringColumnStatistics) {
            StringColumnStatistics s = (StringColumnStatistics) cs;
            if (s.getMinimum() != null) {
                o.put("min", s.getMinimum());
                o.put("max", s.getMaximum());
            }
            o.put("sum", Long.toString(s.getSum()));
        } else if (cs instanceof DecimalColumnStatistics) {
            DecimalColumnStatistics s = (DecimalColumnStatistics) cs;
            if (s.getMinimum() != null) {
                o.put("min", s.getMinimum().bigDecimalValue().toPlainString());
                o.put("max", s.getMaximum().bigDecimalValue().toPlainString());
            }
        } else if (cs instanceof DateColumnStatistics) {
            DateColumnStatistics s = (DateColumnStatistics) cs;
            if (cs.getNumberOfValues() > 0) {
                o.put("min", Long.toString(s.getMinimumDayOfEpoch()));
                o.put("max", Long.toString(s.getMaximumDayOfEpoch()));
            }
        } else if (cs instanceof TimestampColumnStatistics) {
            TimestampColumnStatistics s = (TimestampColumnStatistics) cs;
            if (s.getMinimumUTC() != null) {
                java.sql.Timestamp mn = s.getMinimumUTC();
                java.sql.Timestamp mx = s.getMaximumUTC();
                o.put("min", Math.floorDiv(mn.getTime(), 1000L) + "." + String.format("%09d", mn.getNanos()));
                o.put("max", Math.floorDiv(mx.getTime(), 1000L) + "." + String.format("%09d", mx.getNanos()));
            }
        } else if (cs instanceof BinaryColumnStatistics) {
            o.put("sum", Long.toString(((BinaryColumnStatistics) cs).getSum()));
        } else if (cs instanceof CollectionColumnStatistics) {
            CollectionColumnStatistics s = (CollectionColumnStatistics) cs;
            if (cs.getNumberOfValues() > 0) {
                o.put("min", Long.toString(s.getMinimumChildren()));
                o.put("max", Long.toString(s.getMaximumChildren()));
            }
        }
        return o;
    }
}
