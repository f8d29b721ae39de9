package compactd.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.compact.CompactUnit;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.fs.Path;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.manifest.FileSource;
import org.apache.paimon.mergetree.LevelSortedRun;
import org.apache.paimon.mergetree.SortedRun;
import org.apache.paimon.mergetree.compact.CompactStrategy;
import org.apache.paimon.mergetree.compact.ForceUpLevel0Compaction;
import org.apache.paimon.mergetree.compact.OffPeakHours;
import org.apache.paimon.mergetree.compact.UniversalCompaction;
import org.apache.paimon.operation.LocalOrphanFilesClean;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.stats.SimpleStats;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.sink.TableWriteImpl;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Command-line oracle: {@code java -cp ... compactd.interop.Main <verb> [--flag value]...}. Every
 * verb prints JSON lines on stdout; errors go to stderr with a non-zero exit code.
 */
public final class Main {
    private static final String DEFAULT_USER = "interop";

    private final Map<String, String> flags = new HashMap<>();
    private final PrintWriter out =
            new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));

    public static void main(String[] args) {
        if (args.length == 0) {
            System.err.println("usage: Main <create|write|read|changelog|stream|lock-hold|files|snapshots|dvs|compact|postpone-compact|bucket-of|alter|pick|expire|orphans|tag|orc-read-rows|orc-write-samples|rest-server|batch|version> [--flag value]...");
            System.exit(2);
        }
        Main m = new Main();
        int code = 0;
        try {
            for (int i = 1; i < args.length; i++) {
                String a = args[i];
                if (!a.startsWith("--")) {
                    throw new IllegalArgumentException("unexpected argument " + a);
                }
                String name = a.substring(2);
                if (name.equals("dry-run")) {
                    m.flags.put(name, "true");
                    continue;
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("flag " + a + " needs a value");
                }
                m.flags.put(name, args[++i]);
            }
            m.run(args[0]);
        } catch (Throwable t) {
            t.printStackTrace(System.err);
            code = 1;
        } finally {
            m.out.flush();
        }
        // Paimon leaves non-daemon executor threads behind; do not wait for them.
        System.exit(code);
    }

    private String flag(String name) {
        String v = flags.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return v;
    }

    private void run(String verb) throws Exception {
        switch (verb) {
            case "batch":
                batch();
                return;
            case "version":
                out.println(Canonical.JSON.writeValueAsString(Map.of("paimon", paimonVersion())));
                return;
            case "create":
                create();
                if (flags.containsKey("rows")) {
                    write();
                }
                return;
            case "write":
                write();
                return;
            case "read":
                read();
                return;
            case "changelog":
                changelog();
                return;
            case "stream":
                if (inBatch) {
                    throw new IllegalArgumentException("stream reads stdin and cannot run in a batch");
                }
                new StreamVerb(flags, out, this::catalog).run();
                return;
            case "lock-hold":
                if (inBatch) {
                    throw new IllegalArgumentException("lock-hold reads stdin and cannot run in a batch");
                }
                new LockHoldVerb(flags, out, this::catalog).run();
                return;
            case "files":
                systemTable("files");
                return;
            case "snapshots":
                systemTable("snapshots");
                return;
            case "compact":
                compact();
                return;
            case "postpone-compact":
                new PostponeCompactVerb(flags, out, this::catalog).run();
                return;
            case "bucket-of":
                bucketOf();
                return;
            case "alter":
                alter();
                return;
            case "dvs":
                dvs();
                return;
            case "pick":
                pick();
                return;
            case "expire":
                expire();
                return;
            case "expire-stream":
                expireStream();
                return;
            case "tag":
                tag();
                return;
            case "orphans":
                orphans();
                return;
            case "orc-read-rows":
                new OrcReadRowsVerb(flags, out).run();
                return;
            case "orc-write-samples":
                new OrcOracle(flags, out).run();
                return;
            case "rest-server":
                if (inBatch) {
                    throw new IllegalArgumentException("rest-server reads stdin and cannot run in a batch");
                }
                new RestServerVerb(flags, out).run();
                return;
            default:
                throw new IllegalArgumentException("unknown verb " + verb);
        }
    }

    static final String BATCH_END = "__compactd_batch_end";

    /**
     * Runs many verbs in one JVM (JVM start-up dominates small calls). Each stdin line is
     * {"verb":"read","flags":{"warehouse":"...","table":"..."}}; each verb's output lines are
     * followed by {"__compactd_batch_end":i,"ok":true} or {...,"ok":false,"error":"..."}.
     */
    private boolean inBatch;

    private void batch() throws Exception {
        inBatch = true;
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        int i = 0;
        while ((line = r.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode req = Canonical.JSON.readTree(line);
            flags.clear();
            Iterator<Map.Entry<String, JsonNode>> it = req.path("flags").fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                flags.put(e.getKey(), e.getValue().asText());
            }
            ObjectNode end = Canonical.F.objectNode();
            end.put(BATCH_END, i++);
            try {
                String verb = req.path("verb").asText();
                if (verb.equals("batch")) {
                    throw new IllegalArgumentException("batch cannot nest");
                }
                run(verb);
                end.put("ok", true);
            } catch (Throwable t) {
                java.io.StringWriter sw = new java.io.StringWriter();
                t.printStackTrace(new PrintWriter(sw));
                end.put("ok", false);
                end.put("error", sw.toString());
            }
            out.println(end);
            out.flush();
        }
    }

    private static String paimonVersion() {
        Package p = CoreOptions.class.getPackage();
        String v = p == null ? null : p.getImplementationVersion();
        if (v == null) {
            // The bundle's manifest may lack it; the Maven properties file is the fallback.
            try (var in = CoreOptions.class.getResourceAsStream(
                    "/META-INF/maven/org.apache.paimon/paimon-bundle/pom.properties")) {
                if (in != null) {
                    var props = new java.util.Properties();
                    props.load(in);
                    v = props.getProperty("version");
                }
            } catch (IOException ignored) {
                // fall through
            }
        }
        return v == null ? "unknown" : v;
    }

    Catalog catalog(String warehouse) {
        Map<String, String> s3 = s3Options(warehouse);
        if (s3.isEmpty() && !flags.containsKey("catalog-options")) {
            return CatalogFactory.createCatalog(CatalogContext.create(new Path(warehouse)));
        }
        org.apache.paimon.options.Options o = new org.apache.paimon.options.Options();
        o.set("warehouse", warehouse);
        s3.forEach(o::set);
        if (flags.containsKey("catalog-options")) {
            try {
                Iterator<Map.Entry<String, JsonNode>> it =
                        Canonical.JSON.readTree(flags.get("catalog-options")).fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    o.set(e.getKey(), e.getValue().asText());
                }
            } catch (IOException e) {
                throw new IllegalArgumentException("--catalog-options: " + e.getMessage(), e);
            }
        }
        return CatalogFactory.createCatalog(CatalogContext.create(o));
    }

    /**
     * Catalog options of the paimon-s3 file IO for an s3:// warehouse, from the environment:
     * COMPACTD_S3_ENDPOINT (e.g. http://127.0.0.1:7070; path-style access is then switched on, as
     * S3-compatible servers need), COMPACTD_S3_ACCESS_KEY / COMPACTD_S3_SECRET_KEY (else
     * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) and COMPACTD_S3_REGION (else AWS_REGION). Empty
     * for other warehouses, or when nothing is set (S3A's own credential chain applies).
     */
    static Map<String, String> s3Options(String warehouse) {
        Map<String, String> o = new LinkedHashMap<>();
        String scheme = warehouse.contains("://") ? warehouse.substring(0, warehouse.indexOf("://")) : "";
        if (!scheme.equals("s3") && !scheme.equals("s3a")) {
            return o;
        }
        String endpoint = env("COMPACTD_S3_ENDPOINT", null);
        if (endpoint != null) {
            o.put("s3.endpoint", endpoint);
            o.put("s3.path.style.access", "true");
            if (endpoint.startsWith("http://")) {
                o.put("s3.connection.ssl.enabled", "false");
            }
        }
        String ak = env("COMPACTD_S3_ACCESS_KEY", "AWS_ACCESS_KEY_ID");
        String sk = env("COMPACTD_S3_SECRET_KEY", "AWS_SECRET_ACCESS_KEY");
        if (ak != null && sk != null) {
            o.put("s3.access-key", ak);
            o.put("s3.secret-key", sk);
        }
        String region = env("COMPACTD_S3_REGION", "AWS_REGION");
        if (region != null) {
            o.put("s3.endpoint.region", region);
        }
        return o;
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        if ((v == null || v.isEmpty()) && fallback != null) {
            v = System.getenv(fallback);
        }
        return v == null || v.isEmpty() ? null : v;
    }

    private Catalog catalog() {
        return catalog(flag("warehouse"));
    }

    /** The --options '{"k":"v"}' flag as a map (empty when absent). */
    private Map<String, String> dynamicOptions() throws IOException {
        Map<String, String> dyn = new HashMap<>();
        if (flags.containsKey("options")) {
            Iterator<Map.Entry<String, JsonNode>> it = Canonical.JSON.readTree(flag("options")).fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                dyn.put(e.getKey(), e.getValue().asText());
            }
        }
        return dyn;
    }

    private FileStoreTable table(Catalog c) throws Exception {
        return (FileStoreTable) c.getTable(Identifier.fromString(flag("table")));
    }

    // ---------------------------------------------------------------- create

    private void create() throws Exception {
        JsonNode spec = Canonical.JSON.readTree(new java.io.File(flag("spec")));
        Schema.Builder b = Schema.newBuilder();
        for (JsonNode col : spec.path("columns")) {
            DataType t = DataTypeJsonParser.parseAtomicTypeSQLString(col.get("type").asText());
            b.column(col.get("name").asText(), t);
        }
        List<String> pk = strings(spec.path("primaryKeys"));
        if (!pk.isEmpty()) {
            b.primaryKey(pk);
        }
        List<String> parts = strings(spec.path("partitionKeys"));
        if (!parts.isEmpty()) {
            b.partitionKeys(parts);
        }
        if (spec.has("bucket")) {
            b.option("bucket", spec.get("bucket").asText());
        }
        Iterator<Map.Entry<String, JsonNode>> it = spec.path("options").fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            b.option(e.getKey(), e.getValue().asText());
        }
        Identifier id = Identifier.fromString(flag("table"));
        try (Catalog c = catalog()) {
            c.createDatabase(id.getDatabaseName(), true);
            c.createTable(id, b.build(), false);
        }
    }

    private static List<String> strings(JsonNode arr) {
        List<String> out = new ArrayList<>();
        for (JsonNode n : arr) {
            out.add(n.asText());
        }
        return out;
    }

    // ---------------------------------------------------------------- write

    /** One commit user's open writer. */
    private static final class UserWriter {
        final StreamTableWrite write;
        final StreamTableCommit commit;
        final String user;
        boolean dirty;
        // Dynamic-bucket (bucket=-1, HASH_DYNAMIC) tables: rows carry no bucket, the writer
        // assigns one from the table's HASH index as Flink's HashBucketAssignerOperator does
        // with a single assigner (numChannels = numAssigners = 1); null for other tables.
        final org.apache.paimon.index.BucketAssigner assigner;
        final org.apache.paimon.table.sink.RowPartitionKeyExtractor extractor;

        UserWriter(String user, FileStoreTable table, StreamWriteBuilder b, org.apache.paimon.disk.IOManager io) {
            this.user = user;
            org.apache.paimon.table.BucketMode mode = table.bucketMode();
            if (mode == org.apache.paimon.table.BucketMode.KEY_DYNAMIC) {
                throw new IllegalArgumentException("write: cross-partition-update tables (KEY_DYNAMIC) need Flink's "
                        + "global index assigner, which the harness does not run");
            }
            if (mode == org.apache.paimon.table.BucketMode.HASH_DYNAMIC) {
                CoreOptions o = table.coreOptions();
                this.assigner = new org.apache.paimon.index.HashBucketAssigner(
                        table.snapshotManager(), user, table.store().newIndexFileHandler(),
                        1, 1, 0, o.dynamicBucketTargetRowNum(), o.dynamicBucketMaxBuckets());
                this.extractor = new org.apache.paimon.table.sink.RowPartitionKeyExtractor(table.schema());
            } else {
                this.assigner = null;
                this.extractor = null;
            }
            // A writer that compacts (write-only=false) on a lookup table (deletion vectors,
            // first-row, changelog-producer=lookup) looks keys up in higher levels and spills
            // to the IOManager's temp dir; without one it fails at its first compaction.
            this.write = (StreamTableWrite) b.newWrite().withIOManager(io);
            this.commit = b.newCommit();
            // A commit whose rows were all filtered (e.g. ignore-delete) adds no snapshot.
            ((org.apache.paimon.table.sink.InnerTableCommit) commit).ignoreEmptyCommit(true);
        }
    }

    private void write() throws Exception {
        String defaultUser = flags.getOrDefault("commit-user", DEFAULT_USER);
        // --wait-compaction true: each commit waits for the compaction its writer started, so
        // what a compacting writer (write-only=false) leaves is deterministic.
        boolean waitCompaction = Boolean.parseBoolean(flags.getOrDefault("wait-compaction", "false"));
        // Loops (concurrent writers in tests): --repeat N passes over the rows file and/or
        // --duration-ms D (passes until D has elapsed; at least one pass), whichever ends first.
        // The writers stay open across passes, as a streaming job's do; every pass ends with a
        // commit of every dirty user. --report-commits true prints {"user":U,"identifier":I}
        // after each commit (flushed), so a caller knows every commit even if the verb fails.
        int repeat = Integer.parseInt(flags.getOrDefault("repeat", flags.containsKey("duration-ms") ? "0" : "1"));
        long durationMs = Long.parseLong(flags.getOrDefault("duration-ms", "0"));
        long deadline = System.currentTimeMillis() + durationMs;
        reportCommits = Boolean.parseBoolean(flags.getOrDefault("report-commits", "false"));
        try (Catalog c = catalog();
                org.apache.paimon.disk.IOManager io = org.apache.paimon.disk.IOManager.create(
                        flags.getOrDefault("tmp-dir", System.getProperty("java.io.tmpdir")))) {
            // --options '{"k":"v"}': dynamic options for these writers only (e.g. write-only=false).
            FileStoreTable table = table(c).copy(dynamicOptions());
            RowType rowType = table.rowType();
            Map<String, UserWriter> writers = new LinkedHashMap<>();
            Snapshot latest = table.snapshotManager().latestSnapshot();
            long[] identifier = {latest == null ? 1 : latest.id() + 1};
            String prevGroup = null;
            String prevUser = null;
            int commits = 0;
            for (int pass = 1; ; pass++) {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(
                        Files.newInputStream(java.nio.file.Path.of(flag("rows"))), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        if (line.isBlank()) {
                            continue;
                        }
                        JsonNode n = Canonical.JSON.readTree(line);
                        if (n.path("commit").asBoolean(false) && !n.has("_kind")) {
                            // Explicit commit marker: commits the named user, or everyone.
                            String u = n.has("user") ? n.get("user").asText() : null;
                            for (Map.Entry<String, UserWriter> e : writers.entrySet()) {
                                if (u == null || u.equals(e.getKey())) {
                                    commits += commitUser(e.getValue(), identifier, waitCompaction);
                                }
                            }
                            prevGroup = null;
                            continue;
                        }
                        String user = n.has("_user") ? n.get("_user").asText() : defaultUser;
                        String group = user + "\u0000" + n.path("_commit").asText("");
                        if (prevGroup != null && !prevGroup.equals(group) && n.has("_commit")) {
                            commits += commitUser(writers.get(prevUser), identifier, waitCompaction);
                        }
                        prevGroup = group;
                        prevUser = user;
                        UserWriter w = writers.computeIfAbsent(
                                user, u -> new UserWriter(u, table, table.newStreamWriteBuilder().withCommitUser(u), io));
                        RowKind kind = RowKind.fromShortString(n.path("_kind").asText("+I"));
                        InternalRow row = Canonical.rowFromJson(rowType, n, kind);
                        if (w.assigner == null) {
                            w.write.write(row);
                        } else {
                            w.write.write(row, w.assigner.assign(
                                    w.extractor.partition(row), w.extractor.trimmedPrimaryKey(row).hashCode()));
                        }
                        w.dirty = true;
                    }
                }
                for (UserWriter w : writers.values()) {
                    commits += commitUser(w, identifier, waitCompaction);
                }
                boolean more = (repeat <= 0 || pass < repeat)
                        && (durationMs <= 0 ? repeat > 0 : System.currentTimeMillis() < deadline);
                if (!more) {
                    break;
                }
                prevGroup = null;
            }
            for (UserWriter w : writers.values()) {
                w.write.close();
                w.commit.close();
            }
            ObjectNode res = Canonical.F.objectNode();
            res.put("commits", commits);
            out.println(res);
        }
    }

    private boolean reportCommits;

    private int commitUser(UserWriter w, long[] identifier, boolean waitCompaction) throws Exception {
        if (w == null || !w.dirty) {
            return 0;
        }
        long id = identifier[0]++;
        if (w.assigner != null) {
            w.assigner.prepareCommit(id);
        }
        List<CommitMessage> msgs = w.write.prepareCommit(waitCompaction, id);
        w.commit.commit(id, msgs);
        w.dirty = false;
        if (reportCommits) {
            ObjectNode c = Canonical.F.objectNode();
            c.put("user", w.user);
            c.put("identifier", id);
            out.println(c);
            out.flush();
        }
        return 1;
    }

    // ---------------------------------------------------------------- read

    private void read() throws Exception {
        try (Catalog c = catalog()) {
            FileStoreTable table = table(c);
            Map<String, String> dyn = new HashMap<>();
            if (flags.containsKey("snapshot")) {
                dyn.put("scan.snapshot-id", flag("snapshot"));
            }
            if (flags.containsKey("tag")) {
                dyn.put("scan.tag-name", flag("tag"));
            }
            Table t = dyn.isEmpty() ? table : table.copy(dyn);
            // --ignore-deletion-vectors true: the same splits with their deletion files taken
            // away, to show what the deletion vectors hide (the rows a reader that did not
            // apply them would return).
            boolean ignoreDV = Boolean.parseBoolean(flags.getOrDefault("ignore-deletion-vectors", "false"));
            // --with-bucket true: every row also carries "_bucket", the bucket of the split it was
            // read from (where Java placed the key).
            boolean withBucket = Boolean.parseBoolean(flags.getOrDefault("with-bucket", "false"));
            if (ignoreDV && withBucket) {
                throw new IllegalArgumentException("--with-bucket and --ignore-deletion-vectors do not combine");
            }
            List<ObjectNode> rows = ignoreDV ? readWithoutDeletionVectors(t) : withBucket ? readWithBucket(t) : readAll(t);
            List<String> sortKeys = table.primaryKeys().isEmpty()
                    ? fieldNames(table.rowType())
                    : table.primaryKeys();
            rows.sort(rowComparator(sortKeys));
            for (ObjectNode r : rows) {
                out.println(Canonical.JSON.writeValueAsString(r));
            }
        }
    }

    // ---------------------------------------------------------------- changelog

    /**
     * The changelog Java's incremental batch read returns between --from (exclusive) and --to
     * (inclusive): options incremental-between='s-1,s' with incremental-between-scan-mode=changelog
     * (IncrementalDeltaStartingScanner in CHANGELOG mode: the ADD entries of each snapshot's
     * changelog manifest list, OVERWRITE snapshots skipped; read by the no-merge reader of
     * streaming splits, so every row keeps its RowKind). With --per-snapshot true (the default)
     * each snapshot of the range is read on its own and its rows carry "_snapshot": the union is
     * what one 'from,to' read returns (that scanner only concatenates the snapshots' entries), but
     * the rows of one snapshot stay together. --per-snapshot false is that single read
     * ("_snapshot" is then --to). Every row also has "_kind" (+I/-U/+U/-D) and "_bucket". Splits
     * are printed sorted by (partition, bucket); inside a split rows keep Java's read order
     * (a changelog file is written in key order, -U before +U of a key).
     */
    private void changelog() throws Exception {
        long from = Long.parseLong(flag("from"));
        long to = Long.parseLong(flag("to"));
        boolean perSnapshot = Boolean.parseBoolean(flags.getOrDefault("per-snapshot", "true"));
        try (Catalog c = catalog()) {
            FileStoreTable table = table(c);
            if (perSnapshot) {
                for (long s = from + 1; s <= to; s++) {
                    changelogBetween(table, s - 1, s);
                }
            } else {
                changelogBetween(table, from, to);
            }
        }
    }

    private void changelogBetween(FileStoreTable table, long from, long to) throws Exception {
        Map<String, String> dyn = new HashMap<>();
        dyn.put("incremental-between", from + "," + to);
        dyn.put("incremental-between-scan-mode", "changelog");
        FileStoreTable t = table.copy(dyn);
        ReadBuilder rb = t.newReadBuilder();
        List<DataSplit> splits = new ArrayList<>();
        for (Split s : rb.newScan().plan().splits()) {
            splits.add((DataSplit) s);
        }
        RowType partType = t.schema().logicalPartitionType();
        splits.sort(Comparator.comparing((DataSplit ds) -> partitionString(partType, ds.partition()))
                .thenComparingInt(DataSplit::bucket));
        for (DataSplit ds : splits) {
            printRowsWithKind(rb, ds, to);
        }
    }

    /** Prints a split's rows with "_kind", "_snapshot" and "_bucket". */
    private void printRowsWithKind(ReadBuilder rb, DataSplit ds, long snapshot) throws Exception {
        ObjectNode extra = Canonical.F.objectNode();
        extra.put("_snapshot", snapshot);
        emitRowsWithKind(out, rb, ds, extra);
    }

    /**
     * Prints every row of a split in read order as canonical JSON plus "_kind" (the row's
     * RowKind: +I, -U, +U, -D), "_bucket" and the given extra fields.
     */
    static void emitRowsWithKind(PrintWriter out, ReadBuilder rb, DataSplit ds, ObjectNode extra) throws Exception {
        RowType rt = rb.readType();
        try (RecordReader<InternalRow> r = rb.newRead().createReader(ds)) {
            r.forEachRemaining(row -> {
                ObjectNode o = Canonical.rowToJson(rt, row);
                o.put("_kind", row.getRowKind().shortString());
                o.put("_bucket", ds.bucket());
                o.setAll(extra);
                try {
                    out.println(Canonical.JSON.writeValueAsString(o));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
        }
    }

    private static List<String> fieldNames(RowType t) {
        List<String> names = new ArrayList<>();
        for (DataField f : t.getFields()) {
            names.add(f.name());
        }
        return names;
    }

    private static List<ObjectNode> readAll(Table t) throws Exception {
        ReadBuilder rb = t.newReadBuilder();
        List<Split> splits = rb.newScan().plan().splits();
        RowType rt = t.rowType();
        List<ObjectNode> rows = new ArrayList<>();
        try (RecordReader<InternalRow> r = rb.newRead().createReader(splits)) {
            r.forEachRemaining(row -> rows.add(Canonical.rowToJson(rt, row)));
        }
        return rows;
    }

    /** Every row of the table's batch read, split by split, with "_bucket" (the split's bucket). */
    private static List<ObjectNode> readWithBucket(Table t) throws Exception {
        ReadBuilder rb = t.newReadBuilder();
        RowType rt = t.rowType();
        List<ObjectNode> rows = new ArrayList<>();
        for (Split s : rb.newScan().plan().splits()) {
            int bucket = ((DataSplit) s).bucket();
            try (RecordReader<InternalRow> r = rb.newRead().createReader(s)) {
                r.forEachRemaining(row -> {
                    ObjectNode o = Canonical.rowToJson(rt, row);
                    o.put("_bucket", bucket);
                    rows.add(o);
                });
            }
        }
        return rows;
    }

    // ---------------------------------------------------------------- alter

    /**
     * Sets (--set '{"k":"v"}') and removes (--remove '["k"]') table options through the catalog's
     * alterTable, as ALTER TABLE ... SET / RESET does: a new schema file. Prints {"schema":id}.
     */
    private void alter() throws Exception {
        List<org.apache.paimon.schema.SchemaChange> changes = new ArrayList<>();
        if (flags.containsKey("set")) {
            Iterator<Map.Entry<String, JsonNode>> it = Canonical.JSON.readTree(flag("set")).fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                changes.add(org.apache.paimon.schema.SchemaChange.setOption(e.getKey(), e.getValue().asText()));
            }
        }
        if (flags.containsKey("remove")) {
            for (JsonNode k : Canonical.JSON.readTree(flag("remove"))) {
                changes.add(org.apache.paimon.schema.SchemaChange.removeOption(k.asText()));
            }
        }
        if (changes.isEmpty()) {
            throw new IllegalArgumentException("alter needs --set or --remove");
        }
        try (Catalog c = catalog()) {
            Identifier id = Identifier.fromString(flag("table"));
            c.alterTable(id, changes, false);
            ObjectNode res = Canonical.F.objectNode();
            res.put("schema", table(c).schema().id());
            out.println(res);
        }
    }

    // ---------------------------------------------------------------- bucket-of

    /**
     * For each row of --rows (canonical JSON, all columns of --table), the bucket Java's fixed-bucket
     * writer gives it: FixedBucketRowKeyExtractor on the table's schema copied with bucket = N, for
     * each N of --buckets (comma-separated; default the table's own bucket option), with the
     * table's bucket-key, trimmed primary key and bucket-function.type. Prints per row, in input
     * order, {"buckets":[b per N],"hash":h,"key":"hex"}: h is BinaryRow.hashCode of the bucket key
     * (the code-generated projection of the bucket-key columns, as the extractor builds it) and
     * key its serialized bytes (SerializationUtils.serializeBinaryRow: arity prefix + row).
     */
    private void bucketOf() throws Exception {
        try (Catalog c = catalog()) {
            FileStoreTable table = table(c);
            org.apache.paimon.schema.TableSchema schema = table.schema();
            List<Integer> counts = new ArrayList<>();
            if (flags.containsKey("buckets")) {
                for (String n : flag("buckets").split(",")) {
                    counts.add(Integer.parseInt(n.trim()));
                }
            } else {
                counts.add(table.coreOptions().bucket());
            }
            List<org.apache.paimon.table.sink.FixedBucketRowKeyExtractor> extractors = new ArrayList<>();
            for (int n : counts) {
                Map<String, String> o = new HashMap<>(schema.options());
                o.put("bucket", String.valueOf(n));
                extractors.add(new org.apache.paimon.table.sink.FixedBucketRowKeyExtractor(schema.copy(o)));
            }
            org.apache.paimon.codegen.Projection keyProjection = org.apache.paimon.codegen.CodeGenUtils.newProjection(
                    schema.logicalRowType(), schema.projection(schema.bucketKeys()));
            RowType rowType = table.rowType();
            try (BufferedReader r = Files.newBufferedReader(java.nio.file.Path.of(flag("rows")), StandardCharsets.UTF_8)) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.isBlank()) {
                        continue;
                    }
                    InternalRow row = Canonical.rowFromJson(rowType, Canonical.JSON.readTree(line), RowKind.INSERT);
                    ObjectNode o = Canonical.F.objectNode();
                    ArrayNode bs = o.putArray("buckets");
                    for (org.apache.paimon.table.sink.FixedBucketRowKeyExtractor e : extractors) {
                        e.setRecord(row);
                        bs.add(e.bucket());
                    }
                    BinaryRow key = keyProjection.apply(row);
                    o.put("hash", key.hashCode());
                    StringBuilder hex = new StringBuilder();
                    for (byte b : org.apache.paimon.utils.SerializationUtils.serializeBinaryRow(key)) {
                        hex.append(String.format("%02x", b));
                    }
                    o.put("key", hex.toString());
                    out.println(Canonical.JSON.writeValueAsString(o));
                }
            }
        }
    }

    private static List<ObjectNode> readWithoutDeletionVectors(Table t) throws Exception {
        ReadBuilder rb = t.newReadBuilder();
        List<Split> splits = new ArrayList<>();
        for (Split s : rb.newScan().plan().splits()) {
            DataSplit ds = (DataSplit) s;
            splits.add(DataSplit.builder()
                    .withSnapshot(ds.snapshotId())
                    .withPartition(ds.partition())
                    .withBucket(ds.bucket())
                    .withBucketPath(ds.bucketPath())
                    .withTotalBuckets(ds.totalBuckets())
                    .withDataFiles(ds.dataFiles())
                    .isStreaming(ds.isStreaming())
                    .rawConvertible(ds.rawConvertible())
                    .build());
        }
        RowType rt = t.rowType();
        List<ObjectNode> rows = new ArrayList<>();
        try (RecordReader<InternalRow> r = rb.newRead().createReader(splits)) {
            r.forEachRemaining(row -> rows.add(Canonical.rowToJson(rt, row)));
        }
        return rows;
    }

    // ---------------------------------------------------------------- dvs

    /**
     * One line per data file of the latest snapshot (or --snapshot N), level 0 included, in the
     * snapshot reader's order: {"partition","bucket","file","level","record_count",
     * "dv_cardinality"} where dv_cardinality is the number of positions of the file's deletion
     * vector as Java reads it back from the index file (DeletionVector.read; null: no vector),
     * and "dv_meta_cardinality" what the index manifest records for it.
     */
    private void dvs() throws Exception {
        try (Catalog c = catalog()) {
            FileStoreTable table = table(c);
            RowType partType = table.schema().logicalPartitionType();
            org.apache.paimon.table.source.snapshot.SnapshotReader reader = table.newSnapshotReader();
            if (flags.containsKey("snapshot")) {
                reader = reader.withSnapshot(Long.parseLong(flag("snapshot")));
            }
            List<ObjectNode> lines = new ArrayList<>();
            for (Split s : reader.read().splits()) {
                DataSplit ds = (DataSplit) s;
                List<org.apache.paimon.table.source.DeletionFile> dfs = ds.deletionFiles().orElse(null);
                for (int i = 0; i < ds.dataFiles().size(); i++) {
                    DataFileMeta f = ds.dataFiles().get(i);
                    org.apache.paimon.table.source.DeletionFile df = dfs == null ? null : dfs.get(i);
                    ObjectNode o = Canonical.F.objectNode();
                    o.put("partition", partitionString(partType, ds.partition()));
                    o.put("bucket", ds.bucket());
                    o.put("file", f.fileName());
                    o.put("level", f.level());
                    o.put("record_count", f.rowCount());
                    if (df == null) {
                        o.putNull("dv_cardinality");
                        o.putNull("dv_meta_cardinality");
                    } else {
                        o.put("dv_cardinality",
                                org.apache.paimon.deletionvectors.DeletionVector.read(table.fileIO(), df)
                                        .getCardinality());
                        if (df.cardinality() == null) {
                            o.putNull("dv_meta_cardinality");
                        } else {
                            o.put("dv_meta_cardinality", df.cardinality());
                        }
                    }
                    lines.add(o);
                }
            }
            lines.sort(Comparator.comparing((ObjectNode o) -> o.get("partition").asText())
                    .thenComparingInt(o -> o.get("bucket").asInt())
                    .thenComparingInt(o -> o.get("level").asInt())
                    .thenComparing(o -> o.get("file").asText()));
            for (ObjectNode o : lines) {
                out.println(Canonical.JSON.writeValueAsString(o));
            }
        }
    }

    /** Orders rows by the given columns' canonical values: null first, numbers numerically, text by code unit. */
    static Comparator<ObjectNode> rowComparator(List<String> keys) {
        return (a, b) -> {
            for (String k : keys) {
                int c = compareJson(a.get(k), b.get(k));
                if (c != 0) {
                    return c;
                }
            }
            return 0;
        };
    }

    static int compareJson(JsonNode a, JsonNode b) {
        boolean an = a == null || a.isNull();
        boolean bn = b == null || b.isNull();
        if (an || bn) {
            return Boolean.compare(!an, !bn);
        }
        if (a.isNumber() && b.isNumber()) {
            if (a.isIntegralNumber() && b.isIntegralNumber()) {
                return Long.compare(a.asLong(), b.asLong());
            }
            return Double.compare(a.asDouble(), b.asDouble());
        }
        if (a.isBoolean() && b.isBoolean()) {
            return Boolean.compare(a.asBoolean(), b.asBoolean());
        }
        return a.toString().compareTo(b.toString());
    }

    private void systemTable(String name) throws Exception {
        try (Catalog c = catalog()) {
            Identifier id = Identifier.fromString(flag("table"));
            Table t = c.getTable(new Identifier(id.getDatabaseName(), id.getObjectName() + "$" + name));
            for (ObjectNode r : readAll(t)) {
                out.println(Canonical.JSON.writeValueAsString(r));
            }
        }
    }

    // ---------------------------------------------------------------- compact

    private void compact() throws Exception {
        try (Catalog c = catalog()) {
            // A write-only table never compacts through its writer; lift that for this writer only.
            Map<String, String> dyn = new HashMap<>();
            dyn.put("write-only", "false");
            // --options '{"k":"v"}': dynamic options for this compaction only (e.g. trigger, ratio).
            dyn.putAll(dynamicOptions());
            FileStoreTable table = table(c).copy(dyn);
            RowType partType = table.schema().logicalPartitionType();
            String wantPartition = flags.get("partition");
            Integer wantBucket = flags.containsKey("bucket") ? Integer.parseInt(flag("bucket")) : null;

            TreeSet<String> seen = new TreeSet<>();
            List<DataSplit> targets = new ArrayList<>();
            // The snapshot reader, not a batch scan: batch scans of first-row (and deletion-vector)
            // tables skip level 0, which is exactly what needs compacting.
            for (Split s : table.newSnapshotReader().read().splits()) {
                DataSplit ds = (DataSplit) s;
                String p = partitionString(partType, ds.partition());
                if (wantPartition != null && !wantPartition.equals(p)) {
                    continue;
                }
                if (wantBucket != null && wantBucket != ds.bucket()) {
                    continue;
                }
                if (seen.add(p + "\u0000" + ds.bucket())) {
                    targets.add(ds);
                }
            }
            String user = flags.getOrDefault("commit-user", "interop-compact");
            StreamWriteBuilder b = table.newStreamWriteBuilder().withCommitUser(user);
            Snapshot latest = table.snapshotManager().latestSnapshot();
            long id = latest == null ? 1 : latest.id() + 1;
            int units = 0;
            // Lookup-based engines (first-row, changelog-producer=lookup) spill to a temp disk.
            try (org.apache.paimon.disk.IOManager io =
                            org.apache.paimon.disk.IOManager.create(System.getProperty("java.io.tmpdir"));
                    StreamTableWrite w = (StreamTableWrite) b.newWrite().withIOManager(io);
                    StreamTableCommit commit = b.newCommit()) {
                // A streaming commit records even an empty APPEND snapshot by default; only the
                // COMPACT snapshot is wanted here.
                ((org.apache.paimon.table.sink.InnerTableCommit) commit).ignoreEmptyCommit(true);
                TableWriteImpl<?> impl = (TableWriteImpl<?>) w;
                // --full false asks for Paimon's normal (universal) pick instead of a full compaction.
                boolean full = Boolean.parseBoolean(flags.getOrDefault("full", "true"));
                for (DataSplit ds : targets) {
                    impl.compact(ds.partition(), ds.bucket(), full);
                    units++;
                }
                List<CommitMessage> msgs = w.prepareCommit(true, id);
                commit.commit(id, msgs);
            }
            ObjectNode res = Canonical.F.objectNode();
            res.put("buckets", units);
            Snapshot after = table.snapshotManager().latestSnapshot();
            res.put("snapshot", after == null ? 0 : after.id());
            out.println(res);
        }
    }

    /** "k1=v1/k2=v2" with the canonical JSON text of each value (strings unquoted). */
    static String partitionString(RowType partType, BinaryRow partition) {
        if (partType.getFieldCount() == 0) {
            return "";
        }
        ObjectNode o = Canonical.rowToJson(partType, partition);
        StringBuilder sb = new StringBuilder();
        for (DataField f : partType.getFields()) {
            if (sb.length() > 0) {
                sb.append('/');
            }
            JsonNode v = o.get(f.name());
            sb.append(f.name()).append('=').append(v.isTextual() ? v.asText() : v.toString());
        }
        return sb.toString();
    }

    // ---------------------------------------------------------------- pick

    /**
     * For each stdin line {"numLevels":n,"options":{...},"runs":[{"level":l,"size":s},...]} print
     * Paimon's own pick, post-processed exactly as MergeTreeCompactManager.triggerCompaction does
     * (drop no-op units, compute dropDelete).
     */
    private void pick() throws Exception {
        BufferedReader r = flags.containsKey("input")
                ? Files.newBufferedReader(java.nio.file.Path.of(flag("input")), StandardCharsets.UTF_8)
                : new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = r.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode n = Canonical.JSON.readTree(line);
            Map<String, String> opts = new HashMap<>();
            Iterator<Map.Entry<String, JsonNode>> it = n.path("options").fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                opts.put(e.getKey(), e.getValue().asText());
            }
            CoreOptions options = new CoreOptions(opts);
            int numLevels = n.has("numLevels") ? n.get("numLevels").asInt() : options.numLevels();
            List<LevelSortedRun> runs = new ArrayList<>();
            Map<String, Integer> indexOf = new HashMap<>();
            int i = 0;
            for (JsonNode run : n.path("runs")) {
                String name = "run-" + i;
                DataFileMeta f = fakeFile(name, run.get("size").asLong(), run.get("level").asInt(), i);
                runs.add(new LevelSortedRun(run.get("level").asInt(), SortedRun.fromSingle(f)));
                indexOf.put(name, i);
                i++;
            }
            CompactStrategy strategy = strategyFor(options);
            java.util.Optional<CompactUnit> unit = strategy.pick(numLevels, runs)
                    .filter(u -> !u.files().isEmpty())
                    .filter(u -> u.files().size() > 1 || u.files().get(0).level() != u.outputLevel());
            ObjectNode res = Canonical.F.objectNode();
            if (unit.isEmpty()) {
                res.putNull("pick");
            } else {
                CompactUnit u = unit.get();
                int highest = -1;
                for (LevelSortedRun run : runs) {
                    highest = Math.max(highest, run.level());
                }
                boolean dv = options.deletionVectorsEnabled();
                boolean dropDelete = u.outputLevel() != 0 && (u.outputLevel() >= highest || dv);
                res.put("outputLevel", u.outputLevel());
                ArrayNode idx = res.putArray("runs");
                TreeSet<Integer> picked = new TreeSet<>();
                for (DataFileMeta f : u.files()) {
                    picked.add(indexOf.get(f.fileName()));
                }
                picked.forEach(idx::add);
                res.put("dropDelete", dropDelete);
            }
            out.println(Canonical.JSON.writeValueAsString(res));
        }
    }

    private static DataFileMeta fakeFile(String name, long size, int level, int ordinal) {
        // Sequence numbers only matter for run ordering, which the input already fixes.
        long seq = 1_000_000L - ordinal;
        return DataFileMeta.create(
                name,
                size,
                1,
                DataFileMeta.EMPTY_MIN_KEY,
                DataFileMeta.EMPTY_MAX_KEY,
                SimpleStats.EMPTY_STATS,
                SimpleStats.EMPTY_STATS,
                seq,
                seq,
                0,
                level,
                0L,
                null,
                FileSource.APPEND,
                null,
                null,
                null);
    }

    /**
     * Mirrors MergeTreeCompactManagerFactory.createCompactStrategy. The constructor's fourth
     * argument is EarlyFullCompaction in 1.4 and FullCompactTrigger in 1.3; both have a static
     * create(CoreOptions), so reflection keeps one source for both profiles.
     */
    static CompactStrategy strategyFor(CoreOptions options) throws Exception {
        Constructor<?> ctor = null;
        for (Constructor<?> k : UniversalCompaction.class.getConstructors()) {
            if (k.getParameterCount() == 5) {
                ctor = k;
            }
        }
        if (ctor == null) {
            throw new IllegalStateException("no 5-argument UniversalCompaction constructor");
        }
        Method early = ctor.getParameterTypes()[3].getMethod("create", CoreOptions.class);
        UniversalCompaction universal = (UniversalCompaction) ctor.newInstance(
                options.maxSizeAmplificationPercent(),
                options.sortedRunSizeRatio(),
                options.numSortedRunCompactionTrigger(),
                early.invoke(null, options),
                OffPeakHours.create(options));
        if (options.needLookup()) {
            Integer interval = null;
            if (options.lookupCompact() == CoreOptions.LookupCompactMode.GENTLE) {
                interval = options.lookupCompactMaxInterval();
            }
            return new ForceUpLevel0Compaction(universal, interval);
        }
        if (options.compactionForceUpLevel0()) {
            return new ForceUpLevel0Compaction(universal, null);
        }
        return universal;
    }

    // ---------------------------------------------------------------- tag

    /** Creates tag --name from --snapshot (default: the latest snapshot). */
    private void tag() throws Exception {
        try (Catalog c = catalog()) {
            FileStoreTable table = table(c);
            String name = flag("name");
            if (flags.containsKey("snapshot")) {
                table.createTag(name, Long.parseLong(flag("snapshot")));
            } else {
                table.createTag(name);
            }
            ObjectNode res = Canonical.F.objectNode();
            res.put("tag", name);
            out.println(res);
        }
    }

    // ---------------------------------------------------------------- expire / orphans

    /**
     * Snapshot expiration has no dry-run API: run it on a copy of the table directory and print the
     * table-relative paths that disappeared (sorted). Flags: --retain-min, --retain-max,
     * --time-retained-ms (defaults: the table's own options).
     */
    private void expire() throws Exception {
        java.nio.file.Path tmp = Files.createTempDirectory("compactd-expire");
        try {
            Identifier id = Identifier.fromString(flag("table"));
            java.nio.file.Path src = tablePath(flag("warehouse"), id);
            java.nio.file.Path dst = tablePath(tmp.toString(), id);
            copyTree(src, dst);
            TreeSet<String> before = listFiles(dst);
            try (Catalog c = catalog(tmp.toString())) {
                FileStoreTable table = (FileStoreTable) c.getTable(id);
                Map<String, String> dyn = new HashMap<>();
                if (flags.containsKey("retain-min")) {
                    dyn.put("snapshot.num-retained.min", flag("retain-min"));
                }
                if (flags.containsKey("retain-max")) {
                    dyn.put("snapshot.num-retained.max", flag("retain-max"));
                }
                if (flags.containsKey("time-retained-ms")) {
                    dyn.put("snapshot.time-retained", flag("time-retained-ms") + " ms");
                }
                dyn.putAll(dynamicOptions());
                FileStoreTable t = table.copy(dyn);
                int n = t.newExpireSnapshots().config(t.coreOptions().expireConfig()).expire();
                // As the committer does (AbstractFileStoreTable.newExpireRunnable): changelog
                // expiry after snapshot expiry when the changelog outlives the snapshots.
                if (t.coreOptions().changelogLifecycleDecoupled()) {
                    t.newExpireChangelog().config(t.coreOptions().expireConfig()).expire();
                }
                TreeSet<String> after = listFiles(dst);
                TreeSet<String> created = new TreeSet<>(after);
                created.removeAll(before);
                before.removeAll(after);
                ObjectNode head = Canonical.F.objectNode();
                head.put("expired", n);
                System.err.println(head);
                for (String p : before) {
                    ObjectNode o = Canonical.F.objectNode();
                    o.put("path", p);
                    out.println(o);
                }
                // --report-created true: also the files expiry wrote (long-lived changelogs, hints)
                // and every hint file, with their contents.
                if (Boolean.parseBoolean(flags.getOrDefault("report-created", "false"))) {
                    for (String p : after) {
                        boolean hint = p.endsWith("/EARLIEST") || p.endsWith("/LATEST");
                        if (!created.contains(p) && !hint) {
                            continue;
                        }
                        ObjectNode o = Canonical.F.objectNode();
                        o.put(created.contains(p) ? "created" : "hint", p);
                        o.put("content", Files.readString(dst.resolve(p)));
                        out.println(o);
                    }
                }
            }
        } finally {
            deleteTree(tmp);
        }
    }

    /**
     * A streaming read from --from (a snapshot or long-lived changelog id) until it has caught up
     * with the latest snapshot: for each plan, its rows sorted, with "_plan" (the plan's index) and
     * "_kind" (the row kind). Checks that snapshot expiry kept what a changelog reader needs.
     * --options are dynamic table options.
     */
    private void expireStream() throws Exception {
        try (Catalog c = catalog()) {
            FileStoreTable table = table(c);
            Map<String, String> dyn = dynamicOptions();
            dyn.put("scan.mode", "from-snapshot");
            dyn.put("scan.snapshot-id", flag("from"));
            FileStoreTable t = table.copy(dyn);
            Long latest = t.snapshotManager().latestSnapshotId();
            ReadBuilder rb = t.newReadBuilder();
            org.apache.paimon.table.source.StreamTableScan scan = rb.newStreamScan();
            RowType rt = t.rowType();
            List<String> sortKeys = table.primaryKeys().isEmpty() ? fieldNames(rt) : table.primaryKeys();
            for (int i = 0; i < 10_000; i++) {
                List<Split> splits = scan.plan().splits();
                List<ObjectNode> rows = new ArrayList<>();
                if (!splits.isEmpty()) {
                    try (RecordReader<InternalRow> r = rb.newRead().createReader(splits)) {
                        r.forEachRemaining(row -> {
                            ObjectNode o = Canonical.rowToJson(rt, row);
                            o.put("_kind", row.getRowKind().shortString());
                            rows.add(o);
                        });
                    }
                }
                rows.sort(rowComparator(sortKeys).thenComparing((ObjectNode o) -> o.path("_kind").asText()));
                for (ObjectNode o : rows) {
                    o.put("_plan", i);
                    out.println(Canonical.JSON.writeValueAsString(o));
                }
                Long next = scan.checkpoint();
                if (splits.isEmpty() && (latest == null || next == null || next > latest)) {
                    return;
                }
            }
            throw new IllegalStateException("stream did not catch up in 10000 plans");
        }
    }

    /** Paimon's LocalOrphanFilesClean in dry-run mode; prints table-relative paths (sorted). */
    private void orphans() throws Exception {
        long olderThan = flags.containsKey("older-than-ms")
                ? Long.parseLong(flag("older-than-ms"))
                : Long.MAX_VALUE;
        try (Catalog c = catalog()) {
            FileStoreTable table = table(c);
            LocalOrphanFilesClean clean = new LocalOrphanFilesClean(table, olderThan, true);
            List<Path> deleted = clean.clean().getDeletedFilesPath();
            String root = table.location().toUri().getPath();
            List<String> rel = new ArrayList<>();
            for (Path p : deleted == null ? Collections.<Path>emptyList() : deleted) {
                String s = p.toUri().getPath();
                rel.add(s.startsWith(root) ? s.substring(root.length()).replaceFirst("^/", "") : s);
            }
            Collections.sort(rel);
            for (String p : rel) {
                ObjectNode o = Canonical.F.objectNode();
                o.put("path", p);
                out.println(o);
            }
        }
    }

    private static java.nio.file.Path tablePath(String warehouse, Identifier id) {
        String w = warehouse.startsWith("file:") ? java.net.URI.create(warehouse).getPath() : warehouse;
        return java.nio.file.Path.of(w, id.getDatabaseName() + ".db", id.getObjectName());
    }

    private static void copyTree(java.nio.file.Path src, java.nio.file.Path dst) throws IOException {
        try (Stream<java.nio.file.Path> s = Files.walk(src)) {
            for (java.nio.file.Path p : (Iterable<java.nio.file.Path>) s::iterator) {
                java.nio.file.Path q = dst.resolve(src.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(q);
                } else {
                    Files.copy(p, q, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    private static TreeSet<String> listFiles(java.nio.file.Path root) throws IOException {
        TreeSet<String> out = new TreeSet<>();
        try (Stream<java.nio.file.Path> s = Files.walk(root)) {
            s.filter(Files::isRegularFile).forEach(p -> out.add(root.relativize(p).toString()));
        }
        return out;
    }

    private static void deleteTree(java.nio.file.Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(java.nio.file.Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(java.nio.file.Path dir, IOException exc) throws IOException {
                Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
