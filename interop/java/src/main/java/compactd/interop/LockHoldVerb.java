package compactd.interop;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogLockContext;
import org.apache.paimon.catalog.CatalogLockFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.fs.FileIO;
import org.apache.paimon.fs.Path;
import org.apache.paimon.operation.Lock;
import org.apache.paimon.table.CatalogEnvironment;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.utils.SnapshotManager;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;

/**
 * Verb lock-hold: a snapshot commit exactly as Java Paimon's file-system commit makes it, paused
 * inside the catalog lock between its exists-check and its write.
 *
 * <p>Flags: --warehouse W --table db.t --snapshot-id N --snapshot-file F (with --catalog-options
 * naming a catalog whose tables have a lock, e.g. metastore=jdbc with lock.enabled=true).
 *
 * <p>The lock is the one the table's commits take: the table's CatalogEnvironment lock factory and
 * context (AbstractCatalog.lockFactory / lockContext; for the JDBC catalog a JdbcCatalogLock on
 * the key catalog-key.database.table), wrapped as the commit wraps it (Lock.fromCatalog with the
 * table's identifier). Inside runWithLock it does what RenamingSnapshotCommit.commit does — check
 * that snapshot-N does not exist, then FileIO.tryToWriteAtomic(snapshot-N, bytes of F) and, when
 * that wrote it, SnapshotManager.commitLatestHint(N) — but after the check it prints
 * {"locked":true,"exists":b}, flushes and waits for one line on stdin. Then it prints
 * {"written":b}; the lock is released when runWithLock returns. stdin closing before the line
 * fails the verb (the lock is still released).
 */
final class LockHoldVerb {
    private final Map<String, String> flags;
    private final PrintWriter out;
    private final StreamVerb.Catalogs catalogs;

    LockHoldVerb(Map<String, String> flags, PrintWriter out, StreamVerb.Catalogs catalogs) {
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

    void run() throws Exception {
        long snapshotId = Long.parseLong(flag("snapshot-id"));
        String content = Files.readString(java.nio.file.Path.of(flag("snapshot-file")), StandardCharsets.UTF_8);
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (Catalog c = catalogs.open(flag("warehouse"))) {
            FileStoreTable table = (FileStoreTable) c.getTable(Identifier.fromString(flag("table")));
            CatalogEnvironment env = table.catalogEnvironment();
            CatalogLockFactory factory = env.lockFactory();
            CatalogLockContext context = env.lockContext();
            if (factory == null || context == null) {
                throw new IllegalStateException(
                        "table " + flag("table") + " has no catalog lock (the catalog needs lock.enabled=true and a metastore with a lock, e.g. metastore=jdbc)");
            }
            SnapshotManager sm = table.snapshotManager();
            FileIO fileIO = table.fileIO();
            Path path = sm.snapshotPath(snapshotId);
            boolean written;
            try (Lock lock = Lock.fromCatalog(factory.createLock(context), env.identifier())) {
                written = lock.runWithLock(() -> {
                    boolean exists = fileIO.exists(path);
                    ObjectNode locked = Canonical.F.objectNode();
                    locked.put("locked", true);
                    locked.put("exists", exists);
                    out.println(locked);
                    out.flush();
                    if (stdin.readLine() == null) {
                        throw new IOException("lock-hold: stdin closed while holding the lock");
                    }
                    if (exists) {
                        return false;
                    }
                    boolean ok = fileIO.tryToWriteAtomic(path, content);
                    if (ok) {
                        sm.commitLatestHint(snapshotId);
                    }
                    return ok;
                });
            }
            ObjectNode res = Canonical.F.objectNode();
            res.put("written", written);
            out.println(res);
            out.flush();
        }
    }
}
