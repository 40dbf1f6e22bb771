package io.dynamolock.samples.orders;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.PositiveOrZero;
import jakarta.validation.constraints.Size;
import java.util.UUID;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.MvcUriComponentsBuilder;

/**
 * {@code POST /orders}, {@code POST /orders/{id}/items}, {@code POST /orders/{id}/discount}, {@code GET /orders/{id}}.
 * Requests are validated; errors are answered as RFC 9457 problem details ({@link OrderApiExceptionHandler}).
 */
@RestController
// JSON only, decided before the handler runs: a 406 after an update (a client that accepts no JSON) would tell
// the client its request failed when it was applied, and a retry would apply it twice.
@RequestMapping(path = "/orders", produces = MediaType.APPLICATION_JSON_VALUE)
public class OrderController {

    private final OrderService service;

    public OrderController(OrderService service) {
        this.service = service;
    }

    /** A new order; without an {@code orderId} it gets a generated one. */
    public record NewOrder(
            @OrderId(message = "must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit;"
                    + " leave it out to get a generated id") String orderId,
            @NotBlank @Size(max = 200) String customer) {

        String orderIdOrGenerated() {
            return orderId != null ? orderId : UUID.randomUUID().toString();
        }
    }

    /** A discount on the order's total, in percent. */
    public record Discount(@NotNull @PositiveOrZero @Max(100) Integer percent) {
    }

    @PostMapping
    public ResponseEntity<Order> create(@Valid @RequestBody NewOrder order) {
        Order created = service.create(order.orderIdOrGenerated(), order.customer());
        // The address of get(orderId), not the request's: its query (escapes encoded again) and path parameters
        // (;jsessionid=...) are no part of the order's address.
        return ResponseEntity.created(MvcUriComponentsBuilder.fromMethodName(OrderController.class, "get",
                created.getOrderId()).build().toUri()).body(created);
    }

    @PostMapping("/{orderId}/items")
    public Order addItem(@PathVariable @OrderId String orderId, @Valid @RequestBody Item item) {
        return service.addItem(orderId, item);
    }

    @PostMapping("/{orderId}/discount")
    public Order discount(@PathVariable @OrderId String orderId, @Valid @RequestBody Discount discount) {
        return service.applyDiscount(orderId, discount.percent());
    }

    @GetMapping("/{orderId}")
    public Order get(@PathVariable @OrderId String orderId) {
        return service.get(orderId);
    }
}
