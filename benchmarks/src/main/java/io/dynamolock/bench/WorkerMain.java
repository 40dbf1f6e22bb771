package io.dynamolock.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A worker JVM of the cross-JVM scenarios: started by {@link RemoteJvm} with the benchmark's classpath and
 * driven over stdin/stdout, one line a command.
 * <pre>
 * in:  RUN kind entity threads holdMillis waitMillis drainMillis   out: READY
 * in:  GO startNanos endNanos                          out: GRANT ... (one a grant), FAILURES n, METER ..., DONE
 * in:  EXIT
 * </pre>
 * Args: the DynamoDB Local endpoint, the simulated round trip in ms, and this process's number (1, 2, ...: the
 * {@code jvm} of its grants).
 */
public final class WorkerMain {

    private WorkerMain() {
    }

    public static void main(String[] args) throws Exception {
        BenchMain.configureLogging();
        MeteredNetwork network = new MeteredNetwork(Duration.ofMillis(Long.parseLong(args[1])));
        int number = Integer.parseInt(args[2]);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (Clients clients = Clients.create(URI.create(args[0]), network);
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null && !line.equals("EXIT"); line = in.readLine()) {
                String[] run = line.split(" ");
                Competitor competitor = CompetitorKind.byId(run[1]).orElseThrow().open(clients);
                network.reset();
                out.println("READY");
                String[] go = in.readLine().split(" ");
                Contenders.Outcome outcome = Contenders.run(competitor, run[2], number, Integer.parseInt(run[3]),
                        Duration.ofMillis(Long.parseLong(run[4])), Duration.ofMillis(Long.parseLong(run[5])),
                        Duration.ofMillis(Long.parseLong(run[6])), Long.parseLong(go[1]), Long.parseLong(go[2]));
                competitor.close();
                outcome.grants().forEach(g -> out.println("GRANT " + g.encode()));
                out.println("FAILURES " + outcome.failures());
                out.println("METER " + network.snapshot().encode());
                out.println("DONE");
            }
        }
        // DynamoDB Local is not in this JVM, but the SDK and lock clients may leave non-daemon threads behind.
        System.exit(0);
    }
}
