package io.queuebridge.examples.quickstart;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The few calls of the Kafka Connect REST API the quickstart makes, over plain HTTP, the way a user
 * would with {@code curl}: list plugins, create a connector from its JSON, read its status, delete
 * it.
 *
 * <p>Thread-safe. Every call blocks for one HTTP round trip (at most {@link #REQUEST_TIMEOUT}).
 * Answers other than 2xx throw {@link ConnectRestException} with the status and the worker's
 * message.
 */
public final class ConnectRestClient {
  /** Longest wait for one answer; creating a connector runs its validation first. */
  public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final URI base;
  private final HttpClient http;

  /**
   * @param base the worker's REST root, e.g. {@code http://localhost:8083/}
   */
  public ConnectRestClient(URI base) {
    Objects.requireNonNull(base, "base");
    this.base = base.toString().endsWith("/") ? base : URI.create(base + "/");
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  }

  /** The REST root this client talks to. */
  public URI base() {
    return base;
  }

  /** One entry of {@code GET /connector-plugins}. */
  public record Plugin(String className, String type, String version) {}

  /** {@code GET /connector-plugins}: the connector plugins the worker found. */
  public List<Plugin> connectorPlugins() {
    JsonNode body = send(request("connector-plugins").GET());
    List<Plugin> out = new ArrayList<>();
    for (JsonNode p : body) {
      out.add(
          new Plugin(
              p.path("class").asText(), p.path("type").asText(), p.path("version").asText()));
    }
    return out;
  }

  /**
   * {@code POST /connectors} with {@code json} as the body: the {@code {"name": ..., "config":
   * {...}}} form.
   *
   * @return the connector's name as the worker reports it
   * @throws ConnectRestException if the worker refuses it (bad config: 400, name taken: 409)
   */
  public String createConnector(String json) {
    JsonNode body =
        send(
            request("connectors")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));
    return body.path("name").asText();
  }

  /**
   * {@code GET /connectors/<name>/status}.
   *
   * @throws ConnectRestException with status 404 if there is no such connector
   */
  public JsonNode status(String name) {
    return send(request("connectors/" + name + "/status").GET());
  }

  /**
   * The status, or a missing node while the worker has none yet (just after creation it answers 404
   * for a moment).
   */
  private JsonNode statusOrMissing(String name) {
    try {
      return status(name);
    } catch (ConnectRestException e) {
      if (e.status() == 404) {
        return JSON.missingNode();
      }
      throw e;
    }
  }

  /**
   * The connector's state and every task's, e.g. {@code RUNNING [RUNNING]}; {@code UNKNOWN []}
   * before the worker has a status.
   */
  public String stateSummary(String name) {
    JsonNode status = statusOrMissing(name);
    if (status.isMissingNode()) {
      return "UNKNOWN []";
    }
    List<String> tasks = new ArrayList<>();
    for (JsonNode t : status.path("tasks")) {
      tasks.add(t.path("state").asText());
    }
    return status.path("connector").path("state").asText() + " " + tasks;
  }

  /**
   * The first task trace (or connector trace) of a failed connector, else empty (also before any
   * status). A trace's first line is usually what matters.
   */
  public String failureTrace(String name) {
    JsonNode status = statusOrMissing(name);
    if ("FAILED".equals(status.path("connector").path("state").asText())) {
      return status.path("connector").path("trace").asText();
    }
    for (JsonNode t : status.path("tasks")) {
      if ("FAILED".equals(t.path("state").asText())) {
        return t.path("trace").asText();
      }
    }
    return "";
  }

  /**
   * Whether the connector and at least one task run, and no task failed (false before any status).
   */
  public boolean isRunning(String name) {
    JsonNode status = statusOrMissing(name);
    if (!"RUNNING".equals(status.path("connector").path("state").asText())) {
      return false;
    }
    int running = 0;
    for (JsonNode t : status.path("tasks")) {
      String state = t.path("state").asText();
      if (!"RUNNING".equals(state)) {
        return false;
      }
      running++;
    }
    return running > 0;
  }

  /** {@code DELETE /connectors/<name>}; a missing connector is not an error. */
  public void deleteConnector(String name) {
    try {
      send(request("connectors/" + name).DELETE());
    } catch (ConnectRestException e) {
      if (e.status() != 404) {
        throw e;
      }
    }
  }

  /** {@code GET /connectors}: the names of the connectors. */
  public List<String> connectors() {
    List<String> out = new ArrayList<>();
    send(request("connectors").GET()).forEach(n -> out.add(n.asText()));
    return out;
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(base.resolve(path))
        .timeout(REQUEST_TIMEOUT)
        .header("Accept", "application/json");
  }

  private JsonNode send(HttpRequest.Builder builder) {
    HttpRequest request = builder.build();
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(request.method() + " " + request.uri() + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(request.method() + " " + request.uri() + " interrupted", e);
    }
    String body = response.body();
    if (response.statusCode() / 100 != 2) {
      String message = body;
      try {
        JsonNode error = JSON.readTree(body);
        if (error.hasNonNull("message")) {
          message = error.get("message").asText();
        }
      } catch (IOException notJson) {
        // keep the raw body
      }
      throw new ConnectRestException(
          request.method(), request.uri(), response.statusCode(), message);
    }
    try {
      return body == null || body.isBlank() ? JSON.nullNode() : JSON.readTree(body);
    } catch (IOException e) {
      throw new UncheckedIOException(
          request.method()
              + " "
              + request.uri()
              + " answered with something that is not JSON: "
              + body,
          e);
    }
  }

  /** A refusal by the Connect REST API. */
  public static final class ConnectRestException extends RuntimeException {
    private final int status;

    ConnectRestException(String method, URI uri, int status, String message) {
      super(method + " " + uri + " answered " + status + ": " + message);
      this.status = status;
    }

    /** The HTTP status. */
    public int status() {
      return status;
    }
  }
}
