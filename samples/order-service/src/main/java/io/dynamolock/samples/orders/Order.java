package io.dynamolock.samples.orders;

import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbBean;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbPartitionKey;

/** An order: its items and running total, stored by the enhanced client. No version attribute on purpose. */
@DynamoDbBean
public class Order {

    /**
     * Lines one order holds at most. With names of at most 200 characters (600 bytes) and prices of at most
     * {@link Item#MAX_PRICE_CENTS}, a full order stays well inside DynamoDB's 400 KB item, and neither its total nor
     * a discount of it can overflow a {@code long}.
     */
    static final int MAX_ITEMS = 500;

    private String orderId;
    private String customer;
    private List<String> items = new ArrayList<>();
    private long totalCents;
    private long lastFencingToken;

    public Order() {
    }

    Order(String orderId, String customer) {
        this.orderId = orderId;
        this.customer = customer;
    }

    @DynamoDbPartitionKey
    public String getOrderId() {
        return orderId;
    }

    public void setOrderId(String orderId) {
        this.orderId = orderId;
    }

    public String getCustomer() {
        return customer;
    }

    public void setCustomer(String customer) {
        this.customer = customer;
    }

    public List<String> getItems() {
        return items;
    }

    public void setItems(List<String> items) {
        this.items = items == null ? new ArrayList<>() : new ArrayList<>(items);
    }

    public long getTotalCents() {
        return totalCents;
    }

    public void setTotalCents(long totalCents) {
        this.totalCents = totalCents;
    }

    /** The fencing token of the last locked write, for the README's fencing pattern. */
    public long getLastFencingToken() {
        return lastFencingToken;
    }

    public void setLastFencingToken(long lastFencingToken) {
        this.lastFencingToken = lastFencingToken;
    }

    /** @throws OrderFullException if the order holds {@link #MAX_ITEMS} lines already */
    void add(Item item) {
        if (items.size() >= MAX_ITEMS) {
            throw new OrderFullException(orderId);
        }
        items.add(item.name());
        totalCents += item.priceCents();
    }
}
