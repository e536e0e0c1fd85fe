package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class DescribeCommandTest {
  @TempDir Path dir;

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void showsAQueuesConfigExtentDeadLettersAndGroups(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("describe", "jobs");

      assertThat(run.err()).isEmpty();
      assertThat(run.status()).isZero();
      assertThat(run.out())
          .isEqualTo(
"""
Queue:              jobs
Type:               classic
Durable:            yes
Protected:          no
Topics:             jobs/#
Retention:          none (kept until deleted)
Max message size:   10485760 bytes
Message TTL:        7d
Max depth:          100000
Delivery timeout:   30s
Retry policy:       10 retries, backoff 5s x2.0 up to 5m, give up after 1d
Ack durability:     default
Dedup window:       off
Max delay:          7d
Ordering:           none
Batch size:         the manager's
Heartbeat timeout:  the manager's
Expires after:      - (durable)
Dead-letter queue:  $dlq/jobs (1 message)
Head:               0 (accepted 2025-01-31T09:00:00Z)
Tail:               6 (last message 5, accepted 2025-01-31T09:30:00Z)
Messages:           6

Groups:
GROUP    MODE   PAUSED  CURSOR  COMMITTED  LAG  PENDING  SCHEDULED  BLOCKED  REDELIVERED  CONSUMERS  OLDEST-PENDING-AGE
workers  queue  no      5       1          5    3        0          0        1            2          50m00s
""");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void showsTheOrderingAndTheEntriesBlockedBehindTheirKey(FixtureStore.Kind kind) throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      store.amend(StoreFixture::fillOrdered);

      Cli.Run ordered = store.run("describe", "ordered");
      assertThat(ordered.err()).isEmpty();
      assertThat(ordered.status()).isZero();
      assertThat(ordered.out())
          .contains(
              "Ordering:           by message key (a group hands out one message per key at a"
                  + " time, in offset order)\n")
          .contains(
              "GROUP  MODE   PAUSED  CURSOR  COMMITTED  LAG  PENDING  SCHEDULED  BLOCKED  REDELIVERED "
                  + " CONSUMERS  OLDEST-PENDING-AGE\n"
                  + "w      queue  no      5       1          4    1        2          1        0          "
                  + "  1          1h00m\n");
      assertThat(store.run("describe", "tenants").out())
          .contains(
              "Ordering:           by property tenant (a group hands out one message per value at"
                  + " a time, in offset order)\n");

      ObjectMapper json = new ObjectMapper();
      JsonNode d = json.readTree(store.run("describe", "ordered", "-o", "json").out());
      assertThat(d.get("ordering").asText()).isEqualTo("key");
      JsonNode group = d.get("groups").get(0);
      assertThat(group.get("pending").asInt()).as("2, held").isEqualTo(1);
      assertThat(group.get("scheduled").asInt()).as("1 released, 4 not due").isEqualTo(2);
      assertThat(group.get("blocked").asInt()).as("3, behind 1").isEqualTo(1);
      assertThat(
              json.readTree(store.run("describe", "tenants", "-o", "json").out())
                  .get("ordering")
                  .asText())
          .isEqualTo("property:tenant");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void showsAProtectedStream(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("describe", "orders");

      assertThat(run.status()).isZero();
      assertThat(run.out())
          .contains("Type:               stream\n")
          .contains("Protected:          yes (reserved: the store refuses to delete it)\n")
          .contains("Topics:             orders/#\n")
          .contains("Retention:          max age 7d, max bytes none, max messages none\n")
          .contains("Max message size:   1048576 bytes\n")
          .contains("Message TTL:        0 (never expires)\n")
          .contains(
              "Dedup window:       5m (a publish's deduplication id is stored once within it)\n")
          .contains("Dead-letter queue:  $dlq/orders (not created yet: no dead letters)\n")
          .contains("Head:               0 (accepted 2025-01-31T09:03:20Z)\n")
          .contains(
              "archiver  stream  no      3       2          1    0        0          0        0            1          -\n");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void aDeadLetterQueueHasNoDeadLetterQueue(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("describe", "$dlq/jobs");

      assertThat(run.status()).isZero();
      assertThat(run.out()).contains("Dead-letter queue:  disabled (dead letters are dropped)\n");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void printsJson(FixtureStore.Kind kind) throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("describe", "jobs", "-o", "json");

      assertThat(run.status()).isZero();
      JsonNode d = new ObjectMapper().readTree(run.out());
      assertThat(d.get("name").asText()).isEqualTo("jobs");
      assertThat(d.get("protected").asBoolean()).isFalse();
      assertThat(d.get("messageTtlMs").asLong()).isEqualTo(7 * 86_400_000L);
      assertThat(d.get("dedupWindowMs").asLong()).as("off").isZero();
      assertThat(d.get("maxDelayMs").asLong()).isEqualTo(7L * 24 * 3600 * 1000);
      assertThat(d.get("ordering").asText()).isEqualTo("none");
      assertThat(d.get("batchSize").asInt()).as("the manager's").isZero();
      assertThat(d.get("heartbeatTimeoutMs").asLong()).as("the manager's").isZero();
      assertThat(d.get("head").asLong()).isZero();
      assertThat(d.get("tail").asLong()).isEqualTo(6);
      assertThat(d.get("headCreatedAt").asText()).isEqualTo("2025-01-31T09:00:00Z");
      assertThat(d.get("lastCreatedAt").asText()).isEqualTo("2025-01-31T09:30:00Z");
      JsonNode dlq = d.get("deadLetterQueue");
      assertThat(dlq.get("name").asText()).isEqualTo("$dlq/jobs");
      assertThat(dlq.get("exists").asBoolean()).isTrue();
      assertThat(dlq.get("messages").asLong()).isEqualTo(1);
      assertThat(d.get("groups").get(0).get("group").asText()).isEqualTo("workers");
      assertThat(d.get("groups").get(0).get("redelivered").asInt()).isEqualTo(1);
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void anUnknownQueueIsAOneLineError(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("describe", "nope");

      assertThat(run.status()).isEqualTo(1);
      assertThat(run.out()).isEmpty();
      assertThat(run.err())
          .hasLineCount(1)
          .startsWith("queue-bridge: queue 'nope' not found in ")
          .contains("(expected one of its queues: 'queue-bridge queues' lists them)");
    }
  }
}
