package io.dynamolock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link WorkerMain} process: {@code java -cp <this JVM's classpath> io.dynamolock.bench.WorkerMain}. Its grants
 * carry its process number, so grants of several workers can be told apart.
 */
final class RemoteJvm implements AutoCloseable {

    /** What the worker's contenders did, and the requests they sent. */
    record Answer(Contenders.Outcome outcome, Meter meter) {
    }

    private final int number;
    private final Process process;
    private final PrintStream in;
    private final BufferedReader out;

    /** Starts the process; it is ready when it answers its first command. */
    RemoteJvm(URI endpoint, Duration roundTrip, int number) throws IOException {
        this.number = number;
        process = start(WorkerMain.class, endpoint.toString(), Long.toString(roundTrip.toMillis()),
                Integer.toString(number));
        in = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
        out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** {@code java -Xmx1g -cp <this JVM's classpath> main args...}, its stderr on this JVM's. */
    static Process start(Class<?> main, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx1g", "-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    /** This worker's process number: the {@code jvm} of its grants. */
    int number() {
        return number;
    }

    /** Opens the competitor in the worker; returns once its contenders are ready to start. */
    void prepare(CompetitorKind kind, String entity, int threads, Duration hold, Duration wait, Duration drain)
            throws IOException {
        in.println("RUN " + kind.id + " " + entity + " " + threads + " " + hold.toMillis() + " " + wait.toMillis()
                + " " + drain.toMillis());
        expect("READY");
    }

    void go(long startNanos, long endNanos) {
        in.println("GO " + startNanos + " " + endNanos);
    }

    Answer await() throws IOException {
        List<Grant> grants = new ArrayList<>();
        int failures = 0;
        Meter meter = Meter.NONE;
        for (String line = next(); !line.equals("DONE"); line = next()) {
            if (line.startsWith("GRANT ")) {
                grants.add(Grant.decode(line.substring(6)));
            }
            else if (line.startsWith("FAILURES ")) {
                failures = Integer.parseInt(line.substring(9).trim());
            }
            else if (line.startsWith("METER ")) {
                meter = Meter.decode(line.substring(6));
            }
        }
        return new Answer(new Contenders.Outcome(grants, failures), meter);
    }

    private void expect(String word) throws IOException {
        while (!next().equals(word)) {
            // Not an answer (a library printing to stdout): skip it.
        }
    }

    private String next() throws IOException {
        String line = out.readLine();
        if (line == null) {
            throw new IOException("Worker JVM ended unexpectedly; see its stderr above");
        }
        return line;
    }

    /** Asks the worker to end, without waiting: workers told together end together. */
    void exit() {
        in.println("EXIT");
    }

    @Override
    public void close() throws InterruptedException {
        exit();
        if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
            process.destroy();
        }
    }
}
