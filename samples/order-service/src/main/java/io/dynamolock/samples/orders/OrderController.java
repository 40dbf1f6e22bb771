package io.dynamolock.samples.orders;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /orders}, {@code POST /orders/{id}/items}, {@code POST /orders/{id}/discount}, {@code GET /orders/{id}}. */
@RestController
@RequestMapping("/orders")
public class OrderController {

    private final OrderService service;

    public OrderController(OrderService service) {
        this.service = service;
    }

    public record NewOrder(String orderId, String customer) {
    }

    public record Discount(int percent) {
    }

    @PostMapping
    @ResponseStatus(HttpStatus.CREATED)
    public Order create(@RequestBody NewOrder order) {
        return service.create(order.orderId(), order.customer());
    }

    @PostMapping("/{orderId}/items")
    public Order addItem(@PathVariable String orderId, @RequestBody Item item) {
        return service.addItem(orderId, item);
    }

    @PostMapping("/{orderId}/discount")
    public Order discount(@PathVariable String orderId, @RequestBody Discount discount) {
        return service.applyDiscount(orderId, discount.percent());
    }

    @GetMapping("/{orderId}")
    public Order get(@PathVariable String orderId) {
        return service.get(orderId);
    }
}
