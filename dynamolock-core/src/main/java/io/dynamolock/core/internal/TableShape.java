package io.dynamolock.core.internal;

/**
 * The table shape the protocol needs, in words for error messages. Internal: shared with
 * {@code TableBootstrap}.
 */
public final class TableShape {

    public static final String PARTITION_KEY = QueueTable.PARTITION_KEY;
    public static final String SORT_KEY = QueueTable.SORT_KEY;
    public static final String TTL_ATTRIBUTE = QueueTable.TTL_ATTRIBUTE;

    public static final String DESCRIPTION = "partition key '" + PARTITION_KEY + "' (S), sort key '" + SORT_KEY
            + "' (S), TTL enabled on '" + TTL_ATTRIBUTE + "'";

    private TableShape() {
    }

    /** The table-name rule, for {@code TableBootstrap}: one source for it, before any request. */
    public static String requireTableName(String tableName) {
        Keys.requireTableName(tableName);
        return tableName;
    }
}
