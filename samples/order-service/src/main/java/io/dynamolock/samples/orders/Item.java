package io.dynamolock.samples.orders;

/** A line added to an order. */
public record Item(String name, long priceCents) {
}
