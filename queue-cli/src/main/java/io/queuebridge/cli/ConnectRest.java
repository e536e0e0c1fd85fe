package io.queuebridge.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What {@code lag} asks a Connect worker's REST API: a connector's state ({@code GET
 * /connectors/NAME/status}) and the source offsets Connect stores for it ({@code GET
 * /connectors/NAME/offsets}). The worker answers the offsets from its own offset store, whichever
 * topic that is (the worker's {@code offset.storage.topic}, or a connector's own {@code
 * offsets.storage.topic} under exactly-once support), in any connector state.
 *
 * <p>Every request is bounded by the timeout given; a failure is a {@link CliException} naming the
 * URL, the request and what was expected. A connector the worker does not know is not a failure:
 * the answer is null.
 */
final class ConnectRest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * One source offset Connect stores.
   *
   * @param partition the source partition, as Connect keeps it (the source connector's: {@code
   *     {"queue": ..., "group": ...}})
   * @param offset the source offset ({@code {"offset": next}}); null when the partition has none
   */
  record SourceOffset(Map<String, String> partition, Map<String, JsonNode> offset) {}

  private final String url;
  private final Duration timeout;
  private final HttpClient http;

  private ConnectRest(String url, Duration timeout) {
    this.url = url;
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  /**
   * A client of the worker at {@code url} ({@code http://connect:8083}).
   *
   * @throws CliException if {@code url} is not an http or https URL
   */
  static ConnectRest of(String url, Duration timeout) {
    String base = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    try {
      URI uri = new URI(base);
      if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          || uri.getHost() == null) {
        throw new URISyntaxException(url, "not an http or https URL with a host");
      }
    } catch (URISyntaxException e) {
      throw new CliException(
          "--connect-url "
              + url
              + ": "
              + e.getReason()
              + " (expected the REST address of a Connect worker, such as http://connect:8083)");
    }
    return new ConnectRest(base, timeout);
  }

  /**
   * The connector's state on the worker ({@code RUNNING}, {@code PAUSED}, {@code STOPPED}, {@code
   * FAILED}, ...), with the tasks in another state named ({@code RUNNING (task 0 FAILED)}); null
   * when the worker knows no such connector.
   */
  String state(String connector) {
    JsonNode status = get("/connectors/" + encode(connector) + "/status");
    if (status == null) {
      return null;
    }
    String state = status.path("connector").path("state").asText("UNKNOWN");
    List<String> others = new ArrayList<>();
    for (JsonNode task : status.path("tasks")) {
      String taskState = task.path("state").asText("UNKNOWN");
      if (!taskState.equals(state)) {
        others.add("task " + task.path("id").asText("?") + " " + taskState);
      }
    }
    return others.isEmpty() ? state : state + " (" + String.join(", ", others) + ")";
  }

  /** The source offsets Connect stores for the connector; null when it knows no such connector. */
  List<SourceOffset> offsets(String connector) {
    JsonNode body = get("/connectors/" + encode(connector) + "/offsets");
    if (body == null) {
      return null;
    }
    List<SourceOffset> out = new ArrayList<>();
    for (JsonNode entry : body.path("offsets")) {
      Map<String, String> partition = new TreeMap<>();
      entry.path("partition").properties().forEach(f -> partition.put(f.getKey(), text(f)));
      JsonNode offsetNode = entry.path("offset");
      Map<String, JsonNode> offset = null;
      if (offsetNode.isObject()) {
        offset = new TreeMap<>();
        for (Map.Entry<String, JsonNode> f : offsetNode.properties()) {
          offset.put(f.getKey(), f.getValue());
        }
      }
      out.add(new SourceOffset(partition, offset));
    }
    return out;
  }

  private static String text(Map.Entry<String, JsonNode> field) {
    return field.getValue().isValueNode() ? field.getValue().asText() : field.getValue().toString();
  }

  /** The JSON {@code path} answers with; null for 404 (no such connector). */
  private JsonNode get(String path) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url + path))
            .timeout(timeout)
            .header("Accept", "application/json")
            .GET()
            .build();
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (HttpTimeoutException e) {
      throw new CliException(
          "Connect at "
              + url
              + " (--connect-url) did not answer GET "
              + path
              + " within "
              + timeout.toMillis()
              + " ms (expected the REST address of a running Connect worker, or raise --timeout)");
    } catch (IOException e) {
      throw new CliException(
          "Connect at "
              + url
              + " (--connect-url) cannot be reached for GET "
              + path
              + ": "
              + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage())
              + " (expected the REST address of a running Connect worker)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("interrupted while asking Connect at " + url + " for " + path);
    }
    if (response.statusCode() == 404) {
      return null;
    }
    JsonNode body;
    try {
      body = JSON.readTree(response.body());
    } catch (JsonProcessingException e) {
      body = null;
    }
    if (response.statusCode() >= 300 || body == null || !body.isObject()) {
      String message =
          body != null && body.hasNonNull("message")
              ? body.get("message").asText()
              : Text.oneLine(response.body());
      throw new CliException(
          "Connect at "
              + url
              + " answered GET "
              + path
              + " with "
              + response.statusCode()
              + ": "
              + message
              + " (expected 200 and a JSON object from a Connect worker's REST API)");
    }
    return body;
  }

  private static String encode(String segment) {
    return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
