package io.dynamolock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.function.ToLongBiFunction;
import java.util.function.ToLongFunction;
import java.util.Map;

/** The figures computed from a run's grants: pure functions. */
final class Stats {

    private Stats() {
    }

    /** The {@code p}-th percentile (0 < p <= 100) by the nearest-rank method; 0 for no values. */
    static double percentile(double[] values, double p) {
        if (values.length == 0) {
            return 0;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
    }

    /** Jain's fairness index (sum x)^2 / (n * sum x^2): 1 when all are equal, 1/n when one takes all. */
    static double jain(long[] shares) {
        double sum = 0;
        double squares = 0;
        for (long x : shares) {
            sum += x;
            squares += (double) x * x;
        }
        return squares == 0 ? 1 : sum * sum / (shares.length * squares);
    }

    /** Grants per contender, in the order of {@code contenders} (a contender with no grant counts 0). */
    static long[] grantsPerContender(List<Grant> grants, List<String> contenders) {
        Map<String, Long> counts = new HashMap<>();
        grants.forEach(g -> counts.merge(g.contender(), 1L, Long::sum));
        return contenders.stream().mapToLong(c -> counts.getOrDefault(c, 0L)).toArray();
    }

    /**
     * FIFO overtakes: grants that went to a contender while another one, which had started waiting more than
     * {@code slackNanos} earlier, was still waiting. The slack is the request's flight time: two acquires
     * started within it reach DynamoDB in either order, so no lock can order them.
     */
    static int overtakes(List<Grant> grants, long slackNanos) {
        List<Grant> byStart = new ArrayList<>(grants);
        byStart.sort(Comparator.comparingLong(Grant::waitStart));
        int count = 0;
        long latestGrantOfEarlier = Long.MIN_VALUE;
        int earlier = 0;
        for (Grant g : byStart) {
            while (earlier < byStart.size() && byStart.get(earlier).waitStart() < g.waitStart() - slackNanos) {
                latestGrantOfEarlier = Math.max(latestGrantOfEarlier, byStart.get(earlier).granted());
                earlier++;
            }
            if (latestGrantOfEarlier > g.granted()) {
                count++;
            }
        }
        return count;
    }

    /** The fraction of {@code [from, to)} in which some contender was inside its critical section. */
    static double utilisation(List<Grant> grants, long from, long to) {
        List<Grant> byGrant = new ArrayList<>(grants);
        byGrant.sort(Comparator.comparingLong(Grant::granted));
        long busy = 0;
        long coveredTo = from;
        for (Grant g : byGrant) {
            long start = Math.max(g.granted(), coveredTo);
            long end = Math.min(g.released(), to);
            if (end > start) {
                busy += end - start;
                coveredTo = end;
            }
        }
        return to > from ? (double) busy / (to - from) : 0;
    }

    /**
     * Handoff latencies: from one holder's release to the next holder's grant, where the next holder is another
     * contender that was already waiting at the release. {@code sameJvm} picks handoffs within one JVM (true) or
     * across JVMs (false).
     */
    static double[] handoffMillis(List<Grant> grants, boolean sameJvm) {
        return handoffs(grants, sameJvm, (from, to) -> to.granted() - from.released());
    }

    /**
     * The handoffs of {@link #handoffMillis} split in two: the release's own request (from its call to its
     * answer), and the rest (from the release's answer to the next grant: how the next waiter learns of it).
     */
    static double[][] handoffPartsMillis(List<Grant> grants, boolean sameJvm) {
        return new double[][] {handoffs(grants, sameJvm, (from, to) -> from.answered() - from.released()),
            handoffs(grants, sameJvm, (from, to) -> to.granted() - from.answered())};
    }

    private static double[] handoffs(List<Grant> grants, boolean sameJvm, ToLongBiFunction<Grant, Grant> nanos) {
        List<Grant> byGrant = new ArrayList<>(grants);
        byGrant.sort(Comparator.comparingLong(Grant::granted));
        List<Double> gaps = new ArrayList<>();
        for (int i = 0; i + 1 < byGrant.size(); i++) {
            Grant from = byGrant.get(i);
            Grant to = byGrant.get(i + 1);
            if (!to.contender().equals(from.contender()) && to.waitStart() < from.released()
                    && (from.jvm() == to.jvm()) == sameJvm && to.granted() >= from.released()) {
                gaps.add(nanos.applyAsLong(from, to) / 1e6);
            }
        }
        return gaps.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** The mean of {@code nanos} over {@code grants}, in milliseconds; 0 for none. */
    static double meanMillis(List<Grant> grants, ToLongFunction<Grant> nanos) {
        return grants.stream().mapToLong(nanos).average().orElse(0) / 1e6;
    }

    /** Wait times in milliseconds. */
    static double[] waitMillis(List<Grant> grants) {
        return grants.stream().mapToDouble(g -> g.waitNanos() / 1e6).toArray();
    }

    /**
     * Grants whose token is lower than that of an earlier grant: for a lock whose token is its ticket (dynamolock),
     * grants out of the order in which requests reached DynamoDB. 0 for locks without tokens.
     */
    static int tokenOrderViolations(List<Grant> grants) {
        List<Grant> byGrant = new ArrayList<>(grants);
        byGrant.sort(Comparator.comparingLong(Grant::granted));
        int count = 0;
        long highest = Long.MIN_VALUE;
        for (Grant g : byGrant) {
            if (g.token() < 0) {
                continue;
            }
            if (g.token() < highest) {
                count++;
            }
            highest = Math.max(highest, g.token());
        }
        return count;
    }

    /** Grants whose critical sections overlap another's: must be 0 for any lock. */
    static int overlaps(List<Grant> grants) {
        List<Grant> byGrant = new ArrayList<>(grants);
        byGrant.sort(Comparator.comparingLong(Grant::granted));
        int count = 0;
        long latestRelease = Long.MIN_VALUE;
        for (Grant g : byGrant) {
            if (g.granted() < latestRelease) {
                count++;
            }
            latestRelease = Math.max(latestRelease, g.released());
        }
        return count;
    }
}
