package io.dynamolock.core;

import io.dynamolock.core.internal.WakeUpAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Wake-up hints between processes (off by default): when a process releases a lock or purges a dead entry, it
 * sends a UDP datagram to the process of the entry that may now hold, so its waiter reads the queue at once
 * instead of at its next poll. Immutable; build with {@link #builder()}, pass to
 * {@link LockTemplate.Builder#wakeUp(WakeUpOptions)}.
 *
 * <p><b>Network.</b> Each process receives on one UDP port ({@link Builder#port}); its entries carry the address
 * others should send to ({@link Builder#advertisedAddress}). Allow that port inside the service's security group
 * (or network policy), from the service's own members only. A process whose port is unreachable still gets every
 * lock, by polling.
 *
 * <p><b>Security.</b> Without a secret a hint is plain: it only makes the receiver read the queue at once, so a
 * forged, lost, duplicated or delayed one costs a read or a poll interval, never safety, and at most as many reads
 * as polling would. With a {@link Builder#secret shared secret} hints are authenticated (HMAC-SHA256) and carry
 * the lock item as the sender's write returned it (cut after the entries it is for, when the whole is too long
 * for a datagram); the receiver may then take the lock without a read, as a waiter in the releasing process would,
 * and a holder that is done hands the lock over to the waiters it knows before its release lands (README,
 * "Wake-up hints between instances"). A receiver with a secret rejects hints without a valid HMAC, and hints older
 * than a few seconds.
 */
public final class WakeUpOptions {

    /** The shortest secret accepted, in UTF-8 bytes: 128 bits if it is random. */
    public static final int MIN_SECRET_BYTES = 16;

    private static final WakeUpOptions DISABLED = new WakeUpOptions(new Builder().enabled(false));

    private final boolean enabled;
    private final String bindAddress;
    private final int port;
    private final String advertisedAddress;
    private final byte[] secret;

    private WakeUpOptions(Builder builder) {
        this.enabled = builder.enabled;
        this.bindAddress = builder.bindAddress;
        this.port = builder.port;
        this.advertisedAddress = builder.advertisedAddress;
        this.secret = builder.secret;
    }

    /** No wake-up hints: waiters of other processes learn of a release at their next poll (the default). */
    public static WakeUpOptions disabled() {
        return DISABLED;
    }

    /** Enabled, on an ephemeral port of every interface, plain unless a secret is set. */
    public static Builder builder() {
        return new Builder();
    }

    public boolean enabled() {
        return enabled;
    }

    /** The address the UDP port is bound to (default {@code 0.0.0.0}: every interface). */
    public String bindAddress() {
        return bindAddress;
    }

    /** The UDP port hints are received on; 0 (the default) takes a free one. */
    public int port() {
        return port;
    }

    /** {@code host} or {@code host:port} others send to, or {@code null} for this host's address and bound port. */
    public String advertisedAddress() {
        return advertisedAddress;
    }

    /** Whether hints are authenticated (a secret is set) and so may carry the lock item. */
    public boolean authenticated() {
        return secret != null;
    }

    /** The secret's bytes, a copy; {@code null} without one. Internal: not in {@link #toString()}. */
    public byte[] secret() {
        return secret == null ? null : secret.clone();
    }

    @Override
    public String toString() {
        return enabled ? "WakeUpOptions[bind=" + bindAddress + ":" + port + ", advertised=" + advertisedAddress
                + (secret != null ? ", authenticated]" : ", plain]") : "WakeUpOptions[disabled]";
    }

    /** Options of wake-up hints; every one has a default. */
    public static final class Builder {

        private boolean enabled = true;
        private String bindAddress = "0.0.0.0";
        private int port;
        private String advertisedAddress;
        private byte[] secret;

        private Builder() {
        }

        /** Whether hints are sent and received (default {@code true} for a built instance). */
        public Builder enabled(boolean enabled) {
            this.enabled = enabled;
            return this;
        }

        /** The local address to receive on (default {@code 0.0.0.0}). */
        public Builder bindAddress(String bindAddress) {
            this.bindAddress = bindAddress;
            return this;
        }

        /**
         * The UDP port to receive on (default 0, a free one). Set one port for every instance, so one rule of
         * the security group allows it.
         */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /**
         * What others send to, {@code host}, {@code host:port} or {@code :port} (default: this host's address and
         * the bound port; an IPv6 address bare or as {@code [address]:port}). Set it where the bound address is not
         * what others reach: the task's IP in ECS bridge mode, the pod IP or a host port in Kubernetes.
         */
        public Builder advertisedAddress(String advertisedAddress) {
            this.advertisedAddress = advertisedAddress == null || advertisedAddress.isBlank() ? null
                    : advertisedAddress.strip();
            return this;
        }

        /**
         * The secret every instance shares (UTF-8, at least {@value #MIN_SECRET_BYTES} bytes; default none: plain
         * hints). With it, hints are authenticated and carry the lock item, so a hint hands the lock over without
         * a read. Keep it in a secret store, not in the code.
         */
        public Builder secret(String secret) {
            this.secret = secret == null || secret.isEmpty() ? null : secret.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        /** @throws LockOptionException naming the bad option and the fix */
        public WakeUpOptions build() {
            if (port < 0 || port > 65_535) {
                throw new LockOptionException("wakeUp.port", port, "wakeUp.port " + port
                        + " is not a UDP port: use 0 (a free one) to 65535");
            }
            if (bindAddress == null || bindAddress.isBlank()) {
                throw new LockOptionException("wakeUp.bindAddress", bindAddress, "wakeUp.bindAddress must not be"
                        + " blank; use 0.0.0.0 for every interface");
            }
            if (secret != null && secret.length < MIN_SECRET_BYTES) {
                throw new LockOptionException("wakeUp.secret", "(" + secret.length + " bytes)", "wakeUp.secret is "
                        + secret.length + " bytes; use at least " + MIN_SECRET_BYTES + " (e.g. 32 random bytes,"
                        + " base64), or none for plain hints");
            }
            WakeUpAddress.requireAdvertised(advertisedAddress);
            return new WakeUpOptions(this);
        }
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof WakeUpOptions o && enabled == o.enabled && port == o.port
                && bindAddress.equals(o.bindAddress) && java.util.Objects.equals(advertisedAddress, o.advertisedAddress)
                && Arrays.equals(secret, o.secret);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(enabled, bindAddress, port, advertisedAddress, Arrays.hashCode(secret));
    }
}
