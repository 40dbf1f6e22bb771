package io.dynamolock.core.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks what {@link LockWorkerMain} processes logged, together with what the test did to
 * them (kills, pauses), against the lock's promises. Sequence numbers come from one DynamoDB
 * atomic counter, so they order events of different processes.
 *
 * <p>Violations (must be none):
 * <ul>
 * <li><b>order</b>: per entity, fencing tokens strictly increase in grant order;</li>
 * <li><b>exclusion</b>: no grant falls inside a <em>trusted</em> critical section, one that ended
 * with {@code isValid()} true, or whose process was killed (not paused) inside it (it ends at the
 * kill);</li>
 * <li><b>fenced counter</b>: the {@code fenced} counter equals the fenced writes accepted (a
 * killed holder may or may not have written, nor may one rejected on the SDK's retry: that range is allowed);</li>
 * <li><b>plain counter</b>: the same for the unprotected read-modify-write, in runs without
 * pauses (a paused holder may write late, which only fencing stops: reported, not a violation);</li>
 * <li><b>fencing</b>: no trusted section had its claim or fenced write rejected;</li>
 * <li><b>FIFO</b>: every waiting ticket seen was granted, given up by its caller, or its process
 * was killed or paused; with tokens in grant order, no live waiter was skipped.</li>
 * </ul>
 */
public final class LockHistory {

    /** One acquisition as its worker logged it. */
    public static final class Section {
        public final String worker;
        public final String entity;
        public final long token;
        public final String owner;
        public final long enterSeq;
        /** Taken before acquire(): the grant happened between this and {@link #enterSeq}. */
        public final long requestSeq;
        public final long enterWall;
        public final long waitedMs;
        Long exitSeq;
        Boolean validAtExit;
        Boolean claimOk;
        Boolean validBefore;
        String fenced;
        String plain;
        boolean lost;
        Long killSeq;

        Section(String worker, Map<String, String> e) {
            this.worker = worker;
            this.entity = e.get("entity");
            this.token = Long.parseLong(e.get("token"));
            this.owner = e.get("owner");
            this.enterSeq = Long.parseLong(e.get("seq"));
            this.requestSeq = Long.parseLong(e.getOrDefault("reqSeq", e.get("seq")));
            this.enterWall = Long.parseLong(e.get("wall"));
            this.waitedMs = Long.parseLong(e.get("waitedMs"));
        }

        public boolean completed() {
            return exitSeq != null;
        }

        @Override
        public String toString() {
            return "w" + worker + " " + entity + " token=" + token + " seq=[" + enterSeq + ","
                    + (exitSeq != null ? exitSeq : killSeq != null ? "killed@" + killSeq : "open") + "] valid="
                    + validAtExit + " fenced=" + fenced + " plain=" + plain + (lost ? " LOST" : "");
        }
    }

    /** What a check found. */
    public record Report(int sections, int completed, Map<String, Integer> completedByEntity, long longestWaitMs,
            int lost, Map<String, Integer> failures, List<String> violations, List<String> notes) {

        public String summary() {
            return "sections=" + sections + " completed=" + completed + " byEntity=" + completedByEntity
                    + " longestWaitMs=" + longestWaitMs + " lost=" + lost + " failures=" + failures
                    + " violations=" + violations.size() + (notes.isEmpty() ? "" : " notes=" + notes);
        }
    }

    private final Map<String, Section> sections = new LinkedHashMap<>();
    private final Map<String, List<Map<String, String>>> eventsByWorker = new TreeMap<>();
    private final Map<String, Long> killed = new HashMap<>();
    private final Map<String, List<long[]>> paused = new HashMap<>();

    /** Reads worker logs (one event per line; the worker id is in each event). */
    public static LockHistory read(List<Path> logs) {
        LockHistory history = new LockHistory();
        for (Path log : logs) {
            try {
                if (Files.exists(log)) {
                    Files.readAllLines(log, StandardCharsets.UTF_8).forEach(history::add);
                }
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }
        return history;
    }

    /** Adds one event line (as logged, without {@code @}). */
    public void add(String line) {
        if (line.isBlank()) {
            return;
        }
        Map<String, String> event = parse(line);
        String worker = event.get("w");
        if (worker == null) {
            return;
        }
        eventsByWorker.computeIfAbsent(worker, w -> new ArrayList<>()).add(event);
        String type = event.get("type");
        if (type.equals("ACQUIRED")) {
            Section section = new Section(worker, event);
            sections.put(key(section.entity, section.token), section);
            return;
        }
        Section section = event.containsKey("token") && event.containsKey("entity")
                ? sections.get(key(event.get("entity"), Long.parseLong(event.get("token")))) : null;
        if (section == null) {
            return;
        }
        switch (type) {
            case "CLAIMED" -> section.claimOk = Boolean.parseBoolean(event.get("ok"));
            case "WROTE" -> {
                section.validBefore = Boolean.parseBoolean(event.get("validBefore"));
                section.fenced = event.get("fenced");
                section.plain = event.get("plain");
            }
            case "RELEASED" -> {
                section.exitSeq = Long.parseLong(event.get("seq"));
                section.validAtExit = Boolean.parseBoolean(event.get("valid"));
            }
            case "LOST" -> section.lost = true;
            default -> {
            }
        }
    }

    /** The test killed {@code worker} (SIGKILL, process gone) at global sequence {@code seq}. */
    public void killed(String worker, long seq) {
        killed.put(worker, seq);
    }

    /** The test stopped {@code worker} between global sequence numbers {@code fromSeq} and {@code toSeq}. */
    public void paused(String worker, long fromSeq, long toSeq) {
        paused.computeIfAbsent(worker, w -> new ArrayList<>()).add(new long[] {fromSeq, toSeq});
    }

    /** Waiting entries the workers saw of their own (evidence that they contended). */
    public int waitingSeen() {
        return (int) eventsByWorker.values().stream().flatMap(List::stream)
                .filter(e -> e.get("type").equals("WAITING")).count();
    }

    public List<Section> sections() {
        return List.copyOf(sections.values());
    }

    public List<Section> sections(String entity) {
        return sections.values().stream().filter(s -> s.entity.equals(entity))
                .sorted(Comparator.comparingLong(s -> s.enterSeq)).toList();
    }

    /**
     * Checks the history against the counters as stored at the end ({@code entity -> {fenced, plain}}).
     */
    public Report check(Map<String, long[]> counters) {
        List<String> violations = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (Section s : sections.values()) {
            Long kill = killed.get(s.worker);
            if (!s.completed() && kill != null && kill > s.enterSeq) {
                s.killSeq = kill;
            }
        }
        Set<String> entities = new HashSet<>(counters.keySet());
        sections.values().forEach(s -> entities.add(s.entity));
        Map<String, Integer> completedByEntity = new TreeMap<>();
        for (String entity : entities) {
            List<Section> granted = sections(entity);
            completedByEntity.put(entity, (int) granted.stream().filter(Section::completed).count());
            checkOrder(entity, granted, violations);
            checkExclusion(granted, violations);
            checkCounters(entity, granted, counters.getOrDefault(entity, new long[2]), violations, notes);
        }
        checkWaiters(violations);
        Map<String, Integer> failures = new TreeMap<>();
        eventsByWorker.values().forEach(events -> events.stream().filter(e -> e.get("type").equals("FAILED"))
                .forEach(e -> failures.merge(e.getOrDefault("type_", "?"), 1, Integer::sum)));
        int completed = (int) sections.values().stream().filter(Section::completed).count();
        long longestWait = sections.values().stream().mapToLong(s -> s.waitedMs).max().orElse(0);
        int lost = (int) sections.values().stream().filter(s -> s.lost).count();
        return new Report(sections.size(), completed, completedByEntity, longestWait, lost, failures,
                List.copyOf(violations), List.copyOf(notes));
    }

    /**
     * Tokens strictly increase in grant order. A section whose process was stopped between asking and logging
     * its grant, and which then lost its lease, was granted at an unknown point after {@code requestSeq}: it is
     * only required to fit some order, i.e. to have asked before every later token's grant.
     */
    private void checkOrder(String entity, List<Section> granted, List<String> violations) {
        List<Section> certain = granted.stream().filter(s -> !uncertainGrant(s)).toList();
        for (int i = 1; i < certain.size(); i++) {
            if (certain.get(i).token <= certain.get(i - 1).token) {
                violations.add("order: " + entity + " granted token " + certain.get(i).token + " after "
                        + certain.get(i - 1).token + " (" + certain.get(i - 1) + " then " + certain.get(i) + ")");
            }
        }
        for (Section late : granted) {
            if (!uncertainGrant(late)) {
                continue;
            }
            for (Section other : certain) {
                boolean later = other.token > late.token;
                if (later && other.enterSeq < late.requestSeq || !later && other.enterSeq > late.enterSeq) {
                    violations.add("order: " + entity + " token " + late.token + " (" + late + ", asked at "
                            + late.requestSeq + ") cannot be placed in grant order with " + other);
                }
            }
        }
    }

    /** Stopped between asking for the lock and logging the grant, and then lost the lease: grant time unknown. */
    private boolean uncertainGrant(Section s) {
        boolean lostLease = s.lost || Boolean.FALSE.equals(s.validAtExit) || Boolean.FALSE.equals(s.validBefore);
        return lostLease && pausedDuring(s.worker, s.requestSeq, s.enterSeq);
    }

    private void checkExclusion(List<Section> granted, List<String> violations) {
        for (Section held : granted) {
            Long end = trustedEnd(held);
            if (end == null) {
                continue;
            }
            for (Section other : granted) {
                boolean inside = other.enterSeq > held.enterSeq && other.enterSeq < end;
                // A grant logged late (stopped before logging it) with an older token was made before this one.
                boolean earlier = uncertainGrant(other) && other.token < held.token && other.requestSeq < held.enterSeq;
                if (other != held && inside && !earlier) {
                    violations.add("exclusion: " + other + " granted inside " + held);
                }
            }
            boolean rejected = "REJECTED".equals(held.fenced) || "RETRIED".equals(held.fenced);
            if (Boolean.FALSE.equals(held.claimOk) || rejected) {
                violations.add("fencing: a newer token wrote while this holder was valid: " + held);
            }
        }
    }

    /** The end of a section the holder was entitled to until its end, or null. */
    private Long trustedEnd(Section s) {
        if (s.completed()) {
            return Boolean.TRUE.equals(s.validAtExit) && !s.lost ? s.exitSeq : null;
        }
        if (s.killSeq != null && !s.lost && !pausedDuring(s.worker, s.enterSeq, s.killSeq)) {
            return s.killSeq;
        }
        return null;
    }

    private boolean pausedDuring(String worker, long from, long to) {
        return paused.getOrDefault(worker, List.of()).stream().anyMatch(p -> p[0] < to && p[1] > from);
    }

    private void checkCounters(String entity, List<Section> granted, long[] counter, List<String> violations,
            List<String> notes) {
        long fencedOk = granted.stream().filter(s -> "OK".equals(s.fenced)).count();
        long plainOk = granted.stream().filter(s -> "OK".equals(s.plain)).count();
        // A holder killed between its claim and its WROTE event may or may not have written; so may one whose write
        // was rejected on the SDK's retry of an attempt whose answer was lost (a pause past the attempt timeout).
        long maybe = granted.stream().filter(s -> s.fenced == null && s.killSeq != null || "RETRIED".equals(s.fenced))
                .count();
        if (counter[0] < fencedOk || counter[0] > fencedOk + maybe) {
            violations.add("fenced counter: " + entity + " is " + counter[0] + ", accepted fenced writes " + fencedOk
                    + (maybe > 0 ? " (+" + maybe + " maybe, by killed holders or rejected on a retry)" : ""));
        }
        if (counter[1] < plainOk || counter[1] > plainOk + maybe) {
            String message = "plain counter: " + entity + " is " + counter[1] + ", unprotected writes " + plainOk
                    + (maybe > 0 ? " (+" + maybe + " maybe by killed holders)" : "");
            if (paused.isEmpty()) {
                violations.add(message);
            }
            else {
                notes.add(message + ": holders stopped between isValid() and their unfenced write wrote a value"
                        + " read before the pause, rolling the counter back; the fenced counter is exact");
            }
        }
    }

    private void checkWaiters(List<String> violations) {
        Set<String> grantedOwners = new HashSet<>();
        sections.values().forEach(s -> grantedOwners.add(s.owner));
        eventsByWorker.forEach((worker, events) -> {
            for (int i = 0; i < events.size(); i++) {
                Map<String, String> event = events.get(i);
                if (!event.get("type").equals("WAITING") || grantedOwners.contains(event.get("owner"))) {
                    continue;
                }
                boolean gaveUp = events.subList(i + 1, events.size()).stream()
                        .anyMatch(e -> e.get("type").equals("FAILED") && e.get("entity").equals(event.get("entity")));
                if (!gaveUp && !killed.containsKey(worker) && !paused.containsKey(worker)) {
                    violations.add("FIFO: waiting ticket " + event.get("ticket") + " of " + event.get("owner")
                            + " on " + event.get("entity") + " was neither granted nor given up");
                }
            }
        });
    }

    private static String key(String entity, long token) {
        return entity + "\u0000" + token;
    }

    /** {@code TYPE k=v k=v}: the type goes to key {@code type}; a {@code type=} pair to {@code type_}. */
    static Map<String, String> parse(String line) {
        String[] parts = line.trim().split(" ");
        Map<String, String> event = new HashMap<>();
        event.put("type", parts[0]);
        for (int i = 1; i < parts.length; i++) {
            int eq = parts[i].indexOf('=');
            if (eq > 0) {
                String name = parts[i].substring(0, eq);
                event.put(name.equals("type") ? "type_" : name, parts[i].substring(eq + 1));
            }
        }
        return event;
    }
}
