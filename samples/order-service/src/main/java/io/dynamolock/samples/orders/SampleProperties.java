package io.dynamolock.samples.orders;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The sample's own settings ({@code sample.*}).
 *
 * @param ordersTable the orders table, created at startup if missing
 * @param workTime    simulated business work between reading an order and writing it back: the window in
 *                    which an unlocked update gets lost
 * @param demo        the contention demo run at startup
 */
@ConfigurationProperties("sample")
public record SampleProperties(String ordersTable, Duration workTime, Demo demo) {

    public SampleProperties {
        ordersTable = ordersTable == null ? "orders" : ordersTable;
        workTime = workTime == null ? Duration.ofMillis(25) : workTime;
        demo = demo == null ? new Demo(true, 12) : demo;
    }

    /**
     * @param enabled  whether to run the demo at startup
     * @param requests concurrent requests on one order, per round
     */
    public record Demo(boolean enabled, int requests) {
    }
}
