package io.dynamolock.annotation.app;

/** Calls AccountService's protected method from its package, as the application's code would. */
public final class ProtectedCaller {

    public void call(AccountService accounts, String id) {
        accounts.depositApartProtected(id, 1);
    }
}
