package io.dynamolock.core.internal;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The wire format of a {@link WakeUpHint}: one UDP datagram, authenticated with HMAC-SHA256 when the processes
 * share a secret.
 * <pre>
 * version   1 byte   {@link #VERSION}
 * flags     1 byte   bit 0: carries the item; bit 1: ends with an HMAC
 * sentAt    8 bytes  the sender's epoch ms
 * entity, namespace, entry id: strings
 * item      (flag 0) the attribute count, then per attribute: name (string), type byte, value
 * hmac      (flag 1) 32 bytes: HMAC-SHA256 of every byte before it under the shared secret
 * </pre>
 * Numbers are unsigned LEB128 varints. A string is written once: the first time as {@code 2 * length} and its
 * UTF-8 bytes, later as {@code 2 * index + 1} into the strings written so far. An attribute name is split at its
 * first {@code #}, so an entry's id is written once however many attributes name it ({@code t#id, e#id, o#id}),
 * and one owner label once however many entries carry it: a queue of ten entries fits in about 500 bytes.
 * Attributes go in name order, so an item's tickets follow one another, and so do its expiries; {@code N} is
 * written, when it is an integer that fits a long (every number of the lock item), as the zigzag varint of its
 * difference from the number before it: a ticket or an expiry then takes a byte or two, not eight. Another
 * {@code N} is written as a string; {@code S} as a string; {@code BOOL} and {@code NULL}. An item with another type does not
 * fit: the hint goes out plain.
 *
 * <p>Decoding never throws: whatever arrives (garbage, a truncated or oversized datagram, another version, a bad or
 * missing HMAC when a secret is set, a hint older than the freshness window) is a {@link Decoded} with the reason
 * it was rejected. An item is only accepted under a valid HMAC; without a secret a receiver treats every hint as
 * plain, so that a forged item can never reach a waiter.
 */
final class HintCodec {

    static final byte VERSION = 1;

    /**
     * The largest datagram sent or accepted: below the 1,280-byte IPv6 minimum MTU less its headers, so a hint
     * is never fragmented on any path (a lost fragment would lose the whole datagram).
     */
    static final int MAX_DATAGRAM_BYTES = 1200;

    static final int MAC_BYTES = 32;
    private static final int FLAG_ITEM = 1;
    private static final int FLAG_MAC = 2;
    private static final String MAC_ALGORITHM = "HmacSHA256";
    private static final byte TYPE_S = 'S';
    private static final byte TYPE_N_LONG = 'n';
    private static final byte TYPE_N_TEXT = 'N';
    private static final byte TYPE_BOOL = 'B';
    private static final byte TYPE_NULL = '0';

    /** Why a datagram was not taken as a hint. */
    enum Rejection { GARBAGE, TRUNCATED, OVERSIZED, VERSION, UNAUTHENTICATED, BAD_MAC, STALE }

    /** A decoded hint, or why there is none: exactly one of the two is set. */
    record Decoded(WakeUpHint hint, Rejection rejection) {
    }

    private final SecretKeySpec secret;
    private final Clock clock;
    private final Duration freshness;
    private final ThreadLocal<Mac> macs;

    /**
     * @param secret    the shared secret, or {@code null}: hints are then plain, and items are neither sent nor
     *                  accepted
     * @param freshness how far a hint's timestamp may be from this clock, either way, for it to be accepted
     */
    HintCodec(byte[] secret, Clock clock, Duration freshness) {
        this.secret = secret == null ? null : new SecretKeySpec(secret.clone(), MAC_ALGORITHM);
        this.clock = clock;
        this.freshness = freshness;
        this.macs = ThreadLocal.withInitial(this::newMac);
    }

    boolean authenticates() {
        return secret != null;
    }

    /**
     * The datagram of {@code hint}: with its item only if a secret is set and it fits {@link #MAX_DATAGRAM_BYTES},
     * else plain, unless the hint is {@linkplain WakeUpHint#itemOnly item-only}. {@code null} if it cannot go out
     * (an item-only hint without its item, or even the plain hint does not fit: a very long entity).
     */
    byte[] encode(WakeUpHint hint) {
        if (hint.item() != null && secret != null) {
            byte[] full = write(hint, true);
            if (full != null && full.length <= MAX_DATAGRAM_BYTES) {
                return full;
            }
        }
        if (hint.itemOnly()) {
            return null;
        }
        byte[] plain = write(hint, false);
        return plain != null && plain.length <= MAX_DATAGRAM_BYTES ? plain : null;
    }

    /**
     * Whether {@code hint} would go out with its item: a secret is set and it fits a datagram. Sized without
     * signing, since the HMAC has a fixed length: sizing a state before sending it costs no second HMAC.
     */
    boolean carriesItem(WakeUpHint hint) {
        if (hint.item() == null || secret == null) {
            return false;
        }
        Writer unsigned = unsigned(hint, true);
        return unsigned != null && unsigned.bytes.size() + MAC_BYTES <= MAX_DATAGRAM_BYTES;
    }

    private byte[] write(WakeUpHint hint, boolean withItem) {
        Writer out = unsigned(hint, withItem);
        if (out == null) {
            return null;
        }
        if (secret != null) {
            byte[] signed = out.bytes.toByteArray();
            out.bytes.writeBytes(mac(signed, signed.length));
        }
        return out.bytes.toByteArray();
    }

    /** The datagram of {@code hint} up to its HMAC, or {@code null} if its item has an attribute it cannot carry. */
    private Writer unsigned(WakeUpHint hint, boolean withItem) {
        Writer out = new Writer();
        out.bytes.write(VERSION);
        out.bytes.write((withItem ? FLAG_ITEM : 0) | (secret != null ? FLAG_MAC : 0));
        out.fixed64(hint.sentAtMillis());
        out.string(hint.key().entity());
        out.string(hint.key().namespace());
        out.string(hint.entryId());
        if (withItem && !out.item(hint.item())) {
            return null;
        }
        return out;
    }

    /** The hint in {@code datagram}, or why it is rejected; never throws. */
    Decoded decode(byte[] datagram, int length) {
        try {
            return read(datagram, length);
        }
        catch (RuntimeException malformed) {
            // Bounds, bad UTF-8, a varint too long, a back-reference out of range: all garbage.
            return new Decoded(null, malformed instanceof Truncated ? Rejection.TRUNCATED : Rejection.GARBAGE);
        }
    }

    private Decoded read(byte[] datagram, int length) {
        if (length > MAX_DATAGRAM_BYTES) {
            return rejected(Rejection.OVERSIZED);
        }
        if (length < 2) {
            return rejected(Rejection.TRUNCATED);
        }
        if (datagram[0] != VERSION) {
            return rejected(Rejection.VERSION);
        }
        int flags = datagram[1];
        if ((flags & ~(FLAG_ITEM | FLAG_MAC)) != 0) {
            return rejected(Rejection.GARBAGE);
        }
        boolean signed = (flags & FLAG_MAC) != 0;
        int body = length;
        if (signed) {
            body = length - MAC_BYTES;
            if (body < 2) {
                return rejected(Rejection.TRUNCATED);
            }
        }
        if (secret != null) {
            if (!signed) {
                return rejected(Rejection.UNAUTHENTICATED);
            }
            byte[] expected = mac(datagram, body);
            byte[] actual = java.util.Arrays.copyOfRange(datagram, body, length);
            if (!MessageDigest.isEqual(expected, actual)) {
                return rejected(Rejection.BAD_MAC);
            }
        }
        Reader in = new Reader(datagram, 2, body);
        long sentAt = in.fixed64();
        LockKey key = new LockKey(in.string(), in.string());
        String entryId = in.string();
        // Without a secret nothing vouches for the item: the hint counts as plain, so no forged state is acted on.
        Map<String, AttributeValue> item = (flags & FLAG_ITEM) != 0 ? in.item() : null;
        if (in.position != body) {
            return rejected(Rejection.GARBAGE);
        }
        // Compared side by side, not as |now - sentAt|: that difference overflows for a forged timestamp 2^63 ms away.
        long now = clock.millis();
        if (sentAt < now - freshness.toMillis() || sentAt > now + freshness.toMillis()) {
            return rejected(Rejection.STALE);
        }
        return new Decoded(new WakeUpHint(key, entryId, sentAt, secret != null ? item : null), null);
    }

    private static Decoded rejected(Rejection why) {
        return new Decoded(null, why);
    }

    private byte[] mac(byte[] data, int length) {
        Mac mac = macs.get();
        mac.update(data, 0, length);
        return mac.doFinal();
    }

    private Mac newMac() {
        if (secret == null) {
            return null;
        }
        try {
            Mac mac = Mac.getInstance(MAC_ALGORITHM);
            mac.init(secret);
            return mac;
        }
        catch (GeneralSecurityException ex) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", ex);
        }
    }

    /** A datagram that ends before its fields do. */
    private static final class Truncated extends RuntimeException {
        Truncated() {
            super(null, null, false, false);
        }
    }

    private static final class Writer {

        final ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
        private final Map<String, Integer> strings = new HashMap<>();
        private long previousNumber;

        void fixed64(long value) {
            for (int shift = 56; shift >= 0; shift -= 8) {
                bytes.write((int) (value >>> shift));
            }
        }

        void varint(long value) {
            while ((value & ~0x7FL) != 0) {
                bytes.write((int) ((value & 0x7F) | 0x80));
                value >>>= 7;
            }
            bytes.write((int) value);
        }

        void string(String value) {
            Integer index = strings.get(value);
            if (index != null) {
                varint(2L * index + 1);
                return;
            }
            strings.put(value, strings.size());
            byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            varint(2L * utf8.length);
            bytes.writeBytes(utf8);
        }

        /** {@code false} if an attribute has a type the lock item never uses. */
        boolean item(Map<String, AttributeValue> item) {
            List<Map.Entry<String, AttributeValue>> attributes = new ArrayList<>();
            for (Map.Entry<String, AttributeValue> attribute : item.entrySet()) {
                String name = attribute.getKey();
                if (!name.equals(QueueTable.PARTITION_KEY) && !name.equals(QueueTable.SORT_KEY)) {
                    attributes.add(attribute);
                }
            }
            attributes.sort(Map.Entry.comparingByKey());
            varint(attributes.size());
            for (Map.Entry<String, AttributeValue> attribute : attributes) {
                name(attribute.getKey());
                if (!value(attribute.getValue())) {
                    return false;
                }
            }
            return true;
        }

        private void name(String name) {
            int hash = name.indexOf('#');
            if (hash < 0) {
                varint(0);
                string(name);
            }
            else {
                varint(1);
                string(name.substring(0, hash));
                string(name.substring(hash + 1));
            }
        }

        private boolean value(AttributeValue value) {
            if (value.s() != null) {
                bytes.write(TYPE_S);
                string(value.s());
            }
            else if (value.n() != null) {
                Long integer = asLong(value.n());
                if (integer != null) {
                    bytes.write(TYPE_N_LONG);
                    long delta = integer - previousNumber;
                    varint((delta << 1) ^ (delta >> 63));
                    previousNumber = integer;
                }
                else {
                    bytes.write(TYPE_N_TEXT);
                    string(value.n());
                }
            }
            else if (value.bool() != null) {
                bytes.write(TYPE_BOOL);
                bytes.write(value.bool() ? 1 : 0);
            }
            else if (Boolean.TRUE.equals(value.nul())) {
                bytes.write(TYPE_NULL);
            }
            else {
                return false;
            }
            return true;
        }

        /** The number as a long if its text is exactly that long's, so the receiver gets the same text back. */
        private static Long asLong(String number) {
            try {
                long parsed = Long.parseLong(number);
                return Long.toString(parsed).equals(number) ? parsed : null;
            }
            catch (NumberFormatException notAnInteger) {
                return null;
            }
        }
    }

    private static final class Reader {

        private final byte[] data;
        private final int end;
        private final List<String> strings = new ArrayList<>();
        private long previousNumber;
        int position;

        Reader(byte[] data, int position, int end) {
            this.data = data;
            this.position = position;
            this.end = end;
        }

        private int next() {
            if (position >= end) {
                throw new Truncated();
            }
            return data[position++] & 0xFF;
        }

        long fixed64() {
            long value = 0;
            for (int i = 0; i < 8; i++) {
                value = (value << 8) | next();
            }
            return value;
        }

        long varint() {
            long value = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                int b = next();
                value |= (long) (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    return value;
                }
            }
            throw new IllegalArgumentException("varint too long");
        }

        /** A count or length: never more than the bytes left, so garbage cannot make us allocate much. */
        int size() {
            long value = varint();
            if (value < 0 || value > end - position) {
                throw new Truncated();
            }
            return (int) value;
        }

        String string() {
            long tag = varint();
            if ((tag & 1) == 1) {
                long index = tag >>> 1;
                if (index >= strings.size()) {
                    throw new IllegalArgumentException("string reference out of range");
                }
                return strings.get((int) index);
            }
            long length = tag >>> 1;
            if (length > end - position) {
                throw new Truncated();
            }
            String value;
            try {
                value = StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(data, position, (int) length)).toString();
            }
            catch (CharacterCodingException ex) {
                throw new IllegalArgumentException("not UTF-8", ex);
            }
            position += (int) length;
            strings.add(value);
            return value;
        }

        Map<String, AttributeValue> item() {
            int count = size();
            Map<String, AttributeValue> item = new HashMap<>();
            for (int i = 0; i < count; i++) {
                long form = varint();
                String name;
                if (form == 0) {
                    name = string();
                }
                else if (form == 1) {
                    name = string() + "#" + string();
                }
                else {
                    throw new IllegalArgumentException("unknown name form");
                }
                if (item.put(name, value()) != null) {
                    throw new IllegalArgumentException("attribute twice: " + name);
                }
            }
            return item;
        }

        private AttributeValue value() {
            int type = next();
            return switch (type) {
                case TYPE_S -> AttributeValue.fromS(string());
                case TYPE_N_LONG -> {
                    long zigzag = varint();
                    previousNumber += (zigzag >>> 1) ^ -(zigzag & 1);
                    yield AttributeValue.fromN(Long.toString(previousNumber));
                }
                case TYPE_N_TEXT -> {
                    String number = string();
                    new java.math.BigDecimal(number); // only a number passes; its text is kept as sent
                    yield AttributeValue.fromN(number);
                }
                case TYPE_BOOL -> AttributeValue.fromBool(next() != 0);
                case TYPE_NULL -> AttributeValue.fromNul(true);
                default -> throw new IllegalArgumentException("unknown type " + type);
            };
        }
    }
}
