package io.dynamolock.core.internal;

import io.dynamolock.core.LockMode;
import io.dynamolock.core.QueueSnapshot;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * One lock item as DynamoDB returned it: the ticket counter, the item's TTL, its permits and the
 * queue, sorted by ticket. Every protocol request returns the whole item, so every
 * response is an exact picture of the queue at the instant of that write.
 *
 * <h2>The grant rule ({@link #blockers})</h2>
 * An entry holds the lock when the entries ahead of it (lower tickets) allow it:
 * <ul>
 * <li>exclusive, on an item of N permits (1 for a plain lock): fewer than N entries ahead;</li>
 * <li>shared (only on an item of 1 permit): every entry ahead is shared.</li>
 * </ul>
 * Expired entries ahead count until they are purged; a waiter purges them only when that lets it hold.
 * Every rule is <b>monotone</b>: it holds for a set of entries ahead, then for every subset of it ("fewer than
 * N" of fewer entries; "all shared" of fewer entries). Entries ahead of a ticket only ever disappear (a later
 * enqueue takes a higher ticket), so once a linearizable state (the answer of a write) says an entry may hold,
 * every later state says so too. That is why a waiter may act on a state that a same-JVM release handed it
 * ({@link Handoff}), why its mailbox may keep the state with the fewest entries ahead as the newest, and why a
 * grant is never taken back by an entry that appears later. Queue order stays ticket order: a writer behind
 * readers waits for them, readers behind a waiting writer wait for it, so neither starves.
 */
final class QueueState {

    static final String NEXT = "next";
    static final String TICKET_PREFIX = "t#";
    static final String EXPIRY_PREFIX = "e#";
    static final String OWNER_PREFIX = "o#";
    static final String FAIL_CLOSED_PREFIX = "k#";
    /** Only on a shared entry; an entry without it is exclusive (as every entry of items older than modes). */
    static final String MODE_PREFIX = "m#";
    static final String SHARED = "S";
    /** The permits of the item, set by the first enqueue; absent on items older than permits: 1. */
    static final String PERMITS = "permits";
    /** An entry's wake-up address, {@code host:port}, when its template has wake-up hints on. */
    static final String ADDRESS_PREFIX = "w#";
    /** How many fail-closed entries the item holds: what a request's condition can test, unlike a prefix. */
    static final String FAIL_CLOSED_COUNT = "fc";
    /** The attributes of one entry, each this prefix and the entry's id: what its removal removes. */
    static final List<String> ENTRY_PREFIXES = List.of(TICKET_PREFIX, EXPIRY_PREFIX, OWNER_PREFIX,
            FAIL_CLOSED_PREFIX, MODE_PREFIX, ADDRESS_PREFIX);

    /**
     * A queue entry: {@code id} names one acquisition, {@code owner} is the label of its template for people,
     * {@code expiresAtMillis} is the writer's wall clock at its last renewal plus its lease. A fail-closed entry
     * stores its lease too ({@code failClosedLeaseMillis}, 0 for an ordinary entry), so a reader can tell when it
     * was last renewed. {@code shared} is its mode.
     */
    record Entry(String id, String owner, long ticket, long expiresAtMillis, long failClosedLeaseMillis,
            boolean shared) {

        /** An exclusive entry. */
        Entry(String id, String owner, long ticket, long expiresAtMillis, long failClosedLeaseMillis) {
            this(id, owner, ticket, expiresAtMillis, failClosedLeaseMillis, false);
        }

        LockMode mode() {
            return shared ? LockMode.SHARED : LockMode.EXCLUSIVE;
        }

        /** As a record prints itself, with the id and owner (table data) escaped ({@link Printable}). */
        @Override
        public String toString() {
            return "Entry[id=" + Printable.escape(id) + ", owner=" + Printable.escape(owner) + ", ticket=" + ticket
                    + ", expiresAtMillis=" + expiresAtMillis + ", failClosedLeaseMillis=" + failClosedLeaseMillis
                    + ", shared=" + shared + "]";
        }

        boolean failClosed() {
            return failClosedLeaseMillis > 0;
        }

        /**
         * Whether others may treat the entry as gone: its lease ended and it is not fail-closed. A fail-closed
         * entry never expires; only its own release or a break removes it.
         */
        boolean isExpiredAt(long nowMillis) {
            return !failClosed() && expiresAtMillis <= nowMillis;
        }
    }

    /**
     * The entries ahead of an entry that keep it from holding, and how many of them must leave before it holds:
     * 0 when it holds. For a semaphore that is fewer than all of them; any of them may leave.
     */
    record Blockers(List<Entry> entries, int mustLeave) {

        boolean hold() {
            return mustLeave <= 0;
        }
    }

    static final QueueState ABSENT = new QueueState(0, 0, List.of());

    private final long nextTicket;
    private final long ttlEpochSeconds;
    private final int storedPermits;
    private final List<Entry> entries;
    private final Map<String, AttributeValue> item;
    private final long asOfMillis;
    /** Whether a holder of this JVM handed this state over ({@link #handedOver()}). */
    private final boolean handedOver;

    QueueState(long nextTicket, long ttlEpochSeconds, List<Entry> entries) {
        this(nextTicket, ttlEpochSeconds, 0, entries);
    }

    /** @param storedPermits the item's permits, 0 if it has none */
    QueueState(long nextTicket, long ttlEpochSeconds, int storedPermits, List<Entry> entries) {
        this(nextTicket, ttlEpochSeconds, storedPermits, entries, Map.of());
    }

    private QueueState(long nextTicket, long ttlEpochSeconds, int storedPermits, List<Entry> entries,
            Map<String, AttributeValue> item) {
        this(nextTicket, ttlEpochSeconds, storedPermits, entries, item, 0);
    }

    private QueueState(long nextTicket, long ttlEpochSeconds, int storedPermits, List<Entry> entries,
            Map<String, AttributeValue> item, long asOfMillis) {
        this(nextTicket, ttlEpochSeconds, storedPermits,
                entries.stream().sorted(Comparator.comparingLong(Entry::ticket)).toList(), asOfMillis, item);
    }

    /** With {@code sorted} already in ticket order and immutable: what is derived from a state, on every event. */
    private QueueState(long nextTicket, long ttlEpochSeconds, int storedPermits, List<Entry> sorted, long asOfMillis,
            Map<String, AttributeValue> item) {
        this(nextTicket, ttlEpochSeconds, storedPermits, sorted, asOfMillis, item, false);
    }

    private QueueState(long nextTicket, long ttlEpochSeconds, int storedPermits, List<Entry> sorted, long asOfMillis,
            Map<String, AttributeValue> item, boolean handedOver) {
        this.handedOver = handedOver;
        this.nextTicket = nextTicket;
        this.ttlEpochSeconds = ttlEpochSeconds;
        this.storedPermits = storedPermits;
        this.entries = sorted;
        this.item = item;
        this.asOfMillis = asOfMillis;
    }

    static QueueState of(Map<String, AttributeValue> item) {
        if (item == null || item.isEmpty()) {
            return ABSENT;
        }
        List<Entry> entries = new ArrayList<>();
        item.forEach((name, value) -> {
            if (name.startsWith(TICKET_PREFIX)) {
                String id = name.substring(TICKET_PREFIX.length());
                AttributeValue expiry = item.get(EXPIRY_PREFIX + id);
                AttributeValue owner = item.get(OWNER_PREFIX + id);
                AttributeValue mode = item.get(MODE_PREFIX + id);
                entries.add(new Entry(id, owner == null || owner.s() == null ? id : owner.s(),
                        exact(value, UNREADABLE_TICKET), number(expiry),
                        failClosedLease(item.get(FAIL_CLOSED_PREFIX + id)), mode != null && SHARED.equals(mode.s())));
            }
        });
        long next = item.get(NEXT) == null ? 0 : exact(item.get(NEXT), UNREADABLE_TICKET);
        long permits = item.get(PERMITS) == null ? 0 : exact(item.get(PERMITS), UNREADABLE_PERMITS);
        return new QueueState(next, number(item.get(QueueTable.TTL_ATTRIBUTE)),
                permits == (int) permits ? (int) permits : UNREADABLE_PERMITS, entries, item);
    }

    /**
     * What an entry's ticket, or the counter, reads as when it is not an integer of the {@code long} range (an item
     * edited by hand, a counter pushed past 2^63): below every ticket dynamolock hands out, so such an entry keeps
     * every other out, and is never granted ({@link #blockers}). Tickets decide the order and are the fencing
     * tokens: read approximately, two entries could share one and both hold.
     */
    static final long UNREADABLE_TICKET = 0;

    /** The permits of an item whose {@code permits} is not an integer: no request's, so every enqueue is refused. */
    private static final int UNREADABLE_PERMITS = -1;

    /** A number that must be read exactly: {@code unreadable} if it is not an integer of the {@code long} range. */
    private static long exact(AttributeValue value, long unreadable) {
        if (value.n() == null) {
            return unreadable;
        }
        try {
            return Long.parseLong(value.n()); // what dynamolock writes: every state of every event is parsed
        }
        catch (NumberFormatException notPlain) {
            try {
                return new BigDecimal(value.n()).longValueExact(); // "1E+3", "5.0"
            }
            catch (ArithmeticException | NumberFormatException notALong) {
                return unreadable;
            }
        }
    }

    /**
     * An entry's fail-closed lease, 0 if it is fail-open. Present but unreadable, the entry stays fail-closed: read as
     * fail-open it would expire, and a holder that must never be replaced blindly could be.
     */
    private static long failClosedLease(AttributeValue value) {
        return value == null ? 0 : Math.max(1, number(value));
    }

    /**
     * A time (a lease end, the TTL) as the protocol writes it, an integer; 0 if it is missing or not a number, a
     * fraction cut to its integer, and bounded to the {@code long} range: an item edited by hand or by another tool
     * must not make every reader of the lock throw. An entry whose lease end reads as 0 has expired, so the next
     * waiter removes it as a crashed process's (on condition that it is still so: {@code QueueTable#sameLeaseEnd}).
     */
    private static long number(AttributeValue value) {
        if (value == null || value.n() == null) {
            return 0;
        }
        try {
            return Long.parseLong(value.n());
        }
        catch (NumberFormatException notALong) {
            return new BigDecimal(value.n()).max(BigDecimal.valueOf(Long.MIN_VALUE))
                    .min(BigDecimal.valueOf(Long.MAX_VALUE)).longValue();
        }
    }

    long nextTicket() {
        return nextTicket;
    }

    /**
     * The item exactly as DynamoDB returned it, less what this state was derived without ({@link #without},
     * {@link #upTo}); empty for {@link #ABSENT} and states built in tests: what an authenticated wake-up hint
     * carries, so that its receiver reads the same state.
     */
    Map<String, AttributeValue> item() {
        return item;
    }

    /** The release history the item carries, for predictive polling. */
    PredictivePolling.History history() {
        return PredictivePolling.History.of(item);
    }

    /** The item's TTL in epoch seconds, 0 if it has none. */
    long ttlEpochSeconds() {
        return ttlEpochSeconds;
    }

    List<Entry> entries() {
        return entries;
    }

    /** The permits the item holds the lock for: 1 unless its first enqueue asked for more. */
    int permits() {
        return storedPermits == 0 ? 1 : storedPermits;
    }

    /** Whether an enqueue asking for {@code permits} fits the item: it has none yet, or the same. */
    boolean admits(int permits) {
        return storedPermits == 0 || storedPermits == permits;
    }

    /** The grant rule (see the class comment): what keeps {@code self} from holding. */
    Blockers blockers(Entry self) {
        if (self.ticket() == UNREADABLE_TICKET) {
            // Its place in the queue is unknown: it must never hold (the Waiter fails such an entry of its own).
            return new Blockers(entries.stream().filter(entry -> entry != self).toList(), Integer.MAX_VALUE);
        }
        List<Entry> ahead = ahead(self.ticket());
        if (self.shared()) {
            List<Entry> exclusive = ahead.stream().filter(entry -> !entry.shared()).toList();
            return new Blockers(exclusive, mustLeave(true, ahead.size(), exclusive.size()));
        }
        return new Blockers(ahead, mustLeave(false, ahead.size(), ahead.size()));
    }

    /** The entries that hold in this state by the grant rule: {@link #holds} of each, in one pass. */
    List<Entry> holders() {
        List<Entry> holders = new ArrayList<>();
        int ahead = 0;
        int exclusiveAhead = 0;
        for (Entry entry : entries) {
            if (mustLeave(entry.shared(), ahead, exclusiveAhead) <= 0) {
                holders.add(entry);
            }
            ahead++;
            exclusiveAhead += entry.shared() ? 0 : 1;
        }
        return holders;
    }

    /** The grant rule itself: how many of the entries ahead must leave before an entry of that mode holds. */
    private int mustLeave(boolean shared, int ahead, int exclusiveAhead) {
        return shared ? exclusiveAhead : ahead - (permits() - 1);
    }

    /**
     * How many rounds of grants come before {@code self}'s, for pacing its polls: the entries ahead in ticket order,
     * a run of shared entries counting as one round (they hold together), and N exclusive entries of an item of N
     * permits as one; {@code self} joins the last round if it may hold beside it. 0 exactly when it holds. A writer
     * behind eight readers is one round away, not eight: they leave together.
     */
    int roundsAhead(Entry self) {
        int rounds = 0;
        int inGroup = 0;
        boolean sharedRun = false;
        for (Entry entry : ahead(self.ticket())) {
            if (entry.shared()) {
                rounds += sharedRun ? 0 : 1;
                sharedRun = true;
                inGroup = 0;
            }
            else {
                rounds += inGroup == 0 ? 1 : 0;
                inGroup = (inGroup + 1) % permits();
                sharedRun = false;
            }
        }
        boolean joinsLast = self.shared() ? sharedRun : inGroup != 0;
        return joinsLast ? rounds - 1 : rounds;
    }

    /** Whether {@code self} holds the lock in this state. */
    boolean holds(Entry self) {
        return blockers(self).hold();
    }

    Entry entry(String id) {
        for (Entry entry : entries) {
            if (entry.id().equals(id)) {
                return entry;
            }
        }
        return null;
    }

    /**
     * This state without entry {@code id}, in its entries and in its item, and true as of {@code asOfMillis}: what
     * a holder that is done says the item will be once its release lands ({@link WakeUps#handOver}).
     */
    QueueState without(String id, long asOfMillis) {
        return without(Set.of(id), asOfMillis);
    }

    /**
     * This state cut after {@code lastTicket}: its entries up to that ticket, with the counter just past it, as if
     * read when that was the last ticket handed out (less what has left since). What decides the grant of an entry
     * is all ahead of it, so this is enough for the entries it keeps, and short enough for a datagram when the whole
     * queue is not ({@link WakeUps}). Merged into a state that knows more, it shows gone only what it lacks below its
     * counter: nothing behind the cut.
     */
    QueueState upTo(long lastTicket) {
        if (lastTicket >= nextTicket - 1) {
            return this;
        }
        Set<String> behind = new HashSet<>();
        for (Entry entry : entries) {
            if (entry.ticket() > lastTicket) {
                behind.add(entry.id());
            }
        }
        QueueState cut = without(behind, asOfMillis);
        Map<String, AttributeValue> cutItem = new HashMap<>(cut.item);
        if (cutItem.containsKey(NEXT)) {
            cutItem.put(NEXT, AttributeValue.fromN(Long.toString(lastTicket + 1)));
        }
        return new QueueState(lastTicket + 1, ttlEpochSeconds, storedPermits, cut.entries, asOfMillis,
                Map.copyOf(cutItem));
    }

    private QueueState without(Set<String> ids, long asOfMillis) {
        Map<String, AttributeValue> rest = new HashMap<>(item);
        for (String id : ids) {
            for (String prefix : ENTRY_PREFIXES) {
                rest.remove(prefix + id);
            }
        }
        return new QueueState(nextTicket, ttlEpochSeconds, storedPermits,
                entries.stream().filter(entry -> !ids.contains(entry.id())).toList(), asOfMillis, Map.copyOf(rest));
    }

    /**
     * When this state was true (epoch ms), as far as this JVM knows: stamped on the states it keeps as the newest it
     * knows ({@link Acquisition#learned}); 0 for one just parsed, which is true when it arrives.
     */
    long asOfMillis() {
        return asOfMillis;
    }

    /** This state, true as of {@code asOfMillis}. */
    QueueState withAsOf(long asOfMillis) {
        return asOfMillis == this.asOfMillis ? this
                : new QueueState(nextTicket, ttlEpochSeconds, storedPermits, entries, asOfMillis, item, handedOver);
    }

    /**
     * This state as a holder of this JVM hands it over ({@link Handoff#handOver}): not read from DynamoDB but what
     * the holder last learned, so, as in a hint's, its lease ends may look expired though their owners renew.
     */
    QueueState asHandOver() {
        return handedOver ? this
                : new QueueState(nextTicket, ttlEpochSeconds, storedPermits, entries, asOfMillis, item, true);
    }

    /** Whether this state came from a same-JVM hand-over ({@link #asHandOver}), its lease ends second-hand. */
    boolean handedOver() {
        return handedOver;
    }

    /**
     * What this state and {@code other}, two states of one lock in either order, tell together: the one with the
     * higher ticket counter (the later one: only enqueues move it), without the entries the other shows gone,
     * i.e. those below the other's counter that it does not hold (an entry that left never comes back). For two
     * states with one counter that is their intersection, with the lease ends of the later stamped one (renewals
     * move them on). True as of the later counter's stamp, or the later stamp of two with one counter: a state of
     * an earlier counter only tells of entries gone, so it must not make the rest look fresher than it is (nor must
     * an older state's lease ends under a newer stamp: they would look expired). Linear in the entries: it runs on
     * every event.
     */
    QueueState merge(QueueState other) {
        QueueState later = other.nextTicket > nextTicket
                || other.nextTicket == nextTicket && other.asOfMillis > asOfMillis ? other : this;
        QueueState earlier = later == this ? other : this;
        long asOf = later.nextTicket == earlier.nextTicket ? Math.max(asOfMillis, other.asOfMillis)
                : later.asOfMillis;
        Set<String> known = new HashSet<>();
        for (Entry entry : earlier.entries) {
            known.add(entry.id());
        }
        Set<String> gone = new HashSet<>();
        for (Entry entry : later.entries) {
            if (entry.ticket() < earlier.nextTicket && !known.contains(entry.id())) {
                gone.add(entry.id());
            }
        }
        return gone.isEmpty() ? later.withAsOf(asOf) : later.without(gone, asOf);
    }

    /** The entries with a lower ticket, the holder first. Only ever shrinks for a given ticket. */
    List<Entry> ahead(long ticket) {
        return entries.stream().filter(entry -> entry.ticket() < ticket).toList();
    }

    /**
     * Whether a purge's condition can match {@code entry}'s lease end as stored: not one a hand or another tool wrote
     * as a fraction or past the {@code long} range ({@code 5.5} reads as 5, which no condition matches), which only
     * a break removes. True when the item is not known (a state built without it).
     */
    boolean leaseEndMatchable(Entry entry) {
        AttributeValue stored = item.get(EXPIRY_PREFIX + entry.id());
        if (stored == null || stored.n() == null) {
            return true; // missing or not a number: the purge's condition has a form for that
        }
        try {
            new BigDecimal(stored.n()).longValueExact();
            return true;
        }
        catch (ArithmeticException | NumberFormatException unmatchable) {
            return false;
        }
    }

    /** The entry holding {@code ticket}, or {@code null}. */
    Entry entryWithTicket(long ticket) {
        return entries.stream().filter(entry -> entry.ticket() == ticket).findFirst().orElse(null);
    }

    /** How many entries have not expired at {@code nowMillis} (fail-closed ones never do). */
    long liveAt(long nowMillis) {
        return entries.stream().filter(entry -> !entry.isExpiredAt(nowMillis)).count();
    }

    /** The latest lease end of any entry, or 0 for an empty queue. */
    long latestExpiryMillis() {
        return entries.stream().mapToLong(Entry::expiresAtMillis).max().orElse(0);
    }

    /** Whether a fail-closed entry is in the queue: then the item must never expire by TTL. */
    boolean holdsFailClosed() {
        return entries.stream().anyMatch(Entry::failClosed);
    }

    QueueSnapshot toSnapshot(String entity, String namespace) {
        return new QueueSnapshot(entity, namespace, nextTicket, permits(), entries.stream()
                .map(QueueState::toSnapshotEntry)
                .toList());
    }

    static QueueSnapshot.Entry toSnapshotEntry(Entry e) {
        Instant leaseEnd = Instant.ofEpochMilli(e.expiresAtMillis());
        return new QueueSnapshot.Entry(e.id(), e.owner(), e.ticket(), leaseEnd, e.failClosed(),
                e.failClosed() ? leaseEnd.minusMillis(e.failClosedLeaseMillis()) : null, e.mode());
    }

    @Override
    public String toString() {
        return "QueueState[next=" + nextTicket + ", ttl=" + ttlEpochSeconds + ", permits=" + storedPermits
                + ", entries=" + entries + "]";
    }
}
