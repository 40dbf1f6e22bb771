package io.dynamolock.core.test;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Reads lock items as stored, bypassing the library, for assertions on what a test left
 * in the table: {@code pk} = entity, {@code sk} = namespace, {@code next}, {@code t#id} /
 * {@code e#id} / {@code o#id} triples, {@code expiresAt}.
 */
public final class LockItems {

    private final DynamoDbClient client;
    private final String table;

    public LockItems(DynamoDbClient client, String table) {
        this.client = client;
        this.table = table;
    }

    /** One queue entry as stored: its random id and its owner's label. */
    public record Entry(String id, String owner, long ticket, long expiresAtMillis) {
    }

    /** A lock item as stored; {@code exists} false when there is no item. */
    public record Item(boolean exists, long next, Map<String, Entry> entries, long ttlEpochSeconds) {

        public List<Entry> byTicket() {
            return entries.values().stream().sorted(java.util.Comparator.comparingLong(Entry::ticket)).toList();
        }

        /** Entries whose owner starts with {@code ownerPrefix} (a template's owner name). */
        public List<Entry> of(String ownerPrefix) {
            return byTicket().stream().filter(e -> e.owner().startsWith(ownerPrefix)).toList();
        }
    }

    public Item read(String entity, String namespace) {
        Map<String, AttributeValue> item = client.getItem(b -> b.tableName(table).consistentRead(true)
                .key(Map.of("pk", AttributeValue.fromS(entity), "sk", AttributeValue.fromS(namespace)))).item();
        return parse(item);
    }

    /** Every item of the table. */
    public List<Item> scan() {
        return client.scanPaginator(b -> b.tableName(table).consistentRead(true)).items().stream()
                .map(LockItems::parse).toList();
    }

    /** Number of queue entries in the whole table. */
    public int entriesInTable() {
        return scan().stream().mapToInt(i -> i.entries().size()).sum();
    }

    public static Item parse(Map<String, AttributeValue> item) {
        if (item == null || item.isEmpty()) {
            return new Item(false, 0, Map.of(), 0);
        }
        Map<String, Entry> entries = new TreeMap<>();
        item.forEach((name, value) -> {
            if (name.startsWith("t#")) {
                String id = name.substring(2);
                AttributeValue expiry = item.get("e#" + id);
                AttributeValue owner = item.get("o#" + id);
                entries.put(id, new Entry(id, owner == null ? null : owner.s(), Long.parseLong(value.n()),
                        expiry == null ? 0 : Long.parseLong(expiry.n())));
            }
        });
        AttributeValue next = item.get("next");
        AttributeValue ttl = item.get("expiresAt");
        return new Item(true, next == null ? 0 : Long.parseLong(next.n()), Map.copyOf(entries),
                ttl == null ? 0 : Long.parseLong(ttl.n()));
    }
}
