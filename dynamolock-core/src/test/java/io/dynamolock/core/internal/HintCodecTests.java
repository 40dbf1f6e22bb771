package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** The wake-up datagram: what a receiver accepts, and that it rejects everything else without throwing. */
class HintCodecTests {

    static final byte[] SECRET = "a secret the processes share".getBytes(StandardCharsets.UTF_8);
    static final long NOW = 1_800_000_000_000L;
    static final Clock CLOCK = Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC);
    static final LockKey KEY = new LockKey("order-42", "default");

    private final HintCodec signed = new HintCodec(SECRET, CLOCK, Duration.ofSeconds(5));
    private final HintCodec plain = new HintCodec(null, CLOCK, Duration.ofSeconds(5));

    /** A lock item as a write returns it: {@code entries} waiters, one owner label and address each. */
    static Map<String, AttributeValue> item(int entries) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put("pk", AttributeValue.fromS(KEY.entity()));
        item.put("sk", AttributeValue.fromS(KEY.namespace()));
        item.put("next", AttributeValue.fromN(Long.toString(NOW * 1000 + entries)));
        item.put("expiresAt", AttributeValue.fromN(Long.toString(NOW / 1000 + 3600)));
        for (int i = 0; i < entries; i++) {
            String id = EntryIds.next();
            item.put("t#" + id, AttributeValue.fromN(Long.toString(NOW * 1000 + i)));
            item.put("e#" + id, AttributeValue.fromN(Long.toString(NOW + 60_000 + i)));
            item.put("o#" + id, AttributeValue.fromS("ip-10-0-0-" + (i % 4) + ".ec2.internal:4242"));
            item.put("w#" + id, AttributeValue.fromS("10.0.0." + (i % 4) + ":7946"));
        }
        return item;
    }

    static Map<String, AttributeValue> withoutKey(Map<String, AttributeValue> item) {
        Map<String, AttributeValue> copy = new HashMap<>(item);
        copy.remove("pk");
        copy.remove("sk");
        return copy;
    }

    private static HintCodec.Decoded decode(HintCodec codec, byte[] datagram) {
        return codec.decode(datagram, datagram.length);
    }

    @Test
    void anAuthenticatedHintCarriesTheItemExactlyAsTheWriteReturnedIt() {
        Map<String, AttributeValue> item = item(10);
        item.put("fc", AttributeValue.fromN("0"));
        item.put("x", AttributeValue.fromN("12.50"));
        item.put("b", AttributeValue.fromBool(true));
        item.put("nul", AttributeValue.fromNul(true));
        byte[] datagram = signed.encode(new WakeUpHint(KEY, "abc", NOW, item));

        HintCodec.Decoded decoded = decode(signed, datagram);
        assertThat(decoded.rejection()).isNull();
        assertThat(decoded.hint().key()).isEqualTo(KEY);
        assertThat(decoded.hint().entryId()).isEqualTo("abc");
        assertThat(decoded.hint().sentAtMillis()).isEqualTo(NOW);
        assertThat(decoded.hint().item()).as("the key attributes travel as the hint's key")
                .isEqualTo(withoutKey(item));
        assertThat(QueueState.of(decoded.hint().item()).entries()).isEqualTo(QueueState.of(item).entries());
        assertThat(datagram.length).as("ten entries, each id written once").isLessThan(700);
    }

    @Test
    void anItemTooLargeForADatagramGoesOutPlain() {
        byte[] datagram = signed.encode(new WakeUpHint(KEY, "abc", NOW, item(40)));
        assertThat(datagram.length).isLessThanOrEqualTo(HintCodec.MAX_DATAGRAM_BYTES);
        HintCodec.Decoded decoded = decode(signed, datagram);
        assertThat(decoded.hint().item()).isNull();
        assertThat(decoded.hint().entryId()).isEqualTo("abc");
    }

    /** Sizing without signing says exactly what encoding says, on both sides of the limit. */
    @Test
    void carriesItemAgreesWithTheEncodingAtEveryQueueLength() {
        int fit = 0;
        for (int entries = 1; entries <= 40; entries++) {
            WakeUpHint hint = new WakeUpHint(KEY, "abc", NOW, item(entries), true);
            boolean carries = signed.carriesItem(hint);
            assertThat(carries).as("%d entries", entries).isEqualTo(signed.encode(hint) != null);
            fit += carries ? 1 : 0;
            assertThat(plain.carriesItem(hint)).as("no secret, no item").isFalse();
        }
        assertThat(fit).as("some fit, some do not").isBetween(1, 39);
        assertThat(signed.carriesItem(new WakeUpHint(KEY, "abc", NOW, null))).isFalse();
    }

    @Test
    void anItemWithATypeTheLockNeverUsesGoesOutPlain() {
        Map<String, AttributeValue> item = item(1);
        item.put("set", AttributeValue.fromSs(java.util.List.of("a")));
        assertThat(decode(signed, signed.encode(new WakeUpHint(KEY, "abc", NOW, item))).hint().item()).isNull();
    }

    @Test
    void aHintThatCannotFitEvenPlainIsNotSent() {
        LockKey huge = new LockKey("e".repeat(2000), "default");
        assertThat(signed.encode(new WakeUpHint(huge, "abc", NOW, null))).isNull();
    }

    @Test
    void withoutASecretHintsArePlainAndAnItemIsNeverAccepted() {
        byte[] datagram = plain.encode(new WakeUpHint(KEY, "abc", NOW, item(3)));
        HintCodec.Decoded decoded = decode(plain, datagram);
        assertThat(decoded.hint()).isEqualTo(new WakeUpHint(KEY, "abc", NOW, null));
        assertThat(decode(plain, signed.encode(new WakeUpHint(KEY, "abc", NOW, item(3)))).hint().item())
                .as("an item under an HMAC this receiver cannot check counts for nothing").isNull();
    }

    @Test
    void aReceiverWithASecretRejectsUnauthenticatedAndForgedHints() {
        byte[] unauthenticated = plain.encode(new WakeUpHint(KEY, "abc", NOW, null));
        assertThat(decode(signed, unauthenticated).rejection()).isEqualTo(HintCodec.Rejection.UNAUTHENTICATED);

        HintCodec otherSecret = new HintCodec("another secret".getBytes(StandardCharsets.UTF_8), CLOCK,
                Duration.ofSeconds(5));
        byte[] forged = otherSecret.encode(new WakeUpHint(KEY, "abc", NOW, item(2)));
        assertThat(decode(signed, forged).rejection()).isEqualTo(HintCodec.Rejection.BAD_MAC);

        byte[] genuine = signed.encode(new WakeUpHint(KEY, "abc", NOW, item(2)));
        for (int i = 2; i < genuine.length; i++) {
            byte[] tampered = genuine.clone();
            tampered[i] ^= 0x01;
            assertThat(decode(signed, tampered).rejection()).as("byte %d flipped", i)
                    .isIn(HintCodec.Rejection.BAD_MAC, HintCodec.Rejection.GARBAGE);
        }
    }

    @Test
    void rejectsStaleAndFarFutureHints() {
        assertThat(decode(signed, signed.encode(new WakeUpHint(KEY, "abc", NOW - 5_001, null))).rejection())
                .isEqualTo(HintCodec.Rejection.STALE);
        assertThat(decode(signed, signed.encode(new WakeUpHint(KEY, "abc", NOW + 5_001, null))).rejection())
                .isEqualTo(HintCodec.Rejection.STALE);
        assertThat(decode(signed, signed.encode(new WakeUpHint(KEY, "abc", NOW - 5_000, null))).rejection())
                .isNull();
    }

    /** 2^63 ms away either way is as stale as any: the distance must not overflow into a small one. */
    @Test
    void rejectsATimestampWhoseDistanceOverflows() {
        for (long sentAt : new long[] {NOW + Long.MIN_VALUE, Long.MIN_VALUE, Long.MAX_VALUE}) {
            assertThat(decode(signed, signed.encode(new WakeUpHint(KEY, "abc", sentAt, null))).rejection())
                    .as("sent at %d", sentAt).isEqualTo(HintCodec.Rejection.STALE);
        }
    }

    @Test
    void rejectsOtherVersionsTruncatedAndOversizedDatagrams() {
        byte[] genuine = signed.encode(new WakeUpHint(KEY, "abc", NOW, item(3)));
        byte[] otherVersion = genuine.clone();
        otherVersion[0] = 2;
        assertThat(decode(signed, otherVersion).rejection()).isEqualTo(HintCodec.Rejection.VERSION);
        for (int length = 0; length < genuine.length; length++) {
            assertThat(signed.decode(genuine, length).rejection()).as("cut to %d bytes", length).isNotNull();
        }
        byte[] plainHint = plain.encode(new WakeUpHint(KEY, "abc", NOW, null));
        for (int length = 0; length < plainHint.length; length++) {
            assertThat(plain.decode(plainHint, length).rejection()).as("cut to %d bytes", length)
                    .isIn(HintCodec.Rejection.TRUNCATED, HintCodec.Rejection.GARBAGE);
        }
        byte[] oversized = Arrays.copyOf(plainHint, HintCodec.MAX_DATAGRAM_BYTES + 1);
        assertThat(decode(plain, oversized).rejection()).isEqualTo(HintCodec.Rejection.OVERSIZED);
    }

    @Test
    void garbageNeverThrowsAndIsNeverAccepted() {
        Random random = new Random(12);
        for (int i = 0; i < 20_000; i++) {
            byte[] garbage = new byte[random.nextInt(300)];
            random.nextBytes(garbage);
            if (garbage.length > 1 && i % 2 == 0) {
                garbage[0] = HintCodec.VERSION; // past the version check, into the fields
                garbage[1] = (byte) random.nextInt(4);
            }
            assertThat(decode(signed, garbage).hint()).isNull();
            HintCodec.Decoded unsigned = decode(plain, garbage);
            assertThat(unsigned.hint() == null || unsigned.hint().item() == null).isTrue();
        }
    }
}
