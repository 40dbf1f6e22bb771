package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * README, "Two commands": the sample serves on port 8080. When that port is taken the start fails with Boot's
 * "APPLICATION FAILED TO START" report, and the JVM (and with it {@code mvn spring-boot:run}) must then exit, as a
 * Boot app does, even though it had started DynamoDB Local and created its tables: by itself, its main method
 * throwing, with no {@code System.exit} (which would also end a test's JVM running the main method), so only once
 * no thread of DynamoDB Local's keeps it alive.
 */
class FailedStartExitsTests {

    @Test
    void theJvmExitsWhenTheWebPortIsTaken() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Process app = new ProcessBuilder(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                    "-cp", System.getProperty("java.class.path"), OrderServiceApplication.class.getName(),
                    "--server.port=" + taken.getLocalPort(), "--server.address=127.0.0.1",
                    "--sample.demo.enabled=false", "--sample.embedded-dynamodb.port=0"))
                    .redirectErrorStream(true).start();
            ByteArrayOutputStream output = new ByteArrayOutputStream();
            Thread reader = new Thread(() -> {
                try {
                    app.getInputStream().transferTo(output);
                }
                catch (IOException ignored) {
                    // the process was killed
                }
            });
            reader.start();
            try {
                boolean exited = app.waitFor(60, TimeUnit.SECONDS);
                String log = output.toString(StandardCharsets.UTF_8);
                assertThat(log).contains("APPLICATION FAILED TO START", "Stopped DynamoDB Local");
                assertThat(exited).as("the JVM exited within 60 s of its failed start; its log:%n%s",
                        log.substring(Math.max(0, log.length() - 1500))).isTrue();
                assertThat(app.exitValue()).isNotZero();
            }
            finally {
                app.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                reader.join(10_000);
            }
        }
    }
}
