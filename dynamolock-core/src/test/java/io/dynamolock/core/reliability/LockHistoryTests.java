package io.dynamolock.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.test.LockHistory;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The checker of the multi-process tests must catch what it claims to catch: each test feeds
 * it a small history with one violation (and the correct history it was made from).
 */
class LockHistoryTests {

    /** A complete, valid critical section of worker {@code w}: grant at {@code enter}, release at {@code exit}. */
    static void section(LockHistory history, String w, long token, long enter, long exit, String fenced) {
        history.add("ACQUIRED w=" + w + " entity=e token=" + token + " owner=" + w + "/" + token + " seq=" + enter
                + " wall=0 waitedMs=0");
        history.add("CLAIMED w=" + w + " entity=e token=" + token + " ok=" + !fenced.equals("REJECTED"));
        history.add("WROTE w=" + w + " entity=e token=" + token + " validBefore=true fenced=" + fenced + " plain=OK");
        history.add("RELEASED w=" + w + " entity=e token=" + token + " seq=" + exit + " valid=true wall=0");
    }

    static Map<String, long[]> counters(long fenced, long plain) {
        return Map.of("e", new long[] {fenced, plain});
    }

    @Test
    void acceptsACorrectHistory() {
        LockHistory history = new LockHistory();
        section(history, "1", 10, 1, 2, "OK");
        section(history, "2", 11, 3, 4, "OK");
        assertThat(history.check(counters(2, 2)).violations()).isEmpty();
    }

    @Test
    void catchesOverlappingSections() {
        LockHistory history = new LockHistory();
        section(history, "1", 10, 1, 4, "OK");
        section(history, "2", 11, 3, 5, "OK");
        assertThat(history.check(counters(2, 2)).violations()).anyMatch(v -> v.startsWith("exclusion"));
    }

    @Test
    void catchesTokensOutOfGrantOrder() {
        LockHistory history = new LockHistory();
        section(history, "1", 11, 1, 2, "OK");
        section(history, "2", 10, 3, 4, "OK");
        assertThat(history.check(counters(2, 2)).violations()).anyMatch(v -> v.startsWith("order"));
    }

    @Test
    void catchesLostUpdates() {
        LockHistory history = new LockHistory();
        section(history, "1", 10, 1, 2, "OK");
        section(history, "2", 11, 3, 4, "OK");
        assertThat(history.check(counters(1, 1)).violations()).anyMatch(v -> v.startsWith("fenced counter"))
                .anyMatch(v -> v.startsWith("plain counter"));
    }

    /** The soak's false alarm: a write rejected on the SDK's retry had landed on its first attempt. */
    @Test
    void aWriteRejectedOnARetryMayHaveLanded() {
        LockHistory history = new LockHistory();
        history.add("ACQUIRED w=1 entity=e token=10 owner=1/10 seq=1 wall=0 waitedMs=0");
        history.add("CLAIMED w=1 entity=e token=10 ok=true");
        history.add("LOST w=1 entity=e token=10 wall=0 valid=false");
        history.add("WROTE w=1 entity=e token=10 validBefore=true fenced=RETRIED plain=OK");
        history.add("RELEASED w=1 entity=e token=10 seq=4 valid=false wall=0");
        section(history, "2", 11, 3, 5, "OK");
        history.paused("1", 2, 4);
        assertThat(history.check(counters(2, 2)).violations()).isEmpty();
        assertThat(history.check(counters(1, 1)).violations()).isEmpty();
        assertThat(history.check(counters(3, 2)).violations()).anyMatch(v -> v.startsWith("fenced counter"));
    }

    @Test
    void catchesAFencedWriteRejectedWhileValid() {
        LockHistory history = new LockHistory();
        section(history, "1", 10, 1, 2, "REJECTED");
        assertThat(history.check(counters(0, 1)).violations()).anyMatch(v -> v.startsWith("fencing"));
    }

    @Test
    void catchesAGrantBeforeAKilledHolderDied() {
        LockHistory history = new LockHistory();
        history.add("ACQUIRED w=k entity=e token=10 owner=k/1 seq=1 wall=0 waitedMs=0");
        section(history, "2", 11, 3, 4, "OK");
        history.killed("k", 5);
        assertThat(history.check(counters(1, 1)).violations()).anyMatch(v -> v.startsWith("exclusion"));

        LockHistory afterDeath = new LockHistory();
        afterDeath.add("ACQUIRED w=k entity=e token=10 owner=k/1 seq=1 wall=0 waitedMs=0");
        section(afterDeath, "2", 11, 6, 7, "OK");
        afterDeath.killed("k", 5);
        assertThat(afterDeath.check(counters(1, 1)).violations()).isEmpty();
    }

    @Test
    void catchesASkippedWaiter() {
        LockHistory history = new LockHistory();
        history.add("WAITING w=1 entity=e ticket=10 owner=1/a");
        section(history, "2", 11, 1, 2, "OK");
        assertThat(history.check(counters(1, 1)).violations()).anyMatch(v -> v.startsWith("FIFO"));
    }

    @Test
    void placesAGrantLoggedLateByAStoppedProcessBeforeLaterTokens() {
        // Worker p asked at 1, was granted token 10, was stopped before it logged the grant (at 5); its lease ran
        // out, worker 2 was granted token 11 at 3. Without the pause this is a violation.
        for (boolean pausedBetween : new boolean[] {true, false}) {
            LockHistory history = new LockHistory();
            history.add("ACQUIRED w=p entity=e token=10 owner=p/1 reqSeq=1 seq=5 wall=0 waitedMs=0");
            history.add("LOST w=p entity=e token=10 wall=0 valid=false");
            history.add("RELEASED w=p entity=e token=10 seq=6 valid=false wall=0");
            section(history, "2", 11, 3, 4, "OK");
            if (pausedBetween) {
                history.paused("p", 2, 4);
            }
            assertThat(history.check(counters(1, 1)).violations().isEmpty()).isEqualTo(pausedBetween);
        }
    }

    @Test
    void acceptsAStoppedHolderThatLostItsLease() {
        LockHistory history = new LockHistory();
        history.add("ACQUIRED w=p entity=e token=10 owner=p/1 seq=1 wall=0 waitedMs=0");
        section(history, "2", 11, 3, 4, "OK");
        history.add("LOST w=p entity=e token=10 wall=0 valid=false");
        history.add("WROTE w=p entity=e token=10 validBefore=false fenced=REJECTED plain=SKIPPED");
        history.add("RELEASED w=p entity=e token=10 seq=6 valid=false wall=0");
        history.paused("p", 2, 5);
        LockHistory.Report report = history.check(counters(1, 1));
        assertThat(report.violations()).isEmpty();
        assertThat(report.lost()).isEqualTo(1);
    }
}
