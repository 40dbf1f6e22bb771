package io.dynamolock.samples.orders;

import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.Size;

/** A line added to an order. */
public record Item(@NotBlank @Size(max = 200) String name, @NotNull @Positive Long priceCents) {
}
