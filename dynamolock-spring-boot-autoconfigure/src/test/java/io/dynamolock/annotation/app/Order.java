package io.dynamolock.annotation.app;

public record Order(String id, Customer customer) {

    public record Customer(String id) {
    }
}
