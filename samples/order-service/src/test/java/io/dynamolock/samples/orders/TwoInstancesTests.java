package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two copies of the app, the second sharing the first's DynamoDB Local as the README tells users to
 * run them, updating the same order at once: they take turns, and no update is lost.
 */
class TwoInstancesTests {

    @Test
    void twoInstancesTakeTurnsOnOneOrder() throws Exception {
        try (ConfigurableApplicationContext first = start("--sample.embedded-dynamodb.port=0")) {
            String endpoint = first.getEnvironment().getProperty(EmbeddedDynamoDb.ENDPOINT);
            assertThat(endpoint).startsWith("http://127.0.0.1:");
            try (ConfigurableApplicationContext second = start("--" + EmbeddedDynamoDb.ENDPOINT + "=" + endpoint,
                    "--dynamolock.dynamodb.region=us-east-1", "--dynamolock.dynamodb.access-key-id=local",
                    "--dynamolock.dynamodb.secret-access-key=local")) {
                List<OrderApi> instances = List.of(api(first), api(second));
                instances.get(0).create("shared-order");

                int perInstanceThreads = 4;
                int perThread = 3;
                Callers.run(2 * perInstanceThreads, perThread,
                        (caller, i) -> instances.get(caller % 2).addItem("shared-order", "item-" + caller + "-" + i, 100));

                int total = 2 * perInstanceThreads * perThread;
                assertThat(instances.get(1).itemCount("shared-order")).isEqualTo(total);
                List<Long> firstTickets = tickets(first);
                List<Long> secondTickets = tickets(second);
                assertThat(firstTickets).hasSize(total / 2);
                assertThat(secondTickets).hasSize(total / 2);
                List<Long> all = new ArrayList<>(firstTickets);
                all.addAll(secondTickets);
                assertThat(all).as("one ticket queue across both instances").doesNotHaveDuplicates();
                assertThat(firstTickets).as("the instances took turns, neither went first throughout")
                        .anySatisfy(t -> assertThat(t).isGreaterThan(secondTickets.get(0)));
            }
        }
    }

    private static ConfigurableApplicationContext start(String... args) {
        List<String> all = new ArrayList<>(List.of("--server.port=0", "--sample.demo.enabled=false"));
        all.addAll(List.of(args));
        return new SpringApplicationBuilder(OrderServiceApplication.class).run(all.toArray(String[]::new));
    }

    private static OrderApi api(ConfigurableApplicationContext context) {
        return new OrderApi(Integer.parseInt(context.getEnvironment().getProperty("local.server.port")));
    }

    private static List<Long> tickets(ConfigurableApplicationContext context) {
        return context.getBean(GrantLog.class).grantsOf("shared-order").stream().map(GrantLog.Grant::ticket).toList();
    }
}
