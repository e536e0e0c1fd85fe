package io.queuebridge.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.queuebridge.cli.QueueBridgeCli;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.message.TimestampType;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.store.postgres.PostgresTestDatabase;
import java.io.BufferedReader;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A redrive started from the console is exactly once across SIGKILLs of the console: the console
 * runs in a child JVM ({@code queue-bridge serve --allow-changes}), a logged-in operator posts a
 * confirmed redrive of every dead letter, the console is killed mid-way, started again, and the
 * redrive posted again, several times; every dead letter ends up in its origin queue exactly once,
 * byte for byte, and the dead-letter queue is empty. On a {@code file} store and, when {@code
 * QUEUEBRIDGE_TEST_PG_URL} names a server, a {@code postgres} one.
 */
class ConsoleRedriveKillTest {
  private static final int MESSAGES = 600;
  private static final int KILLS = 3;
  private static final int RATE = 400; // dead letters per second
  private static final String TOKEN = "kill-test-token-0123456789abcdef";
  private static final Pattern CSRF = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"");

  @TempDir Path dir;

  @Test
  void aConsoleRedriveKilledAgainAndAgainMovesEveryDeadLetterExactlyOnceOnAFileStore()
      throws Exception {
    Path path = dir.resolve("store");
    check(
        () -> QueueStores.file(path),
        "\"queue.store.type\": \"file\", \"queue.store.path\": \"" + path + "\"");
  }

  @Test
  void aConsoleRedriveKilledAgainAndAgainMovesEveryDeadLetterExactlyOnceOnAPostgresStore()
      throws Exception {
    String url = System.getenv("QUEUEBRIDGE_TEST_PG_URL");
    assumeTrue(
        url != null && !url.isBlank(),
        "QUEUEBRIDGE_TEST_PG_URL is not set: no PostgreSQL server for the postgres redrive");
    try (PostgresTestDatabase db = PostgresTestDatabase.create()) {
      StringBuilder keys = new StringBuilder("\"queue.store.type\": \"postgres\"");
      db.config()
          .forEach(
              (k, v) ->
                  keys.append(", \"queue.store.").append(k).append("\": \"").append(v).append('"'));
      check(() -> QueueStores.open("postgres", db.config()), keys.toString());
    }
  }

  private void check(Supplier<Storage> store, String storeKeys) throws Exception {
    Map<Long, Message> dead = deadLetters(store);
    Path config = dir.resolve("source.json");
    Files.writeString(config, "{\"name\": \"jobs-source\", \"config\": {" + storeKeys + "}}");
    Path tokenFile = dir.resolve("token");
    Files.writeString(tokenFile, TOKEN + "\n");
    Random random = new Random(7);
    int killed = 0;
    int movedByKilledRuns = 0;
    for (int run = 0; ; run++) {
      boolean kill = run < KILLS;
      try (Child console = Child.start(config, tokenFile)) {
        HttpClient http = HttpClient.newHttpClient();
        String cookie = login(http, console.url);
        String page =
            get(http, console.url + "dead-letters?s=1&q=" + enc("$dlq/jobs"), cookie).body();
        Matcher csrf = CSRF.matcher(page);
        assertThat(csrf.find()).as("a CSRF token on the dead-letters page").isTrue();
        CompletableFuture<HttpResponse<String>> redrive =
            http.sendAsync(
                form(
                    console.url + "redrive",
                    cookie,
                    Map.of(
                        "csrf", csrf.group(1),
                        "s", "1",
                        "q", "$dlq/jobs",
                        "count", "all",
                        "rate", RATE + "/s",
                        "confirm", "yes")),
                HttpResponse.BodyHandlers.ofString());
        if (kill) {
          // kill at a random time, but before the rest could be moved at the rate
          long rest = (MESSAGES - movedByKilledRuns) * 1000L / RATE;
          long after = Math.min(300 + random.nextInt(900), Math.max(50, rest / 2));
          try {
            HttpResponse<String> done = redrive.get(after, TimeUnit.MILLISECONDS);
            throw new AssertionError("the redrive ended before the kill: " + done.body());
          } catch (java.util.concurrent.TimeoutException expected) {
            console.process.destroyForcibly(); // SIGKILL, mid-redrive
            assertThat(console.process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            killed++;
          }
        } else {
          HttpResponse<String> done = redrive.get(2, TimeUnit.MINUTES);
          assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
          assertThat(done.body()).contains("id=\"result\"", "0 left in $dlq/jobs");
          break;
        }
      }
      movedByKilledRuns = Math.max(movedByKilledRuns, assertInvariant(store, dead, false));
    }
    assertThat(killed).isEqualTo(KILLS);
    assertThat(movedByKilledRuns).as("dead letters moved before a kill").isPositive();
    assertInvariant(store, dead, true);
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private static HttpRequest form(String url, String cookie, Map<String, String> fields) {
    StringBuilder body = new StringBuilder();
    fields.forEach(
        (k, v) ->
            body.append(body.length() == 0 ? "" : "&").append(enc(k)).append('=').append(enc(v)));
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString(body.toString()));
    if (cookie != null) {
      b.header("Cookie", cookie);
    }
    return b.build();
  }

  private static HttpResponse<String> get(HttpClient http, String url, String cookie)
      throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(url)).header("Cookie", cookie).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Logs in with the token; the session cookie, as {@code name=value}. */
  private static String login(HttpClient http, String url) throws Exception {
    HttpResponse<String> r =
        http.send(
            form(url + "login", null, Map.of("token", TOKEN, "next", "/")),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(303);
    String set = r.headers().firstValue("Set-Cookie").orElseThrow();
    return set.substring(0, set.indexOf(';'));
  }

  /**
   * No dead letter is in the origin twice; none is lost (each is still in the DLQ or moved); when
   * {@code done}, every one is moved and the DLQ is empty. Moved copies are byte-identical. Returns
   * how many were moved.
   */
  private static int assertInvariant(
      Supplier<Storage> store, Map<Long, Message> dead, boolean done) {
    try (Storage s = store.get()) {
      Map<Long, Message> moved = new HashMap<>();
      for (Message m : s.queues().readBatch("jobs", 0, 10 * MESSAGES)) {
        String from = m.properties().get(MessageProperties.REDRIVE_DLQ_OFFSET);
        if (from != null) {
          Message before = moved.put(Long.parseLong(from), m);
          assertThat(before).as("dead letter %s moved twice", from).isNull();
        }
      }
      List<Message> left = s.queues().readBatch("$dlq/jobs", 0, 10 * MESSAGES);
      for (Map.Entry<Long, Message> e : dead.entrySet()) {
        boolean inDlq = left.stream().anyMatch(m -> m.offset() == e.getKey());
        Message copy = moved.get(e.getKey());
        assertThat(inDlq || copy != null).as("dead letter %d lost", e.getKey()).isTrue();
        if (copy != null) {
          assertThat(copy.key()).isEqualTo(e.getValue().key());
          assertThat(copy.value()).isEqualTo(e.getValue().value());
          assertThat(copy.headers()).isEqualTo(e.getValue().headers());
          assertThat(copy.timestamp()).isEqualTo(e.getValue().timestamp());
        }
      }
      if (done) {
        assertThat(moved).hasSize(MESSAGES);
        assertThat(left).isEmpty();
      } else {
        assertThat(moved.size()).as("moved before the kill").isLessThan(MESSAGES);
      }
      return moved.size();
    }
  }

  /** {@value #MESSAGES} messages in {@code jobs}, all rejected into {@code $dlq/jobs}. */
  private static Map<Long, Message> deadLetters(Supplier<Storage> store) throws Exception {
    try (Storage s = store.get()) {
      QueueManager manager = new QueueManager(s, QueueManagerConfig.defaults());
      manager.createQueue(QueueConfig.durable("jobs").topics("jobs").build());
      for (int i = 0; i < MESSAGES; i++) {
        byte[] value = new byte[64 + i % 64];
        new Random(i).nextBytes(value);
        manager.publishTo(
            "jobs",
            PublishRequest.builder("jobs")
                .key(("job-" + i).getBytes(StandardCharsets.UTF_8))
                .value(value)
                .header("attempt", new byte[] {(byte) i})
                .timestamp(1_700_000_000_000L + i, TimestampType.CREATE_TIME)
                .build());
      }
      ConsumerGroups groups = manager.consumerGroups();
      groups.join("jobs", "", "workers", "w", CursorOption.earliest(GroupMode.QUEUE));
      List<GroupDelivery> got;
      while (!(got = groups.claimBatch("jobs", "workers", "w", 100)).isEmpty()) {
        for (GroupDelivery d : got) {
          d.reject("poison " + d.offset());
        }
      }
      groups.leave("jobs", "", "workers", "w");
      Map<Long, Message> dead = new HashMap<>();
      for (Message m : s.queues().readBatch("$dlq/jobs", 0, 2 * MESSAGES)) {
        dead.put(m.offset(), m);
      }
      assertThat(dead).hasSize(MESSAGES);
      manager.stop();
      return dead;
    }
  }

  /** {@code queue-bridge serve} in a child JVM on this test's class path, until closed. */
  private static final class Child implements AutoCloseable {
    final Process process;
    final String url;

    private Child(Process process, String url) {
      this.process = process;
      this.url = url;
    }

    static Child start(Path config, Path tokenFile) throws Exception {
      Process p =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  QueueBridgeCli.class.getName(),
                  "serve",
                  "--config",
                  config.toString(),
                  "--port",
                  "0",
                  "--allow-changes",
                  "--token-file",
                  tokenFile.toString())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      BufferedReader out = p.inputReader(StandardCharsets.UTF_8);
      String first = out.readLine();
      assertThat(first).as("the console's first line").startsWith("Queue Bridge console: ");
      String url = first.substring("Queue Bridge console: ".length());
      return new Child(p, url);
    }

    @Override
    public void close() {
      process.destroyForcibly();
      try {
        process.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
