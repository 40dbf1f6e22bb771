package io.dynamolock.samples.orders;

import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockQueueFullException;
import io.dynamolock.core.LockWaitTimeoutException;
import java.io.CharConversionException;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.nio.charset.CharacterCodingException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.tomcat.util.http.InvalidParameterException;
import org.springframework.context.MessageSourceResolvable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.validation.FieldError;
import org.springframework.util.ClassUtils;
import org.springframework.web.HttpMediaTypeNotAcceptableException;
import org.springframework.validation.method.ParameterValidationResult;
import org.springframework.web.bind.MethodArgumentNotValidException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.method.annotation.HandlerMethodValidationException;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;
import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.exc.InvalidFormatException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.PropertyBindingException;

/**
 * Answers every error of the API as an RFC 9457 problem detail ({@code application/problem+json}):
 * 400 naming each bad field, the value sent and the rule it broke, or saying how to encode a query that is no
 * percent-encoded UTF-8; 404 for an unknown order; 409 for
 * an id that is taken, a write fenced out by a later lock holder, or an update whose lock was lost while it ran
 * (it may have been stored); 503 with {@code Retry-After} when
 * the order's lock stayed taken for the whole wait, its queue was full, or the update lost its place in the queue
 * before it ran. Every answer about an order names it in an {@code orderId} property.
 * Spring's own errors (wrong method, media type...)
 * come as problem details from {@link ResponseEntityExceptionHandler}.
 */
@RestControllerAdvice
class OrderApiExceptionHandler extends ResponseEntityExceptionHandler {

    /**
     * When to retry after the order's lock stayed taken: the caller has given up its place in the
     * queue, and the updates ahead of it take milliseconds each, so the order is soon free again.
     */
    static final Duration RETRY_AFTER = Duration.ofSeconds(5);

    /** Parts of Jackson's messages that speak of the server (its settings, its Java types), and their JSON terms. */
    private static final List<Map.Entry<Pattern, String>> SERVER_TERMS = List.of(
            Map.entry(Pattern.compile("^Unexpected end-of-input.*", Pattern.DOTALL),
                    "the body ends before its object does"),
            Map.entry(Pattern.compile("\\s*\\(start marker at \\[Source:[^\\]]*\\]\\)"), ""),
            Map.entry(Pattern.compile("\\s*\\[Source:[^\\]]*\\]"), ""),
            Map.entry(Pattern.compile("\\s*\\(but (?:could|might) if [^)]*\\)"), ""),
            Map.entry(Pattern.compile(":?\\s*enable `[^`]*` to allow"), ""),
            Map.entry(Pattern.compile(",?\\s*from `[^`]*`"), ""),
            Map.entry(Pattern.compile("`(?:java\\.lang\\.)?(?:Long|long|Integer|int)`"), "a whole number"),
            Map.entry(Pattern.compile("`java\\.lang\\.String`"), "a string"),
            Map.entry(Pattern.compile("\\s*\\(not recognized as one since [^)]*\\)"), ""),
            Map.entry(Pattern.compile("\\s*\\(token [^)]*\\)"), ""),
            Map.entry(Pattern.compile("`"), "'"));

    /** A value the client sent, as Jackson quotes it in a message. */
    private static final Pattern QUOTED = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"");

    /** The parser's words for a field sent twice (spring.jackson.read.strict-duplicate-detection); its name as sent. */
    private static final Pattern DUPLICATE_FIELD = Pattern.compile("Duplicate Object property \"(.*)\"", Pattern.DOTALL);

    /** How much of a rejected string an answer quotes: a client that sent megabytes need not get them back. */
    static final int QUOTED_LENGTH = 100;

    /** One field or parameter that broke a rule: its name, the value sent, and the rule. */
    record FieldProblem(String field, Object rejectedValue, String message) {

        FieldProblem {
            if (rejectedValue instanceof CharSequence text && text.length() > QUOTED_LENGTH) {
                rejectedValue = text.subSequence(0, QUOTED_LENGTH) + "... (" + text.length() + " characters)";
            }
        }
    }

    @Override
    protected ResponseEntity<Object> handleMethodArgumentNotValid(MethodArgumentNotValidException ex,
            HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        List<FieldProblem> errors = ex.getBindingResult().getFieldErrors().stream()
                .map(error -> new FieldProblem(error.getField(), error.getRejectedValue(), error.getDefaultMessage()))
                .toList();
        return handleExceptionInternal(ex, invalid(status, errors), headers, status, request);
    }

    /** Path variables, and request bodies of the same method, that broke their constraints. */
    @Override
    protected ResponseEntity<Object> handleHandlerMethodValidationException(HandlerMethodValidationException ex,
            HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        List<FieldProblem> errors = new ArrayList<>();
        for (ParameterValidationResult result : ex.getParameterValidationResults()) {
            for (MessageSourceResolvable error : result.getResolvableErrors()) {
                errors.add(error instanceof FieldError field
                        ? new FieldProblem(field.getField(), field.getRejectedValue(), field.getDefaultMessage())
                        : new FieldProblem(result.getMethodParameter().getParameterName(), result.getArgument(),
                                error.getDefaultMessage()));
            }
        }
        return handleExceptionInternal(ex, invalid(status, errors), headers, status, request);
    }

    /**
     * No JSON answer acceptable ({@code Accept: text/plain}), refused before the handler runs. Stated as problem+json
     * here: for an Accept header that cannot even be parsed, the answer's type could not be negotiated, and the
     * answer would go out empty.
     */
    @Override
    protected ResponseEntity<Object> handleHttpMediaTypeNotAcceptable(HttpMediaTypeNotAcceptableException ex,
            HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        ResponseEntity<Object> answer = super.handleHttpMediaTypeNotAcceptable(ex, headers, status, request);
        if (answer == null) {
            return null;
        }
        HttpHeaders problemHeaders = new HttpHeaders();
        problemHeaders.putAll(answer.getHeaders());
        problemHeaders.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        return new ResponseEntity<>(answer.getBody(), problemHeaders, answer.getStatusCode());
    }

    /**
     * Malformed JSON, unknown fields, a field sent twice, values of the wrong type (a fraction for a whole number too),
     * no body.
     */
    @Override
    protected ResponseEntity<Object> handleHttpMessageNotReadable(HttpMessageNotReadableException ex,
            HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        return handleExceptionInternal(ex, ProblemDetail.forStatusAndDetail(status, unreadable(ex)), headers, status,
                request);
    }

    @ExceptionHandler
    ProblemDetail orderNotFound(OrderNotFoundException ex) {
        return problem(HttpStatus.NOT_FOUND, ex.getMessage(), ex.orderId());
    }

    @ExceptionHandler
    ProblemDetail orderExists(OrderExistsException ex) {
        return problem(HttpStatus.CONFLICT, ex.getMessage(), ex.orderId());
    }

    @ExceptionHandler
    ProblemDetail orderFull(OrderFullException ex) {
        return problem(HttpStatus.CONFLICT, ex.getMessage(), ex.orderId());
    }

    @ExceptionHandler
    ProblemDetail staleFencingToken(StaleFencingTokenException ex) {
        ProblemDetail problem = problem(HttpStatus.CONFLICT, ex.getMessage(), ex.orderId());
        problem.setProperty("fencingToken", ex.token());
        problem.setProperty("storedFencingToken", ex.storedToken());
        return problem;
    }

    /**
     * The order's lock was lost during the update (an operator broke it, its lease ran out), so the call failed
     * ({@code dynamolock.on-lost-lease: fail}). Unlike a fenced-out write, the update's own write may have been
     * stored, even after the loss was known: it is fenced by the order's stored token, not by the lease, and nobody
     * else had claimed the order. A client told only that the request
     * failed would retry it and add the item twice, so it is told to read the order first. An update that lost its
     * place in the queue before it was granted ({@link LockLostException#wasGranted()}) never ran: retry later.
     */
    @ExceptionHandler
    ResponseEntity<ProblemDetail> lockLost(LockLostException ex, WebRequest request) {
        logger.warn("Lock lost during " + request.getDescription(false) + ": " + ex.getMessage());
        String orderId = lockedOrderId(request);
        if (!ex.wasGranted()) {
            return retryLater(problem(HttpStatus.SERVICE_UNAVAILABLE, "The update of order '" + orderId + "' lost its"
                    + " place in the lock's queue before it ran; nothing was stored. Retry after "
                    + RETRY_AFTER.toSeconds() + " s", orderId));
        }
        return ResponseEntity.status(HttpStatus.CONFLICT).body(problem(HttpStatus.CONFLICT, "The lock of order '"
                + orderId + "' was lost during this update: the update may have been stored. GET /orders/" + orderId
                + " to see whether it was before retrying", orderId));
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> lockWaitTimeout(LockWaitTimeoutException ex) {
        ProblemDetail problem = problem(HttpStatus.SERVICE_UNAVAILABLE, "Order '" + ex.entity() + "' is busy: its lock"
                + " was still taken after waiting " + ex.waited().toMillis() + " ms, with " + ex.position()
                + " update(s) ahead. Retry after " + RETRY_AFTER.toSeconds() + " s", ex.entity());
        return retryLater(problem);
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> lockQueueFull(LockQueueFullException ex, WebRequest request) {
        String orderId = lockedOrderId(request);
        return retryLater(problem(HttpStatus.SERVICE_UNAVAILABLE, "Too many updates of order '" + orderId + "' are"
                + " queued already. Retry after " + RETRY_AFTER.toSeconds() + " s", orderId));
    }

    /**
     * Parameters the server could not read; it parses them when first asked, in a handler (an actuator endpoint's):
     * a query whose escapes are no percent-encoded UTF-8 ({@code %FF}, an encoded surrogate), too many parameters,
     * a form too large. The client's error, answered with the status the server gives it (400, 413).
     */
    @ExceptionHandler
    ProblemDetail unreadableParameters(InvalidParameterException ex) {
        logger.debug("Unreadable request parameters: " + ex.getMessage());
        HttpStatusCode status = HttpStatusCode.valueOf(ex.getErrorCode());
        if (ex.getCause() instanceof CharacterCodingException || ex.getCause() instanceof CharConversionException) {
            return ProblemDetail.forStatusAndDetail(status, "The request's parameters could not be read: the query"
                    + " string is not valid percent-encoded UTF-8. Encode each name and value as UTF-8, and each byte"
                    + " of it other than a letter, a digit or -._~ as %XX (%C3%A9 for \u00e9)");
        }
        return ProblemDetail.forStatusAndDetail(status, "The request's parameters could not be read: too many of"
                + " them, or a form too large or cut short");
    }

    /** Anything else: logged here, answered without internals (a DynamoDB message means nothing to the client). */
    @ExceptionHandler
    ProblemDetail unexpected(Exception ex) {
        logger.error("Request failed", ex);
        return ProblemDetail.forStatusAndDetail(HttpStatus.INTERNAL_SERVER_ERROR,
                "The request failed unexpectedly; the service's log has the details");
    }

    /**
     * The order whose lock failed, for exceptions that do not carry the lock's entity: every request that locks an
     * order has it in its path, /orders/{orderId}/...
     */
    @SuppressWarnings("unchecked")
    private static String lockedOrderId(WebRequest request) {
        return ((Map<String, String>) request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE,
                RequestAttributes.SCOPE_REQUEST)).get("orderId");
    }

    private static ProblemDetail invalid(HttpStatusCode status, List<FieldProblem> errors) {
        List<FieldProblem> sorted = errors.stream().sorted(Comparator.comparing(FieldProblem::field)).toList();
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, sorted.stream()
                .map(error -> error.field() + " " + error.message()).collect(Collectors.joining("; ")));
        problem.setProperty("errors", sorted);
        return problem;
    }

    private static String unreadable(HttpMessageNotReadableException ex) {
        Throwable cause = ex.getMostSpecificCause();
        if (cause instanceof PropertyBindingException unknown) {
            return "Unknown field '" + unknown.getPropertyName() + "': the fields are " + unknown.getKnownPropertyIds();
        }
        if (cause instanceof MismatchedInputException mismatched && mismatched.getPath().isEmpty()) {
            if (String.valueOf(mismatched.getOriginalMessage()).startsWith("Trailing token")) {
                return "More JSON after the body's object" + where(mismatched) + ": send one JSON object";
            }
            if (mismatched.getTargetType() != null && mismatched.getTargetType().isRecord()) {
                // Well-formed JSON, but no object ([], "book", 1250): say what to send, not a Java type.
                return "The request body must be a JSON object with the fields " + Arrays.stream(
                        mismatched.getTargetType().getRecordComponents()).map(RecordComponent::getName).toList();
            }
        }
        if (cause instanceof StreamReadException read) {
            Matcher duplicate = DUPLICATE_FIELD.matcher(String.valueOf(read.getOriginalMessage()));
            if (duplicate.matches()) {
                return "Field '" + duplicate.group(1) + "' appears again" + where(read) + ": send each field once";
            }
        }
        if (cause instanceof JacksonException json) {
            if (!json.getPath().isEmpty()) {
                String field = json.getPath().stream()
                        .map(step -> step.getPropertyName() != null ? step.getPropertyName() : "[" + step.getIndex() + "]")
                        .collect(Collectors.joining("."));
                return "Field '" + field + "': " + problemOf(json);
            }
            return "Malformed JSON" + where(json) + ": " + inClientTerms(json.getOriginalMessage());
        }
        return "The request body is missing or is not JSON: send a JSON object with Content-Type application/json";
    }

    /** Where in the body the parser stopped, as " at line 1, column 44", or nothing if it does not say. */
    private static String where(JacksonException json) {
        TokenStreamLocation at = json.getLocation();
        return at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
    }

    /**
     * Jackson's own words, but for a fraction sent for a whole number (spring.jackson.deserialization
     * .accept-float-as-int: false), whose message ends with a hint about the server's Jackson configuration.
     */
    private static String problemOf(JacksonException json) {
        if (json instanceof InvalidFormatException format && isWholeNumber(format.getTargetType())
                && (format.getValue() instanceof Double || format.getValue() instanceof BigDecimal)) {
            return format.getValue() + " is not an integer: send a whole number, without a decimal point";
        }
        return inClientTerms(json.getOriginalMessage());
    }

    private static boolean isWholeNumber(Class<?> type) {
        Class<?> boxed = type == null ? null : ClassUtils.resolvePrimitiveIfNecessary(type);
        return boxed == Long.class || boxed == Integer.class || boxed == Short.class || boxed == Byte.class;
    }

    /** Jackson's message in JSON terms; the client's own values, quoted in it, are left as they were sent. */
    private static String inClientTerms(String message) {
        String said = String.valueOf(message);
        StringBuilder told = new StringBuilder();
        Matcher quoted = QUOTED.matcher(said);
        int from = 0;
        while (quoted.find()) {
            told.append(withoutServerTerms(said.substring(from, quoted.start()))).append(quoted.group());
            from = quoted.end();
        }
        return told.append(withoutServerTerms(said.substring(from))).toString();
    }

    private static String withoutServerTerms(String text) {
        String said = text;
        for (Map.Entry<Pattern, String> term : SERVER_TERMS) {
            said = term.getKey().matcher(said).replaceAll(term.getValue());
        }
        return said;
    }

    private static ProblemDetail problem(HttpStatus status, String detail, String orderId) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setProperty("orderId", orderId);
        return problem;
    }

    private static ResponseEntity<ProblemDetail> retryLater(ProblemDetail problem) {
        return ResponseEntity.status(problem.getStatus())
                .header(HttpHeaders.RETRY_AFTER, Long.toString(RETRY_AFTER.toSeconds())).body(problem);
    }
}
