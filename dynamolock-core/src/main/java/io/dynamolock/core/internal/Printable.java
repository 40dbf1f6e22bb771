package io.dynamolock.core.internal;

import java.net.URI;
import java.util.Collection;
import java.util.List;

/**
 * Names (entities, namespaces, owners) as dynamolock writes them into exception messages and log lines: control
 * characters, line separators and the backslash as {@code \}{@code uXXXX}, so that every name reads back as it was.
 * Names are callers' text and table data, and a line break in one would let it forge a log line, such as an
 * operator's break, which is an audit record; an application that logs a message of ours gets the same protection.
 * Accessors such as {@code entity()} return names as given. Public so that every dynamolock module follows this one
 * rule; not an API.
 */
public final class Printable {

    private Printable() {
    }

    /** {@code text} with control characters, line separators and backslashes as {@code \}{@code uXXXX}. */
    public static String escape(String text) {
        if (text == null || text.chars().noneMatch(c -> c == '\\' || isControl(c))) {
            return text;
        }
        StringBuilder escaped = new StringBuilder(text.length() + 16);
        text.chars().forEach(c -> {
            if (c == '\\' || isControl(c)) {
                escaped.append(String.format("\\u%04x", c)); // the backslash too: "\\u000a" reads back apart
            }
            else {
                escaped.append((char) c);
            }
        });
        return escaped.toString();
    }

    /**
     * {@code text} as a Java string literal, quotes included, for advice that names a call to paste: a backslash and a
     * quote escaped, line breaks and tabs as {@code \n}, {@code \r}, {@code \t}, other control characters and the
     * line separators as {@code \}{@code uXXXX} (never a line feed or carriage return that way, which javac would read
     * as a line break inside the literal). So it stays one line and compiles to {@code text}.
     */
    public static String javaLiteral(String text) {
        StringBuilder literal = new StringBuilder(text.length() + 2).append('"');
        text.chars().forEach(c -> {
            switch (c) {
                case '\\' -> literal.append("\\\\");
                case '"' -> literal.append("\\\"");
                case '\n' -> literal.append("\\n");
                case '\r' -> literal.append("\\r");
                case '\t' -> literal.append("\\t");
                default -> {
                    if (isControl(c)) {
                        literal.append(String.format("\\u%04x", c));
                    }
                    else {
                        literal.append((char) c);
                    }
                }
            }
        });
        return literal.append('"').toString();
    }

    /**
     * An endpoint as messages and reports show it: its user and password, query (which may carry a token) and
     * fragment as {@code ***}. Without a host (a URL missing its {@code http://}, whose user Java then reads as the
     * scheme) only an {@code http} or {@code https} scheme is shown.
     */
    public static String endpoint(URI endpoint) {
        String scheme = endpoint.getScheme();
        if (endpoint.getHost() == null) {
            return "http".equalsIgnoreCase(scheme) || "https".equalsIgnoreCase(scheme) ? scheme + ":***" : "***";
        }
        return escape((scheme == null ? "" : scheme + ":") + "//" + (endpoint.getRawUserInfo() == null ? "" : "***@")
                + endpoint.getHost() + (endpoint.getPort() < 0 ? "" : ":" + endpoint.getPort())
                + (endpoint.getRawPath() == null ? "" : endpoint.getRawPath())
                + (endpoint.getRawQuery() == null ? "" : "?***") + (endpoint.getRawFragment() == null ? "" : "#***"));
    }

    /** Each of {@code names} escaped, as a list prints them. */
    public static List<String> escapeAll(Collection<String> names) {
        return names.stream().map(Printable::escape).toList();
    }

    /** C0 and C1 control characters (line feed, carriage return, next line...) and the Unicode line separators. */
    private static boolean isControl(int c) {
        return c < 0x20 || c >= 0x7F && c <= 0x9F || c == 0x2028 || c == 0x2029;
    }
}
