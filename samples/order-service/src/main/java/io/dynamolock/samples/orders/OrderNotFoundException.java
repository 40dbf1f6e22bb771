package io.dynamolock.samples.orders;

/** No order has this id. Answered as 404. */
class OrderNotFoundException extends RuntimeException {

    private final String orderId;

    OrderNotFoundException(String orderId) {
        super("No order '" + orderId + "'. Create it first: POST /orders {\"orderId\": \"" + orderId
                + "\", \"customer\": \"...\"}");
        this.orderId = orderId;
    }

    String orderId() {
        return orderId;
    }
}
