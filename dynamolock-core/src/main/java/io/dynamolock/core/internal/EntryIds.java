package io.dynamolock.core.internal;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.regex.Pattern;

/**
 * Identities of queue entries: 96 random bits per acquisition (R8). Never derived from a counter, a
 * configured name or any state of this JVM, so no two acquisitions of any processes, templates or
 * restored snapshots share an entry. {@link SecureRandom} on Linux reads the kernel's generator on
 * every call, so a JVM restored from a snapshot (Lambda SnapStart, CRaC) does not repeat the ids of
 * its siblings.
 */
final class EntryIds {

    static final int RANDOM_BYTES = 12;

    private static final SecureRandom random = new SecureRandom();
    private static final Base64.Encoder encoder = Base64.getUrlEncoder().withoutPadding();

    private static final Pattern SHAPE = Pattern.compile("[A-Za-z0-9_-]{1,16}");

    private EntryIds() {
    }

    /**
     * Whether {@code id}, read from an item, could be an acquisition's: at most 16 characters of base64url. Anyone
     * who may write the table may write an entry with any id; one of another shape is none of ours.
     */
    static boolean isWellFormed(String id) {
        return id != null && SHAPE.matcher(id).matches();
    }

    /** A new id: 16 characters of base64url. */
    static String next() {
        byte[] bytes = new byte[RANDOM_BYTES];
        random.nextBytes(bytes);
        return encoder.encodeToString(bytes);
    }
}
