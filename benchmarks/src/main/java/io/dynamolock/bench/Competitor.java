package io.dynamolock.bench;

import java.time.Duration;

/**
 * One lock implementation under test. One instance per JVM, shared by all of that JVM's contender threads,
 * as an application would share its lock client.
 */
interface Competitor extends AutoCloseable {

    /** Blocks until this thread holds the lock on {@code entity}; throws if that took longer than about {@code wait}. */
    Handle acquire(String entity, Duration wait) throws Exception;

    /** Stops background work (heartbeats); locks still held are abandoned. */
    @Override
    void close();

    /** A held lock. */
    interface Handle {
        void release() throws Exception;

        /** The lock's fencing token (dynamolock: the ticket, in grant order), or -1 if the lock has none. */
        default long token() {
            return -1;
        }
    }
}
