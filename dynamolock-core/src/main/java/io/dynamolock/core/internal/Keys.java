package io.dynamolock.core.internal;

import io.dynamolock.core.LockOptionException;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.StandardCharsets;

/** Checks the names that become DynamoDB keys, so bad ones fail before any request. */
final class Keys {

    /** DynamoDB's limits on a partition key and a sort key value, in UTF-8 bytes. */
    static final int MAX_ENTITY_BYTES = 2048;
    static final int MAX_NAMESPACE_BYTES = 1024;

    private Keys() {
    }

    static String requireEntity(String entity) {
        return requireKey(entity, "entity", MAX_ENTITY_BYTES, "partition key");
    }

    static String requireNamespace(String namespace, String what) {
        return requireKey(namespace, what, MAX_NAMESPACE_BYTES, "sort key");
    }

    static void requireTableName(String tableName) {
        if (tableName == null || !tableName.matches("[a-zA-Z0-9_.-]{3,255}")) {
            throw new LockOptionException("tableName", tableName, "tableName '" + Printable.escape(tableName)
                    + "' is not a valid DynamoDB table name:"
                    + " use 3 to 255 letters, digits, '_', '-' or '.'");
        }
    }

    private static String requireKey(String value, String what, int maxBytes, String keyKind) {
        if (value == null) {
            throw new LockOptionException(what, null, what + " must not be null");
        }
        if (value.isBlank()) {
            throw new LockOptionException(what, value, what + " '" + Printable.escape(value) + "' must not be blank");
        }
        CharsetEncoder utf8 = StandardCharsets.UTF_8.newEncoder();
        if (!utf8.canEncode(value)) {
            throw new LockOptionException(what, value, what + " '" + Printable.escape(value)
                    + "' is not valid Unicode (a lone surrogate?)");
        }
        int bytes = value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > maxBytes) {
            throw new LockOptionException(what, value, what + " '" + Printable.escape(abbreviate(value)) + "' is "
                    + bytes + " bytes in UTF-8; DynamoDB allows at most " + maxBytes + " bytes in a " + keyKind
                    + ". Lock on a shorter identifier, e.g. a hash of it");
        }
        return value;
    }

    static String abbreviate(String value) {
        return value.length() <= 60 ? value : value.substring(0, 57) + "...";
    }
}
