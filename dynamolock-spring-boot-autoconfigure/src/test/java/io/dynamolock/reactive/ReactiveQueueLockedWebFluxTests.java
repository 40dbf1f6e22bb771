package io.dynamolock.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.core.test.EventLoopProbe;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * A WebFlux application whose handler returns a {@code Mono}-returning {@code @QueueLocked} method, called by many
 * clients at once: one body at a time, no update lost, and no event-loop thread ever blocked. The check: a probe
 * samples the state of every event-loop thread each millisecond while the requests run and records any
 * found WAITING, TIMED_WAITING or BLOCKED (an idle event loop waits in a native select, RUNNABLE), and the
 * application's {@code DynamoDbClient} records any request made on such a thread. The deliberately blocking
 * variant (a blocking {@code @QueueLocked} method called in the handler while the lock is busy) proves that the
 * check fails when it should ({@link EventLoopProbe} says why not BlockHound).
 */
@SpringBootTest(classes = ReactiveQueueLockedWebFluxTests.WebApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"dynamolock.heartbeat-interval=2s", "dynamolock.lease-duration=10s",
                "dynamolock.poll-interval.min=10ms", "dynamolock.poll-interval.max=100ms"})
@AutoConfigureWebTestClient(timeout = "PT30S")
class ReactiveQueueLockedWebFluxTests {

    private static final List<String> BLOCKING_CALLS = new CopyOnWriteArrayList<>();

    @Autowired
    private WebTestClient client;

    @Autowired
    private Counter counter;

    @DynamicPropertySource
    static void dynamoDbLocal(DynamicPropertyRegistry registry) {
        String table = DynamoDbLocal.shared().newLockTable();
        for (String property : DynamoDbLocalProperties.of(table)) {
            int eq = property.indexOf('=');
            registry.add(property.substring(0, eq), () -> property.substring(eq + 1));
        }
    }

    @BeforeEach
    void clear() {
        BLOCKING_CALLS.clear();
    }

    @Test
    void concurrentRequestsRunOneAtATimeWithoutBlockingAnEventLoop() throws Exception {
        try (EventLoopProbe probe = new EventLoopProbe()) {
            DynamoDbLocalProperties.race(8, 5, () -> client.post().uri("/counters/web-1").exchange()
                    .expectStatus().isOk());
            assertThat(counter.value("web-1")).isEqualTo(40);
            assertThat(counter.maxInside()).isEqualTo(1);
            assertThat(probe.blocked()).isEmpty();
        }
        assertThat(BLOCKING_CALLS).isEmpty();
    }

    @Test
    void detectsTheBlockingVariant() throws Exception {
        try (EventLoopProbe probe = new EventLoopProbe()) {
            // The lock is busy for 300 ms from its grant, so the blocking variant parks its event loop about that long.
            CountDownLatch granted = new CountDownLatch(1);
            CompletableFuture<Integer> busy = counter.holdFor("web-2", Duration.ofMillis(300), granted).toFuture();
            assertThat(granted.await(30, TimeUnit.SECONDS)).isTrue();
            client.post().uri("/blocking/web-2").exchange().expectStatus().isOk();
            busy.get(30, TimeUnit.SECONDS);
            assertThat(probe.blocked()).isNotEmpty();
        }
    }

    /**
     * A controller's ResponseEntity declared with a wildcard, its body a Flux: WebFlux streams the body after the
     * method returned, so the call fails, the lock released, rather than the body running outside it.
     */
    @Test
    void aFluxBodyOfAResponseEntityOfWildcardFailsTheCallUnsubscribed() {
        client.get().uri("/streams/web-3").exchange().expectStatus().is5xxServerError();
        assertThat(StreamController.SUBSCRIBED).isFalse();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({Counter.class, CounterController.class, StreamController.class})
    static class WebApp {

        /** The application's client, recording each request made on an event loop. */
        @Bean
        DynamoDbClient dynamoDbClient() {
            DynamoDbClient client = DynamoDbLocal.shared().client();
            return (DynamoDbClient) Proxy.newProxyInstance(DynamoDbClient.class.getClassLoader(),
                    new Class<?>[] {DynamoDbClient.class}, (proxy, method, args) -> {
                        String thread = Thread.currentThread().getName();
                        if (EventLoopProbe.isEventLoop(thread) && method.getDeclaringClass() != Object.class) {
                            BLOCKING_CALLS.add("DynamoDbClient." + method.getName() + " on " + thread);
                        }
                        try {
                            return method.invoke(client, args);
                        }
                        catch (InvocationTargetException ex) {
                            throw ex.getCause();
                        }
                    });
        }
    }

    @RestController
    static class CounterController {

        private final Counter counter;

        CounterController(Counter counter) {
            this.counter = counter;
        }

        @PostMapping("/counters/{id}")
        Mono<Integer> increment(@PathVariable String id) {
            return counter.increment(id);
        }

        /** Deliberately wrong: a blocking @QueueLocked method called on the event loop. */
        @PostMapping("/blocking/{id}")
        Mono<Integer> incrementBlocking(@PathVariable String id) {
            return Mono.just(counter.incrementBlocking(id));
        }
    }

    @RestController
    static class StreamController {

        static final AtomicBoolean SUBSCRIBED = new AtomicBoolean();

        @QueueLocked(entity = "#id")
        @GetMapping("/streams/{id}")
        public ResponseEntity<?> stream(@PathVariable String id) {
            return ResponseEntity.ok(Flux.just(id).doOnSubscribe(subscription -> SUBSCRIBED.set(true)));
        }
    }

    static class Counter {

        private final java.util.Map<String, Integer> values = new java.util.concurrent.ConcurrentHashMap<>();
        private final AtomicInteger inside = new AtomicInteger();
        private final AtomicInteger maxInside = new AtomicInteger();

        /** Reads, waits 20 ms, writes: two bodies at once would lose an update. */
        @QueueLocked(entity = "#id", maxWait = "60s")
        public Mono<Integer> increment(String id) {
            return Mono.fromCallable(() -> {
                maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                return values.getOrDefault(id, 0);
            }).delayElement(Duration.ofMillis(20)).map(n -> {
                values.put(id, n + 1);
                inside.decrementAndGet();
                return n + 1;
            });
        }

        /** Holds the lock for {@code time} from now; the returned Mono completes when it was released. */
        @QueueLocked(entity = "#id")
        public Mono<Integer> holdFor(String id, Duration time, CountDownLatch granted) {
            return Mono.fromRunnable(granted::countDown).then(Mono.delay(time)).thenReturn(0);
        }

        @QueueLocked(entity = "#id")
        public int incrementBlocking(String id) {
            return values.merge(id, 1, Integer::sum);
        }

        public int value(String id) {
            return values.getOrDefault(id, 0);
        }

        public int maxInside() {
            return maxInside.get();
        }
    }
}
