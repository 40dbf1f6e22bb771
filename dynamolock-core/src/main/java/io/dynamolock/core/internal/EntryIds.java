package io.dynamolock.core.internal;

import java.security.SecureRandom;
import java.util.Base64;

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

    private EntryIds() {
    }

    /** A new id: 16 characters of base64url. */
    static String next() {
        byte[] bytes = new byte[RANDOM_BYTES];
        random.nextBytes(bytes);
        return encoder.encodeToString(bytes);
    }
}
