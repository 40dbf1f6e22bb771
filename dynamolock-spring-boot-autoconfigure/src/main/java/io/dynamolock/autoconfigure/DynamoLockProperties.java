package io.dynamolock.autoconfigure;

import io.dynamolock.annotation.LostLeasePolicy;
import io.dynamolock.core.WakeUpOptions;
import io.dynamolock.core.internal.Printable;
import java.net.URI;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;
import org.springframework.validation.BindingResult;
import org.springframework.validation.Errors;
import org.springframework.validation.FieldError;
import org.springframework.validation.Validator;
import org.springframework.validation.annotation.Validated;

/**
 * Configuration of dynamolock's {@code LockTemplate}, its lock table, {@code @QueueLocked}
 * and, when the application has no {@code DynamoDbClient} bean, the client built for it.
 * Checked at startup: a bad value stops the application with a message naming the property.
 */
@ConfigurationProperties(prefix = "dynamolock", ignoreUnknownFields = false)
@Validated
public class DynamoLockProperties implements Validator {

    /** Default of {@link #getAdvisorOrder()}: inside Boot's security advisors, outside its transaction advisor. */
    public static final int DEFAULT_ADVISOR_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

    /** Whether to configure dynamolock: the LockTemplate bean and @QueueLocked (when false, annotated methods run without a lock). */
    private boolean enabled = true;

    /** Name of the DynamoDB lock table: partition key 'pk' (S), sort key 'sk' (S), TTL on 'expiresAt'. */
    private String tableName = "dynamolock";

    /**
     * Whether to create the lock table at startup if it is missing (on-demand billing, TTL
     * enabled) and wait until it is active. When false, startup fails if the table is missing
     * or has the wrong keys.
     */
    private boolean createTable = false;

    /**
     * The longest startup may spend creating or checking the lock table, retries and the wait for a table being
     * created included: an endpoint that never answers fails the startup then, not after the SDK's retries.
     */
    private Duration startupTimeout = Duration.ofMinutes(1);

    /** Namespace of locks that name none. Locks of different namespaces on one entity are independent. */
    private String defaultNamespace = "default";

    /** How long a lock stays valid without a heartbeat: a crashed holder is replaced this long after its last one. */
    private Duration leaseDuration = Duration.ofSeconds(60);

    /** How often holders and waiters renew their lease; shorter than the lease. Default: half the lease duration. */
    private Duration heartbeatInterval;

    /** How long callers wait for a lock when they name no wait: 0 for no wait. */
    private Duration defaultWait = Duration.ofSeconds(60);

    /**
     * Names this instance in lock queues, for people (timeout messages, the actuator endpoint). Default: host and
     * process id. A label only: each acquisition has a random entry id, so replicas sharing a name never share an entry.
     */
    private String ownerName;

    /** A time-out past 292 years overflows the nanoseconds it is counted down in: a year is far more than enough. */
    private static final Duration LONGEST_TIMEOUT = Duration.ofDays(365);

    /** A time-out: positive, and short enough to count down. */
    private static void rejectUnlessUsable(Errors errors, String field, Duration value, String example) {
        if (value == null || value.isNegative() || value.isZero()) {
            errors.rejectValue(field, "positive", "must be positive, e.g. " + example);
        }
        else if (value.compareTo(LONGEST_TIMEOUT) > 0) {
            errors.rejectValue(field, "too-long", "must be at most 365 days, e.g. " + example);
        }
    }

    /** Pauses between a waiter's reads of the queue. */
    private final PollInterval pollInterval = new PollInterval();

    /**
     * Most entries one lock's queue may hold; further callers fail with LockQueueFullException. Also the most
     * permits a lock may have.
     */
    private int maxQueueLength = 100;

    /**
     * Order of the @QueueLocked advisor among a bean's advisors: lower runs outside. The
     * default runs outside Boot's @Transactional advisor (Ordered.LOWEST_PRECEDENCE), so the
     * lock is taken before the transaction begins and released after it commits.
     */
    private int advisorOrder = DEFAULT_ADVISOR_ORDER;

    /**
     * What a @QueueLocked call does when its lease was lost while the method ran: 'fail'
     * throws LockLostException when the method returns (a Mono, Flux or suspend method is
     * cancelled at once and fails with it), 'log' logs a warning.
     */
    private LostLeasePolicy onLostLease = LostLeasePolicy.FAIL;

    /** DynamoDB client settings, used only when the application defines no DynamoDbClient bean. */
    private final DynamoDb dynamodb = new DynamoDb();

    /** Wake-up hints between instances over UDP (off by default). */
    private final WakeUp wakeUp = new WakeUp();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getTableName() {
        return tableName;
    }

    public void setTableName(String tableName) {
        this.tableName = unlessBlank(tableName, this.tableName);
    }

    public boolean isCreateTable() {
        return createTable;
    }

    public void setCreateTable(boolean createTable) {
        this.createTable = createTable;
    }

    public Duration getStartupTimeout() {
        return startupTimeout;
    }

    public void setStartupTimeout(Duration startupTimeout) {
        this.startupTimeout = startupTimeout;
    }

    public String getDefaultNamespace() {
        return defaultNamespace;
    }

    public void setDefaultNamespace(String defaultNamespace) {
        this.defaultNamespace = unlessBlank(defaultNamespace, this.defaultNamespace);
    }

    public Duration getLeaseDuration() {
        return leaseDuration;
    }

    public void setLeaseDuration(Duration leaseDuration) {
        this.leaseDuration = leaseDuration;
    }

    public Duration getHeartbeatInterval() {
        return heartbeatInterval;
    }

    public void setHeartbeatInterval(Duration heartbeatInterval) {
        this.heartbeatInterval = heartbeatInterval;
    }

    public Duration getDefaultWait() {
        return defaultWait;
    }

    public void setDefaultWait(Duration defaultWait) {
        this.defaultWait = defaultWait;
    }

    public String getOwnerName() {
        return ownerName;
    }

    public void setOwnerName(String ownerName) {
        this.ownerName = blankAsUnset(ownerName);
    }

    public PollInterval getPollInterval() {
        return pollInterval;
    }

    public int getMaxQueueLength() {
        return maxQueueLength;
    }

    public void setMaxQueueLength(int maxQueueLength) {
        this.maxQueueLength = maxQueueLength;
    }

    public int getAdvisorOrder() {
        return advisorOrder;
    }

    public void setAdvisorOrder(int advisorOrder) {
        this.advisorOrder = advisorOrder;
    }

    public LostLeasePolicy getOnLostLease() {
        return onLostLease;
    }

    public void setOnLostLease(LostLeasePolicy onLostLease) {
        this.onLostLease = onLostLease;
    }

    public WakeUp getWakeUp() {
        return wakeUp;
    }

    public DynamoDb getDynamodb() {
        return dynamodb;
    }

    @Override
    public boolean supports(Class<?> type) {
        return DynamoLockProperties.class.isAssignableFrom(type);
    }

    /** Checks the starter's own rules; the core checks the lock options when the template is built. */
    @Override
    public void validate(Object target, Errors errors) {
        DynamoLockProperties properties = (DynamoLockProperties) target;
        properties.check(errors);
    }

    /**
     * Only the rules of this starter: the lock options' own rules (lengths, limits, lease against heartbeat)
     * live in dynamolock-core, which the failure analyzer reports under these properties' names.
     */
    private void check(Errors errors) {
        if (onLostLease == null) {
            errors.rejectValue("onLostLease", "missing", "must be 'fail' or 'log'");
        }
        rejectUnlessUsable(errors, "startupTimeout", startupTimeout, "1m");
        rejectUnlessUsable(errors, "dynamodb.apiCallAttemptTimeout", dynamodb.apiCallAttemptTimeout, "5s");
        rejectUnlessUsable(errors, "dynamodb.apiCallTimeout", dynamodb.apiCallTimeout, "20s");
        URI endpoint = dynamodb.endpoint;
        if (endpoint != null && (endpoint.getHost() == null
                || !"http".equalsIgnoreCase(endpoint.getScheme()) && !"https".equalsIgnoreCase(endpoint.getScheme()))) {
            rejectShowing(errors, "dynamodb.endpoint", Printable.endpoint(endpoint), "url", "must be an http or https"
                    + " URL with a host, e.g. http://localhost:8000 for DynamoDB Local; leave it unset for AWS's own"
                    + " endpoint");
        }
        // access-key-id without secret-access-key is checked when the client is built, not here: this check runs
        // before Boot's check of unknown names, so a misspelt secret-access-key would be reported as missing.
    }

    /**
     * {@code ${AWS_REGION:}} or {@code ${LOCK_SECRET:}} with the variable unset binds "": unset, as if the property
     * were absent (for the region and keys the AWS default chain), rather than a value refused at startup. Other
     * types need no such care: Boot binds nothing for their empty values (see {@link EmptyValueBindHandlerAdvisor}).
     */
    private static String blankAsUnset(String value) {
        return value == null || value.isBlank() ? null : value;
    }

    /** {@code value}, or {@code current} (the default, when bound) if it is blank: see {@link #blankAsUnset}. */
    private static String unlessBlank(String value, String current) {
        return value == null || value.isBlank() ? current : value;
    }

    /**
     * Rejects {@code field} with {@code shown} as the value the failure (and its report) shows, rather than the
     * value itself, which may hold credentials.
     */
    private static void rejectShowing(Errors errors, String field, Object shown, String code, String message) {
        if (errors instanceof BindingResult result) {
            result.addError(new FieldError(result.getObjectName(), field, shown, false,
                    result.resolveMessageCodes(code, field), null, message));
        }
        else {
            errors.reject(code, field + " " + message);
        }
    }

    /** Pauses between a waiter's reads of the queue: the shortest times its position in the queue, at most the longest. */
    public static class PollInterval {

        /** Shortest pause between a waiter's reads of the queue (the first waiter's pause). */
        private Duration min = Duration.ofMillis(50);

        /** Longest pause between a waiter's reads of the queue, however far back it is. */
        private Duration max = Duration.ofSeconds(1);

        public Duration getMin() {
            return min;
        }

        public void setMin(Duration min) {
            this.min = min;
        }

        public Duration getMax() {
            return max;
        }

        public void setMax(Duration max) {
            this.max = max;
        }
    }

    /**
     * Wake-up hints: an instance that releases a lock tells the instance of the next waiter at once, over UDP, so
     * a handoff between instances costs about one round trip instead of a poll interval. Every instance needs the
     * same settings, and the port open to the service's own members (one inbound UDP rule in its security group).
     */
    public static class WakeUp {

        /**
         * Whether to send and receive wake-up hints. Turn them on in every instance that uses the table; an
         * instance whose port cannot be reached still gets every lock, by polling.
         */
        private boolean enabled = false;

        /** Local address the UDP port is bound to; 0.0.0.0 for every interface. */
        private String bindAddress = "0.0.0.0";

        /**
         * UDP port hints are received on. 0 takes a free one (fine where instances reach each other directly);
         * set a fixed port so that one security group rule allows it.
         */
        private int port = 0;

        /**
         * Address other instances send hints to: host, host:port or :port (a port 1 to 65535). Default: this host's
         * address and the bound port. Set it where that is not what others reach: the task IP in ECS bridge mode,
         * the pod IP (e.g. from the downward API) or a host port in Kubernetes.
         */
        private String advertisedAddress;

        /**
         * Secret the instances share, at least 16 bytes. With it hints are authenticated (HMAC-SHA256) and carry
         * the lock's queue, so the next holder takes the lock without reading it, and a holder that is done
         * hands the lock over before its release lands; without it hints are plain and only make the next
         * waiter read at once. Keep it in a secret store.
         */
        private String secret;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getBindAddress() {
            return bindAddress;
        }

        public void setBindAddress(String bindAddress) {
            this.bindAddress = unlessBlank(bindAddress, this.bindAddress);
        }

        public int getPort() {
            return port;
        }

        public void setPort(int port) {
            this.port = port;
        }

        public String getAdvertisedAddress() {
            return advertisedAddress;
        }

        public void setAdvertisedAddress(String advertisedAddress) {
            this.advertisedAddress = blankAsUnset(advertisedAddress);
        }

        public String getSecret() {
            return secret;
        }

        public void setSecret(String secret) {
            this.secret = blankAsUnset(secret);
        }

        /** The core's options these properties stand for. */
        public WakeUpOptions toOptions() {
            // Built, so checked, also while disabled: a set-up left with a bad value (a short secret, say) is
            // refused at this start, not found broken on the day hints are turned on.
            WakeUpOptions options = WakeUpOptions.builder().bindAddress(bindAddress).port(port)
                    .advertisedAddress(advertisedAddress).secret(secret).build();
            return enabled ? options : WakeUpOptions.disabled();
        }
    }

    /** Settings of the DynamoDbClient built when the application defines none. */
    public static class DynamoDb {

        /** Endpoint to call instead of AWS's, e.g. http://localhost:8000 for DynamoDB Local. */
        private URI endpoint;

        /** AWS region, e.g. eu-west-1. Default, also when blank: the AWS default region chain (AWS_REGION, profile...). */
        private String region;

        /** Static access key id. Default: the AWS default credentials chain. Set with secret-access-key. */
        private String accessKeyId;

        /** Static secret access key. Default: the AWS default credentials chain. Set with access-key-id. */
        private String secretAccessKey;

        /**
         * How long one attempt of a request may take before the SDK gives it up and retries it. DynamoDB answers
         * in milliseconds; without a bound, an endpoint that stops answering holds a caller's acquire for 30 s per
         * attempt (the HTTP client's read timeout), about 5 minutes over the SDK's retries.
         */
        private Duration apiCallAttemptTimeout = Duration.ofSeconds(5);

        /**
         * How long a request may take in all, its retries included. A lock request that runs out is reported as
         * failed; one that may have landed is removed in the background, as after any failure.
         */
        private Duration apiCallTimeout = Duration.ofSeconds(20);

        public URI getEndpoint() {
            return endpoint;
        }

        public void setEndpoint(URI endpoint) {
            this.endpoint = endpoint;
        }

        public String getRegion() {
            return region;
        }

        public void setRegion(String region) {
            this.region = blankAsUnset(region);
        }

        public String getAccessKeyId() {
            return accessKeyId;
        }

        public void setAccessKeyId(String accessKeyId) {
            this.accessKeyId = blankAsUnset(accessKeyId);
        }

        public String getSecretAccessKey() {
            return secretAccessKey;
        }

        public void setSecretAccessKey(String secretAccessKey) {
            this.secretAccessKey = blankAsUnset(secretAccessKey);
        }

        public Duration getApiCallAttemptTimeout() {
            return apiCallAttemptTimeout;
        }

        public void setApiCallAttemptTimeout(Duration apiCallAttemptTimeout) {
            this.apiCallAttemptTimeout = apiCallAttemptTimeout;
        }

        public Duration getApiCallTimeout() {
            return apiCallTimeout;
        }

        public void setApiCallTimeout(Duration apiCallTimeout) {
            this.apiCallTimeout = apiCallTimeout;
        }
    }
}
