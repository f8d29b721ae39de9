package compactd.interop;

import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.paimon.rest.RESTCatalogServer;
import org.apache.paimon.rest.auth.BearTokenAuthProvider;
import org.apache.paimon.rest.responses.ConfigResponse;

import okhttp3.mockwebserver.Dispatcher;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.MockWebServer;
import okhttp3.mockwebserver.RecordedRequest;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The rest-server verb: Paimon's own REST catalog server (RESTCatalogServer from paimon-core's
 * tests jar: a file-system catalog on --warehouse behind okhttp's MockWebServer, committing
 * snapshots with RenamingSnapshotCommit) on 127.0.0.1:--port, with bearer-token auth (--token) and
 * catalog name --catalog (what clients send as warehouse to GET /v1/config; default "compactd").
 * Prints {"__compactd_rest_ready":true,"uri":...,"warehouse":...} once it listens, then serves
 * until stdin closes (or forever with --serve-forever true, for a background server), reading
 * control lines from stdin: "fail-next-commit" makes the next successful commit answer HTTP 500
 * after it has landed (the server's own commitSuccessThrowException switch), to test clients
 * that must not take a landed commit for a failed one.
 *
 * <p>Requests are dispatched one at a time. MockWebServer serves each connection on its own
 * thread, and RESTCatalogServer keeps its state in plain HashMaps and commits by check-then-rename
 * without a lock; a real catalog server commits atomically, so the tests' server must too, or two
 * clients racing for one snapshot id could both be told they won.
 */
final class RestServerVerb {
    static final String READY = "__compactd_rest_ready";

    private final Map<String, String> flags;
    private final PrintWriter out;

    RestServerVerb(Map<String, String> flags, PrintWriter out) {
        this.flags = flags;
        this.out = out;
    }

    private String flag(String name) {
        String v = flags.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return v;
    }

    /** RESTCatalogServer with its dispatcher serialized (see the class comment). */
    private static final class SerialServer extends RESTCatalogServer {
        SerialServer(String dataPath, String token, ConfigResponse config, String warehouse) {
            super(dataPath, new BearTokenAuthProvider(token), config, warehouse);
        }

        @Override
        public Dispatcher initDispatcher(org.apache.paimon.rest.auth.AuthProvider authProvider) {
            Dispatcher inner = super.initDispatcher(authProvider);
            return new Dispatcher() {
                @Override
                public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
                    synchronized (this) {
                        return inner.dispatch(request);
                    }
                }
            };
        }
    }

    void run() throws Exception {
        String dataPath = flag("warehouse");
        int port = Integer.parseInt(flag("port"));
        String token = flag("token");
        String name = flags.getOrDefault("catalog", "compactd");
        String prefix = flags.getOrDefault("prefix", "paimon");
        boolean forever = Boolean.parseBoolean(flags.getOrDefault("serve-forever", "false"));

        Map<String, String> defaults = new HashMap<>();
        // As Paimon's MockRESTCatalogTest configures it: a path prefix, no data tokens (clients
        // use the table path with their own file IO), and the catalog name as warehouse.
        defaults.put("prefix", prefix);
        // --data-token true: the catalog vends storage credentials (clients that cannot use
        // them must refuse its tables).
        defaults.put("data-token.enabled", flags.getOrDefault("data-token", "false"));
        defaults.put("warehouse", name);
        ConfigResponse config = new ConfigResponse(defaults, new HashMap<>());
        SerialServer server = new SerialServer(dataPath, token, config, name);

        // RESTCatalogServer.start() takes a random port; the web server it wraps is private,
        // and the tests want a fixed loopback address.
        Field f = RESTCatalogServer.class.getDeclaredField("server");
        f.setAccessible(true);
        MockWebServer web = (MockWebServer) f.get(server);
        web.start(InetAddress.getByName("127.0.0.1"), port);
        String uri = "http://127.0.0.1:" + web.getPort();

        ObjectNode ready = Canonical.F.objectNode();
        ready.put(READY, true);
        ready.put("uri", uri);
        ready.put("warehouse", name);
        out.println(ready);
        out.flush();

        if (forever) {
            Thread.currentThread().join();
        }
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = r.readLine()) != null) {
            String cmd = line.trim();
            if (cmd.isEmpty()) {
                continue;
            }
            ObjectNode ack = Canonical.F.objectNode();
            if (cmd.equals("fail-next-commit")) {
                RESTCatalogServer.commitSuccessThrowException = true;
                ack.put("ok", cmd);
            } else {
                ack.put("error", "unknown command " + cmd);
            }
            out.println(ack);
            out.flush();
        }
        web.shutdown();
    }
}
