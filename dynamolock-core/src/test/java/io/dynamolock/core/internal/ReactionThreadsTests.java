package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.test.FaultInjector;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The library's own reactions to a loss ({@code LockHandle.whenLost()}: a reactive body or a Kotlin block
 * cancelled) run on request threads, not in line behind the application's lost-lease callbacks, which may block.
 * When every request thread was busy they went to the callback threads, and waited there behind blocked callbacks
 * of other locks: a lost body went on running beside the next holder.
 */
class ReactionThreadsTests {

    @Test
    void aReactionWithEveryRequestThreadBusyDoesNotWaitBehindBlockedCallbacks() throws Exception {
        Workers workers = new Workers();
        CountDownLatch requestsAnswer = BusyRequestThreads.occupy(workers);
        CountDownLatch callbacksReturn = new CountDownLatch(1);
        CountDownLatch callbacksBlocked = new CountDownLatch(Workers.CALLBACK_THREADS);
        try {
            for (int i = 0; i < Workers.CALLBACK_THREADS; i++) {
                workers.callbacks().execute(() -> {
                    callbacksBlocked.countDown();
                    FaultInjector.await(callbacksReturn, 60); // an application's onLost that blocks
                });
            }
            assertThat(callbacksBlocked.await(10, TimeUnit.SECONDS)).as("every callback thread blocked").isTrue();
            CompletableFuture<String> reaction = new CompletableFuture<>();

            workers.reactions().execute(() -> reaction.complete(Thread.currentThread().getName()));

            assertThat(reaction.get(5, TimeUnit.SECONDS)).as("the thread the reaction ran on")
                    .doesNotStartWith("dynamolock-callback-");
        }
        finally {
            callbacksReturn.countDown();
            requestsAnswer.countDown();
            workers.shutdown();
        }
    }
}
