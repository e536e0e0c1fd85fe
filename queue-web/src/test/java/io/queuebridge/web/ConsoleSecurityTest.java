package io.queuebridge.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.cli.CommandRunner;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's defences, request by request over HTTP (what a browser cannot be made to do, a
 * hand-made request can): every refusal says why and changes nothing in the store.
 */
class ConsoleSecurityTest {
  private static final String TOKEN = "security-test-token-0123456789";
  private static final Pattern CSRF = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"");

  @TempDir Path dir;

  private Console console;
  private final HttpClient http = HttpClient.newHttpClient();

  @AfterEach
  void stop() {
    if (console != null) {
      console.close();
    }
  }

  private long dlqMessages(Path config) {
    try (CommandRunner cli = CommandRunner.create(Clock.systemUTC())) {
      CommandRunner.Result r =
          cli.run("describe", "$dlq/jobs", "--config", config.toString(), "-o", "json");
      assertThat(r.ok()).as(r.err()).isTrue();
      return new com.fasterxml.jackson.databind.ObjectMapper()
          .readTree(r.out())
          .get("messages")
          .asLong();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private HttpResponse<String> get(String path, String cookie) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(console.url() + path.substring(1)));
    if (cookie != null) {
      b.header("Cookie", cookie);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(
      String path, String cookie, Map<String, String> fields, String origin) throws Exception {
    String body =
        fields.entrySet().stream()
            .map(
                e ->
                    URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8)
                        + "="
                        + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
            .collect(Collectors.joining("&"));
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(console.url() + path.substring(1)))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (cookie != null) {
      b.header("Cookie", cookie);
    }
    if (origin != null) {
      b.header("Origin", origin);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private String login() throws Exception {
    HttpResponse<String> r = post("/login", null, Map.of("token", TOKEN, "next", "/"), null);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(303);
    String cookie = r.headers().firstValue("Set-Cookie").orElseThrow();
    assertThat(cookie).contains("HttpOnly", "SameSite=Strict");
    return cookie.substring(0, cookie.indexOf(';'));
  }

  private static Map<String, String> redriveAll(String csrf) {
    return Map.of("csrf", csrf, "s", "1", "q", "$dlq/jobs", "count", "all", "confirm", "yes");
  }

  @Test
  void aReadOnlyConsoleOffersNoChangeAndRefusesOnePostedAnyway() throws Exception {
    Path config = ConsoleFixture.create(dir);
    console = ConsoleFixture.start(config, null);
    HttpResponse<String> page = get("/dead-letters?s=1&q=%24dlq%2Fjobs", null);
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.body())
        .doesNotContain("action=\"/redrive\"", "action=\"/purge\"")
        .contains("read-only");
    for (String path : List.of("/redrive", "/purge", "/pause")) {
      HttpResponse<String> r = post(path, null, redriveAll("x"), null);
      assertThat(r.statusCode()).as(path).isEqualTo(403);
      assertThat(r.body()).contains("this console is read-only");
    }
    assertThat(get("/login", null).body()).contains("there is nothing to log in to");
    assertThat(dlqMessages(config)).isEqualTo(2);
  }

  @Test
  void aChangeNeedsTheSessionItsCsrfTokenAndTheConsolesOwnOrigin() throws Exception {
    Path config = ConsoleFixture.create(dir);
    console = ConsoleFixture.start(config, TOKEN);
    String cookie = login();
    Matcher m = CSRF.matcher(get("/dead-letters?s=1&q=%24dlq%2Fjobs", cookie).body());
    assertThat(m.find()).isTrue();
    String csrf = m.group(1);

    HttpResponse<String> noSession = post("/redrive", null, redriveAll(csrf), null);
    assertThat(noSession.statusCode()).isEqualTo(403);
    assertThat(noSession.body()).contains("log in with the console");

    HttpResponse<String> forgedSession =
        post("/redrive", "qb-console-session=guess", redriveAll(csrf), null);
    assertThat(forgedSession.statusCode()).isEqualTo(403);

    HttpResponse<String> wrongCsrf = post("/redrive", cookie, redriveAll("not-" + csrf), null);
    assertThat(wrongCsrf.statusCode()).isEqualTo(403);
    assertThat(wrongCsrf.body()).contains("CSRF token is not this session");

    HttpResponse<String> crossSite =
        post("/redrive", cookie, redriveAll(csrf), "http://evil.example");
    assertThat(crossSite.statusCode()).isEqualTo(403);
    assertThat(crossSite.body()).contains("a form posted from &#39;http://evil.example&#39;");

    HttpResponse<String> badCount =
        post(
            "/redrive",
            cookie,
            Map.of("csrf", csrf, "s", "1", "q", "$dlq/jobs", "count", "-3"),
            null);
    assertThat(badCount.statusCode()).isEqualTo(400);
    assertThat(badCount.body())
        .contains("count &#39;-3&#39; (expected all, or a number of messages &gt; 0)");

    HttpResponse<String> badRate =
        post(
            "/redrive",
            cookie,
            Map.of("csrf", csrf, "s", "1", "q", "$dlq/jobs", "count", "1", "rate", "fast"),
            null);
    assertThat(badRate.statusCode()).isEqualTo(400);
    assertThat(badRate.body()).contains("--rate is &#39;fast&#39;");

    HttpResponse<String> unknownQueue =
        post(
            "/redrive",
            cookie,
            Map.of("csrf", csrf, "s", "1", "q", "$dlq/nope", "count", "1"),
            null);
    assertThat(unknownQueue.statusCode()).isEqualTo(404);
    assertThat(dlqMessages(config)).as("nothing changed by the refused posts").isEqualTo(2);

    // the dry run changes nothing either; the confirmed post does
    HttpResponse<String> dryRun =
        post(
            "/redrive",
            cookie,
            Map.of("csrf", csrf, "s", "1", "q", "$dlq/jobs", "count", "all"),
            null);
    assertThat(dryRun.body()).contains("<strong>2</strong> would move");
    assertThat(dlqMessages(config)).isEqualTo(2);
    HttpResponse<String> done = post("/redrive", cookie, redriveAll(csrf), null);
    assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
    assertThat(dlqMessages(config)).isZero();

    // after logging out the session is gone
    assertThat(post("/logout", cookie, Map.of("csrf", csrf), null).statusCode()).isEqualTo(303);
    assertThat(
            post(
                    "/purge",
                    cookie,
                    Map.of("csrf", csrf, "s", "1", "q", "jobs", "confirm", "yes"),
                    null)
                .statusCode())
        .isEqualTo(403);
  }

  @Test
  void tenWrongTokensInARowLockTheLoginForAMinute() throws Exception {
    console = ConsoleFixture.start(ConsoleFixture.create(dir), TOKEN);
    for (int i = 0; i < Sessions.MAX_FAILURES; i++) {
      HttpResponse<String> r = post("/login", null, Map.of("token", "wrong-" + i), null);
      assertThat(r.statusCode()).isEqualTo(403);
      assertThat(r.body()).contains("not this console&#39;s login token");
    }
    HttpResponse<String> locked = post("/login", null, Map.of("token", TOKEN), null);
    assertThat(locked.statusCode()).isEqualTo(403);
    assertThat(locked.body()).contains("logins in a row were refused");
  }

  @Test
  void onALoopbackAddressOnlyLoopbackHostNamesAreAnswered() throws Exception {
    console = ConsoleFixture.start(ConsoleFixture.create(dir), null);
    assertThat(rawStatus("127.0.0.1:" + console.port())).isEqualTo(200);
    assertThat(rawStatus("localhost:" + console.port())).isEqualTo(200);
    assertThat(rawStatus("attacker.example:" + console.port())).isEqualTo(403);
  }

  @Test
  void pagesCarryAStrictContentSecurityPolicyAndAreNotCached() throws Exception {
    console = ConsoleFixture.start(ConsoleFixture.create(dir), null);
    HttpResponse<String> r = get("/", null);
    assertThat(r.headers().firstValue("Content-Security-Policy").orElseThrow())
        .contains("default-src 'none'", "script-src 'self'", "frame-ancestors 'none'")
        .doesNotContain("unsafe-inline");
    assertThat(r.headers().firstValue("X-Frame-Options")).contains("DENY");
    assertThat(r.headers().firstValue("Cache-Control")).contains("no-store");
    assertThat(r.body()).doesNotContain("<script>", "style=");
    assertThat(get("/assets/../pom.xml", null).statusCode()).isEqualTo(404);
    assertThat(Console.safeNext("//evil.example/")).isEqualTo("/");
    assertThat(Console.safeNext("https://evil.example/")).isEqualTo("/");
    assertThat(Console.safeNext("/queue?s=1&q=jobs")).isEqualTo("/queue?s=1&q=jobs");
  }

  /** The status of {@code GET /} sent with {@code Host: host}, on a socket of its own. */
  private int rawStatus(String host) throws Exception {
    try (Socket s = new Socket("127.0.0.1", console.port())) {
      OutputStream out = s.getOutputStream();
      out.write(
          ("GET / HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      String status = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
      return Integer.parseInt(status.substring(9, 12));
    }
  }
}
