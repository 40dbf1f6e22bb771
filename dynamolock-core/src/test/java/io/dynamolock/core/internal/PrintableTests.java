package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Names as messages and advice write them: escaped on one line, and as Java literals that compile to the name. */
class PrintableTests {

    private static final List<String> NAMES = List.of("order-1", "tenant\\7", "C:\\data", "say \"hi\"", "a\\u000ab",
            "line\nfeed", "cr\rlf\n", "tab\there", "bell\u0007", "nul\u0000", "next\u0085line", "sep\u2028\u2029",
            "del\u007f", "emoji \uD83D\uDE00", "\u65e5\u672c", "\\", "\"", "");

    /** javac reads each literal back as its name: one compilation of them all, in a JVM of its own. */
    @Test
    void javaLiteralsCompileToTheNamesOnOneLine(@TempDir Path dir) throws Exception {
        List<String> literals = NAMES.stream().map(Printable::javaLiteral).toList();
        assertThat(literals).allSatisfy(literal -> assertThat(literal)
                .doesNotContain("\n", "\r", "\u0085", "\u2028", "\u2029"));
        Path source = dir.resolve("Lit.java");
        Files.writeString(source, "public class Lit { public static String[] v() { return new String[] {"
                + literals.stream().collect(Collectors.joining(",\n")) + "}; } }");
        Process javac = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "javac").toString(),
                "-encoding", "UTF-8", "-d", dir.toString(), source.toString()).redirectErrorStream(true).start();
        String output = new String(javac.getInputStream().readAllBytes());
        assertThat(javac.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(javac.exitValue()).as("javac: %s", output).isZero();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()}, null)) {
            assertThat((String[]) loader.loadClass("Lit").getMethod("v").invoke(null)).containsExactlyElementsOf(NAMES);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"a\nb", "a\\u000ab", "a\\b", "tab\t", "next\u0085", "sep\u2028"})
    void escapedNamesStayOnOneLineAndTellEachOtherApart(String name) {
        List<String> names = List.of("a\nb", "a\\u000ab", "a\\b", "tab\t", "next\u0085", "sep\u2028");
        String escaped = Printable.escape(name);
        assertThat(escaped).doesNotContain("\n", "\t", "\u0085", "\u2028");
        assertThat(names.stream().filter(other -> Printable.escape(other).equals(escaped))).containsExactly(name);
    }

    /** A queue state in a message (an enqueue answered without its entry) carries owners from the table. */
    @Test
    void aQueueStateWritesItsEntriesIdsAndOwnersEscaped() {
        String printed = new QueueState.Entry("id\r\n", "owner\nforged", 7, 0, 0).toString();
        assertThat(printed).isEqualTo("Entry[id=id\\u000d\\u000a, owner=owner\\u000aforged, ticket=7, expiresAtMillis=0,"
                + " failClosedLeaseMillis=0, shared=false]");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "http://127.0.0.1:8000 | http://127.0.0.1:8000",
            "https://dynamodb.eu-west-1.amazonaws.com | https://dynamodb.eu-west-1.amazonaws.com",
            "http://user:pw@db.example:8000/base?token=t#f | http://***@db.example:8000/base?***#***",
            "user:pw@db.example:8000 | ***", // no http://: Java reads the user as the scheme
            "http:opaque-secret | http:***"})
    void anEndpointIsShownWithoutItsCredentials(String endpoint, String shown) {
        assertThat(Printable.endpoint(URI.create(endpoint))).isEqualTo(shown);
    }
}
