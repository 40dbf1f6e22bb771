package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/** The startup demo, as a user sees it with the README's first command. */
@ExtendWith(OutputCaptureExtension.class)
class ContentionDemoTests {

    @Test
    void demoShowsFifoGrantsAndNoLostUpdateWithTheLock(CapturedOutput output) {
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(OrderServiceApplication.class)
                .run("--server.port=0", "--sample.embedded-dynamodb.port=0", "--sample.demo.requests=6")) {
            assertThat(output).contains("Started DynamoDB Local (in memory) at http://127.0.0.1:");
            assertThat(output).contains("Round 1, with @QueueLocked");
            assertThat(output).containsPattern("grant +6 +ticket \\d+ +waited +\\d+ ms");
            assertThat(output).containsPattern("order demo-\\w+-locked: 6 items, total 75.00; expected 6 items, total 75.00 -> no update lost");
            assertThat(output).contains("tickets granted in strictly increasing order (FIFO, fencing tokens): yes");
            assertThat(output).contains("Round 2, the same calls without a lock:");
            assertThat(output).containsPattern("order demo-\\w+-unlocked: \\d+ items");
        }
        assertThat(output).contains("Stopped DynamoDB Local");
    }
}
