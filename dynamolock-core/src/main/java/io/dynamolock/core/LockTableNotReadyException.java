package io.dynamolock.core;

/**
 * The lock table did not become usable within the bootstrap's timeout: it stayed CREATING or DELETING, or DynamoDB
 * kept refusing table operations for the account's limit of them at once. Nothing is wrong with the table's shape;
 * starting again later, or with more time, may well succeed. The message names the table and what was seen.
 */
public class LockTableNotReadyException extends LockTableException {

    public LockTableNotReadyException(String message) {
        super(message);
    }

    public LockTableNotReadyException(String message, Throwable cause) {
        super(message, cause);
    }
}
