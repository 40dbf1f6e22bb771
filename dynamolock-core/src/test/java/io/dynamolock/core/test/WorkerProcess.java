package io.dynamolock.core.test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One {@link LockWorkerMain} JVM started by a test: its events (stdout lines starting with
 * {@code @}), commands on its stdin, and the signals a chaos test sends it: SIGKILL
 * ({@link #kill()}), SIGSTOP / SIGCONT ({@link #pause()} / {@link #resume()}).
 */
public final class WorkerProcess implements AutoCloseable {

    private final String id;
    private final Process process;
    private final Path log;
    private final Writer stdin;
    private final List<String> events = new ArrayList<>();
    private final List<String> output = new ArrayList<>();

    private WorkerProcess(String id, Process process, Path log) {
        this.id = id;
        this.process = process;
        this.log = log;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(this::read, "worker-" + id + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a worker on this JVM's class path (the test class path) with small heap and fast
     * start-up flags. {@code args} are the worker's {@code key=value} arguments but {@code id} and
     * {@code log}, which this sets.
     */
    public static WorkerProcess start(String id, Path dir, Map<String, String> args) {
        Path log = dir.resolve("worker-" + id + ".log");
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"),
                LockWorkerMain.class.getName(),
                "id=" + id, "log=" + log));
        args.forEach((k, v) -> command.add(k + "=" + v));
        try {
            Files.createDirectories(dir);
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            return new WorkerProcess(id, process, log);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private void read() {
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                synchronized (this) {
                    if (line.startsWith("@")) {
                        events.add(line.substring(1));
                    }
                    output.add(line);
                    notifyAll();
                }
            }
        }
        catch (IOException ex) {
            // the process died
        }
    }

    public String id() {
        return id;
    }

    public long pid() {
        return process.pid();
    }

    public Path log() {
        return log;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Sends one command line to the worker's stdin. */
    public void send(String line) {
        try {
            stdin.write(line + "\n");
            stdin.flush();
        }
        catch (IOException ex) {
            throw new UncheckedIOException("worker " + id + " does not take commands: " + ex.getMessage(), ex);
        }
    }

    /** Waits for the first event (without {@code @}) matching {@code match}, seen before or after this call. */
    public synchronized String await(Predicate<String> match, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Optional<String> found = events.stream().filter(match).findFirst();
            if (found.isPresent()) {
                return found.get();
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("worker " + id + ": no " + what + " within " + timeout.toMillis() + " ms;"
                        + " output:\n  " + String.join("\n  ", output));
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", ex);
            }
        }
    }

    /** Waits for an event starting with {@code type} (e.g. {@code "ACQUIRED "}). */
    public String await(String type, Duration timeout) {
        return await(e -> e.startsWith(type), timeout, type.trim());
    }

    public synchronized List<String> events() {
        return List.copyOf(events);
    }

    public synchronized String output() {
        return String.join("\n", output);
    }

    /** SIGKILL, then waits until the process is gone. */
    public void kill() {
        process.destroyForcibly();
        waitForExit(Duration.ofSeconds(30));
    }

    /** SIGSTOP: every thread of the JVM stops, as in a long GC pause or a frozen VM. */
    public void pause() {
        signal("STOP");
    }

    /** SIGCONT. */
    public void resume() {
        signal("CONT");
    }

    private void signal(String name) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid())).inheritIO().start();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + name + " " + pid() + " failed");
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** Waits for the process to end by itself and returns its exit code. */
    public int waitForExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("worker " + id + " still running after " + timeout.toMillis() + " ms;"
                        + " output:\n  " + output());
            }
            return process.exitValue();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", ex);
        }
    }

    /** Kills the worker if it still runs (resuming it first if it was stopped). */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                signal("CONT");
            }
            catch (RuntimeException ex) {
                // gone already
            }
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
