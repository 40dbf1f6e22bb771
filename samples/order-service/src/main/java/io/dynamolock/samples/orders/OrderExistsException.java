package io.dynamolock.samples.orders;

/** A new order was given the id of an existing one. Answered as 409. */
class OrderExistsException extends RuntimeException {

    private final String orderId;

    OrderExistsException(String orderId) {
        super("Order '" + orderId + "' exists already. Leave orderId out to get a generated id, or choose another");
        this.orderId = orderId;
    }

    String orderId() {
        return orderId;
    }
}
