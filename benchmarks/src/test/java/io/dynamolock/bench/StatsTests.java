package io.dynamolock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class StatsTests {

    private static final long MS = 1_000_000;

    /** A grant with times in ms. */
    private static Grant grant(String contender, int jvm, long waitStart, long granted, long released) {
        return new Grant(contender, jvm, waitStart * MS, granted * MS, released * MS, released * MS, -1);
    }

    @Test
    void percentileUsesNearestRank() {
        double[] values = IntStream.rangeClosed(1, 100).mapToDouble(i -> 101 - i).toArray();
        assertThat(Stats.percentile(values, 50)).isEqualTo(50);
        assertThat(Stats.percentile(values, 99)).isEqualTo(99);
        assertThat(Stats.percentile(values, 100)).isEqualTo(100);
        assertThat(Stats.percentile(new double[] {7}, 1)).isEqualTo(7);
        assertThat(Stats.percentile(new double[0], 50)).isZero();
    }

    @Test
    void jainIsOneForEqualSharesAndOneOverNWhenOneTakesAll() {
        assertThat(Stats.jain(new long[] {5, 5, 5, 5})).isEqualTo(1.0);
        assertThat(Stats.jain(new long[] {20, 0, 0, 0})).isEqualTo(0.25);
        assertThat(Stats.jain(new long[] {3, 1})).isCloseTo(16.0 / 20, within(1e-12));
    }

    @Test
    void grantsPerContenderCountsContendersWithoutGrants() {
        List<Grant> grants = List.of(grant("0-0", 0, 0, 1, 2), grant("0-0", 0, 2, 3, 4), grant("1-0", 1, 0, 5, 6));
        assertThat(Stats.grantsPerContender(grants, List.of("0-0", "1-0", "1-1"))).containsExactly(2, 1, 0);
    }

    @Test
    void overtakesCountsGrantsThatJumpedAnEarlierWaiter() {
        List<Grant> fifo = List.of(grant("a", 0, 0, 10, 30), grant("b", 0, 5, 30, 50), grant("c", 0, 40, 50, 70));
        assertThat(Stats.overtakes(fifo, MS)).isZero();

        // c started after b but was granted before it.
        List<Grant> jumped = List.of(grant("a", 0, 0, 10, 30), grant("b", 0, 5, 50, 70), grant("c", 0, 20, 30, 50));
        assertThat(Stats.overtakes(jumped, MS)).isEqualTo(1);
    }

    @Test
    void overtakesIgnoresStartsWithinTheSlack() {
        List<Grant> grants = List.of(grant("a", 0, 0, 30, 50), grant("b", 0, 3, 10, 30));
        assertThat(Stats.overtakes(grants, 5 * MS)).isZero();
        assertThat(Stats.overtakes(grants, 2 * MS)).isEqualTo(1);
    }

    @Test
    void utilisationIsTheUnionOfCriticalSectionsOverTheWindow() {
        List<Grant> grants = List.of(grant("a", 0, 0, 0, 10), grant("b", 0, 0, 20, 30), grant("c", 0, 0, 35, 60));
        assertThat(Stats.utilisation(grants, 0, 40 * MS)).isCloseTo(25.0 / 40, within(1e-12));
        // Overlapping sections count once.
        List<Grant> overlapping = List.of(grant("a", 0, 0, 0, 10), grant("b", 0, 0, 5, 15));
        assertThat(Stats.utilisation(overlapping, 0, 20 * MS)).isCloseTo(0.75, within(1e-12));
    }

    @Test
    void handoffsAreSplitByJvmAndSkipSelfHandoffsAndLateArrivals() {
        List<Grant> grants = List.of(
                grant("0-0", 0, 0, 0, 20),
                grant("0-1", 0, 1, 25, 45),    // same JVM, waiting at the release: 5 ms
                grant("1-0", 1, 2, 60, 80),    // across JVMs: 15 ms
                grant("1-0", 1, 81, 90, 110),  // the same contender again: not a handoff
                grant("0-0", 0, 115, 120, 140)); // started waiting after the release: not a handoff
        assertThat(Stats.handoffMillis(grants, true)).containsExactly(5.0);
        assertThat(Stats.handoffMillis(grants, false)).containsExactly(15.0);
    }

    @Test
    void tokenOrderViolationsCountsGrantsBelowAnEarlierToken() {
        List<Grant> inOrder = List.of(new Grant("a", 0, 0, 1, 2, 2, 5), new Grant("b", 0, 0, 3, 4, 4, 6));
        assertThat(Stats.tokenOrderViolations(inOrder)).isZero();
        List<Grant> outOfOrder = List.of(new Grant("a", 0, 0, 1, 2, 2, 6), new Grant("b", 0, 0, 3, 4, 4, 5),
                new Grant("c", 0, 0, 5, 6, 6, 7));
        assertThat(Stats.tokenOrderViolations(outOfOrder)).isEqualTo(1);
        assertThat(Stats.tokenOrderViolations(List.of(grant("a", 0, 0, 1, 2), grant("b", 0, 0, 3, 4)))).isZero();
    }

    @Test
    void overlapsFindsTwoHoldersAtOnce() {
        assertThat(Stats.overlaps(List.of(grant("a", 0, 0, 0, 10), grant("b", 0, 0, 10, 20)))).isZero();
        assertThat(Stats.overlaps(List.of(grant("a", 0, 0, 0, 10), grant("b", 0, 0, 9, 20)))).isEqualTo(1);
    }

    @Test
    void workerLinesRoundTrip() {
        Grant grant = new Grant("1-7", 1, 123, 456, 789, 790, 42);
        assertThat(Grant.decode(grant.encode())).isEqualTo(grant);
        Meter meter = new Meter(Map.of("GetItem", 3L, "UpdateItem", 2L), 1.5, 2.0, 1);
        assertThat(Meter.decode(meter.encode())).isEqualTo(meter);
        assertThat(Meter.decode(Meter.NONE.encode())).isEqualTo(Meter.NONE);
    }

    @Test
    void metersAddUpAndPriceRequestUnits() {
        Meter sum = new Meter(Map.of("UpdateItem", 2L), 0, 2, 0).plus(new Meter(Map.of("GetItem", 1L, "UpdateItem", 1L), 1, 1, 1));
        assertThat(sum.requests()).containsExactlyInAnyOrderEntriesOf(Map.of("GetItem", 1L, "UpdateItem", 3L));
        assertThat(sum.total()).isEqualTo(4);
        // 3 write units and 1 read unit for 2 acquisitions: (3 x 0.625 + 1 x 0.125) / 2 dollars per million.
        assertThat(Report.dollarsPerMillion(sum, 2)).isCloseTo(1.0, within(1e-12));
    }
}
