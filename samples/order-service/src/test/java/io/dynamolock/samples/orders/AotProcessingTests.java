package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code mvn spring-boot:process-aot} (and a native build) does: runs the main method under a hook that
 * abandons the run (SpringApplication.AbandonedRunException) once the context is loaded, then writes the
 * generated sources. The main method must let that exception reach Boot, not exit the JVM.
 */
class AotProcessingTests {

    @Test
    void aotProcessingOfTheMainMethodSucceeds(@TempDir Path out) throws Exception {
        Process aot = new ProcessBuilder(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), "org.springframework.boot.SpringApplicationAotProcessor",
                OrderServiceApplication.class.getName(), out.resolve("sources").toString(),
                out.resolve("resources").toString(), out.resolve("classes").toString(), "io.dynamolock",
                "order-service", "--sample.embedded-dynamodb.enabled=false", "--sample.demo.enabled=false",
                "--dynamolock.dynamodb.region=eu-west-1"))
                .redirectErrorStream(true).redirectOutput(out.resolve("log.txt").toFile()).start();
        try {
            boolean exited = aot.waitFor(120, TimeUnit.SECONDS);
            String log = Files.readString(out.resolve("log.txt"), StandardCharsets.UTF_8);
            assertThat(exited).as("exited; log:%n%s", log).isTrue();
            assertThat(aot.exitValue()).as("exit code; log:%n%s", log.substring(Math.max(0, log.length() - 3000)))
                    .isZero();
            try (var files = Files.walk(out.resolve("sources"))) {
                assertThat(files.map(Path::toString)).anyMatch(f -> f.endsWith("__ApplicationContextInitializer.java"));
            }
        }
        finally {
            aot.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }
}
