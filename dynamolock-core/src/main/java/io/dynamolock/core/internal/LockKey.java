package io.dynamolock.core.internal;

/** One lock: an entity in a namespace, i.e. one item of the table. */
record LockKey(String entity, String namespace) {

    /** For log lines and messages, with line breaks escaped ({@link Keys#printable}). */
    @Override
    public String toString() {
        return "entity='" + Keys.printable(entity) + "' namespace='" + Keys.printable(namespace) + "'";
    }
}
