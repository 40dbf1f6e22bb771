package io.dynamolock.core.test;

import java.util.HashMap;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * The write pattern that keeps a lock holder whose lease was lost (a long GC pause, a
 * stopped VM, a partition) from overwriting the work of the next holder: every write to the
 * protected item carries the lock's {@linkplain io.dynamolock.core.LockHandle#fencingToken()
 * fencing token} and is conditional on no larger token having written there before.
 *
 * <pre>{@code
 * try (LockHandle lock = locks.acquire("order-42", Duration.ofSeconds(10))) {
 *     Order order = load("order-42");
 *     boolean written = FencedWrite.update(dynamo, "orders", Map.of("pk", AttributeValue.fromS("order-42")),
 *             "#status = :status", Map.of("#status", "status"), Map.of(":status", AttributeValue.fromS("PAID")),
 *             lock.fencingToken());
 *     if (!written) {
 *         // a later holder has written: this one lost its lease; do not retry, give up the work
 *     }
 * }
 * }</pre>
 *
 * The request it sends is one UpdateItem:
 * <pre>
 * UpdateExpression:    SET &lt;your clauses&gt;, #lockToken = :lockToken
 * ConditionExpression: attribute_not_exists(#lockToken) OR #lockToken &lt;= :lockToken
 * </pre>
 * {@code <=} (not {@code <}) lets one holder write several times under one lock. Tokens of a
 * lock strictly increase in grant order, so once a later holder has written, every write of
 * an earlier one is rejected. For a read-modify-write, first <em>claim</em> the item with
 * {@code update(..., "", ..., token)} right after acquiring, then read, then write: a stale
 * holder's write is then rejected even if the new holder has not written its result yet.
 *
 * <p>Tokens of different locks are unrelated: fence an item with the token of one lock only.
 */
public final class FencedWrite {

    /** The attribute of the protected item that holds the latest token written. */
    public static final String TOKEN_ATTRIBUTE = "lockToken";

    private FencedWrite() {
    }

    /** How a fenced write ended. */
    public enum Result {
        /** Written. */
        WRITTEN,
        /** A later holder wrote first: nothing was written. */
        REJECTED,
        /**
         * Rejected on an SDK retry: a first attempt whose answer was lost may have been written before the later
         * holder's write. Either way a later holder has seen or overwritten it: do not retry.
         */
        REJECTED_ON_RETRY
    }

    /**
     * Applies {@code setClauses} (e.g. {@code "#status = :status"}, or empty to only claim the
     * item) and records {@code token}, unless a larger token wrote the item before.
     *
     * @return {@code true} if written, {@code false} if a later lock holder wrote first (or, after a retry of a
     *         lost answer, may have written over this write: see {@link #write})
     */
    public static boolean update(DynamoDbClient client, String table, Map<String, AttributeValue> key,
            String setClauses, Map<String, String> names, Map<String, AttributeValue> values, long token) {
        return write(client, table, key, setClauses, names, values, token) == Result.WRITTEN;
    }

    /** As {@link #update}, telling a rejection on the SDK's retry apart from a plain one. */
    public static Result write(DynamoDbClient client, String table, Map<String, AttributeValue> key,
            String setClauses, Map<String, String> names, Map<String, AttributeValue> values, long token) {
        Map<String, String> allNames = new HashMap<>(names);
        allNames.put("#lockToken", TOKEN_ATTRIBUTE);
        Map<String, AttributeValue> allValues = new HashMap<>(values);
        allValues.put(":lockToken", AttributeValue.fromN(Long.toString(token)));
        String set = setClauses == null || setClauses.isBlank() ? "" : setClauses + ", ";
        try {
            client.updateItem(b -> b.tableName(table).key(key)
                    .updateExpression("SET " + set + "#lockToken = :lockToken")
                    .conditionExpression("attribute_not_exists(#lockToken) OR #lockToken <= :lockToken")
                    .expressionAttributeNames(allNames)
                    .expressionAttributeValues(allValues));
            return Result.WRITTEN;
        }
        catch (ConditionalCheckFailedException ex) {
            return ex.numAttempts() != null && ex.numAttempts() > 1 ? Result.REJECTED_ON_RETRY : Result.REJECTED;
        }
    }
}
