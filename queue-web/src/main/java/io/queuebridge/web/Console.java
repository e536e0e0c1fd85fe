package io.queuebridge.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import com.github.mustachejava.MustacheFactory;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.Cookie;
import io.javalin.http.SameSite;
import io.queuebridge.cli.CommandRunner.ConnectorFile;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The web console: a Javalin server whose pages show the stores a {@link Bridge} names and whose
 * forms change them, every read and change a {@code queue-bridge} command.
 *
 * <p>Security: it listens where {@link ConsoleSettings#bind} says (127.0.0.1 by default); while it
 * listens on a loopback address it answers only requests whose {@code Host} is a loopback name
 * (against DNS rebinding). It is read-only unless started with changes allowed; then every change
 * needs a session opened with the login token, the session's CSRF token in the form, a same-origin
 * request, and for a redrive or a purge a confirmation after a dry run. Pages carry a strict
 * Content-Security-Policy (scripts and styles from the console only) and are never cached. Nothing
 * shows a store password or a Kafka credential: the commands redact them, and the pages show a
 * store by its type and connector names only.
 */
final class Console implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Console.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  static final String SESSION_COOKIE = "qb-console-session";

  /** Set on a request once a page was rendered for it. */
  private static final String RENDERED = "qb-rendered";

  /** The files under {@code /assets/}, and where each is on the class path. */
  private static final Map<String, String> ASSETS =
      Map.of(
          "console.css", "io/queuebridge/web/assets/console.css",
          "console.js", "io/queuebridge/web/assets/console.js",
          "uPlot.min.css", "META-INF/resources/webjars/uplot/1.6.30/dist/uPlot.min.css",
          "uPlot.iife.min.js", "META-INF/resources/webjars/uplot/1.6.30/dist/uPlot.iife.min.js");

  private static final String CSP =
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
          + " connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

  /** Messages a browser page shows at most. */
  static final int MAX_PAGE = 500;

  /** Messages a key search reads at most per page before it stops and offers the next page. */
  static final int KEY_SCAN = 10_000;

  private final ConsoleSettings settings;
  private final Bridge bridge;
  private final Sampler sampler;
  private final Sessions sessions;
  private final MustacheFactory templates =
      new DefaultMustacheFactory("io/queuebridge/web/templates");
  private final Map<String, Mustache> compiled = new ConcurrentHashMap<>();
  private final boolean loopback;
  private final Javalin app;

  private Console(ConsoleSettings settings, Bridge bridge, Clock clock) {
    this.settings = settings;
    this.bridge = bridge;
    this.sampler = new Sampler(bridge, clock, settings.sampleInterval(), settings.samplesKept());
    this.sessions = settings.allowChanges() ? new Sessions(settings.token(), clock) : null;
    this.loopback = isLoopback(settings.bind());
    this.app =
        Javalin.create(
            config -> {
              config.startup.showJavalinBanner = false;
              config.jetty.host = settings.bind();
              config.jetty.port = settings.port();
              config.http.maxRequestSize = 64 * 1024;
              config.routes.before(this::guard);
              config.routes.get("/", this::overview);
              config.routes.get("/queue", this::queue);
              config.routes.get("/messages", this::messages);
              config.routes.get("/payload", this::payload);
              config.routes.get("/dead-letters", this::deadLetters);
              config.routes.get("/lag", this::lag);
              config.routes.get("/api/samples", this::samples);
              config.routes.get("/assets/{file}", this::asset);
              config.routes.get("/login", this::loginPage);
              config.routes.post("/login", this::login);
              config.routes.post("/logout", this::logout);
              config.routes.post("/pause", this::pause);
              config.routes.post("/redrive", this::redrive);
              config.routes.post("/purge", this::purge);
              config.routes.exception(ConsoleException.class, this::refused);
              config.routes.exception(Exception.class, this::failed);
              config.routes.error(404, this::notFound);
            });
  }

  /**
   * Starts a console: samples at once, then listens.
   *
   * @throws io.javalin.util.JavalinBindException if the address is taken
   */
  static Console start(ConsoleSettings settings, Bridge bridge, Clock clock) {
    Console console = new Console(settings, bridge, clock);
    console.sampler.start();
    try {
      console.app.start();
    } catch (RuntimeException e) {
      console.sampler.close();
      throw e;
    }
    return console;
  }

  int port() {
    return app.port();
  }

  /** The address to open in a browser. */
  String url() {
    String host =
        settings.bind().equals("0.0.0.0") || settings.bind().equals("::")
            ? "127.0.0.1"
            : settings.bind();
    if (host.contains(":")) {
      host = "[" + host + "]";
    }
    return "http://" + host + ":" + port() + "/";
  }

  Sampler sampler() {
    return sampler;
  }

  @Override
  public void close() {
    sampler.close();
    app.stop();
    bridge.close();
  }

  // --- security -----------------------------------------------------------------------------

  private static boolean isLoopback(String bind) {
    try {
      return InetAddress.getByName(bind).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  private void guard(Context ctx) {
    ctx.header("Content-Security-Policy", CSP);
    ctx.header("X-Content-Type-Options", "nosniff");
    ctx.header("X-Frame-Options", "DENY");
    // same-origin, not no-referrer: under no-referrer a browser posts forms with "Origin: null"
    ctx.header("Referrer-Policy", "same-origin");
    ctx.header("Cache-Control", "no-store");
    if (loopback) {
      String host = hostName(ctx.header("Host"));
      if (!host.equals("localhost") && !host.equals("127.0.0.1") && !host.equals("[::1]")) {
        throw ConsoleException.forbidden(
            "this console listens on a loopback address and answers only requests for localhost,"
                + " 127.0.0.1 or [::1], not for the host '"
                + host
                + "'");
      }
    }
    if (ctx.method().name().equals("POST")) {
      String origin = ctx.header("Origin");
      String host = ctx.header("Host");
      if (origin != null && !origin.equals("http://" + host)) {
        throw ConsoleException.forbidden(
            "a form posted from '" + origin + "' (expected one from this console's own pages)");
      }
    }
  }

  private static String hostName(String hostHeader) {
    if (hostHeader == null) {
      return "";
    }
    String h = hostHeader.toLowerCase(Locale.ROOT);
    if (h.startsWith("[")) {
      int end = h.indexOf(']');
      return end < 0 ? h : h.substring(0, end + 1);
    }
    int colon = h.indexOf(':');
    return colon < 0 ? h : h.substring(0, colon);
  }

  private Optional<Sessions.Session> session(Context ctx) {
    return sessions == null ? Optional.empty() : sessions.find(ctx.cookie(SESSION_COOKIE));
  }

  /**
   * The session a change runs in.
   *
   * @throws ConsoleException if changes are not allowed, nobody is logged in, or the form's CSRF
   *     token is not the session's
   */
  private Sessions.Session changeAllowed(Context ctx) {
    if (sessions == null) {
      throw ConsoleException.forbidden(
          "this console is read-only: start it with --allow-changes to redrive, purge or pause");
    }
    Sessions.Session s =
        session(ctx)
            .orElseThrow(
                () ->
                    ConsoleException.forbidden(
                        "log in with the console's login token before making a change"));
    if (!Sessions.csrfMatches(s, ctx.formParam("csrf"))) {
      throw ConsoleException.forbidden(
          "the form's CSRF token is not this session's (reload the page and try again)");
    }
    return s;
  }

  // --- rendering ----------------------------------------------------------------------------

  private Map<String, Object> model(Context ctx, String title) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("title", title);
    m.put("readOnly", sessions == null);
    Optional<Sessions.Session> s = session(ctx);
    m.put("loggedIn", s.isPresent());
    m.put("canChange", s.isPresent());
    s.ifPresent(x -> m.put("csrf", x.csrf()));
    m.put("lagEnabled", settings.lag() != null);
    m.put("refreshSeconds", Math.max(2, Math.min(10, settings.sampleInterval().toSeconds())));
    m.put("sampleText", Views.age(settings.sampleInterval().toMillis()));
    m.put("historyText", Views.age(settings.history().toMillis()));
    return m;
  }

  private void render(Context ctx, String template, Map<String, Object> model) {
    Mustache mustache = compiled.computeIfAbsent(template, t -> templates.compile(t + ".mustache"));
    StringWriter out = new StringWriter();
    mustache.execute(out, model);
    ctx.attribute(RENDERED, true);
    ctx.html(out.toString());
  }

  private void refused(ConsoleException e, Context ctx) {
    ctx.status(e.status());
    Map<String, Object> m = model(ctx, "Refused");
    m.put("refreshSeconds", 0);
    m.put("message", e.getMessage());
    m.put("status", e.status());
    render(ctx, "error", m);
  }

  private void failed(Exception e, Context ctx) {
    LOG.warn("console request {} failed", ctx.path(), e);
    ctx.status(500);
    Map<String, Object> m = model(ctx, "Failed");
    m.put("refreshSeconds", 0);
    m.put("message", "the request failed: " + e.getMessage());
    m.put("status", 500);
    render(ctx, "error", m);
  }

  private void notFound(Context ctx) {
    if (ctx.attribute(RENDERED) != null) {
      return; // a page refused with its own 404 (an unknown queue) already says why
    }
    refused(ConsoleException.notFound("no page at " + ctx.path() + " (the overview is at /)"), ctx);
  }

  // --- pages --------------------------------------------------------------------------------

  private void overview(Context ctx) {
    Map<String, Object> m = model(ctx, "Overview");
    List<Map<String, Object>> stores = new ArrayList<>();
    for (Bridge.Store store : bridge.stores()) {
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("id", store.id());
      s.put("title", store.title());
      s.put("type", store.type());
      List<Map<String, Object>> queues = new ArrayList<>();
      try {
        for (JsonNode q : bridge.json(store, "queues")) {
          String name = q.get("name").asText();
          JsonNode d = bridge.json(store, "describe", name);
          long lag = 0;
          boolean paused = false;
          for (JsonNode g : d.get("groups")) {
            lag = Math.max(lag, g.get("lag").asLong());
            paused |= g.get("paused").asBoolean();
          }
          Map<String, Object> row = new LinkedHashMap<>();
          row.put("name", name);
          row.put(
              "href",
              (name.startsWith("$dlq/") ? "/dead-letters?s=" : "/queue?s=")
                  + store.id()
                  + "&q="
                  + Views.q(name));
          row.put("type", q.get("type").asText());
          row.put("protected", q.get("protected").asBoolean());
          row.put("messages", q.get("messages").asLong());
          row.put("oldestAge", Views.age(q.get("oldestAgeMs")));
          row.put("groups", q.get("groups").asInt());
          row.put("lag", lag);
          row.put("paused", paused);
          row.put("deadLetters", name.startsWith("$dlq/"));
          queues.add(row);
        }
      } catch (ConsoleException e) {
        s.put("failure", e.getMessage());
      }
      s.put("queues", queues);
      s.put("empty", queues.isEmpty() && !s.containsKey("failure"));
      String sampleFailure = sampler.failure(store.id());
      if (sampleFailure != null) {
        s.put("sampleFailure", sampleFailure);
      }
      stores.add(s);
    }
    m.put("stores", stores);
    m.put("chart", "/api/samples");
    render(ctx, "overview", m);
  }

  private Bridge.Store store(Context ctx) {
    return bridge.store(ctx.queryParam("s"));
  }

  private static String required(Context ctx, String name, String what) {
    String v = ctx.queryParam(name);
    if (v == null) {
      v = ctx.formParam(name);
    }
    if (v == null || v.isBlank()) {
      throw ConsoleException.badRequest(
          "the parameter '" + name + "' is missing (expected " + what + ")");
    }
    return v;
  }

  private void queue(Context ctx) {
    Bridge.Store store = store(ctx);
    String name = required(ctx, "q", "a queue name");
    JsonNode d = bridge.json(store, "describe", name);
    Map<String, Object> m = model(ctx, name);
    m.put("store", store.id());
    m.put("storeTitle", store.title());
    m.put("queue", name);
    m.put("queueParam", Views.q(name));
    m.put("isStream", d.get("type").asText().equals("stream"));
    List<Map<String, Object>> config = new ArrayList<>();
    put(config, "Type", Views.text(d.get("type")));
    put(config, "Durable", Views.yesNo(d.get("durable")));
    put(config, "Protected", Views.yesNo(d.get("protected")));
    put(config, "Topics", d.get("topics").isEmpty() ? "-" : join(d.get("topics")));
    put(config, "Messages", Views.text(d.get("messages")));
    put(config, "Head / tail", Views.text(d.get("head")) + " / " + Views.text(d.get("tail")));
    put(config, "Oldest accepted", Views.text(d.get("headCreatedAt")));
    put(config, "Newest accepted", Views.text(d.get("lastCreatedAt")));
    JsonNode r = d.get("retention");
    put(
        config,
        "Retention",
        "age "
            + Views.millis(r.get("maxAgeMs"))
            + ", bytes "
            + zeroNone(r.get("maxBytes"))
            + ", messages "
            + zeroNone(r.get("maxMessages")));
    put(config, "Message TTL", Views.millis(d.get("messageTtlMs")));
    put(config, "Max depth", zeroNone(d.get("maxDepth")));
    put(config, "Delivery timeout", Views.millis(d.get("deliveryTimeoutMs")));
    put(config, "Ack durability", Views.text(d.get("ackDurability")));
    put(config, "Dedup window", Views.millis(d.get("dedupWindowMs")));
    put(config, "Max delay", Views.millis(d.get("maxDelayMs")));
    put(config, "Ordering", Views.text(d.get("ordering")));
    JsonNode rp = d.get("retryPolicy");
    if (rp != null && !rp.isNull()) {
      put(
          config,
          "Retry",
          rp.get("maxRetries").asInt()
              + " retries, backoff "
              + Views.age(rp.get("initialBackoffMs").asLong())
              + " to "
              + Views.age(rp.get("maxBackoffMs").asLong())
              + " x"
              + rp.get("backoffMultiplier").asText());
    }
    JsonNode dlq = d.get("deadLetterQueue");
    if (dlq != null && !dlq.isNull() && dlq.get("enabled").asBoolean()) {
      String dlqName = dlq.get("name").asText();
      m.put("dlqName", dlqName);
      m.put("dlqExists", dlq.get("exists").asBoolean());
      m.put("dlqMessages", Views.text(dlq.get("messages")));
      m.put("dlqHref", "/dead-letters?s=" + store.id() + "&q=" + Views.q(dlqName));
    }
    m.put("config", config);
    List<Map<String, Object>> groups = new ArrayList<>();
    List<Map<String, Object>> pending = new ArrayList<>();
    for (JsonNode g : d.get("groups")) {
      Map<String, Object> row = new LinkedHashMap<>();
      String id = g.get("group").asText();
      row.put("group", id);
      row.put("mode", g.get("mode").asText());
      row.put("paused", g.get("paused").asBoolean());
      for (String f :
          List.of(
              "cursor",
              "committed",
              "lag",
              "pending",
              "scheduled",
              "blocked",
              "redelivered",
              "consumers")) {
        row.put(f, g.get(f).asLong());
      }
      row.put("oldestPending", Views.age(g.get("oldestPendingAgeMs")));
      groups.add(row);
      if (g.get("mode").asText().equals("queue")) {
        for (JsonNode p : bridge.json(store, "pending", name, id)) {
          if (pending.size() >= 200) {
            m.put("pendingCut", true);
            break;
          }
          Map<String, Object> pr = new LinkedHashMap<>();
          pr.put("group", id);
          pr.put("offset", p.get("offset").asLong());
          pr.put("consumer", Views.text(p.get("consumer")));
          pr.put("deliveries", p.get("deliveries").asInt());
          pr.put("idle", Views.age(p.get("idleMs")));
          pr.put(
              "visibleAt",
              p.get("blocked").asBoolean() ? "blocked" : Views.text(p.get("visibleAt")));
          pending.add(pr);
        }
      }
    }
    m.put("groups", groups);
    m.put("hasGroups", !groups.isEmpty());
    m.put("pending", pending);
    m.put("hasPending", !pending.isEmpty());
    List<Map<String, Object>> members = new ArrayList<>();
    for (JsonNode c : bridge.json(store, "groups", name, "--members")) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("group", c.get("group").asText());
      row.put("consumer", c.get("consumer").asText());
      row.put("client", Views.text(c.get("client")));
      row.put("pending", c.get("pending").asInt());
      row.put("idle", Views.age(c.get("idleMs")));
      row.put("lastHeartbeat", Views.text(c.get("lastHeartbeat")));
      members.add(row);
    }
    m.put("members", members);
    m.put("hasMembers", !members.isEmpty());
    m.put("chart", "/api/samples?s=" + store.id() + "&q=" + Views.q(name));
    render(ctx, "queue", m);
  }

  private static void put(List<Map<String, Object>> rows, String key, String value) {
    rows.add(Map.of("key", key, "value", value));
  }

  private static String zeroNone(JsonNode n) {
    return n == null || n.asLong() == 0 ? "none" : n.asText();
  }

  private static String join(JsonNode array) {
    List<String> items = new ArrayList<>();
    array.forEach(n -> items.add(n.asText()));
    return String.join(", ", items);
  }

  private static int limit(Context ctx) {
    String text = ctx.queryParam("limit");
    if (text == null || text.isBlank()) {
      return 50;
    }
    try {
      int n = Integer.parseInt(text.strip());
      if (n >= 1 && n <= MAX_PAGE) {
        return n;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw ConsoleException.badRequest(
        "limit '" + text + "' (expected a number of messages from 1 to " + MAX_PAGE + ")");
  }

  private void messages(Context ctx) {
    Bridge.Store store = store(ctx);
    String name = required(ctx, "q", "a queue name");
    String from = Optional.ofNullable(ctx.queryParam("from")).map(String::strip).orElse("");
    String key = ctx.queryParam("key");
    int limit = limit(ctx);
    bridge.json(store, "describe", name); // an unknown queue is refused before anything else
    Map<String, Object> m = model(ctx, "Messages of " + name);
    m.put("store", store.id());
    m.put("queue", name);
    m.put("queueParam", Views.q(name));
    m.put("from", from);
    m.put("key", key == null ? "" : key);
    m.put("limit", limit);
    String base = "/payload?s=" + store.id() + "&q=" + Views.q(name);
    List<Map<String, Object>> shown = new ArrayList<>();
    Long next = null;
    String start = from.isEmpty() ? "earliest" : from;
    if (key == null || key.isEmpty()) {
      List<JsonNode> batch =
          bridge.jsonLines(store, "tail", name, "--from", start, "--max", String.valueOf(limit));
      batch.forEach(j -> shown.add(Views.message(j, base)));
      if (batch.size() == limit) {
        next = batch.get(batch.size() - 1).get("offset").asLong() + 1;
      }
    } else {
      // read 500 at a time from the position; stop when the page is full (the next page starts
      // after its last message), at the end of the queue (no next page), or after KEY_SCAN
      // messages read (the next page goes on from there)
      long scanned = 0;
      String at = start;
      boolean end = false;
      while (shown.size() < limit && scanned < KEY_SCAN && !end) {
        List<JsonNode> batch = bridge.jsonLines(store, "tail", name, "--from", at, "--max", "500");
        end = batch.size() < 500;
        for (JsonNode j : batch) {
          scanned++;
          next = j.get("offset").asLong() + 1;
          if (key.equals(Views.payload(j.get("key")))) {
            shown.add(Views.message(j, base));
            if (shown.size() == limit) {
              break;
            }
          }
        }
        at = String.valueOf(next);
      }
      if (end && shown.size() < limit) {
        next = null;
      }
      m.put("scanned", scanned);
    }
    m.put("messages", shown);
    m.put("none", shown.isEmpty());
    if (next != null) {
      m.put(
          "nextHref",
          "/messages?s="
              + store.id()
              + "&q="
              + Views.q(name)
              + "&from="
              + next
              + "&limit="
              + limit
              + (key == null || key.isEmpty() ? "" : "&key=" + Views.q(key)));
    }
    render(ctx, "messages", m);
  }

  private void payload(Context ctx) {
    Bridge.Store store = store(ctx);
    String name = required(ctx, "q", "a queue name");
    String offset = required(ctx, "offset", "a message offset");
    String part = Optional.ofNullable(ctx.queryParam("part")).orElse("value");
    if (!part.equals("value") && !part.equals("key")) {
      throw ConsoleException.badRequest("part '" + part + "' (expected key or value)");
    }
    if (!offset.chars().allMatch(Character::isDigit)) {
      throw ConsoleException.badRequest("offset '" + offset + "' (expected a message offset)");
    }
    List<JsonNode> one = bridge.jsonLines(store, "tail", name, "--from", offset, "--max", "1");
    if (one.isEmpty() || one.get(0).get("offset").asLong() != Long.parseLong(offset)) {
      throw ConsoleException.notFound("queue '" + name + "' has no message at offset " + offset);
    }
    byte[] bytes = Views.bytes(one.get(0).get(part));
    if (bytes == null) {
      throw ConsoleException.notFound("the message at offset " + offset + " has no " + part);
    }
    ctx.contentType("application/octet-stream");
    ctx.header("Content-Disposition", "attachment; filename=\"" + part + "-" + offset + ".bin\"");
    ctx.result(bytes);
  }

  private void deadLetters(Context ctx) {
    Bridge.Store store = store(ctx);
    String name = required(ctx, "q", "a dead-letter queue name");
    JsonNode d = bridge.json(store, "describe", name);
    Map<String, Object> m = model(ctx, "Dead letters: " + name);
    m.put("store", store.id());
    m.put("queue", name);
    m.put("queueParam", Views.q(name));
    m.put("count", d.get("messages").asLong());
    List<Map<String, Object>> shown = new ArrayList<>();
    String base = "/payload?s=" + store.id() + "&q=" + Views.q(name);
    for (JsonNode j : bridge.jsonLines(store, "tail", name, "--from", "earliest", "--max", "100")) {
      shown.add(Views.message(j, base));
    }
    m.put("messages", shown);
    m.put("none", shown.isEmpty());
    m.put("more", d.get("messages").asLong() > shown.size());
    render(ctx, "dead-letters", m);
  }

  private void lag(Context ctx) {
    Map<String, Object> m = model(ctx, "Bridge lag");
    ConsoleSettings.LagSettings lag = settings.lag();
    if (lag == null) {
      throw ConsoleException.notFound(
          "the bridge-lag page needs --bootstrap-server (and --connect-url for connector states)");
    }
    List<ConnectorFile> sinks = new ArrayList<>();
    List<ConnectorFile> sources = new ArrayList<>();
    for (ConnectorFile c : bridge.connectors()) {
      String cls = c.connectorClass() == null ? "" : c.connectorClass();
      (cls.endsWith("SinkConnector") ? sinks : sources).add(c);
    }
    List<Map<String, Object>> tables = new ArrayList<>();
    for (ConnectorFile sink : sinks) {
      List<String> args = new ArrayList<>(List.of("lag", "--config", sink.file().toString()));
      args.add("--bootstrap-server");
      args.add(lag.bootstrapServer());
      for (ConnectorFile s : sources) {
        args.add("--source-config");
        args.add(s.file().toString());
      }
      if (lag.connectUrl() != null) {
        args.add("--connect-url");
        args.add(lag.connectUrl());
      }
      if (lag.commandConfig() != null) {
        args.add("--command-config");
        args.add(lag.commandConfig().toString());
      }
      Map<String, Object> t = new LinkedHashMap<>();
      t.put("sink", sink.name() == null ? sink.file().getFileName().toString() : sink.name());
      try {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (JsonNode r : bridge.jsonOf(args)) {
          Map<String, Object> row = new LinkedHashMap<>();
          for (String f :
              List.of(
                  "hop",
                  "connector",
                  "state",
                  "from",
                  "partition",
                  "to",
                  "end",
                  "committed",
                  "committedLag",
                  "watermark",
                  "watermarkLag")) {
            row.put(f, Views.text(r.get(f)));
          }
          row.put("failed", "FAILED".equals(Views.text(r.get("state"))));
          rows.add(row);
        }
        t.put("rows", rows);
      } catch (ConsoleException e) {
        t.put("failure", e.getMessage());
      }
      tables.add(t);
    }
    m.put("tables", tables);
    m.put("noSink", sinks.isEmpty());
    render(ctx, "lag", m);
  }

  private void samples(Context ctx) throws IOException {
    String s = ctx.queryParam("s");
    if (s != null) {
      bridge.store(s);
    }
    ctx.contentType("application/json");
    ctx.result(JSON.writeValueAsString(sampler.series(s, ctx.queryParam("q"))));
  }

  private void asset(Context ctx) {
    String file = ctx.pathParam("file");
    String resource = ASSETS.get(file);
    if (resource == null) {
      throw ConsoleException.notFound("no asset '" + file + "'");
    }
    try (InputStream in = Console.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("the asset " + resource + " is missing from the jar");
      }
      ctx.contentType(
          file.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8");
      ctx.header("Cache-Control", "max-age=3600");
      ctx.result(in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // --- login --------------------------------------------------------------------------------

  private void loginPage(Context ctx) {
    if (sessions == null) {
      throw ConsoleException.forbidden(
          "this console is read-only: there is nothing to log in to (start it with"
              + " --allow-changes to make changes)");
    }
    Map<String, Object> m = model(ctx, "Log in");
    m.put("refreshSeconds", 0);
    m.put("next", safeNext(ctx.queryParam("next")));
    render(ctx, "login", m);
  }

  private void login(Context ctx) {
    if (sessions == null) {
      throw ConsoleException.forbidden("this console is read-only: there is nothing to log in to");
    }
    Sessions.Session s = sessions.login(ctx.formParam("token"));
    Cookie cookie = new Cookie(SESSION_COOKIE, s.id());
    cookie.setHttpOnly(true);
    cookie.setSameSite(SameSite.STRICT);
    cookie.setPath("/");
    cookie.setMaxAge((int) Sessions.LIFETIME.toSeconds());
    ctx.cookie(cookie);
    ctx.redirect(safeNext(ctx.formParam("next")), io.javalin.http.HttpStatus.SEE_OTHER);
  }

  private void logout(Context ctx) {
    if (sessions != null) {
      changeAllowed(ctx);
      sessions.logout(ctx.cookie(SESSION_COOKIE));
    }
    ctx.removeCookie(SESSION_COOKIE, "/");
    ctx.redirect("/", io.javalin.http.HttpStatus.SEE_OTHER);
  }

  /** A path on this console to go to after logging in; {@code /} for anything else. */
  static String safeNext(String next) {
    if (next == null || !next.startsWith("/") || next.startsWith("//") || next.contains("\\")) {
      return "/";
    }
    return next;
  }

  // --- changes ------------------------------------------------------------------------------

  private void pause(Context ctx) {
    changeAllowed(ctx);
    Bridge.Store store = bridge.store(ctx.formParam("s"));
    String name = requiredForm(ctx, "q", "a queue name");
    String group = requiredForm(ctx, "group", "a consumer group id");
    String action = requiredForm(ctx, "action", "pause or resume");
    if (!action.equals("pause") && !action.equals("resume")) {
      throw ConsoleException.badRequest("action '" + action + "' (expected pause or resume)");
    }
    bridge.json(store, action + "-group", name, group);
    ctx.redirect(
        "/queue?s=" + store.id() + "&q=" + Views.q(name), io.javalin.http.HttpStatus.SEE_OTHER);
  }

  private static String requiredForm(Context ctx, String name, String what) {
    String v = ctx.formParam(name);
    if (v == null || v.isBlank()) {
      throw ConsoleException.badRequest(
          "the form field '" + name + "' is missing (expected " + what + ")");
    }
    return v;
  }

  /** The {@code count} field: {@code all} or a number of messages from the head. */
  private static String count(Context ctx) {
    String count = requiredForm(ctx, "count", "all or a number of messages");
    if (count.equals("all")) {
      return count;
    }
    try {
      if (Long.parseLong(count.strip()) > 0) {
        return count.strip();
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw ConsoleException.badRequest(
        "count '" + count + "' (expected all, or a number of messages > 0)");
  }

  private void redrive(Context ctx) {
    changeAllowed(ctx);
    Bridge.Store store = bridge.store(ctx.formParam("s"));
    String name = requiredForm(ctx, "q", "a dead-letter queue name");
    String count = count(ctx);
    boolean confirmed = "yes".equals(ctx.formParam("confirm"));
    List<String> args = new ArrayList<>(List.of("dlq", "redrive", name));
    if (!count.equals("all")) {
      args.add("--max");
      args.add(count);
    }
    String rate = ctx.formParam("rate");
    if (rate != null && !rate.isBlank()) {
      args.add("--rate"); // checked by the command: a bad rate is its usage error
      args.add(rate.strip());
    }
    if (!confirmed) {
      args.add("--dry-run");
    }
    JsonNode report = bridge.json(store, args.toArray(new String[0]));
    Map<String, Object> m = model(ctx, (confirmed ? "Redriven: " : "Redrive ") + name);
    m.put("refreshSeconds", 0);
    m.put("store", store.id());
    m.put("queue", name);
    m.put("queueParam", Views.q(name));
    m.put("count", count);
    m.put("rate", rate == null ? "" : rate.strip());
    m.put("confirmed", confirmed);
    m.put("moved", report.get("moved").asLong());
    m.put("alreadyMoved", report.get("alreadyMoved").asLong());
    m.put("hadMoved", report.get("alreadyMoved").asLong() > 0);
    m.put("remaining", report.get("remaining").asLong());
    List<Map<String, Object>> targets = new ArrayList<>();
    report
        .get("byTarget")
        .properties()
        .forEach(e -> targets.add(Map.of("target", e.getKey(), "messages", e.getValue().asLong())));
    m.put("targets", targets);
    m.put("nothing", report.get("moved").asLong() == 0);
    render(ctx, "redrive", m);
  }

  private void purge(Context ctx) {
    changeAllowed(ctx);
    Bridge.Store store = bridge.store(ctx.formParam("s"));
    String name = requiredForm(ctx, "q", "a queue name");
    boolean confirmed = "yes".equals(ctx.formParam("confirm"));
    Map<String, Object> m = model(ctx, "Purge " + name);
    m.put("refreshSeconds", 0);
    m.put("store", store.id());
    m.put("queue", name);
    m.put("queueParam", Views.q(name));
    m.put("confirmed", confirmed);
    if (confirmed) {
      JsonNode r = bridge.json(store, "purge", name, "--yes");
      m.put("removed", r.get("removed").asLong());
    } else {
      m.put("messages", bridge.json(store, "describe", name).get("messages").asLong());
    }
    render(ctx, "purge", m);
  }
}
