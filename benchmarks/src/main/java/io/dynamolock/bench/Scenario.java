package io.dynamolock.bench;

import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/** The scenarios of a run, by number and name (the report's section numbers). */
enum Scenario {

    UNCONTENDED("uncontended"),
    CONTENDED("contended"),
    HANDOFF("handoff"),
    MANY_ENTITIES("many-entities"),
    WAITING_COST("waiting-cost"),
    /** Computed from the requests of 1, 2 and 5; runs nothing of its own. */
    COST("cost"),
    PROCESSES("processes"),
    RENEWAL_CAPACITY("renewal-capacity");

    final String label;

    Scenario(String label) {
        this.label = label;
    }

    int number() {
        return ordinal() + 1;
    }

    /** The scenario of that number or name, or empty. */
    static Optional<Scenario> byName(String numberOrName) {
        return Arrays.stream(values())
                .filter(s -> s.label.equals(numberOrName) || Integer.toString(s.number()).equals(numberOrName))
                .findFirst();
    }

    /** E.g. {@code 1 uncontended, 2 contended, ...}. */
    static String describeAll() {
        return Arrays.stream(values()).map(s -> s.number() + " " + s.label).collect(Collectors.joining(", "));
    }
}
