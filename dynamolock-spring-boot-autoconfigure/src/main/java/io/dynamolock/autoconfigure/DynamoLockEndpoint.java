package io.dynamolock.autoconfigure;

import io.dynamolock.core.BrokenLock;
import io.dynamolock.core.LockEntryNotFoundException;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.QueueSnapshot;
import io.dynamolock.core.internal.Printable;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.util.ClassUtils;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The {@code dynamolock} actuator endpoint: {@code /actuator/dynamolock} lists the locks this
 * instance holds and waits for; {@code /actuator/dynamolock/{entity}} and
 * {@code /actuator/dynamolock/{entity}/{namespace}} show a lock's queue as stored in DynamoDB
 * now (one strongly consistent read), whoever is in it, each entry alive or silent.
 *
 * <p>{@code DELETE /actuator/dynamolock/{entity}[/{namespace}]?ticket=N} breaks the entry with
 * that ticket ({@link LockTemplate#breakLock}). An entity with a {@code /}, {@code \} or {@code ;} goes in the query
 * instead:
 * {@code GET /actuator/dynamolock?entity=tenant%2F7}, {@code DELETE /actuator/dynamolock?entity=tenant%2F7&ticket=N}. Off by default: the endpoint's access is
 * read-only unless the application sets {@code management.endpoint.dynamolock.access=unrestricted}
 * (and should then secure it), or widens it by Boot's other access rules ({@code management.endpoints.access.default},
 * the deprecated {@code enabled} switches); {@code management.endpoints.access.max-permitted=read-only} keeps it off. Answers 200 with what was removed, 404 when no entry has the ticket,
 * 400 for a missing or malformed ticket or key. Each break tried is logged at WARN with who asked, before it is
 * tried (one refused for its ticket or namespace is not). A queue's GET
 * answers 400 too for a key the lock table cannot hold (an entity over 2048 bytes, a blank namespace).
 */
@Endpoint(id = "dynamolock", defaultAccess = Access.READ_ONLY)
public class DynamoLockEndpoint {

    private static final Logger log = LoggerFactory.getLogger(DynamoLockEndpoint.class);

    private final LockTemplate lockTemplate;

    public DynamoLockEndpoint(LockTemplate lockTemplate) {
        this.lockTemplate = lockTemplate;
    }

    /**
     * {@code GET /actuator/dynamolock}: this instance's locks; with {@code ?entity=...[&namespace=...]}, that lock's
     * queue, as {@link #queueInNamespace} shows it: the form for an entity with a {@code /}, a {@code \} or a
     * {@code ;}, which no path can carry (servers refuse an encoded slash, a plain one splits the path, and a
     * {@code ;} starts a path parameter).
     */
    @ReadOperation
    public Object locks(@Nullable String entity, @Nullable String namespace) {
        if (entity == null) {
            return namespace == null ? locks() : error(WebEndpointResponse.STATUS_BAD_REQUEST, "namespace '"
                    + Printable.escape(namespace) + "' without an entity: GET /actuator/dynamolock?entity=E&namespace="
                    + URLEncoder.encode(namespace, StandardCharsets.UTF_8));
        }
        return queueOf(entity, namespace != null ? namespace : lockTemplate.defaultNamespace());
    }

    /** This instance's locks. */
    public LocksDescriptor locks() {
        return new LocksDescriptor(lockTemplate.tableName(), lockTemplate.ownerName(), lockTemplate.activeLocks());
    }

    @ReadOperation
    public WebEndpointResponse<Object> queue(@Selector String entity) {
        return queueInNamespace(entity, lockTemplate.defaultNamespace());
    }

    /** The queue, or 400 naming the value if the entity or namespace cannot be a key of the lock table. */
    @ReadOperation
    public WebEndpointResponse<Object> queueInNamespace(@Selector String entity, @Selector String namespace) {
        WebEndpointResponse<Object> cut = PathParameters.refusal(entity, "GET /actuator/dynamolock");
        return cut != null ? cut : queueOf(entity, namespace);
    }

    private WebEndpointResponse<Object> queueOf(String entity, String namespace) {
        QueueSnapshot queue;
        try {
            queue = lockTemplate.queue(entity, namespace);
        }
        catch (IllegalArgumentException ex) {
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, ex.getMessage());
        }
        Instant now = Instant.now();
        return new WebEndpointResponse<>(new QueueDescriptor(lockTemplate.tableName(), queue.entity(),
                queue.namespace(), queue.nextTicket(), queue.permits(),
                queue.entries().stream().map(entry -> EntryDescriptor.of(entry, now)).toList()));
    }

    /**
     * {@code DELETE /actuator/dynamolock?entity=...[&namespace=...]&ticket=N}: the break for an entity with a
     * {@code /}, a {@code \} or a {@code ;}, as {@link #breakEntryInNamespace} does it.
     */
    @DeleteOperation
    public WebEndpointResponse<Object> breakEntryNamedInTheQuery(@Nullable String entity, @Nullable String namespace,
            @Nullable String ticket, SecurityContext security) {
        if (entity == null || entity.isEmpty()) {
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, "A break names the lock's entity: DELETE"
                    + " /actuator/dynamolock/{entity}?ticket=N, or ?entity=E&ticket=N for an entity with a '/'");
        }
        String query = "?entity=" + URLEncoder.encode(entity, StandardCharsets.UTF_8)
                + (namespace == null ? "" : "&namespace=" + URLEncoder.encode(namespace, StandardCharsets.UTF_8));
        return breakEntryAddressedAs(entity, namespace != null ? namespace : lockTemplate.defaultNamespace(), ticket,
                security, "DELETE /actuator/dynamolock" + query + "&ticket=N", "GET /actuator/dynamolock" + query);
    }

    @DeleteOperation
    public WebEndpointResponse<Object> breakEntry(@Selector String entity, @Nullable String ticket,
            SecurityContext security) {
        return breakEntryInNamespace(entity, lockTemplate.defaultNamespace(), ticket, security);
    }

    @DeleteOperation
    public WebEndpointResponse<Object> breakEntryInNamespace(@Selector String entity, @Selector String namespace,
            @Nullable String ticket, SecurityContext security) {
        WebEndpointResponse<Object> cut = PathParameters.refusal(entity, "DELETE /actuator/dynamolock");
        return cut != null ? cut : breakEntryAddressedAs(entity, namespace, ticket, security,
                "DELETE /actuator/dynamolock/{entity}?ticket=N", "GET /actuator/dynamolock/{entity}");
    }

    /**
     * A path segment's {@code ;...} is a path parameter to the servlet container and Spring MVC, dropped before the
     * selector is bound: {@code /actuator/dynamolock/tenant;7} would show, and break in, the lock of {@code tenant}.
     * The raw request URI still has it, so such a request is refused with the query form instead. (Spring MVC only:
     * under WebFlux no request is bound to the thread; the README's runbook sends such entities to the query form.)
     */
    static final class PathParameters {

        /** What the raw path is read from; looked up by name, as WebFlux applications have neither. */
        static final List<String> SERVLET_CLASSES = List.of("jakarta.servlet.http.HttpServletRequest",
                "org.springframework.web.context.request.ServletRequestAttributes");

        private static final boolean SERVLET = SERVLET_CLASSES.stream()
                .allMatch(name -> ClassUtils.isPresent(name, PathParameters.class.getClassLoader()));

        private PathParameters() {
        }

        /** A 400 with the query form if the request's path carried a {@code ;}, else {@code null}. */
        static WebEndpointResponse<Object> refusal(String entity, String operation) {
            String path = SERVLET ? Servlet.rawPath() : null;
            if (path == null || path.indexOf(';') < 0) {
                return null;
            }
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, "The path " + path + " has a ';', which the server"
                    + " drops with what follows before dynamolock sees it (it read the entity as '"
                    + Printable.escape(entity) + "', another lock). Name the entity in the query instead: " + operation
                    + "?entity=E[&namespace=N]"
                    + (operation.startsWith("DELETE") ? "&ticket=N" : "") + ", with E (and N) URL-encoded");
        }

        private static final class Servlet {

            static String rawPath() {
                return RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes request
                        ? request.getRequest().getRequestURI() : null;
            }
        }
    }

    /** {@code deleting} and {@code reading}: how the caller addresses this lock, for the advice a bad ticket gets. */
    private WebEndpointResponse<Object> breakEntryAddressedAs(String entity, String namespace, @Nullable String ticket,
            SecurityContext security, String deleting, String reading) {
        Principal principal = security.getPrincipal();
        String who = principal != null ? principal.getName() : "an anonymous caller";
        if (ticket == null || ticket.isBlank()) {
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, "A break needs the ticket of the entry to remove: "
                    + deleting + ", with N from " + reading);
        }
        long number;
        try {
            number = Long.parseLong(ticket.trim());
        }
        catch (NumberFormatException ex) {
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, "ticket '" + ticket + "' is not a number; copy the"
                    + " ticket of the entry to remove from " + reading);
        }
        // Refused before the audit line, which is for a break that is tried: the key's own rules are the core's.
        if (number <= 0) {
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, "ticket " + number + " is not a ticket of any lock:"
                    + " tickets are positive; copy the ticket of the entry to remove from " + reading);
        }
        try {
            lockTemplate.checkOptions(null, namespace);
        }
        catch (IllegalArgumentException ex) {
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, ex.getMessage());
        }
        log.warn("{} asks to break the entry with ticket {} of the lock entity='{}' namespace='{}' at {}",
                Printable.escape(who), number, Printable.escape(entity), Printable.escape(namespace), Instant.now());
        try {
            BrokenLock broken = lockTemplate.breakLock(entity, namespace, number);
            return new WebEndpointResponse<>(new BreakDescriptor(lockTemplate.tableName(), broken.entity(),
                    broken.namespace(), EntryDescriptor.of(broken.entry(), Instant.now())));
        }
        catch (IllegalArgumentException ex) {
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, ex.getMessage());
        }
        catch (LockEntryNotFoundException ex) {
            return error(WebEndpointResponse.STATUS_NOT_FOUND, ex.getMessage());
        }
    }

    private static WebEndpointResponse<Object> error(int status, String message) {
        return new WebEndpointResponse<>(new ErrorDescriptor(status, message), status);
    }

    /**
     * This instance's locks.
     *
     * @param table the lock table
     * @param owner this instance's owner name
     * @param locks the locks it holds or waits for
     */
    public record LocksDescriptor(String table, String owner, List<LockInfo> locks) implements OperationResponseBody {
    }

    /**
     * One lock's queue, lowest ticket (the holder, if live) first.
     *
     * @param table      the lock table
     * @param entity     the entity
     * @param namespace  the namespace
     * @param nextTicket the next ticket, or 0 when the lock has no item
     * @param permits    how many exclusive entries hold at once: 1, or N for a semaphore
     * @param entries    the queue entries
     */
    public record QueueDescriptor(String table, String entity, String namespace, long nextTicket, int permits,
            List<EntryDescriptor> entries) implements OperationResponseBody {
    }

    /**
     * One queue entry as an operator reads it.
     *
     * @param entryId        the entry's identity, random per acquisition
     * @param owner          the owner name of the instance that made it
     * @param ticket         its ticket: what a break names
     * @param mode           {@code fail-closed} (kept until released or broken) or {@code fail-open}
     * @param lockMode       {@code exclusive} or {@code shared} (a reader of a read/write lock)
     * @param status         {@code alive} (renewed within its lease) or {@code silent} (not renewed for a whole
     *                       lease: its process is dead, stopped or cut off)
     * @param leaseExpiresAt when its lease ends unless renewed
     * @param lastRenewedAt  for a fail-closed entry, its last renewal: silent since then; else {@code null}
     */
    public record EntryDescriptor(String entryId, String owner, long ticket, String mode, String lockMode,
            String status, Instant leaseExpiresAt, @Nullable Instant lastRenewedAt) {

        static EntryDescriptor of(QueueSnapshot.Entry entry, Instant now) {
            return new EntryDescriptor(entry.entryId(), entry.owner(), entry.ticket(),
                    entry.failClosed() ? "fail-closed" : "fail-open", LockMetricsListener.tag(entry.mode()),
                    entry.isSilentAt(now) ? "silent" : "alive",
                    entry.leaseExpiresAt(), entry.lastRenewedAt());
        }
    }

    /**
     * What a break removed.
     *
     * @param table     the lock table
     * @param entity    the entity
     * @param namespace the namespace
     * @param broken    the entry exactly as the break removed it (renewed after the queue was read, it shows the
     *                  renewed lease end and {@code alive})
     */
    public record BreakDescriptor(String table, String entity, String namespace, EntryDescriptor broken)
            implements OperationResponseBody {
    }

    /**
     * Why a break removed nothing.
     *
     * @param status  the HTTP status
     * @param message what was wrong, naming the value
     */
    public record ErrorDescriptor(int status, String message) implements OperationResponseBody {
    }
}
