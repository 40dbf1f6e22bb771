package io.dynamolock.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Step;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;

/**
 * A poll is given no longer than the wait has left; one that the caller's own deadline cuts short (DynamoDB answers
 * after it) is no failure of the table: the time-out reports the queue, not a call timeout, and nothing is logged at
 * WARN.
 */
class PollCutShortTests extends FaultyTemplateTestSupport {

    @Test
    void aPollCutShortByTheDeadlineIsNoFailure() {
        LockHandle holder = clean.acquire(entity, LONG);
        Logger waiterLog = (Logger) LoggerFactory.getLogger("io.dynamolock.core.internal.Waiter");
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        waiterLog.addAppender(logged);
        CountDownLatch readsHeld = new CountDownLatch(1);
        try {
            // Every poll is answered after the wait has ended: only its call timeout ends it.
            faults.onAnswer(Step.READ, request -> FaultInjector.await(readsHeld, 30));
            LockWaitTimeoutException timedOut = catchThrowableOfType(LockWaitTimeoutException.class,
                    () -> faulty.acquire(entity, Duration.ofMillis(500)));
            assertThat(timedOut).as("timed out").isNotNull();
            assertThat(faults.attempts(Step.READ)).as("polls sent").isPositive();
            assertThat(Stream.iterate((Throwable) timedOut, Objects::nonNull, Throwable::getCause))
                    .as("the time-out and its causes").noneMatch(ApiCallTimeoutException.class::isInstance);
            assertThat(logged.list).filteredOn(event -> event.getLevel() == Level.WARN)
                    .extracting(ILoggingEvent::getFormattedMessage).isEmpty();
        }
        finally {
            readsHeld.countDown();
            waiterLog.detachAppender(logged);
            faults.clear();
            holder.release();
        }
    }
}
