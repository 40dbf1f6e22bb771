package io.dynamolock.autoconfigure;

import io.dynamolock.core.DynamoLockException;

/**
 * One key of {@code dynamolock.dynamodb.access-key-id} and {@code secret-access-key} is set without the other. Checked
 * when the client is built rather than when the properties are bound: Boot validates bound properties before it
 * reports unknown names, so a misspelt key ({@code secret-key}) would be reported as a missing one. Names the
 * properties, never their values. Reported by {@link DynamoLockFailureAnalyzer}.
 */
class IncompleteCredentialsException extends DynamoLockException {

    static final String KEY_ID = "dynamolock.dynamodb.access-key-id";
    static final String SECRET = "dynamolock.dynamodb.secret-access-key";

    private final String missing;

    /** @param secretSet whether the secret is the one set, the key id the one missing */
    IncompleteCredentialsException(boolean secretSet) {
        super((secretSet ? SECRET : KEY_ID) + " is set without " + (secretSet ? KEY_ID : SECRET)
                + ": a static key needs both");
        this.missing = secretSet ? KEY_ID : SECRET;
    }

    /** The property to set too. */
    String missing() {
        return missing;
    }

    /** The property set alone. */
    String set() {
        return missing.equals(KEY_ID) ? SECRET : KEY_ID;
    }
}
