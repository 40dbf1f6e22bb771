package io.dynamolock.samples.orders;

import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbBean;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbPartitionKey;

/** An order: its items and running total, stored by the enhanced client. No version attribute on purpose. */
@DynamoDbBean
public class Order {

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

    void add(Item item) {
        items.add(item.name());
        totalCents += item.priceCents();
    }
}
