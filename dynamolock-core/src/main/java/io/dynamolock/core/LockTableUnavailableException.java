package io.dynamolock.core;

/**
 * The lock table is there but serves no request now: being deleted, being archived or archived, or its KMS key out
 * of DynamoDB's reach. Creating it cannot help, as it exists, nor can more time at start-up; {@link #fix()} says what
 * does. The message names the table, its status and the fix.
 */
public class LockTableUnavailableException extends LockTableException {

    private final String tableStatus;
    private final String fix;

    public LockTableUnavailableException(String message, String tableStatus, String fix) {
        super(message);
        this.tableStatus = tableStatus;
        this.fix = fix;
    }

    /**
     * The table's status as DynamoDB states it, e.g. {@code ARCHIVED} or {@code INACCESSIBLE_ENCRYPTION_CREDENTIALS}.
     */
    public String tableStatus() {
        return tableStatus;
    }

    /** What makes the table serve requests again, or what to use instead, e.g. "enable its KMS key ...". */
    public String fix() {
        return fix;
    }
}
