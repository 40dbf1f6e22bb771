package io.dynamolock.core.internal;

import io.dynamolock.core.LockOptionException;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Checks the names that become DynamoDB keys, so bad ones fail before any request. */
final class Keys {

    /** DynamoDB's limits on a partition key and a sort key value, in UTF-8 bytes. */
    static final int MAX_ENTITY_BYTES = 2048;
    static final int MAX_NAMESPACE_BYTES = 1024;

    /** C0 and C1 control characters (line feed, carriage return, next line...) and the Unicode line separators. */
    private static final Pattern UNPRINTABLE = Pattern.compile("[\\x00-\\x1F\\x7F-\\x9F\\u2028\\u2029]");

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
            throw new LockOptionException("tableName", tableName, "tableName '" + tableName + "' is not a valid DynamoDB table name:"
                    + " use 3 to 255 letters, digits, '_', '-' or '.'");
        }
    }

    private static String requireKey(String value, String what, int maxBytes, String keyKind) {
        if (value == null) {
            throw new LockOptionException(what, null, what + " must not be null");
        }
        if (value.isBlank()) {
            throw new LockOptionException(what, value, what + " '" + value + "' must not be blank");
        }
        CharsetEncoder utf8 = StandardCharsets.UTF_8.newEncoder();
        if (!utf8.canEncode(value)) {
            throw new LockOptionException(what, value, what + " '" + value + "' is not valid Unicode (a lone surrogate?)");
        }
        int bytes = value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > maxBytes) {
            throw new LockOptionException(what, value, what + " '" + abbreviate(value) + "' is " + bytes
                    + " bytes in UTF-8; DynamoDB allows at most " + maxBytes + " bytes in a " + keyKind
                    + ". Lock on a shorter identifier, e.g. a hash of it");
        }
        return value;
    }

    /**
     * The text with control characters and line separators as {@code \\uXXXX}, for log lines: entities, namespaces
     * and owner names are callers' text and table data, and a line break in one would let it forge a log line, such
     * as an operator's break, which is an audit record.
     */
    static String printable(String text) {
        return text == null ? null : UNPRINTABLE.matcher(text).replaceAll(
                c -> Matcher.quoteReplacement(String.format("\\u%04x", (int) c.group().charAt(0))));
    }

    static String abbreviate(String value) {
        return value.length() <= 60 ? value : value.substring(0, 57) + "...";
    }
}
