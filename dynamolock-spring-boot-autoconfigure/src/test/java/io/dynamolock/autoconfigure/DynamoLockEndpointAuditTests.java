package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.DynamoDbLocal;
import java.security.Principal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/** The endpoint's audit line of a break, written before the break is tried. */
class DynamoLockEndpointAuditTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    /**
     * A break refused for its request (a ticket no entry can have, a blank namespace) is never tried: no audit line
     * says someone asks to break it.
     */
    @ParameterizedTest
    @CsvSource({"default, -1, ticket -1", "default, 0, ticket 0", "' ', 7, namespace"})
    void aBreakRefusedForItsRequestWritesNoAuditLine(String namespace, String ticket, String named) {
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        Logger logger = (Logger) LoggerFactory.getLogger(DynamoLockEndpoint.class);
        logger.addAppender(logged);
        try (LockTemplate template = LockTemplate.builder(LOCAL.client()).tableName(LOCAL.newLockTable()).build()) {
            WebEndpointResponse<Object> answer = new DynamoLockEndpoint(template)
                    .breakEntryInNamespace("orders", namespace, ticket, SecurityContext.NONE);
            assertThat(answer.getStatus()).isEqualTo(WebEndpointResponse.STATUS_BAD_REQUEST);
            assertThat(((DynamoLockEndpoint.ErrorDescriptor) answer.getBody()).message()).contains(named);
        }
        finally {
            logger.detachAppender(logged);
        }
        assertThat(logged.list).extracting(ILoggingEvent::getFormattedMessage).noneMatch(line -> line.contains("break"));
    }

    /**
     * Each break is logged at WARN with who asked: the entity, the namespace and the principal's name come from the
     * request, and a line break in one must not write a second, forged audit line naming someone else.
     */
    @Test
    void theBreakAuditLineCannotBeSplitByAnEntityWithALineBreak() {
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        Logger logger = (Logger) LoggerFactory.getLogger(DynamoLockEndpoint.class);
        logger.addAppender(logged);
        try (LockTemplate template = LockTemplate.builder(LOCAL.client()).tableName(LOCAL.newLockTable()).build()) {
            SecurityContext mallory = new SecurityContext() {
                @Override
                public Principal getPrincipal() {
                    return () -> "ops\nmallory";
                }

                @Override
                public boolean isUserInRole(String role) {
                    return true;
                }
            };
            String forged = "orders' namespace='default' at 2026-01-01T00:00:00Z\n"
                    + "2026-01-01 00:00:01.000 WARN  i.d.a.DynamoLockEndpoint - ops-alice asks to break the entry"
                    + " with ticket 7 of the lock entity='payments";
            new DynamoLockEndpoint(template).breakEntryNamedInTheQuery(forged, "default\u2028x", "7", mallory);
        }
        finally {
            logger.detachAppender(logged);
        }
        assertThat(logged.list).filteredOn(event -> event.getLevel() == Level.WARN)
                .extracting(ILoggingEvent::getFormattedMessage).singleElement()
                .satisfies(line -> assertThat(line).contains("ops\\u000amallory asks to break", "at 2026-01-01T00:00:00Z"
                        + "\\u000a2026-01-01", "namespace='default\\u2028x'").doesNotContain("\n", "\r", "\u2028"));
    }
}
