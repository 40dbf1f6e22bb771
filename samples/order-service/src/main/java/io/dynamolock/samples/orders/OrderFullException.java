package io.dynamolock.samples.orders;

/** A line was added to an order that holds {@link Order#MAX_ITEMS} already. Answered as 409. */
class OrderFullException extends RuntimeException {

    private final String orderId;

    OrderFullException(String orderId) {
        super("Order '" + orderId + "' has " + Order.MAX_ITEMS + " items, the most one order holds: start another"
                + " order");
        this.orderId = orderId;
    }

    String orderId() {
        return orderId;
    }
}
