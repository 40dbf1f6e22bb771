package io.dynamolock.samples.orders;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.Size;

/** A line added to an order. */
public record Item(@NotBlank @Size(max = 200) String name,
        @NotNull @Positive @Max(value = Item.MAX_PRICE_CENTS, message = "must be at most {value} (10,000,000,000.00)")
        Long priceCents) {

    /** The highest price of one line: see {@link Order#MAX_ITEMS}. */
    static final long MAX_PRICE_CENTS = 1_000_000_000_000L;
}
