package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class GroupsCommandTest {
  @TempDir Path dir;

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void listsTheGroupsOfAQueue(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("groups", "jobs");

      assertThat(run.err()).isEmpty();
      assertThat(run.status()).isZero();
      assertThat(run.out())
          .isEqualTo(
"""
GROUP    MODE   PAUSED  CURSOR  COMMITTED  LAG  PENDING  SCHEDULED  BLOCKED  REDELIVERED  CONSUMERS  OLDEST-PENDING-AGE
workers  queue  no      5       1          5    3        0          0        1            2          50m00s
""");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void listsOneGroupByName(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("groups", "orders", "archiver");

      assertThat(run.status()).isZero();
      assertThat(run.out())
          .endsWith(
              "archiver  stream  no      3       2          1    0        0          0        0            1          -\n");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void listsTheMembers(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("groups", "jobs", "--members");

      assertThat(run.status()).isZero();
      assertThat(run.out())
          .isEqualTo(
"""
GROUP    CONSUMER   CLIENT     PENDING  IDLE    LAST-HEARTBEAT        REGISTERED
workers  workers-1  workers-1  1        40m00s  2025-01-31T09:20:00Z  2025-01-31T09:00:00Z
workers  workers-2  workers-2  2        50m00s  2025-01-31T09:10:00Z  2025-01-31T09:00:00Z
""");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void printsJson(FixtureStore.Kind kind) throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      JsonNode groups =
          new ObjectMapper().readTree(store.run("groups", "jobs", "-o", "json").out());
      JsonNode members =
          new ObjectMapper().readTree(store.run("groups", "jobs", "--members", "-o", "json").out());

      assertThat(groups).hasSize(1);
      assertThat(groups.get(0).get("lag").asLong()).isEqualTo(5);
      assertThat(groups.get(0).get("oldestPendingAgeMs").asLong()).isEqualTo(3_000_000);
      assertThat(members).hasSize(2);
      assertThat(members.get(1).get("consumer").asText()).isEqualTo("workers-2");
      assertThat(members.get(1).get("idleMs").asLong()).isEqualTo(3_000_000);
      assertThat(members.get(1).get("lastHeartbeat").asText()).isEqualTo("2025-01-31T09:10:00Z");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void anUnknownGroupIsAOneLineErrorNamingTheKnownOnes(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("groups", "jobs", "nope");

      assertThat(run.status()).isEqualTo(1);
      assertThat(run.err())
          .isEqualTo(
              "queue-bridge: consumer group 'nope' not found on queue 'jobs' (expected one of its"
                  + " groups: 'workers')\n");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void anUnknownQueueIsAOneLineError(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("groups", "nope");

      assertThat(run.status()).isEqualTo(1);
      assertThat(run.err()).hasLineCount(1).contains("queue 'nope' not found");
    }
  }
}
