package io.dynamolock.core.internal;

/** One lock: an entity in a namespace, i.e. one item of the table. */
record LockKey(String entity, String namespace) {

    @Override
    public String toString() {
        return "entity='" + entity + "' namespace='" + namespace + "'";
    }
}
