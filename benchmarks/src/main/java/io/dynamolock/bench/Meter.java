package io.dynamolock.bench;

import java.util.Map;
import java.util.TreeMap;

/**
 * Requests by operation and the request units they consumed, as metered by {@link MeteredNetwork}.
 *
 * @param failedWrites conditional writes refused by DynamoDB (counted as one write unit each)
 */
record Meter(Map<String, Long> requests, double readUnits, double writeUnits, long failedWrites) {

    static final Meter NONE = new Meter(Map.of(), 0, 0, 0);

    long total() {
        return requests.values().stream().mapToLong(Long::longValue).sum();
    }

    Meter plus(Meter other) {
        Map<String, Long> sum = new TreeMap<>(requests);
        other.requests.forEach((op, n) -> sum.merge(op, n, Long::sum));
        return new Meter(sum, readUnits + other.readUnits, writeUnits + other.writeUnits,
                failedWrites + other.failedWrites);
    }

    /** One line, for a worker JVM's answer: {@code rru wru failed op=n,op=n}. */
    String encode() {
        StringBuilder ops = new StringBuilder();
        requests.forEach((op, n) -> ops.append(ops.isEmpty() ? "" : ",").append(op).append('=').append(n));
        return readUnits + " " + writeUnits + " " + failedWrites + " " + (ops.isEmpty() ? "-" : ops);
    }

    static Meter decode(String line) {
        String[] parts = line.trim().split(" ");
        Map<String, Long> ops = new TreeMap<>();
        if (!parts[3].equals("-")) {
            for (String op : parts[3].split(",")) {
                String[] kv = op.split("=");
                ops.put(kv[0], Long.parseLong(kv[1]));
            }
        }
        return new Meter(ops, Double.parseDouble(parts[0]), Double.parseDouble(parts[1]), Long.parseLong(parts[2]));
    }

    /** E.g. {@code GetItem 3.1, UpdateItem 2.0} per {@code divisor}. */
    String describePer(double divisor) {
        StringBuilder text = new StringBuilder();
        requests.forEach((op, n) -> text.append(text.isEmpty() ? "" : ", ").append(op).append(' ')
                .append(String.format(java.util.Locale.ROOT, "%.2f", n / divisor)));
        return text.toString();
    }
}
