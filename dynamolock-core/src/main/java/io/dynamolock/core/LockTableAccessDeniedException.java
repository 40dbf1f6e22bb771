package io.dynamolock.core;

/**
 * DynamoDB refused a request about the lock table for want of a permission: the message names the table, the
 * action ({@link #action()}, e.g. {@code dynamodb:DescribeTable}) and DynamoDB's own words.
 */
public class LockTableAccessDeniedException extends LockTableException {

    private final String action;

    public LockTableAccessDeniedException(String message, String action, Throwable cause) {
        super(message, cause);
        this.action = action;
    }

    /** The IAM action that was refused, e.g. {@code dynamodb:CreateTable}. */
    public String action() {
        return action;
    }
}
