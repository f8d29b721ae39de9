package compactd.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.table.source.TableScan;
import org.apache.paimon.types.RowType;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Verb {@code stream}: long-running streaming readers, one {@link StreamTableScan} per target
 * table (ReadBuilder.newStreamScan, as Flink's Paimon source plans), polled in one JVM until each
 * has consumed the snapshot it is told to reach.
 *
 * <p>Flags: {@code --targets '[{"id":"a","warehouse":W,"table":"db.t","options":{...}},...]'}
 * (options are dynamic table options of that reader, e.g. {"scan.mode":"from-snapshot",
 * "scan.snapshot-id":"3"}; default: Paimon's default scan.mode, latest-full; an optional
 * "until":S is the same as the stdin line below), {@code --poll-ms}
 * (idle sleep between polling rounds, default 100) and {@code --timeout-ms} (whole run, default
 * 600000).
 *
 * <p>Protocol: each target's first plan is made (latest-full: the latest snapshot's merged
 * rows; with changelog-producer=lookup only levels above 0, with full-compaction only the top
 * level: DataTableStreamScan.tryFirstPlan) and its rows printed; then one line
 * {"__compactd_stream_ready":true,"next":{"a":n,...}} (n = the next snapshot each reader will
 * consume). From then on every target is polled; every row it receives is printed with
 * "_target", "_plan" (0 = the first plan), "_snapshot" (the split's snapshot), "_bucket" and
 * "_kind". stdin lines {"target":"a","until":S} (or {"until":S} for every target) tell a reader
 * to stop once it has consumed snapshot S (its checkpoint, the next snapshot id, is > S); it then
 * prints {"__compactd_stream_done":"a","next":n,"plans":p}. When every target is done the verb
 * prints {"__compactd_stream_end":true} and exits 0. stdin closing while a target has no until,
 * or the timeout, fails the verb (exit 1).
 */
final class StreamVerb {
    /** Opens a catalog for a warehouse (Main.catalog: S3 and catalog options applied). */
    interface Catalogs {
        Catalog open(String warehouse) throws Exception;
    }

    private static final class Target {
        String id;
        Catalog catalog;
        ReadBuilder rb;
        StreamTableScan scan;
        RowType partType;
        int plans;
        Long until;
        boolean done;
    }

    private final Map<String, String> flags;
    private final PrintWriter out;
    private final Catalogs catalogs;

    StreamVerb(Map<String, String> flags, PrintWriter out, Catalogs catalogs) {
        this.flags = flags;
        this.out = out;
        this.catalogs = catalogs;
    }

    void run() throws Exception {
        String spec = flags.get("targets");
        if (spec == null) {
            throw new IllegalArgumentException("missing --targets");
        }
        long pollMs = Long.parseLong(flags.getOrDefault("poll-ms", "100"));
        long timeoutMs = Long.parseLong(flags.getOrDefault("timeout-ms", "600000"));
        long deadline = System.currentTimeMillis() + timeoutMs;

        Map<String, Long> untils = new ConcurrentHashMap<>();
        AtomicBoolean eof = new AtomicBoolean(false);
        List<String> badLines = java.util.Collections.synchronizedList(new ArrayList<>());
        Thread stdin = new Thread(() -> readUntils(untils, eof, badLines), "stream-stdin");
        stdin.setDaemon(true);

        List<Target> targets = new ArrayList<>();
        try {
            for (JsonNode n : Canonical.JSON.readTree(spec)) {
                Target t = new Target();
                t.id = n.get("id").asText();
                t.catalog = catalogs.open(n.get("warehouse").asText());
                FileStoreTable table =
                        (FileStoreTable) t.catalog.getTable(Identifier.fromString(n.get("table").asText()));
                Map<String, String> dyn = new HashMap<>();
                Iterator<Map.Entry<String, JsonNode>> it = n.path("options").fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    dyn.put(e.getKey(), e.getValue().asText());
                }
                FileStoreTable ft = dyn.isEmpty() ? table : table.copy(dyn);
                t.rb = ft.newReadBuilder();
                t.scan = t.rb.newStreamScan();
                t.partType = ft.schema().logicalPartitionType();
                if (n.has("until")) {
                    untils.put(t.id, n.get("until").asLong());
                }
                targets.add(t);
            }
            // First plans: each reader's starting point, before anything else happens.
            for (Target t : targets) {
                poll(t);
            }
            ObjectNode ready = Canonical.F.objectNode();
            ready.put("__compactd_stream_ready", true);
            ObjectNode next = ready.putObject("next");
            for (Target t : targets) {
                Long cp = t.scan.checkpoint();
                if (cp == null) {
                    next.putNull(t.id);
                } else {
                    next.put(t.id, cp);
                }
            }
            out.println(ready);
            out.flush();
            stdin.start();

            while (true) {
                boolean progress = false;
                boolean allDone = true;
                for (Target t : targets) {
                    if (t.done) {
                        continue;
                    }
                    Long u = untils.containsKey(t.id) ? untils.get(t.id) : untils.get("");
                    t.until = u;
                    progress |= poll(t);
                    Long cp = t.scan.checkpoint();
                    if (t.until != null && cp != null && cp > t.until) {
                        t.done = true;
                        ObjectNode d = Canonical.F.objectNode();
                        d.put("__compactd_stream_done", t.id);
                        d.put("next", cp);
                        d.put("plans", t.plans);
                        out.println(d);
                        out.flush();
                    } else {
                        allDone = false;
                    }
                }
                if (!badLines.isEmpty()) {
                    throw new IllegalArgumentException("stream: bad stdin line " + badLines.get(0));
                }
                if (allDone) {
                    break;
                }
                if (eof.get()) {
                    for (Target t : targets) {
                        if (!t.done && t.until == null && !untils.containsKey(t.id) && !untils.containsKey("")) {
                            throw new IllegalStateException("stream: stdin closed before an until for target " + t.id);
                        }
                    }
                }
                if (System.currentTimeMillis() > deadline) {
                    StringBuilder sb = new StringBuilder("stream: timed out after " + timeoutMs + " ms;");
                    for (Target t : targets) {
                        if (!t.done) {
                            sb.append(' ').append(t.id).append(": next ").append(t.scan.checkpoint())
                                    .append(" until ").append(t.until);
                        }
                    }
                    throw new IllegalStateException(sb.toString());
                }
                if (!progress) {
                    Thread.sleep(pollMs);
                }
            }
            ObjectNode end = Canonical.F.objectNode();
            end.put("__compactd_stream_end", true);
            out.println(end);
            out.flush();
        } finally {
            for (Target t : targets) {
                if (t.catalog != null) {
                    t.catalog.close();
                }
            }
        }
    }

    /** One plan of a target; prints its rows and returns whether it had any split. */
    private boolean poll(Target t) throws Exception {
        TableScan.Plan plan = t.scan.plan();
        int planNo = t.plans++;
        List<DataSplit> splits = new ArrayList<>();
        for (Split s : plan.splits()) {
            splits.add((DataSplit) s);
        }
        if (splits.isEmpty()) {
            if (planNo > 0) {
                t.plans--; // an empty poll is not a plan a Flink reader would act on
            }
            return false;
        }
        splits.sort(Comparator.comparing((DataSplit ds) -> Main.partitionString(t.partType, ds.partition()))
                .thenComparingInt(DataSplit::bucket));
        for (DataSplit ds : splits) {
            ObjectNode extra = Canonical.F.objectNode();
            extra.put("_target", t.id);
            extra.put("_plan", planNo);
            extra.put("_snapshot", ds.snapshotId());
            Main.emitRowsWithKind(out, t.rb, ds, extra);
        }
        out.flush();
        return true;
    }

    private static void readUntils(Map<String, Long> untils, AtomicBoolean eof, List<String> bad) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                try {
                    JsonNode n = Canonical.JSON.readTree(line);
                    if (!n.has("until")) {
                        bad.add(line);
                        continue;
                    }
                    untils.put(n.path("target").asText(""), n.get("until").asLong());
                } catch (Exception e) {
                    bad.add(line);
                }
            }
        } catch (Exception e) {
            bad.add("stdin: " + e);
        } finally {
            eof.set(true);
        }
    }
}
