package compactd.interop;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericArray;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.format.FileFormat;
import org.apache.paimon.format.FormatReaderContext;
import org.apache.paimon.format.FormatWriter;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.PositionOutputStream;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.options.Options;
import org.apache.paimon.shade.org.apache.orc.CompressionCodec;
import org.apache.paimon.shade.org.apache.orc.CompressionKind;
import org.apache.paimon.shade.org.apache.orc.OrcFile;
import org.apache.paimon.shade.org.apache.orc.OrcProto;
import org.apache.paimon.shade.org.apache.orc.Reader;
import org.apache.paimon.shade.org.apache.orc.StripeInformation;
import org.apache.paimon.shade.org.apache.orc.TypeDescription;
import org.apache.paimon.shade.org.apache.orc.impl.OrcCodecPool;
import org.apache.paimon.types.ArrayType;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.MapType;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.JsonSerdeUtil;

import java.io.BufferedWriter;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TimeZone;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Verb orc-write-samples: ORC files written by Paimon's own ORC writer (OrcFileFormat over the
 * ORC Java library it bundles, org.apache.orc 1.9), as the oracle for compactd's ORC reader.
 *
 * <p>Flags: --dir D [--seed S]. Every file has the same row type, one column of each type Paimon
 * maps to ORC (BOOLEAN, TINYINT..BIGINT with runs, deltas, random values and outliers for every
 * RLE v2 sub-encoding, FLOAT, DOUBLE with NaN and infinities, DECIMAL(5,2), (18,4) and (38,10),
 * CHAR, VARCHAR, STRING of high and low cardinality, BINARY/VARBINARY/BYTES, DATE over years
 * 1..9999, TIME, TIMESTAMP(0/3/6/9) and TIMESTAMP_LTZ(3/9) before and after 1970, nested ROW,
 * ARRAY and MAP of ROW/ARRAY), with nulls at every level. Files differ in compression (none, zlib,
 * snappy, lz4, zstd), string encoding (the dictionary threshold forcing dictionary or direct),
 * the RLE version (orc.write.format 0.11 writes RLE v1), the LTZ encoding
 * (orc.timestamp-ltz.legacy.type), the writer's time zone, timestamps before the Gregorian reform
 * (java.sql.Timestamp's Julian fields), stripe size and row index stride (several stripes of
 * several row groups each) and row count (one file is empty).
 *
 * <p>For each file it writes D/name.orc, D/name.jsonl (the rows written, in order, in the
 * canonical JSON form) and D/name.read.jsonl (the rows Paimon's ORC reader reads back in a UTC
 * JVM, the contract for compactd's reader) and prints {"name","orc","rows","read","fields" (the
 * row type as Paimon's schema
 * JSON), "count","compression","stripes","rowIndexStride","writerTimezone","encodings" (per
 * top-level column the set of column encodings of its stripes, read back with ORC's reader)}.
 */
final class OrcOracle {
    private final Map<String, String> flags;
    private final PrintWriter out;

    OrcOracle(Map<String, String> flags, PrintWriter out) {
        this.flags = flags;
        this.out = out;
    }

    static RowType rowType() {
        List<DataField> f = new ArrayList<>();
        int id = 0;
        f.add(new DataField(id++, "b", DataTypes.BOOLEAN()));
        f.add(new DataField(id++, "ti", DataTypes.TINYINT()));
        f.add(new DataField(id++, "si", DataTypes.SMALLINT()));
        f.add(new DataField(id++, "i_seq", DataTypes.INT().notNull()));
        f.add(new DataField(id++, "i_run", DataTypes.INT()));
        f.add(new DataField(id++, "i_rand", DataTypes.INT()));
        f.add(new DataField(id++, "bi_delta", DataTypes.BIGINT()));
        f.add(new DataField(id++, "bi_patch", DataTypes.BIGINT()));
        f.add(new DataField(id++, "bi_rand", DataTypes.BIGINT()));
        f.add(new DataField(id++, "fl", DataTypes.FLOAT()));
        f.add(new DataField(id++, "db", DataTypes.DOUBLE()));
        f.add(new DataField(id++, "dec5", DataTypes.DECIMAL(5, 2)));
        f.add(new DataField(id++, "dec18", DataTypes.DECIMAL(18, 4)));
        f.add(new DataField(id++, "dec38", DataTypes.DECIMAL(38, 10)));
        f.add(new DataField(id++, "ch", DataTypes.CHAR(8)));
        f.add(new DataField(id++, "vc", DataTypes.VARCHAR(20)));
        f.add(new DataField(id++, "s_rand", DataTypes.STRING()));
        f.add(new DataField(id++, "s_low", DataTypes.STRING()));
        f.add(new DataField(id++, "bin", DataTypes.BINARY(4)));
        f.add(new DataField(id++, "vbin", DataTypes.VARBINARY(16)));
        f.add(new DataField(id++, "bytes", DataTypes.BYTES()));
        f.add(new DataField(id++, "dt", DataTypes.DATE()));
        f.add(new DataField(id++, "tm", DataTypes.TIME(3)));
        f.add(new DataField(id++, "ts0", DataTypes.TIMESTAMP(0)));
        f.add(new DataField(id++, "ts3", DataTypes.TIMESTAMP(3)));
        f.add(new DataField(id++, "ts6", DataTypes.TIMESTAMP(6)));
        f.add(new DataField(id++, "ts9", DataTypes.TIMESTAMP(9)));
        f.add(new DataField(id++, "ltz3", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3)));
        f.add(new DataField(id++, "ltz9", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(9)));
        RowType inner =
                new RowType(
                        List.of(
                                new DataField(id++, "x", DataTypes.INT()),
                                new DataField(id++, "y", DataTypes.STRING()),
                                new DataField(id++, "z", DataTypes.ARRAY(DataTypes.BIGINT()))));
        f.add(new DataField(id++, "r", inner));
        f.add(new DataField(id++, "arr", DataTypes.ARRAY(DataTypes.STRING())));
        RowType kv =
                new RowType(
                        List.of(
                                new DataField(id++, "k", DataTypes.INT()),
                                new DataField(id++, "v", DataTypes.DOUBLE())));
        f.add(new DataField(id++, "arr_row", DataTypes.ARRAY(kv)));
        f.add(new DataField(id++, "m", DataTypes.MAP(DataTypes.STRING().notNull(), DataTypes.INT())));
        f.add(
                new DataField(
                        id++,
                        "m_nested",
                        DataTypes.MAP(DataTypes.INT().notNull(), DataTypes.ARRAY(DataTypes.STRING()))));
        return new RowType(f);
    }

    /** One sample file: its name, rows, compression, Paimon/ORC options and writer time zone. */
    private static final class Sample {
        final String name;
        final int rows;
        final String compression;
        final Map<String, String> options = new LinkedHashMap<>();
        String zone = "UTC";
        boolean lowCardinality;
        boolean ancient; // timestamps in years 1..1900 (Julian calendar before 1582 in java.sql.Timestamp)

        Sample(String name, int rows, String compression) {
            this.name = name;
            this.rows = rows;
            this.compression = compression;
        }

        Sample opt(String k, String v) {
            options.put(k, v);
            return this;
        }
    }

    private static List<Sample> samples() {
        List<Sample> s = new ArrayList<>();
        // Several stripes of several row groups: a 64 KiB stripe, memory checked every 2000 rows.
        for (String c : new String[] {"none", "zlib", "snappy", "lz4", "zstd"}) {
            s.add(
                    new Sample("stripes_" + c, 4000, c)
                            .opt("orc.stripe.size", "65536")
                            .opt("orc.rows.between.memory.checks", "2000")
                            .opt("orc.row.index.stride", "1000")
                            .opt("orc.compress.size", "4096"));
        }
        s.add(new Sample("dictionary", 1000, "zstd").opt("orc.dictionary.key.threshold", "1.0"));
        s.add(new Sample("direct", 1000, "zlib").opt("orc.dictionary.key.threshold", "0"));
        // RLE v1 (DIRECT / DICTIONARY encodings), as files of ORC 0.11 writers.
        s.add(
                new Sample("rle_v1", 1000, "snappy")
                        .opt("orc.write.format", "0.11")
                        .opt("orc.dictionary.key.threshold", "1.0"));
        s.add(new Sample("rle_v1_direct", 1000, "none").opt("orc.write.format", "0.11").opt("orc.dictionary.key.threshold", "0"));
        s.add(new Sample("ltz_instant", 1000, "zstd").opt("orc.timestamp-ltz.legacy.type", "false"));
        Sample la = new Sample("zone_los_angeles", 1500, "zstd");
        la.zone = "America/Los_Angeles";
        s.add(la);
        Sample kol = new Sample("zone_kolkata", 1000, "lz4");
        kol.zone = "Asia/Kolkata";
        kol.opt("orc.timestamp-ltz.legacy.type", "false");
        s.add(kol);
        Sample low = new Sample("low_cardinality", 2000, "zstd");
        low.lowCardinality = true;
        s.add(low);
        // Small files (a few KiB), committed as seeds of internal/orc's fuzz target.
        s.add(new Sample("small_rle_v1", 60, "snappy").opt("orc.write.format", "0.11"));
        s.add(new Sample("small_zlib_direct", 60, "zlib").opt("orc.dictionary.key.threshold", "0"));
        s.add(new Sample("small_lz4", 60, "lz4"));
        Sample old = new Sample("ancient_timestamps", 500, "zstd");
        old.ancient = true;
        s.add(old);
        s.add(new Sample("empty", 0, "zstd"));
        s.add(new Sample("one_row", 1, "none"));
        return s;
    }

    void run() throws Exception {
        String dir = flags.get("dir");
        if (dir == null) {
            throw new IllegalArgumentException("missing --dir");
        }
        long seed = Long.parseLong(flags.getOrDefault("seed", "1"));
        Files.createDirectories(java.nio.file.Paths.get(dir));
        RowType type = rowType();
        TimeZone saved = TimeZone.getDefault();
        try {
            for (Sample s : samples()) {
                TimeZone.setDefault(TimeZone.getTimeZone(s.zone));
                write(dir, type, s, new Random(seed * 31 + s.name.hashCode()));
            }
        } finally {
            TimeZone.setDefault(saved);
        }
    }

    private void write(String dir, RowType type, Sample s, Random rnd) throws Exception {
        Options opts = new Options();
        s.options.forEach(opts::set);
        FileFormat format = FileFormat.fromIdentifier("orc", opts);
        String orcPath = dir + "/" + s.name + ".orc";
        String rowsPath = dir + "/" + s.name + ".jsonl";
        LocalFileIO fio = LocalFileIO.create();
        try (PositionOutputStream os = fio.newOutputStream(new Path(orcPath), true);
                PrintWriter rows =
                        new PrintWriter(
                                new BufferedWriter(Files.newBufferedWriter(java.nio.file.Paths.get(rowsPath), StandardCharsets.UTF_8)))) {
            FormatWriter w = format.createWriterFactory(type).create(os, s.compression);
            for (int i = 0; i < s.rows; i++) {
                ancientTimestamps = s.ancient;
                InternalRow row = row(type, i, rnd, s.lowCardinality);
                w.addElement(row);
                rows.println(Canonical.JSON.writeValueAsString(Canonical.rowToJson(type, row)));
            }
            w.close();
        }
        // What Java Paimon reads back (its ORC reader, in the JVM's zone UTC): the rows a scan
        // must equal. It differs from the rows written where Java's writer loses information
        // (TIMESTAMPs before 1582-10-15: java.sql.Timestamp's Julian fields read back
        // proleptic; TIMESTAMP_LTZ of writers outside UTC).
        String readPath = dir + "/" + s.name + ".read.jsonl";
        TimeZone.setDefault(TimeZone.getTimeZone("UTC"));
        try (PrintWriter rows =
                        new PrintWriter(
                                new BufferedWriter(Files.newBufferedWriter(java.nio.file.Paths.get(readPath), StandardCharsets.UTF_8)));
                RecordReader<InternalRow> rr =
                        format.createReaderFactory(type, type, new ArrayList<>())
                                .createReader(new FormatReaderContext(fio, new Path(orcPath), fio.getFileSize(new Path(orcPath))))) {
            rr.forEachRemaining(
                    row -> {
                        try {
                            rows.println(Canonical.JSON.writeValueAsString(Canonical.rowToJson(type, row)));
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    });
        }
        ObjectNode o = Canonical.F.objectNode();
        o.put("name", s.name);
        o.put("orc", orcPath);
        o.put("rows", rowsPath);
        o.put("read", readPath);
        o.put("fields", JsonSerdeUtil.toJson(type.getFields()));
        o.put("count", s.rows);
        Reader r =
                OrcFile.createReader(
                        new org.apache.hadoop.fs.Path(orcPath),
                        OrcFile.readerOptions(new org.apache.hadoop.conf.Configuration(false)));
        o.put("compression", r.getCompressionKind().name());
        o.put("stripes", r.getStripes().size());
        o.put("rowIndexStride", r.getRowIndexStride());
        TypeDescription schema = r.getSchema();
        Map<String, TreeSet<String>> enc = new TreeMap<>();
        String zone = "";
        byte[] file = Files.readAllBytes(java.nio.file.Paths.get(orcPath));
        {
            for (StripeInformation st : r.getStripes()) {
                int at = (int) (st.getOffset() + st.getIndexLength() + st.getDataLength());
                OrcProto.StripeFooter footer =
                        OrcProto.StripeFooter.parseFrom(
                                decompress(r.getCompressionKind(), file, at, (int) st.getFooterLength()));
                zone = footer.getWriterTimezone();
                List<String> names = schema.getFieldNames();
                for (int k = 0; k < names.size(); k++) {
                    int col = schema.getChildren().get(k).getId();
                    enc.computeIfAbsent(names.get(k), x -> new TreeSet<>())
                            .add(footer.getColumns(col).getKind().name());
                }
            }
        }
        o.put("writerTimezone", zone);
        ObjectNode e = o.putObject("encodings");
        enc.forEach(
                (k, v) -> {
                    ArrayNode a = e.putArray(k);
                    v.forEach(a::add);
                });
        out.println(Canonical.JSON.writeValueAsString(o));
        out.flush();
    }

    /**
     * The bytes of an ORC stream region (ORC's chunked compression: a 3-byte little-endian header
     * of length << 1 | original, then the chunk), decompressed with ORC's own codec. ORC's
     * RecordReaderImpl.readStripeFooter cannot be used: Reader.Options needs an OrcConf constant
     * that Paimon's bundled copy of OrcConf lacks.
     */
    private static byte[] decompress(CompressionKind kind, byte[] file, int at, int len) throws java.io.IOException {
        if (kind == CompressionKind.NONE) {
            return java.util.Arrays.copyOfRange(file, at, at + len);
        }
        CompressionCodec codec = OrcCodecPool.getCodec(kind);
        try {
            java.io.ByteArrayOutputStream outBytes = new java.io.ByteArrayOutputStream();
            int p = at;
            while (p < at + len) {
                int h = (file[p] & 0xff) | (file[p + 1] & 0xff) << 8 | (file[p + 2] & 0xff) << 16;
                p += 3;
                int n = h >>> 1;
                if ((h & 1) == 1) {
                    outBytes.write(file, p, n);
                } else {
                    java.nio.ByteBuffer dst = java.nio.ByteBuffer.allocate(1 << 20);
                    codec.decompress(java.nio.ByteBuffer.wrap(file, p, n).slice(), dst);
                    outBytes.write(dst.array(), dst.arrayOffset() + dst.position(), dst.remaining());
                }
                p += n;
            }
            return outBytes.toByteArray();
        } finally {
            OrcCodecPool.returnCodec(kind, codec);
        }
    }

    // ---------- values ----------

    private static final String[] WORDS = {"", "a", "paimon", "ORC", "日本語", "emoji 😀", "tab\tnew\nline", "zzzz"};

    private static InternalRow row(RowType type, int i, Random rnd, boolean low) {
        List<DataField> fields = type.getFields();
        GenericRow row = new GenericRow(fields.size());
        for (int k = 0; k < fields.size(); k++) {
            DataField f = fields.get(k);
            row.setField(k, value(f.name(), f.type(), i, rnd, low));
        }
        return row;
    }

    private static boolean isNull(DataType t, Random rnd) {
        return t.isNullable() && rnd.nextInt(10) == 0;
    }

    private static Object value(String name, DataType t, int i, Random rnd, boolean low) {
        if (isNull(t, rnd)) {
            return null;
        }
        switch (name) {
            case "i_seq":
                return i;
            case "i_run":
                return (i / 97) * 7 - 50;
            case "bi_delta":
                return 1_000_000_000_000L + i * 13L;
            case "bi_patch":
                // Mostly small values with rare huge outliers: RLE v2 PATCHED_BASE.
                return rnd.nextInt(50) == 0 ? rnd.nextLong() : (long) rnd.nextInt(1000);
            case "s_low":
                return BinaryString.fromString(WORDS[rnd.nextInt(WORDS.length)]);
            case "s_rand":
                if (low) {
                    return BinaryString.fromString("v" + rnd.nextInt(4));
                }
                break;
            default:
        }
        switch (t.getTypeRoot()) {
            case BOOLEAN:
                return rnd.nextBoolean();
            case TINYINT:
                return (byte) rnd.nextInt(256);
            case SMALLINT:
                return pick(rnd, (short) rnd.nextInt(65536), Short.MIN_VALUE, Short.MAX_VALUE);
            case INTEGER:
                return pick(rnd, rnd.nextInt(), Integer.MIN_VALUE, Integer.MAX_VALUE);
            case BIGINT:
                return pick(rnd, rnd.nextLong(), Long.MIN_VALUE, Long.MAX_VALUE);
            case FLOAT:
                return pick(rnd, (rnd.nextFloat() - 0.5f) * 1e6f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MIN_VALUE, Float.MAX_VALUE);
            case DOUBLE:
                return pick(rnd, rnd.nextGaussian() * 1e12, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE, -Double.MAX_VALUE);
            case DECIMAL:
                {
                    DecimalType dt = (DecimalType) t;
                    BigInteger max = BigInteger.TEN.pow(dt.getPrecision()).subtract(BigInteger.ONE);
                    BigInteger u;
                    switch (rnd.nextInt(6)) {
                        case 0:
                            u = max;
                            break;
                        case 1:
                            u = max.negate();
                            break;
                        case 2:
                            u = BigInteger.valueOf(rnd.nextInt(100) - 50);
                            break;
                        default:
                            u = new BigInteger(max.bitLength() + 4, rnd).mod(max.add(BigInteger.ONE));
                            if (rnd.nextBoolean()) {
                                u = u.negate();
                            }
                    }
                    return Decimal.fromBigDecimal(new BigDecimal(u, dt.getScale()), dt.getPrecision(), dt.getScale());
                }
            case CHAR:
                // Full length: ORC pads shorter CHAR values, and Paimon's CHAR values are padded.
                return BinaryString.fromString(String.format("%-8s", "c" + rnd.nextInt(100000)));
            case VARCHAR:
                {
                    int n = rnd.nextInt(21);
                    StringBuilder b = new StringBuilder();
                    for (int k = 0; k < n; k++) {
                        b.append((char) ('a' + rnd.nextInt(26)));
                    }
                    return BinaryString.fromString(t.equals(DataTypes.STRING()) || t.equals(DataTypes.STRING().notNull())
                            ? WORDS[rnd.nextInt(WORDS.length)] + b + rnd.nextLong() : b.toString());
                }
            case BINARY:
            case VARBINARY:
                {
                    int n = t.getTypeRoot().name().equals("BINARY") ? 4 : rnd.nextInt(17);
                    byte[] b = new byte[n];
                    rnd.nextBytes(b);
                    return b;
                }
            case DATE:
                // 0001-01-01 .. 9999-12-31, and near 1970.
                return rnd.nextBoolean() ? rnd.nextInt(3_652_059) - 719_162 : rnd.nextInt(2000) - 1000;
            case TIME_WITHOUT_TIME_ZONE:
                return rnd.nextInt(86_400_000);
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return timestamp(t, rnd);
            case ROW:
                {
                    RowType rt = (RowType) t;
                    GenericRow r = new GenericRow(rt.getFieldCount());
                    for (int k = 0; k < rt.getFieldCount(); k++) {
                        DataField f = rt.getFields().get(k);
                        r.setField(k, value(f.name(), f.type(), i, rnd, low));
                    }
                    return r;
                }
            case ARRAY:
                {
                    DataType et = ((ArrayType) t).getElementType();
                    Object[] a = new Object[rnd.nextInt(5)];
                    for (int k = 0; k < a.length; k++) {
                        a[k] = value("", et, i, rnd, low);
                    }
                    return new GenericArray(a);
                }
            case MAP:
                {
                    MapType mt = (MapType) t;
                    Map<Object, Object> m = new LinkedHashMap<>();
                    int n = rnd.nextInt(4);
                    for (int k = 0; k < n; k++) {
                        Object key = mt.getKeyType().getTypeRoot().name().equals("INTEGER")
                                ? (Object) rnd.nextInt(1000)
                                : BinaryString.fromString("k" + rnd.nextInt(1000));
                        m.put(key, value("", mt.getValueType(), i, rnd, low));
                    }
                    return new GenericMap(m);
                }
            default:
                throw new IllegalArgumentException("no sample values for " + t);
        }
    }

    @SafeVarargs
    private static <T> T pick(Random rnd, T usual, T... edges) {
        return rnd.nextInt(20) == 0 ? edges[rnd.nextInt(edges.length)] : usual;
    }

    /**
     * A timestamp of the type's precision in 1900..2100 (before and after 1970). A wall-clock time
     * in a gap of the writer's zone (a DST spring-forward hour) is drawn again: java.sql.Timestamp
     * cannot hold it, so Java's writer stores the shifted time (it reads back shifted too).
     */
    private static Timestamp timestamp(DataType t, Random rnd) {
        while (true) {
            Timestamp ts = drawTimestamp(t, rnd);
            if (!java.time.ZoneId.systemDefault().getRules().getValidOffsets(ts.toLocalDateTime()).isEmpty()) {
                return ts;
            }
        }
    }

    private static boolean ancientTimestamps;

    private static Timestamp drawTimestamp(DataType t, Random rnd) {
        int p = t.getTypeRoot().name().equals("TIMESTAMP_WITHOUT_TIME_ZONE")
                ? ((org.apache.paimon.types.TimestampType) t).getPrecision()
                : ((org.apache.paimon.types.LocalZonedTimestampType) t).getPrecision();
        long secs = ancientTimestamps
                ? (long) (rnd.nextDouble() * 59_926_608_000L) - 62_135_596_800L // 0001..1900
                : (long) (rnd.nextDouble() * 6_311_433_600L) - 2_208_988_800L; // 1900..2100
        int nanos = rnd.nextInt(1_000_000_000);
        long unit = (long) Math.pow(10, 9 - p);
        nanos = (int) (nanos / unit * unit);
        LocalDateTime ldt = LocalDateTime.ofEpochSecond(secs, nanos, java.time.ZoneOffset.UTC);
        return Timestamp.fromLocalDateTime(ldt);
    }
}
