package io.dynamolock.bench;

/**
 * One acquisition by one contender, in {@link System#nanoTime()} (CLOCK_MONOTONIC on Linux: one clock for every
 * JVM on the machine, so grants of both JVMs can be merged).
 *
 * @param contender  the contender, e.g. {@code 1-3} (JVM 1, thread 3)
 * @param jvm        0 for the benchmark's JVM, 1 for the worker
 * @param waitStart  when it called acquire
 * @param granted    when acquire returned
 * @param released   when it called release: the end of its critical section
 * @param answered   when release returned: its request's answer was back
 * @param token      the lock's fencing token, -1 if it has none
 */
record Grant(String contender, int jvm, long waitStart, long granted, long released, long answered, long token) {

    long waitNanos() {
        return granted - waitStart;
    }

    long holdNanos() {
        return released - granted;
    }

    /** The release's own request, from its call to its answer. */
    long releaseNanos() {
        return answered - released;
    }

    String encode() {
        return contender + " " + jvm + " " + waitStart + " " + granted + " " + released + " " + answered + " " + token;
    }

    static Grant decode(String line) {
        String[] p = line.trim().split(" ");
        return new Grant(p[0], Integer.parseInt(p[1]), Long.parseLong(p[2]), Long.parseLong(p[3]), Long.parseLong(p[4]),
                Long.parseLong(p[5]), Long.parseLong(p[6]));
    }
}
