package membrane.tools;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.SettingValueParsers;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.ConnectorPortRegister;
import org.neo4j.configuration.connectors.ConnectorType;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.internal.helpers.HostnamePort;
import org.neo4j.kernel.internal.GraphDatabaseAPI;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;
import org.neo4j.server.configuration.ServerSettings;

/**
 * Runs a persistent Neo4j 5.26 community DBMS in this JVM for local development and tests
 * (started by scripts/neo4j.sh; see docs/neo4j-local.md).
 *
 * <p>Uses the public embedded API ({@link DatabaseManagementServiceBuilder}). It is the same
 * DatabaseManagementServiceFactory/CommunityEditionModule the real server uses, so Bolt and the
 * HTTP server with Neo4j Browser are started too. We chose it over
 * {@code org.neo4j.server.CommunityEntryPoint} because it has typed, compile-checked settings,
 * and because we can print a readiness line with the actually bound ports once the default
 * database is available. It also avoids the server bootstrapper's PID/run directory and its
 * "heap + page cache > RAM" refusal.
 *
 * <pre>
 * java [JVM flags] -cp target/classes:$(cat target/classpath.txt) membrane.tools.Neo4jLauncher \
 *     --home DIR [--host 127.0.0.1] [--bolt 7687] [--http 7474] [--pagecache 1g] [--tx-timeout 5m]
 *     [--plugins DIR [--embed-warm]]
 * </pre>
 *
 * <ul>
 *   <li>{@code --http 0} or a negative value disables the HTTP server and Browser.
 *       {@code --bolt 0} picks a free port; the real port is printed.</li>
 *   <li>{@code --plugins DIR} is Neo4j's plugin directory: the procedures and functions of its jars are
 *       loaded (scripts/neo4j.sh passes tools/neo4j-embed's, with Membrane's embedding functions).
 *       {@code --embed-warm} then loads the embedding model once the database is up (in the
 *       background; it prints {@code NEO4J_EMBED_WARM}), so that the first membrane.embed call does
 *       not pay for it.</li>
 *   <li>Auth is disabled. Only bind to loopback.</li>
 *   <li>Optional {@code DIR/neo4j.conf} (string keys, e.g. {@code db.logs.query.enabled=OFF}) is
 *       loaded after the defaults below and overrides them. Unknown keys fail startup (strict validation).</li>
 *   <li>The user log (neo4j.log in a tarball install) goes to stdout. The debug log is DIR/logs/debug.log.</li>
 *   <li>Prints {@code NEO4J_READY bolt=bolt://H:P http=http://H:P|off} on stdout once the default
 *       database is available. SIGTERM/SIGINT run a shutdown hook that shuts the DBMS down cleanly.</li>
 * </ul>
 */
public final class Neo4jLauncher {
    private Neo4jLauncher() {}

    public static void main(String[] args) throws Exception {
        Path home = Path.of(required(args, "--home")).toAbsolutePath().normalize();
        String host = opt(args, "--host", "127.0.0.1");
        int boltPort = Integer.parseInt(opt(args, "--bolt", "7687"));
        int httpPort = Integer.parseInt(opt(args, "--http", "7474"));
        long pageCache = SettingValueParsers.BYTES.parse(opt(args, "--pagecache", "512m"));
        Duration txTimeout = SettingValueParsers.DURATION.parse(opt(args, "--tx-timeout", "5m"));
        boolean http = httpPort > 0;
        String plugins = opt(args, "--plugins", null);
        boolean warm = Arrays.asList(args).contains("--embed-warm");

        Files.createDirectories(home);
        PrintStream out = System.out;
        Log4jLogProvider userLog = new Log4jLogProvider(out, Level.INFO);

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home)
                .setUserLogProvider(userLog)
                .setConfig(GraphDatabaseSettings.default_listen_address, new SocketAddress(host))
                .setConfig(GraphDatabaseSettings.default_advertised_address, new SocketAddress(host))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, boltPort))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(host, boltPort))
                .setConfig(HttpConnector.enabled, http)
                .setConfig(HttpConnector.listen_address, new SocketAddress(host, http ? httpPort : 0))
                .setConfig(HttpConnector.advertised_address, new SocketAddress(host, http ? httpPort : 0))
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                // Browser's :style and :play fetch only from these hosts: Membrane's Browser kit
                // (http://127.0.0.1:8080/browser/) is on 127.0.0.1, which the default lacks.
                // Browser 5 calls the setting ..._allowlist; the 5.26 server reads this name.
                .setConfig(ServerSettings.browser_remote_content_hostname_whitelist,
                        "guides.neo4j.com,localhost,127.0.0.1")
                // Single instance: no server-side routing connector (would bind :7688).
                .setConfig(GraphDatabaseSettings.routing_enabled, false)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCache)
                .setConfig(GraphDatabaseSettings.transaction_timeout, txTimeout)
                // Small, non-preallocated transaction logs; keep only what recovery needs.
                .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, 32L * 1024 * 1024)
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "keep_none")
                // Internal setting (JQAssistant sets it too): Bolt's Netty event loops stop at once
                // instead of waiting out the 5 s quiet period.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0);
        if (plugins != null) {
            builder.setConfig(GraphDatabaseSettings.plugin_dir, Path.of(plugins).toAbsolutePath().normalize());
        }
        Path conf = home.resolve("neo4j.conf");
        if (Files.isRegularFile(conf)) {
            builder.loadPropertiesFromFile(conf);
        }

        AtomicReference<DatabaseManagementService> ref = new AtomicReference<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            DatabaseManagementService dbms = ref.getAndSet(null);
            if (dbms != null) {
                out.println("NEO4J_STOPPING");
                out.flush();
                try {
                    dbms.shutdown();
                    out.println("NEO4J_STOPPED");
                } catch (Throwable t) {
                    out.println("NEO4J_STOP_FAILED " + t);
                    t.printStackTrace(out);
                } finally {
                    userLog.close();
                    out.flush();
                    stopped.countDown();
                }
            }
        }, "neo4j-launcher-shutdown"));

        long t0 = System.nanoTime();
        DatabaseManagementService dbms;
        GraphDatabaseService db;
        try {
            dbms = builder.build();
            ref.set(dbms);
            db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
            while (!db.isAvailable(1000)) {
                out.println("NEO4J_WAITING default database not available yet");
            }
        } catch (Throwable t) {
            out.println("NEO4J_FAILED " + t);
            t.printStackTrace(out);
            out.flush();
            System.exit(1);
            return;
        }

        ConnectorPortRegister ports =
                ((GraphDatabaseAPI) db).getDependencyResolver().resolveDependency(ConnectorPortRegister.class);
        String boltUri = "bolt://" + hostPort(ports.getLocalAddress(ConnectorType.BOLT), host, boltPort);
        String httpUri = http ? "http://" + hostPort(ports.getLocalAddress(ConnectorType.HTTP), host, httpPort) : "off";
        out.printf("NEO4J_READY bolt=%s http=%s home=%s startup_ms=%d%n",
                boltUri, httpUri, home, (System.nanoTime() - t0) / 1_000_000);
        out.flush();
        if (warm) {
            warmEmbedder(db, out);
        }

        stopped.await(); // keep the JVM alive; the shutdown hook releases us
    }

    /**
     * Runs membrane.embed once in the background, so that the model is loaded before the first
     * request needs it. Only a log line on failure (the plugin may be missing): nothing depends on it.
     */
    private static void warmEmbedder(GraphDatabaseService db, PrintStream out) {
        Thread t = new Thread(() -> {
            long t0 = System.nanoTime();
            try {
                db.executeTransactionally("RETURN membrane.embed(['warm up']) AS v");
                out.printf("NEO4J_EMBED_WARM ms=%d%n", (System.nanoTime() - t0) / 1_000_000);
            } catch (RuntimeException e) {
                out.println("NEO4J_EMBED_WARM_FAILED " + e);
            }
            out.flush();
        }, "membrane-embed-warm");
        t.setDaemon(true);
        t.start();
    }

    private static String hostPort(HostnamePort bound, String host, int fallbackPort) {
        return bound != null ? host + ":" + bound.getPort() : host + ":" + fallbackPort;
    }

    private static String required(String[] a, String k) {
        String v = opt(a, k, null);
        if (v == null) {
            System.err.println("usage: Neo4jLauncher --home DIR [--host 127.0.0.1] [--bolt 7687] [--http 7474|0]"
                    + " [--pagecache 512m] [--tx-timeout 5m] [--plugins DIR [--embed-warm]]");
            System.exit(2);
        }
        return v;
    }

    private static String opt(String[] a, String k, String d) {
        for (int i = 0; i + 1 < a.length; i++) {
            if (a[i].equals(k)) {
                return a[i + 1];
            }
        }
        return d;
    }
}
