package io.dynamolock.core.internal;

import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockOptionException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * A {@code LockTemplate}'s options, checked once when the template is built.
 * Internal: built by {@code LockTemplate.Builder}.
 */
public record LockSettings(String tableName, String defaultNamespace, Duration lease, Duration heartbeatInterval,
        Duration defaultWait, String ownerName, Duration minPollInterval, Duration maxPollInterval,
        int maxQueueLength, Clock clock, List<LockListener> listeners) {

    /** Owner attribute names stay well inside DynamoDB's limits and keep the item small. */
    static final int MAX_OWNER_NAME_LENGTH = 200;

    public LockSettings {
        Keys.requireTableName(tableName);
        Keys.requireNamespace(defaultNamespace, "defaultNamespace");
        requireLease(lease, "leaseDuration");
        requirePositive(heartbeatInterval, "heartbeatInterval");
        requireLeaseLongerThanHeartbeat(lease, heartbeatInterval);
        Waits.requireValid(defaultWait, "defaultWait");
        if (ownerName == null || ownerName.isBlank() || ownerName.length() > MAX_OWNER_NAME_LENGTH) {
            throw new LockOptionException("ownerName", ownerName, "ownerName '" + Printable.escape(ownerName)
                    + "' must be 1 to " + MAX_OWNER_NAME_LENGTH
                    + " characters and not blank; leave it unset for host:pid");
        }
        requireAtMostAYear(minPollInterval, "minPollInterval", LONG_POLLS);
        requireAtMostAYear(maxPollInterval, "maxPollInterval", LONG_POLLS);
        if (maxPollInterval.compareTo(minPollInterval) < 0) {
            throw new LockOptionException("maxPollInterval", maxPollInterval, "maxPollInterval " + maxPollInterval + " is shorter than minPollInterval "
                    + minPollInterval + "; the longest pause between polls must be at least the shortest");
        }
        if (maxQueueLength < 1) {
            throw new LockOptionException("maxQueueLength", maxQueueLength, "maxQueueLength " + maxQueueLength + " must be at least 1");
        }
        if (clock == null) {
            throw new LockOptionException("clock", null, "clock must not be null");
        }
        listeners = List.copyOf(listeners);
    }

    /** Checks a lease against this template's heartbeat interval (per-request leases too). */
    static void requireLeaseLongerThanHeartbeat(Duration lease, Duration heartbeatInterval) {
        if (lease.compareTo(heartbeatInterval) <= 0) {
            throw new LockOptionException("leaseDuration", lease, "lease " + lease + " must be longer than the heartbeat interval "
                    + heartbeatInterval + ", or every entry would expire before it is renewed; a lease of twice the"
                    + " heartbeat interval or more is usual");
        }
    }

    /**
     * The longest lease: far above any useful one (heartbeats renew it, so seconds to minutes suffice) and far
     * below what overflows the nanosecond arithmetic of lease deadlines (292 years).
     */
    static final Duration MAX_LEASE = Duration.ofDays(365);

    private static final String LONG_POLLS = "A waiter renews its entry meanwhile, so polls a minute or more apart"
            + " only delay its turn";

    /** Checks a lease: positive and at most {@link #MAX_LEASE}. */
    static void requireLease(Duration lease, String name) {
        requireAtMostAYear(lease, name, "A holder that dies blocks the lock for a whole lease; heartbeats renew it,"
                + " so seconds to minutes are enough");
    }

    /**
     * Positive and at most {@link #MAX_LEASE}: the nanosecond arithmetic of deadlines and pauses overflows past 292
     * years, which a waiter met only as an ArithmeticException.
     */
    private static void requireAtMostAYear(Duration value, String name, String why) {
        requirePositive(value, name);
        if (value.compareTo(MAX_LEASE) > 0) {
            throw new LockOptionException(name, value, name + " " + value + " is too long: at most "
                    + MAX_LEASE.toDays() + " days. " + why);
        }
    }

    static void requirePositive(Duration value, String name) {
        if (value == null || value.isZero() || value.isNegative()) {
            throw new LockOptionException(name, value, name + " " + value + " must be a positive duration");
        }
    }
}
