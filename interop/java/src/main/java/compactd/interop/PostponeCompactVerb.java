package compactd.interop;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.CoreOptions;
import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.manifest.SimpleFileEntry;
import org.apache.paimon.options.Options;
import org.apache.paimon.postpone.BucketFiles;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.FixedBucketRowKeyExtractor;
import org.apache.paimon.table.sink.TableCommitImpl;
import org.apache.paimon.table.sink.TableWriteImpl;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.utils.FileStorePathFactory;
import org.apache.paimon.utils.InternalRowPartitionComputer;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Verb postpone-compact: Java Paimon's postpone-bucket compaction (the Flink CompactAction's
 * buildForPostponeBucketCompaction and its operators) run in one JVM through the core API, so tests
 * have Java's own result on a copy of a bucket = -2 table.
 *
 * <p>Flags: --warehouse W --table db.t [--commit-user U] [--paimon 1.4|2.0].
 *
 * <p>--paimon 1.4 (default; the bundled version's Flink job): per partition with postponed files,
 * the bucket count is the totalBuckets of the partition's first real-bucket file, else
 * postpone.default-bucket-num; a copy of the table with that bucket count (other options kept, so a
 * write-only table does not compact) writes, through one TableWriteImpl per partition, every row of
 * the partition's postpone files read one file at a time in creation-time order
 * (PostponeBucketCompactSplitSource with one reader; ReadOperator's table.newRead()), then
 * prepareCommit(true, Long.MAX_VALUE) as the batch writer's endInput does (flush to level 0, the
 * writer's normal compaction trigger, waited for). Its messages are rewritten per (partition,
 * bucket) with paimon-core's BucketFiles as PostponeBucketCommittableRewriter does; each postpone
 * file gets a compact-before message as RemovePostponeBucketFilesOperator makes it. One commit
 * (identifier Long.MAX_VALUE) through the table copied with bucket = postpone.default-bucket-num.
 *
 * <p>--paimon 2.0 (release-2.0.0-rc9's CompactAction + PostponeBucketCompactOperator + PostponeUtils,
 * rebuilt here since 1.4.2 lacks them): everything is bound to the latest snapshot; partitions are
 * those with postponed files plus those whose real buckets hold level-0 files; the bucket count is
 * the partition's known totalBuckets, else ceil(postponed rows / postpone.target-row-num-per-bucket)
 * when that option is set, else postpone.default-bucket-num; the real table is copied with
 * write-only=false and commit.strict-mode.last-safe-snapshot; every bucket a row went to and every
 * level-0 bucket of the partition is compacted with compact(partition, bucket, false) before
 * prepareCommit(true, Long.MAX_VALUE).
 *
 * <p>Output: {"snapshot":latest id after,"partitions":[{"partition":"k=v","buckets":N,
 * "postpone_files":n,"rows":r},...]} (partitions in processing order).
 */
final class PostponeCompactVerb {
    private final Map<String, String> flags;
    private final PrintWriter out;
    private final StreamVerb.Catalogs catalogs;

    PostponeCompactVerb(Map<String, String> flags, PrintWriter out, StreamVerb.Catalogs catalogs) {
        this.flags = flags;
        this.out = out;
        this.catalogs = catalogs;
    }

    private String flag(String name) {
        String v = flags.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return v;
    }

    /** One partition's work, decided before anything is written. */
    private static final class PartitionJob {
        final BinaryRow partition;
        final int buckets;
        final List<Integer> level0Buckets;

        PartitionJob(BinaryRow partition, int buckets, List<Integer> level0Buckets) {
            this.partition = partition;
            this.buckets = buckets;
            this.level0Buckets = level0Buckets;
        }
    }

    void run() throws Exception {
        String version = flags.getOrDefault("paimon", "1.4");
        if (!version.equals("1.4") && !version.equals("2.0")) {
            throw new IllegalArgumentException("--paimon must be 1.4 or 2.0, got " + version);
        }
        boolean v20 = version.equals("2.0");
        try (Catalog c = catalogs.open(flag("warehouse"));
                IOManager io = IOManager.create(System.getProperty("java.io.tmpdir"))) {
            FileStoreTable table = (FileStoreTable) c.getTable(Identifier.fromString(flag("table")));
            if (table.coreOptions().bucket() != BucketMode.POSTPONE_BUCKET) {
                throw new IllegalArgumentException(
                        "postpone-compact needs a bucket = -2 table, " + table.fullName() + " has bucket = "
                                + table.coreOptions().bucket());
            }
            Options options = new Options(table.options());
            int defaultBucketNum = options.get(CoreOptions.POSTPONE_DEFAULT_BUCKET_NUM);
            // Flink's CompactAction: CoreOptions.createCommitUser (a random UUID unless commit.user-prefix).
            String commitUser = flags.containsKey("commit-user")
                    ? flag("commit-user")
                    : CoreOptions.createCommitUser(options);

            Snapshot latest = table.snapshotManager().latestSnapshot();
            List<PartitionJob> jobs = v20 ? plan20(table, latest, defaultBucketNum) : plan14(table, defaultBucketNum);
            ObjectNode res = Canonical.F.objectNode();
            ArrayNode parts = res.putArray("partitions");
            if (jobs.isEmpty()) {
                res.put("snapshot", latest == null ? 0 : latest.id());
                out.println(res);
                return;
            }

            InternalRowPartitionComputer partitionComputer = new InternalRowPartitionComputer(
                    table.coreOptions().partitionDefaultName(),
                    table.store().partitionType(),
                    table.partitionKeys().toArray(new String[0]),
                    table.coreOptions().legacyPartitionName());
            List<CommitMessage> messages = new ArrayList<>();
            for (PartitionJob job : jobs) {
                Map<String, String> realOptions = new HashMap<>(table.options());
                realOptions.put(CoreOptions.BUCKET.key(), String.valueOf(job.buckets));
                if (v20) {
                    realOptions.put(CoreOptions.WRITE_ONLY.key(), "false");
                    realOptions.put(CoreOptions.COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT.key(), String.valueOf(latest.id()));
                }
                FileStoreTable realTable = table.copy(table.schema().copy(realOptions));
                LinkedHashMap<String, String> partitionSpec = partitionComputer.generatePartValues(job.partition);

                // PostponeBucketCompactSplitSource: one split per postpone file, the files of each
                // split sorted by creation time ("replay the written records in exact order").
                org.apache.paimon.table.source.snapshot.SnapshotReader reader = realTable.newSnapshotReader();
                if (v20) {
                    reader = reader.withSnapshot(latest.id());
                }
                List<DataSplit> fileSplits = new ArrayList<>();
                for (Split s : reader.withPartitionFilter(partitionSpec).withBucket(BucketMode.POSTPONE_BUCKET)
                        .read().splits()) {
                    DataSplit ds = (DataSplit) s;
                    List<DataFileMeta> files = new ArrayList<>(ds.dataFiles());
                    files.sort(Comparator.comparing(DataFileMeta::creationTime));
                    for (DataFileMeta meta : files) {
                        fileSplits.add(DataSplit.builder()
                                .withPartition(ds.partition())
                                .withBucket(ds.bucket())
                                .withBucketPath(ds.bucketPath())
                                .withTotalBuckets(ds.totalBuckets())
                                .withDataFiles(Collections.singletonList(meta))
                                .isStreaming(false)
                                .build());
                    }
                }

                long rows = 0;
                List<CommitMessage> written;
                // The write side: FixedBucketSink's writer (1.4) or PostponeBucketCompactOperator (2.0).
                try (TableWriteImpl<?> write = realTable.newWrite(commitUser, 0)) {
                    write.withIOManager(io);
                    FixedBucketRowKeyExtractor extractor = new FixedBucketRowKeyExtractor(realTable.schema());
                    Set<Integer> touched = new LinkedHashSet<>();
                    for (DataSplit split : fileSplits) {
                        // ReadOperator: realTable.newRead().createReader(split); a postpone-bucket
                        // split is read without merging, rows in file order with their RowKind.
                        try (RecordReader<InternalRow> r =
                                realTable.newRead().withIOManager(io).createReader(split)) {
                            RecordReader.RecordIterator<InternalRow> batch;
                            while ((batch = r.readBatch()) != null) {
                                InternalRow row;
                                while ((row = batch.next()) != null) {
                                    extractor.setRecord(row);
                                    touched.add(extractor.bucket());
                                    write.write(row);
                                    rows++;
                                }
                                batch.releaseBatch();
                            }
                        }
                    }
                    if (v20) {
                        touched.addAll(job.level0Buckets);
                        for (int b : touched) {
                            write.compact(job.partition, b, false);
                        }
                    }
                    written = write.prepareCommit(true, Long.MAX_VALUE);
                }

                // PostponeBucketCommittableRewriter: per (partition, bucket), BucketFiles turns
                // the writer's new files and compactions into one compact increment.
                FileStorePathFactory pathFactory = realTable.store().pathFactory();
                Map<BinaryRow, Map<Integer, BucketFiles>> buckets = new LinkedHashMap<>();
                for (CommitMessage m : written) {
                    CommitMessageImpl msg = (CommitMessageImpl) m;
                    buckets.computeIfAbsent(msg.partition(), p -> new LinkedHashMap<>())
                            .computeIfAbsent(msg.bucket(), b -> new BucketFiles(
                                    pathFactory.createDataFilePathFactory(msg.partition(), msg.bucket()),
                                    realTable.fileIO()))
                            .update(msg);
                }
                for (Map.Entry<BinaryRow, Map<Integer, BucketFiles>> pe : buckets.entrySet()) {
                    for (Map.Entry<Integer, BucketFiles> be : pe.getValue().entrySet()) {
                        messages.add(be.getValue().makeMessage(pe.getKey(), be.getKey()));
                    }
                }
                // RemovePostponeBucketFilesOperator: each postpone file becomes compact-before.
                for (DataSplit split : fileSplits) {
                    messages.add(new CommitMessageImpl(
                            split.partition(),
                            split.bucket(),
                            split.totalBuckets(),
                            DataIncrement.emptyIncrement(),
                            new CompactIncrement(split.dataFiles(), Collections.emptyList(), Collections.emptyList())));
                }
                ObjectNode p = parts.addObject();
                p.put("partition", Main.partitionString(table.schema().logicalPartitionType(), job.partition));
                p.put("buckets", job.buckets);
                p.put("postpone_files", fileSplits.size());
                p.put("rows", rows);
            }

            // The committer: FixedBucketSink(fileStoreTable).doCommit, fileStoreTable being the
            // table copied with bucket = postpone.default-bucket-num (2.0: tableForPostponeCompact).
            Map<String, String> commitOptions = new HashMap<>(table.options());
            commitOptions.put(CoreOptions.BUCKET.key(), String.valueOf(defaultBucketNum));
            if (v20) {
                commitOptions.put(CoreOptions.WRITE_ONLY.key(), "false");
                commitOptions.put(CoreOptions.COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT.key(), String.valueOf(latest.id()));
            }
            FileStoreTable commitTable = table.copy(table.schema().copy(commitOptions));
            try (TableCommitImpl commit = commitTable.newCommit(commitUser)) {
                // A batch job's committer ignores empty commits.
                commit.ignoreEmptyCommit(true);
                commit.commit(Long.MAX_VALUE, messages);
            }
            Snapshot after = table.snapshotManager().latestSnapshot();
            res.put("snapshot", after == null ? 0 : after.id());
            out.println(res);
        }
    }

    /** 1.4.2's CompactAction: partitions with postponed files; existing totalBuckets or the default. */
    private static List<PartitionJob> plan14(FileStoreTable table, int defaultBucketNum) {
        Map<String, String> bucketOptions = new HashMap<>(table.options());
        bucketOptions.put(CoreOptions.BUCKET.key(), String.valueOf(defaultBucketNum));
        FileStoreTable fileStoreTable = table.copy(table.schema().copy(bucketOptions));
        List<PartitionJob> jobs = new ArrayList<>();
        for (BinaryRow partition :
                fileStoreTable.newSnapshotReader().withBucket(BucketMode.POSTPONE_BUCKET).partitions()) {
            int bucketNum = defaultBucketNum;
            Iterator<ManifestEntry> it = table.newSnapshotReader()
                    .withPartitionFilter(Collections.singletonList(partition))
                    .onlyReadRealBuckets()
                    .readFileIterator();
            if (it.hasNext()) {
                bucketNum = it.next().totalBuckets();
            }
            jobs.add(new PartitionJob(partition, bucketNum, Collections.emptyList()));
        }
        return jobs;
    }

    /** release-2.0.0-rc9's CompactAction + PostponeUtils, bound to the latest snapshot. */
    private static List<PartitionJob> plan20(FileStoreTable table, Snapshot latest, int defaultBucketNum) {
        if (latest == null) {
            return Collections.emptyList();
        }
        long snapshotId = latest.id();
        String target = table.options().get("postpone.target-row-num-per-bucket");
        Long targetRowNum = target == null ? null : Long.parseLong(target.trim());

        List<SimpleFileEntry> real =
                table.store().newScan().withSnapshot(snapshotId).onlyReadRealBuckets().readSimpleEntries();
        Map<BinaryRow, Integer> known = new HashMap<>();
        Map<BinaryRow, Set<Integer>> level0 = new LinkedHashMap<>();
        for (SimpleFileEntry e : real) {
            if (e.totalBuckets() >= 0) {
                Integer old = known.put(e.partition(), e.totalBuckets());
                if (old != null && old != e.totalBuckets()) {
                    throw new IllegalStateException("Partition " + e.partition() + " has different totalBuckets "
                            + old + " and " + e.totalBuckets());
                }
            }
            if (e.bucket() >= 0 && e.totalBuckets() > 0 && e.level() == 0) {
                level0.computeIfAbsent(e.partition(), p -> new LinkedHashSet<>()).add(e.bucket());
            }
        }
        Map<BinaryRow, Long> postponeRows = new HashMap<>();
        if (targetRowNum != null) {
            Iterator<ManifestEntry> it = table.newSnapshotReader()
                    .withSnapshot(snapshotId)
                    .withBucket(BucketMode.POSTPONE_BUCKET)
                    .readFileIterator();
            while (it.hasNext()) {
                ManifestEntry e = it.next();
                postponeRows.merge(e.partition(), e.file().rowCount(), Long::sum);
            }
        }
        Set<BinaryRow> affected = new LinkedHashSet<>(table.newSnapshotReader()
                .withSnapshot(snapshotId)
                .withBucket(BucketMode.POSTPONE_BUCKET)
                .partitions());
        affected.addAll(level0.keySet());
        List<PartitionJob> jobs = new ArrayList<>();
        for (BinaryRow partition : affected) {
            int bucketNum;
            if (known.containsKey(partition)) {
                bucketNum = known.get(partition);
            } else if (targetRowNum != null) {
                if (targetRowNum <= 0) {
                    throw new IllegalArgumentException(
                            "Option 'postpone.target-row-num-per-bucket' must be greater than 0.");
                }
                long n = postponeRows.getOrDefault(partition, 0L);
                long b = n <= 0 ? 1 : (n - 1) / targetRowNum + 1;
                if (b > Integer.MAX_VALUE) {
                    throw new IllegalArgumentException("Computed postpone bucket number " + b + " too large");
                }
                bucketNum = (int) b;
            } else {
                bucketNum = defaultBucketNum;
            }
            jobs.add(new PartitionJob(partition, bucketNum,
                    new ArrayList<>(level0.getOrDefault(partition, Collections.emptySet()))));
        }
        return jobs;
    }
}
