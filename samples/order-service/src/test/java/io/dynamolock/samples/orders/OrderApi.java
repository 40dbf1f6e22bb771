package io.dynamolock.samples.orders;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The sample's REST API over a real HTTP client, as a caller outside the app sees it. */
final class OrderApi {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String root;
    private final String base;

    OrderApi(int port) {
        this.root = "http://127.0.0.1:" + port;
        this.base = root + "/orders";
    }

    /** GET of any path of the app, e.g. an actuator endpoint. */
    String getPath(String path) {
        return send("GET", URI.create(root + path), null, 200);
    }

    String create(String orderId) {
        return send("POST", "", "{\"orderId\":\"" + orderId + "\",\"customer\":\"test\"}", 201);
    }

    String addItem(String orderId, String name, long priceCents) {
        return send("POST", "/" + orderId + "/items", "{\"name\":\"" + name + "\",\"priceCents\":" + priceCents + "}", 200);
    }

    String discount(String orderId, int percent) {
        return send("POST", "/" + orderId + "/discount", "{\"percent\":" + percent + "}", 200);
    }

    String get(String orderId) {
        return send("GET", "/" + orderId, null, 200);
    }

    /** How many items the stored order holds, counted in its JSON. */
    int itemCount(String orderId) {
        String json = get(orderId);
        String items = json.substring(json.indexOf("\"items\":[") + 9, json.indexOf(']', json.indexOf("\"items\":[")));
        return items.isBlank() ? 0 : items.split(",").length;
    }

    /** Sends DELETE to {@code path} and checks the status. */
    String deletePath(String path, int expectedStatus) {
        return send("DELETE", URI.create(root + path), null, expectedStatus);
    }

    private String send(String method, String path, String body, int expectedStatus) {
        return send(method, URI.create(base + path), body, expectedStatus);
    }

    private String send(String method, URI uri, String body, int expectedStatus) {
        String path = uri.getPath();
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(90))
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        try {
            HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != expectedStatus) {
                throw new AssertionError(method + " " + path + " answered " + response.statusCode() + ": " + response.body());
            }
            return response.body();
        }
        catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
