package io.dynamolock.core.internal;

import io.dynamolock.core.LockOptionException;
import io.dynamolock.core.LockQueueFullException;
import io.dynamolock.core.ProtocolStep;
import io.dynamolock.core.LockTableException;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.metrics.CoreMetric;
import software.amazon.awssdk.metrics.MetricCollection;
import software.amazon.awssdk.metrics.MetricPublisher;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * Every DynamoDB request of the ticket-queue protocol, and nothing else.
 *
 * <h2>Item layout</h2>
 * One item per lock; the counter and the whole queue live in it, so DynamoDB's
 * serialisation of writes to one item orders every step of the protocol.
 * <pre>
 * pk         S  the entity
 * sk         S  the namespace
 * next       N  the next ticket
 * t#&lt;id&gt;     N  an entry's ticket             (one triple per holder or waiter; id = 96 random bits
 * e#&lt;id&gt;     N  its lease expiry, epoch ms      per acquisition, base64url: never a name or a counter)
 * o#&lt;id&gt;     S  its owner: the template's label, for people only
 * k#&lt;id&gt;     N  only on a fail-closed entry: its lease in ms. Such an entry never expires: it is never
 *               purged, and while one is in the item its TTL is {@link #NEVER_TTL_SECONDS}
 * m#&lt;id&gt;     S  only on a shared entry: "S". An entry without it is exclusive
 * permits    N  how many exclusive entries hold at once (1, or N for a semaphore): set by every enqueue, on
 *               condition that it is absent or equal, so the first enqueue of an idle lock fixes it (see
 *               {@link QueueState} for the grant rule)
 * w#&lt;id&gt;     S  only with wake-up hints on: where its process receives them, host:port ({@link WakeUps})
 * fc         N  how many fail-closed entries the item holds (conditions cannot test a prefix)
 * lr, ri     N  the last release (epoch ms) and the average release interval (ms), written by each release for
 *               predictive polling ({@link PredictivePolling})
 * expiresAt  N  TTL, epoch seconds, at least {@link #MIN_TTL_MARGIN} past every entry's expiry; no write
 *               lowers it as a side effect (see below)
 * </pre>
 *
 * <h2>Requests (each one UpdateItem or GetItem, returning the whole item)</h2>
 * Each request carries its {@link ProtocolStep} as an SDK execution attribute.
 * <ol>
 * <li><b>Enqueue</b>: {@code SET next = if_not_exists(next, :floor) + 1, t#i = if_not_exists(next, :floor),
 * e#i = :exp, o#i = :owner, expiresAt = :ttl} if {@code attribute_not_exists(t#i)} and the TTL would not
 * fall by more than the margins allow ({@code expiresAt <= :ttl + 5 min}); if only the TTL's condition failed
 * (a fail-closed entry or a longer lease holds it higher), the same write without the TTL. A fail-closed
 * entry also sets {@code k#i = :lease, expiresAt = never} and adds one to {@code fc}; a shared one
 * {@code m#i = S}. Every enqueue sets {@code permits = :n} on condition {@code attribute_not_exists(permits) OR
 * permits = :n}. If only that failed and the queue it returned is empty, its permits are a leftover of the
 * lock's last users (a release does not remove them, and need not): the enqueue is sent again on condition
 * {@code next = :seen} instead, i.e. nobody enqueued since the empty queue was seen, and takes the permits
 * over (if someone did, and the permits fit now, another caller took them over first with the same: the
 * usual enqueue once more). If the queue holds entries and all are dead (expired, or fail-closed and never
 * held), the caller removes them as a waiter behind them would, each on its own condition and all on
 * {@code next = :seen}, then takes the empty queue over; if any is alive, or fail-closed and may have held, the
 * caller is refused with the two numbers. Every
 * operand reads the item before the update, so the caller's ticket and its place in the queue are taken in one
 * step: there is no window in which a lower ticket can appear after a higher one was granted. {@code :floor}
 * comes from the clock (epoch ms &times; 1000), so a counter that TTL removed restarts above every ticket it gave. A retried
 * enqueue whose first attempt landed fails its condition and returns the item with the entry in it: the id
 * is the acquisition's own, so only that acquisition's retry can find it.</li>
 * <li><b>Read</b>: a strongly consistent GetItem, for waiters that poll; a poll takes no longer than its wait has
 * left ({@link #waitTimeout}).</li>
 * <li><b>Renew</b> (heartbeat): {@code SET e#i = :exp, expiresAt = :ttl} if {@code attribute_exists(t#i)},
 * with the same TTL rule as the enqueue (a fail-closed entry sets "never" again). A failed
 * {@code attribute_exists} means the entry was purged: the lease is lost.</li>
 * <li><b>Remove</b> (release, or giving up a wait): {@code REMOVE t#i, e#i, o#i, k#i, m#i, w#i} (a release
 * also {@code SET lr = :now, ri = :interval}, its history for predictive polling) if
 * {@code attribute_exists(t#i)}; a failed condition means the entry was gone already. A fail-closed entry's
 * removal also subtracts one from {@code fc}; the last one's ({@code fc = 1}) sets {@code expiresAt} back to
 * an hour from now in the same request, so the item can expire again (R9 then raises it if a remaining
 * entry needs more); the others' are conditioned on {@code NOT fc = 1}, so that no removal but the last one's
 * takes the count to 0 and no follow-up request is needed to let the item expire (R7). A fail-open release is
 * one request; a fail-closed one tries the last one's write first and, when other fail-closed entries remain
 * (its count condition fails), the other: two. Refused by its count because another fail-closed entry joined or
 * left meanwhile, each is followed by the other, until one applies or the entry is gone. Break and the purge of a
 * fail-closed entry remove it the same way.</li>
 * <li><b>Purge</b>: {@code REMOVE t#x, e#x, o#x, m#x, w#x, ...} for expired entries ahead of the caller that keep
 * it from holding, when removing them lets it hold (or, once it holds, expired ones ahead that kept it out of
 * nothing, which no waiter would purge: sent in the background), if each
 * {@code e#x} still equals the value the caller saw expire and the caller's own entry exists. An entry
 * renewed in the meantime is never purged, nor is a fail-closed one, but for one case: a fail-closed entry whose
 * lease ran out while entries ahead of it kept it out never held, and is removed (with the {@code fc} count and
 * TTL of a fail-closed removal) if its ticket and {@code e#x} are as seen, the caller's entry exists, and enough
 * of the entries ahead to keep it out still have their tickets ({@link #purgeNeverHeld}).</li>
 * <li><b>Raise TTL</b>: {@code SET expiresAt = :ttl} if {@code expiresAt < :ttl}, when the item a write
 * returned holds an entry that expires later than the TTL allows. It never sets "never". With one lease for
 * everyone the latest writer's expiry is the latest, so this request is not needed (R9).</li>
 * <li><b>Break</b> (an operator's): a strongly consistent read, then {@code REMOVE t#x, e#x, o#x, k#x, m#x,
 * w#x} if {@code attribute_exists(t#x) AND t#x = :ticket AND e#x = :seen}, for the entry with the ticket the
 * operator saw. An entry that left meanwhile is never confused with a newer one: tickets are never reused. The
 * lease end is in the condition so that the break reports the entry as it removed it: refused because its holder
 * renewed it since the read, the write is sent again on the lease end the refusal returned (refused with the entry
 * unchanged, its lease end matches no value, as a hand-edited {@code 5.5}: then on the ticket alone).</li>
 * <li><b>Lower TTL</b>: {@code SET expiresAt = :ttl} if {@code expiresAt = never AND fc = 0}, after a write
 * that returned an item with a "never" TTL and no fail-closed entry, which no removal of ours leaves (an item
 * whose {@code fc} was edited by hand, or written by a version that settled the TTL in a follow-up request);
 * a fail-closed entry that joined meanwhile keeps its "never". Refused as
 * another writer lowered it first, from an item that may lack an entry this one has, a Raise TTL follows if
 * that entry needs more.</li>
 * </ol>
 * Every conditional write asks for the old item when its condition fails, so a failure tells the state
 * without another read. Each method returns the item after its request: after the write, or as it stood
 * when the condition failed.
 */
final class QueueTable {

    static final String PARTITION_KEY = "pk";
    static final String SORT_KEY = "sk";
    static final String TTL_ATTRIBUTE = "expiresAt";

    /**
     * How far past its own entry's expiry a writer sets the item's TTL. Longer than the clock skew the
     * fencing-token floor tolerates.
     */
    static final Duration ITEM_TTL_MARGIN = Duration.ofHours(1);

    /**
     * The least margin between the item's TTL and any entry's expiry (R9). A few minutes below
     * {@link #ITEM_TTL_MARGIN}, so that writers whose clocks differ by less than that never need to
     * raise the TTL after one another.
     */
    static final Duration MIN_TTL_MARGIN = ITEM_TTL_MARGIN.minusMinutes(5);

    /**
     * The TTL of an item while a fail-closed entry is in it: 9999-12-31T23:59:59Z, i.e. never. DynamoDB's TTL
     * deletes an item only once its time has passed.
     */
    static final long NEVER_TTL_SECONDS = 253_402_300_799L;

    /** Tickets per millisecond of the floor: far more than the ~1,000 writes/s one item takes. */
    static final long TICKETS_PER_MILLI = 1000;

    /**
     * Entries one purge removes at most: each costs about 60 bytes of expression, and DynamoDB allows 4 KB per
     * expression. A longer dead tail is purged over several requests.
     */
    static final int MAX_PURGE = 25;

    private static final Logger log = LoggerFactory.getLogger(QueueTable.class);
    private static final AttributeValue ONE = AttributeValue.fromN("1");

    private final DynamoDbClient client;
    private final String tableName;
    private final Duration backgroundTimeout;
    private final Duration clientTimeout;
    /** The client's own metric publishers: a request that names one of its own replaces them, so it names these too. */
    private final List<MetricPublisher> clientPublishers;

    /**
     * @param backgroundTimeout the longest a removal or other background request may take, SDK retries included,
     *                          so that a hung request cannot occupy a request thread for long (a renewal is given
     *                          its own limit, from the lease it has left)
     */
    QueueTable(DynamoDbClient client, String tableName, Duration backgroundTimeout) {
        this.client = client;
        this.tableName = tableName;
        this.backgroundTimeout = backgroundTimeout;
        this.clientTimeout = clientTimeout(client);
        this.clientPublishers = clientPublishers(client);
    }

    private static List<MetricPublisher> clientPublishers(DynamoDbClient client) {
        try {
            return List.copyOf(client.serviceClientConfiguration().overrideConfiguration().metricPublishers());
        }
        catch (RuntimeException unknown) {
            return List.of(); // a client that does not tell (a test double)
        }
    }

    /** The client's own call timeout, if it has one: a waiter's request must not be given longer. */
    private static Duration clientTimeout(DynamoDbClient client) {
        try {
            return client.serviceClientConfiguration().overrideConfiguration().apiCallTimeout().orElse(null);
        }
        catch (RuntimeException unknown) {
            return null; // a client that does not tell (a test double): our bounds only
        }
    }

    /** What an enqueue writes: the entry, its options, and the wake-up {@code address} of its process, if any. */
    record NewEntry(String id, String owner, Duration lease, boolean failClosed, boolean shared, int permits,
            String address) {
    }

    /**
     * Request 1: takes a ticket and joins the queue; a fail-closed or shared entry is marked in the same request,
     * and so is the wake-up address of the entry's process; the item's permits are set or checked.
     *
     * @throws LockOptionException if the queue holds entries of another number of permits that are alive, or
     *                             fail-closed and may have held (dead ones are removed first and the queue taken
     *                             over)
     */
    QueueState enqueue(LockKey key, NewEntry entry, long nowMillis, Runnable retried) {
        MetricPublisher attempts = retriesOf(retried);
        Long takeOverAt = null;
        for (int attempt = 1; ; attempt++) {
            QueueState state = enqueue(key, entry, nowMillis, takeOverAt, attempts);
            if (state.entry(entry.id()) != null || attempt == 4) {
                return keepTtl(key, state, nowMillis);
            }
            if (!state.admits(entry.permits())) {
                state = purgeDeadOfOtherPermits(key, state, nowMillis);
            }
            if (state.admits(entry.permits())) {
                // Our takeover of leftover permits lost to another caller's, who asked for ours: queue as usual.
                takeOverAt = null;
                continue;
            }
            if (!state.entries().isEmpty() || attempt == 3) {
                throw new LockOptionException("permits", entry.permits(), "The lock of " + key
                        + " in table '" + tableName + "' "
                        + (state.permits() > 0 ? "admits " + state.permits() + " holder(s) at once"
                                : "has permits that are not a positive integer (an item edited by hand?)")
                        + ", and its queue holds " + state.entries().size()
                        + " entries; this request asks for permits " + entry.permits() + ". Every request for one"
                        + " lock must ask for the same permits: fix the one that differs" + silent(state, nowMillis));
            }
            // The permits of an empty queue are a leftover: take them over unless someone enqueued meanwhile.
            takeOverAt = state.nextTicket();
        }
    }

    /**
     * Tells {@code retried} when the SDK sent a request again after an attempt that may have reached DynamoDB
     * without an answer (a time-out, a broken connection, a 5xx), so that DynamoDB may still apply it later; not
     * after throttling, which refuses an attempt before anything is done. Called on the calling thread before the
     * request returns or throws.
     */
    private static MetricPublisher retriesOf(Runnable retried) {
        return new MetricPublisher() {
            @Override
            public void publish(MetricCollection metrics) {
                if (metrics.metricValues(CoreMetric.RETRY_COUNT).stream().noneMatch(retries -> retries > 0)) {
                    return;
                }
                List<MetricCollection> attempts = metrics.children().stream()
                        .filter(attempt -> "ApiCallAttempt".equals(attempt.name())).toList();
                // Each attempt but the last got no good answer; one that does not say why counts as unanswered.
                boolean mayLandLate = attempts.size() < 2 || attempts.subList(0, attempts.size() - 1).stream()
                        .anyMatch(attempt -> attempt.metricValues(CoreMetric.ERROR_TYPE).stream()
                                .allMatch(type -> !"Throttling".equals(type)));
                if (mayLandLate) {
                    retried.run();
                }
            }

            @Override
            public void close() {
            }
        };
    }

    /**
     * What the refusal adds when fail-closed entries whose leases ended keep the old number: their processes may be
     * gone and the configuration right; only breaking them frees the lock.
     */
    private static String silent(QueueState state, long nowMillis) {
        List<Long> tickets = state.entries().stream()
                .filter(e -> e.failClosed() && e.expiresAtMillis() <= nowMillis).map(QueueState.Entry::ticket).toList();
        return tickets.isEmpty() ? "" : "; " + tickets.size() + " of them fail-closed, silent since their leases ended"
                + " (tickets " + tickets + "), which may have held and so stay until broken: if their processes are"
                + " gone, break them (LockTemplate.breakLock, or the actuator endpoint) and retry";
    }

    /**
     * The entries of a queue that refused our permits, once every one of them is dead: their processes died (a
     * redeploy that changed the permits), and nobody of their number is left to remove them as waiters do, so
     * without this the lock would refuse everyone until TTL deleted the item (or for good, with a fail-closed entry
     * in it). Removed as a waiter behind them all would remove them, only if nobody enqueued since: first the
     * fail-closed ones that never held, on the proof that the entries ahead still keep them out; then the expired
     * ones, each only if not renewed since. Returns the queue as it is after, or as {@code seen} if an entry is
     * live, or fail-closed and may have held: that one keeps the old number.
     */
    private QueueState purgeDeadOfOtherPermits(LockKey key, QueueState seen, long nowMillis) {
        QueueState state = seen;
        while (!state.entries().isEmpty()) {
            String guard = "#next = :seenNext";
            Map<String, String> guardNames = Map.of("#next", QueueState.NEXT);
            Map<String, AttributeValue> guardValues = Map.of(":seenNext", number(state.nextTicket()));
            QueueState.Entry behindAll = new QueueState.Entry("", "", state.nextTicket(), Long.MAX_VALUE, 0);
            WaitLoop.PurgeNeverHeld neverHeld = WaitLoop.neverHeld(state, behindAll, nowMillis);
            QueueState after;
            if (neverHeld != null) {
                after = purgeNeverHeld(key, guard, guardNames, guardValues, neverHeld.dead(), neverHeld.keepers(),
                        nowMillis);
            }
            else if (state.entries().stream().allMatch(e -> e.isExpiredAt(nowMillis))) {
                after = purge(key, state.entries(), guard, guardNames, guardValues, null);
            }
            else {
                return state;
            }
            if (after.entries().size() >= state.entries().size()) {
                return after; // refused: someone renewed or enqueued since, which the next attempt sees
            }
            state = after;
        }
        return state;
    }

    /**
     * One enqueue: on the usual condition that the item admits our permits, or, with {@code takeOverAt}, on
     * condition that its counter still stands there (the queue is still empty) whatever permits it admits.
     */
    private QueueState enqueue(LockKey key, NewEntry entry, long nowMillis, Long takeOverAt,
            MetricPublisher attempts) {
        String id = entry.id();
        long expiresAt = nowMillis + entry.lease().toMillis();
        Map<String, String> names = new HashMap<>(Map.of("#next", QueueState.NEXT, "#t", ticket(id),
                "#e", expiry(id), "#o", owner(id), "#p", QueueState.PERMITS));
        Map<String, AttributeValue> values = new HashMap<>(Map.of(":floor", number(nowMillis * TICKETS_PER_MILLI),
                ":one", ONE, ":exp", number(expiresAt), ":owner", AttributeValue.fromS(entry.owner()),
                ":permits", number(entry.permits())));
        String permitsFit = "(attribute_not_exists(#p) OR #p = :permits)";
        if (takeOverAt != null) {
            permitsFit = "#next = :seenNext";
            values.put(":seenNext", number(takeOverAt));
        }
        String set = "SET #next = if_not_exists(#next, :floor) + :one, #t = if_not_exists(#next, :floor),"
                + " #e = :exp, #o = :owner, #p = :permits";
        if (entry.shared()) {
            names.put("#m", mode(id));
            values.put(":shared", AttributeValue.fromS(QueueState.SHARED));
            set += ", #m = :shared";
        }
        if (entry.address() != null) {
            names.put("#w", address(id));
            values.put(":w", AttributeValue.fromS(entry.address()));
            set += ", #w = :w";
        }
        String condition = "attribute_not_exists(#t) AND " + permitsFit;
        if (entry.failClosed()) {
            names.putAll(Map.of("#k", failClosed(id), "#ttl", TTL_ATTRIBUTE, "#fc", QueueState.FAIL_CLOSED_COUNT));
            values.putAll(Map.of(":lease", number(entry.lease().toMillis()), ":never", number(NEVER_TTL_SECONDS)));
            return write(key, ProtocolStep.ENQUEUE, request(set + ", #k = :lease, #ttl = :never ADD #fc :one",
                    condition, names, values), null, attempts).state();
        }
        // A retried enqueue whose first attempt landed finds its entry: the request's own condition failed. So
        // does one refused for its permits, or a takeover that someone else's enqueue came before.
        return writeNeverLoweringTtl(key, ProtocolStep.ENQUEUE, set, condition, names, values, ttlFor(expiresAt),
                seen -> seen.entry(id) == null && (takeOverAt == null ? seen.admits(entry.permits())
                        : seen.nextTicket() == takeOverAt), null, attempts);
    }

    /** Request 2: the item as it is now. */
    QueueState read(LockKey key) {
        return read(key, null);
    }

    /**
     * Request 2 for a waiter that has {@code timeLeft} before its deadline: the request may take no longer than
     * that ({@link #waitTimeout}).
     */
    QueueState read(LockKey key, Duration timeLeft) {
        Duration timeout = waitTimeout(timeLeft);
        try {
            return QueueState.of(client.getItem(b -> b.tableName(tableName).key(key(key)).consistentRead(true)
                    .overrideConfiguration(c -> {
                        c.putExecutionAttribute(ProtocolStep.ATTRIBUTE, ProtocolStep.READ);
                        if (timeout != null) {
                            c.apiCallTimeout(timeout);
                        }
                    }))
                    .item());
        }
        catch (ResourceNotFoundException ex) {
            throw missingTable(ex);
        }
        catch (DynamoDbException ex) {
            throw wrongSchemaOr(ex);
        }
    }

    /**
     * Request 3: extends the entry's lease; the returned item lacks the entry if it was purged. A renewal never
     * shortens the lease: one whose attempt DynamoDB applies only after a later renewal of the entry (the client
     * gave up on it, and the retry landed first) would write the older, earlier end back, and a waiter could purge
     * the entry while its holder still counts on the later end. Refused for that, it finds the entry with a lease
     * at least as long as it asked for, which is as good as renewed. The TTL is not settled here: the caller records
     * the renewal first, then settles it ({@link #keepTtl}), so that a raise that stalls cannot hold back the news of
     * a lease that DynamoDB already extended.
     *
     * @param timeout the longest the renewal may take, SDK retries included
     */
    QueueState renew(LockKey key, String id, long nowMillis, Duration lease, boolean failClosed, Duration timeout) {
        long expiresAt = nowMillis + lease.toMillis();
        Map<String, String> names = new HashMap<>(Map.of("#t", ticket(id), "#e", expiry(id)));
        Map<String, AttributeValue> values = new HashMap<>(Map.of(":exp", number(expiresAt)));
        String condition = "attribute_exists(#t) AND #e < :exp";
        QueueState state;
        if (failClosed) {
            names.put("#ttl", TTL_ATTRIBUTE);
            values.put(":never", number(NEVER_TTL_SECONDS));
            state = write(key, ProtocolStep.RENEW, request("SET #e = :exp, #ttl = :never", condition, names, values),
                    timeout).state();
        }
        else {
            state = writeNeverLoweringTtl(key, ProtocolStep.RENEW, "SET #e = :exp", condition, names, values,
                    ttlFor(expiresAt), seen -> seen.entry(id) != null && seen.entry(id).expiresAtMillis() < expiresAt,
                    timeout);
        }
        return state;
    }

    /**
     * An enqueue or renewal that also moves the TTL to {@code ttl}, unless that would lower it by more than
     * the margins allow (a fail-closed entry's "never", or a longer lease's TTL): then the same write again
     * without the TTL. A write never lowers the TTL as a side effect, so no follow-up request has to put it
     * back, and none can fail to (R9). The second request is needed only when leases of different lengths
     * share a lock, or a fail-closed entry is in it.
     *
     * @param conditionHeld whether the request's own condition held in the item as it stood when the first
     *                      write was refused: then only the TTL's stood in the way
     * @param timeout       the longest each write may take ({@code null}: the client's own limits)
     */
    private QueueState writeNeverLoweringTtl(LockKey key, ProtocolStep step, String set, String condition,
            Map<String, String> names, Map<String, AttributeValue> values, long ttl,
            java.util.function.Predicate<QueueState> conditionHeld, Duration timeout) {
        return writeNeverLoweringTtl(key, step, set, condition, names, values, ttl, conditionHeld, timeout, null);
    }

    /** As above; {@code attempts}, if not {@code null}, hears of each write's attempts. */
    private QueueState writeNeverLoweringTtl(LockKey key, ProtocolStep step, String set, String condition,
            Map<String, String> names, Map<String, AttributeValue> values, long ttl,
            java.util.function.Predicate<QueueState> conditionHeld, Duration timeout, MetricPublisher attempts) {
        Map<String, String> ttlNames = new HashMap<>(names);
        ttlNames.put("#ttl", TTL_ATTRIBUTE);
        Map<String, AttributeValue> ttlValues = new HashMap<>(values);
        ttlValues.put(":ttl", number(ttl));
        ttlValues.put(":ceiling", number(ttl + (ITEM_TTL_MARGIN.minus(MIN_TTL_MARGIN)).toSeconds()));
        Written withTtl = write(key, step, request(set + ", #ttl = :ttl",
                condition + " AND (attribute_not_exists(#ttl) OR #ttl <= :ceiling)", ttlNames, ttlValues), timeout,
                attempts);
        if (withTtl.applied() || !conditionHeld.test(withTtl.state())) {
            return withTtl.state();
        }
        return write(key, step, request(set, condition, names, values), timeout, attempts).state();
    }

    private static UpdateItemRequest.Builder request(String update, String condition, Map<String, String> names,
            Map<String, AttributeValue> values) {
        UpdateItemRequest.Builder request = UpdateItemRequest.builder().updateExpression(update)
                .conditionExpression(condition).expressionAttributeNames(names);
        return values.isEmpty() ? request : request.expressionAttributeValues(values);
    }

    /**
     * Request 4: leaves the queue. For a fail-closed entry, the TTL is settled too (the item may expire again
     * once no fail-closed entry is left); if that fails, this throws, so that the caller's retry of the
     * removal settles it. Not applied if the entry had left already (purged, broken).
     */
    Written remove(LockKey key, String id, boolean failClosed, long nowMillis, PredictivePolling.History released) {
        Written removed = removeEntry(key, id, ProtocolStep.REMOVE, "", Map.of(), Map.of(), failClosed, nowMillis,
                released);
        if (failClosed) {
            settleTtl(key, removed.state(), nowMillis);
        }
        return removed;
    }

    /**
     * A break's outcome: {@code written} as a removal's, and the entry exactly as the applied write removed it
     * ({@code null} if nothing was removed).
     */
    record Broken(Written written, QueueState.Entry removed) {
    }

    /**
     * Request 7: removes the entry {@code seen} (read by the operator's break) if it still has its ticket, whoever
     * made it, and tells which entry the write removed. Its holder may renew between that read and this write, so
     * the write is also conditioned on the lease end it will report; refused for a renewal, it is sent again on the
     * lease end the refusal returned. (Each refusal means a renewal landed since the last answer: one per heartbeat.)
     * The state is the item after the break, or as it stood when nothing was removed.
     */
    Broken breakEntry(LockKey key, QueueState.Entry seen, long nowMillis) {
        QueueState.Entry entry = seen;
        boolean leaseEndMatchable = true;
        while (true) {
            Map<String, AttributeValue> values = new HashMap<>(Map.of(":ticket", number(entry.ticket())));
            // A lease end no condition can match (edited by hand: 5.5 reads as 5) is broken on its ticket alone: an
            // operator's break is the only way such an entry leaves, and no holder of ours renews it.
            String asSeen = " AND #t = :ticket" + (leaseEndMatchable
                    ? " AND " + sameLeaseEnd("#e", ":seenEnd", entry.expiresAtMillis(), values) : "");
            Written broken = removeEntry(key, entry.id(), ProtocolStep.BREAK, asSeen, Map.of(), values,
                    entry.failClosed(), nowMillis, null);
            if (broken.applied()) {
                if (entry.failClosed()) {
                    keepTtl(key, broken.state(), nowMillis);
                }
                return new Broken(broken, entry);
            }
            QueueState.Entry now = broken.state().entry(entry.id());
            if (now == null || now.ticket() != entry.ticket() || !leaseEndMatchable) {
                return new Broken(broken, null); // it left, or something else refused the write: nothing removed
            }
            leaseEndMatchable = !now.equals(entry); // unchanged, yet refused: its lease end matches no value
            entry = now; // renewed since it was seen, or as it stands
        }
    }

    /**
     * Request 5, for a fail-closed entry: removes {@code dead}, whose lease ran out while it was kept from holding,
     * if it still has the ticket and lease end the caller saw, the caller's own entry exists, and each of
     * {@code keepers} (entries ahead of it, enough of them to keep it out by the grant rule) still has its ticket.
     * Then {@code dead} is kept out at this write, and since entries ahead of a ticket only ever leave (tickets are
     * never reused, newcomers queue behind), it was kept out at every moment before: it never held, so nothing it
     * protects can be half-done. The state is the item after the removal, or as it stood if nothing was removed.
     */
    QueueState purgeNeverHeld(LockKey key, String self, QueueState.Entry dead, List<QueueState.Entry> keepers,
            long nowMillis) {
        return purgeNeverHeld(key, "attribute_exists(#self)", Map.of("#self", ticket(self)), Map.of(), dead, keepers,
                nowMillis);
    }

    /** {@link #purgeNeverHeld} on {@code guard}, which must hold only while the item exists. */
    private QueueState purgeNeverHeld(LockKey key, String guard, Map<String, String> guardNames,
            Map<String, AttributeValue> guardValues, QueueState.Entry dead, List<QueueState.Entry> keepers,
            long nowMillis) {
        Map<String, String> names = new HashMap<>(guardNames);
        Map<String, AttributeValue> values = new HashMap<>(guardValues);
        values.put(":ticket", number(dead.ticket()));
        StringBuilder condition = new StringBuilder(" AND " + guard + " AND #t = :ticket AND "
                + sameLeaseEnd("#e", ":expiry", dead.expiresAtMillis(), values));
        for (int i = 0; i < keepers.size(); i++) {
            condition.append(" AND #keeper").append(i).append(" = :keeper").append(i);
            names.put("#keeper" + i, ticket(keepers.get(i).id()));
            values.put(":keeper" + i, number(keepers.get(i).ticket()));
        }
        Written purged = removeEntry(key, dead.id(), ProtocolStep.PURGE, condition.toString(), names, values, true,
                nowMillis, null);
        return purged.applied() ? keepTtl(key, purged.state(), nowMillis) : purged.state();
    }

    /**
     * Removes one entry if it exists (and {@code condition} holds). A fail-closed entry's removal counts it out
     * of {@code fc}; the last one's also sets the TTL back to an hour from now, in the same request, so the
     * item it kept from expiring may expire again once unused, whatever becomes of any later request. While
     * other fail-closed entries remain, the TTL stays "never".
     */
    private Written removeEntry(LockKey key, String id, ProtocolStep step, String condition,
            Map<String, String> conditionNames, Map<String, AttributeValue> values, boolean failClosed, long nowMillis,
            PredictivePolling.History released) {
        Map<String, String> names = new HashMap<>(Map.of("#t", ticket(id), "#e", expiry(id), "#o", owner(id),
                "#k", failClosed(id), "#m", mode(id), "#w", address(id)));
        names.putAll(conditionNames);
        values = new HashMap<>(values);
        String remove = "REMOVE #t, #e, #o, #k, #m, #w";
        String set = "";
        if (released != null) {
            // A release records its history in its own write: predictive polling costs no request.
            names.putAll(Map.of("#lr", PredictivePolling.LAST_RELEASE, "#ri", PredictivePolling.RELEASE_INTERVAL));
            values.putAll(Map.of(":lr", number(released.lastReleaseMillis()), ":ri", number(released.intervalMillis())));
            set = "#lr = :lr, #ri = :ri";
        }
        if (!failClosed) {
            return write(key, step, request(remove + (set.isEmpty() ? "" : " SET " + set),
                    "attribute_exists(#t)" + condition, names, values));
        }
        names.put("#fc", QueueState.FAIL_CLOSED_COUNT);
        Map<String, AttributeValue> counted = new HashMap<>(values);
        counted.putAll(Map.of(":minusOne", number(-1), ":one", ONE));
        Map<String, String> lastNames = new HashMap<>(names);
        lastNames.put("#ttl", TTL_ATTRIBUTE);
        Map<String, AttributeValue> lastValues = new HashMap<>(counted);
        lastValues.put(":ttl", number(ttlFor(nowMillis)));
        String guard = "attribute_exists(#t)" + condition;
        String lastUpdate = remove + " SET #ttl = :ttl" + (set.isEmpty() ? "" : ", " + set) + " ADD #fc :minusOne";
        String otherUpdate = remove + (set.isEmpty() ? "" : " SET " + set) + " ADD #fc :minusOne";
        Supplier<UpdateItemRequest.Builder> lastOne = () -> request(lastUpdate, guard + " AND #fc = :one", lastNames,
                lastValues);
        Supplier<UpdateItemRequest.Builder> oneOfMore = () -> request(otherUpdate, guard + " AND NOT #fc = :one",
                names, counted);
        // Two complementary forms: the last one's, which sets a finite TTL in the write that takes the count to 0
        // (no follow-up request that could fail is needed, R7), and one that only applies while the count is not
        // 1, so it never takes it to 0. Each is refused by its count condition only if the count moved across 1
        // since the other was refused: then the other is sent again. Each removes #t on attribute_exists(#t), so
        // of all their attempts (SDK retries of a lost answer included) at most one applies: fc falls by one once.
        boolean last = true;
        Written written = write(key, step, lastOne.get());
        // An entry's ticket never changes: if it is gone, it left (or one of our attempts removed it).
        while (!written.applied() && written.state().entry(id) != null) {
            boolean countIsOne = countIsOne(written.state());
            if (countIsOne == last) {
                return written; // the count let this form through: another condition refused it
            }
            last = countIsOne;
            written = write(key, step, last ? lastOne.get() : oneOfMore.get());
        }
        return written;
    }

    /** Whether the item's {@code fc} is the number 1, as {@code #fc = :one} compares it (1.0 is 1). */
    private static boolean countIsOne(QueueState state) {
        AttributeValue count = state.item().get(QueueState.FAIL_CLOSED_COUNT);
        if (count == null || count.n() == null) {
            return false;
        }
        try {
            return new BigDecimal(count.n()).compareTo(BigDecimal.ONE) == 0;
        }
        catch (NumberFormatException unreadable) {
            return false;
        }
    }

    /**
     * Request 5: removes {@code stale} entries, each only if not renewed since it was seen; at most
     * {@link #MAX_PURGE} of them, the lowest tickets first, since one expression may hold 4 KB only.
     */
    QueueState purge(LockKey key, String self, List<QueueState.Entry> stale) {
        // The purger's own ticket: also keeps the update from creating an item that TTL deleted meanwhile.
        return purge(key, stale, "attribute_exists(#self)", Map.of("#self", ticket(self)), Map.of(), null);
    }

    /**
     * {@link #purge(LockKey, String, List)} sent after the purger was granted, for entries that did not keep it out:
     * no caller waits for it, so it is bounded as any background request.
     */
    QueueState purgeBeside(LockKey key, String self, List<QueueState.Entry> stale) {
        return purge(key, stale, "attribute_exists(#self)", Map.of("#self", ticket(self)), Map.of(),
                backgroundTimeout);
    }

    /**
     * A purge of {@code stale} on {@code guard}, which must hold only while the item exists; {@code timeout}
     * {@code null}: the client's limits (a waiter's purge may be what lets it hold).
     */
    private QueueState purge(LockKey key, List<QueueState.Entry> stale, String guard, Map<String, String> guardNames,
            Map<String, AttributeValue> guardValues, Duration timeout) {
        stale = stale.subList(0, Math.min(stale.size(), MAX_PURGE));
        Map<String, String> names = new HashMap<>(guardNames);
        Map<String, AttributeValue> values = new HashMap<>(guardValues);
        StringBuilder remove = new StringBuilder("REMOVE ");
        StringBuilder condition = new StringBuilder(guard);
        for (int i = 0; i < stale.size(); i++) {
            QueueState.Entry entry = stale.get(i);
            names.put("#t" + i, ticket(entry.id()));
            names.put("#e" + i, expiry(entry.id()));
            names.put("#o" + i, owner(entry.id()));
            names.put("#m" + i, mode(entry.id()));
            names.put("#w" + i, address(entry.id()));
            remove.append(i == 0 ? "" : ", ").append("#t").append(i).append(", #e").append(i).append(", #o").append(i)
                    .append(", #m").append(i).append(", #w").append(i);
            condition.append(" AND ").append(sameLeaseEnd("#e" + i, ":e" + i, entry.expiresAtMillis(), values));
        }
        return write(key, ProtocolStep.PURGE, UpdateItemRequest.builder()
                .updateExpression(remove.toString())
                .conditionExpression(condition.toString())
                .expressionAttributeNames(names)
                .expressionAttributeValues(values), timeout).state();
    }

    /**
     * The condition that the attribute {@code name} still holds the lease end {@code expiry} read from it (bound to
     * {@code value}), i.e. that the entry was not renewed since. One read as 0 was missing or not a number (an item
     * edited by hand or by another tool: every entry dynamolock writes has a lease end), and must still be.
     */
    private static String sameLeaseEnd(String name, String value, long expiry, Map<String, AttributeValue> values) {
        values.put(value, number(expiry));
        if (expiry != 0) {
            return name + " = " + value;
        }
        values.put(":numberType", AttributeValue.fromS("N"));
        return "(" + name + " = " + value + " OR attribute_not_exists(" + name + ") OR NOT attribute_type(" + name
                + ", :numberType))";
    }

    /**
     * How long a waiter's poll may take, {@code timeLeft} being what its wait has left ({@code null}: not a
     * waiter's): no longer than that, so that a slow answer cannot keep the caller past its deadline, nor than a
     * renewal may take (the waiter tries again sooner), nor than the client's own call timeout, if it has one.
     * {@code null} leaves the client's timeouts alone. (An enqueue and a purge keep the client's timeouts: each may
     * be what lets the caller hold, however little of its wait is left; a wait of zero still sends them.)
     */
    Duration waitTimeout(Duration timeLeft) {
        if (timeLeft == null) {
            return null;
        }
        Duration bound = timeLeft.compareTo(backgroundTimeout) < 0 ? timeLeft : backgroundTimeout;
        if (clientTimeout != null && clientTimeout.compareTo(bound) < 0) {
            bound = clientTimeout;
        }
        return bound.compareTo(Duration.ofMillis(1)) < 0 ? Duration.ofMillis(1) : bound;
    }

    /**
     * {@link #settleTtl} after a write that returned {@code state}, but a failure is only logged: the next write of
     * the lock (a heartbeat at the latest, while an entry is live) settles it.
     */
    QueueState keepTtl(LockKey key, QueueState state, long nowMillis) {
        try {
            settleTtl(key, state, nowMillis);
        }
        catch (RuntimeException ex) {
            log.warn("Could not settle the TTL of {}; the next write of the lock will", key, ex);
        }
        return state;
    }

    /**
     * After a write, from the item it returned: requests 6 and 8, when needed.
     * <ul>
     * <li><b>Raise TTL</b> (6) when an entry expires later than the TTL allows (a longer lease shares the lock):
     * {@code SET expiresAt = :ttl} if {@code expiresAt < :ttl}. It never lowers the TTL, and never sets
     * "never": only a fail-closed entry's own writes do.</li>
     * <li><b>Lower TTL</b> (8) when the TTL is "never" but no fail-closed entry is left (an {@code fc} that does
     * not count the entries: the last one's removal says so in its own request):
     * {@code SET expiresAt = :ttl} if {@code expiresAt = :never AND fc = 0},
     * so a fail-closed entry that joined meanwhile keeps its "never". Refused because another writer lowered it
     * first, from an item that may lack entries this one has, it is followed by a Raise TTL if need be.</li>
     * </ul>
     */
    private void settleTtl(LockKey key, QueueState state, long nowMillis) {
        if (state == QueueState.ABSENT) {
            return;
        }
        long latest = Math.max(nowMillis, state.latestExpiryMillis());
        if (state.ttlEpochSeconds() >= NEVER_TTL_SECONDS) {
            if (!state.holdsFailClosed()) {
                Written lowered = write(key, ProtocolStep.LOWER_TTL, request("SET #ttl = :ttl",
                        "#ttl = :never AND (attribute_not_exists(#fc) OR #fc = :zero)",
                        Map.of("#ttl", TTL_ATTRIBUTE, "#fc", QueueState.FAIL_CLOSED_COUNT),
                        Map.of(":ttl", number(ttlFor(latest)), ":never", number(NEVER_TTL_SECONDS),
                                ":zero", number(0))));
                if (!lowered.applied() && lowered.state().ttlEpochSeconds() < NEVER_TTL_SECONDS) {
                    // Another writer lowered it first, from an item that may lack an entry ours has (one with a
                    // longer lease that enqueued since): raise it if that entry needs more.
                    settleTtl(key, lowered.state(), nowMillis);
                }
            }
            return;
        }
        if (state.holdsFailClosed() || state.ttlEpochSeconds() * 1000 >= latest + MIN_TTL_MARGIN.toMillis()) {
            return; // a fail-closed entry's own writes set "never"
        }
        update(key, ProtocolStep.RAISE_TTL, request("SET #ttl = :ttl", "attribute_exists(#next) AND #ttl < :ttl",
                Map.of("#ttl", TTL_ATTRIBUTE, "#next", QueueState.NEXT), Map.of(":ttl", number(ttlFor(latest)))));
    }

    /**
     * A conditional write's outcome: the item after it, or as it stood when the condition failed.
     * {@code firstAttempt}: the answer came from the request's first attempt, so a failed condition was not made to
     * fail by an earlier attempt of the same request whose answer was lost (an SDK retry).
     */
    record Written(QueueState state, boolean applied, boolean firstAttempt) {
    }

    private QueueState update(LockKey key, ProtocolStep step, UpdateItemRequest.Builder request) {
        return write(key, step, request).state();
    }

    private Written write(LockKey key, ProtocolStep step, UpdateItemRequest.Builder request) {
        // Background requests (and a release, which may be retried in the background): bounded.
        return write(key, step, request,
                step != ProtocolStep.ENQUEUE && step != ProtocolStep.PURGE ? backgroundTimeout : null);
    }

    /** {@code timeout}: the longest the write may take, SDK retries included; {@code null}: the client's limits. */
    private Written write(LockKey key, ProtocolStep step, UpdateItemRequest.Builder request, Duration timeout) {
        return write(key, step, request, timeout, null);
    }

    /** As above; {@code attempts}, if not {@code null}, hears of the write's attempts. */
    private Written write(LockKey key, ProtocolStep step, UpdateItemRequest.Builder request, Duration timeout,
            MetricPublisher attempts) {
        request.overrideConfiguration(c -> {
            c.putExecutionAttribute(ProtocolStep.ATTRIBUTE, step);
            if (timeout != null) {
                c.apiCallTimeout(timeout);
            }
            if (attempts != null) {
                clientPublishers.forEach(c::addMetricPublisher);
                c.addMetricPublisher(attempts);
            }
        });
        try {
            return new Written(QueueState.of(client.updateItem(request.tableName(tableName).key(key(key))
                    .returnValues(ReturnValue.ALL_NEW)
                    .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                    .build()).attributes()), true, true);
        }
        catch (ConditionalCheckFailedException ex) {
            // The old item says why: our entry is there already (a retried enqueue), or gone (purged, broken), or
            // a stale entry was renewed. Callers decide from the state.
            return new Written(QueueState.of(ex.item()), false, ex.numAttempts() != null && ex.numAttempts() == 1);
        }
        catch (ResourceNotFoundException ex) {
            throw missingTable(ex);
        }
        catch (DynamoDbException ex) {
            if (isValidationError(ex, "item size has exceeded")) {
                throw new LockQueueFullException("The lock item of " + key + " in table '" + tableName
                        + "' reached DynamoDB's 400 KB item limit;"
                        + " lower maxQueueLength or shorten the owner name", ex);
            }
            throw wrongSchemaOr(ex);
        }
    }

    private RuntimeException wrongSchemaOr(DynamoDbException ex) {
        return isWrongKeySchema(ex) ? wrongKeySchema(ex) : ex;
    }

    private static boolean isValidationError(DynamoDbException ex, String messagePart) {
        return ex.awsErrorDetails() != null && "ValidationException".equals(ex.awsErrorDetails().errorCode())
                && String.valueOf(ex.getMessage()).toLowerCase().contains(messagePart);
    }

    private LockTableException missingTable(ResourceNotFoundException ex) {
        return new LockTableException("Lock table '" + tableName + "' does not exist. Create it with"
                + " TableBootstrap.createIfMissing(): " + TableShape.DESCRIPTION, ex);
    }

    /** DynamoDB's answers when a request's key does not fit the table's key schema. */
    private static boolean isWrongKeySchema(DynamoDbException ex) {
        if (ex.awsErrorDetails() == null || !"ValidationException".equals(ex.awsErrorDetails().errorCode())) {
            return false;
        }
        String message = String.valueOf(ex.awsErrorDetails().errorMessage()).toLowerCase(Locale.ROOT);
        return message.contains("key element does not match the schema") || message.contains("conditions on the keys")
                || message.contains("type mismatch for key") || message.contains("missing the key");
    }

    private LockTableException wrongKeySchema(DynamoDbException ex) {
        return new LockTableException("Lock table '" + tableName + "' does not have the keys dynamolock needs (DynamoDB: "
                + ex.awsErrorDetails().errorMessage() + "). Expected " + TableShape.DESCRIPTION + "; check it with"
                + " TableBootstrap.verify(), and point dynamolock at another table or recreate this one", ex);
    }

    private static long ttlFor(long expiresAtMillis) {
        return (expiresAtMillis + ITEM_TTL_MARGIN.toMillis()) / 1000 + 1;
    }

    private static Map<String, AttributeValue> key(LockKey key) {
        return Map.of(PARTITION_KEY, AttributeValue.fromS(key.entity()), SORT_KEY, AttributeValue.fromS(key.namespace()));
    }

    static String ticket(String id) {
        return QueueState.TICKET_PREFIX + id;
    }

    static String expiry(String id) {
        return QueueState.EXPIRY_PREFIX + id;
    }

    static String owner(String id) {
        return QueueState.OWNER_PREFIX + id;
    }

    static String mode(String id) {
        return QueueState.MODE_PREFIX + id;
    }

    static String address(String id) {
        return QueueState.ADDRESS_PREFIX + id;
    }

    static String failClosed(String id) {
        return QueueState.FAIL_CLOSED_PREFIX + id;
    }

    private static AttributeValue number(long value) {
        return AttributeValue.fromN(Long.toString(value));
    }
}
