package io.dynamolock.core.internal;

/** One lock: an entity in a namespace, i.e. one item of the table. */
record LockKey(String entity, String namespace) {

    /** For log lines and messages, names escaped ({@link Printable}). */
    @Override
    public String toString() {
        return "entity='" + Printable.escape(entity) + "' namespace='" + Printable.escape(namespace) + "'";
    }
}
