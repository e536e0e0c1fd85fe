package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The commands that change a store — {@code dlq redrive}, {@code reset-offsets}, {@code purge},
 * {@code delete-group} — on the {@link StoreFixture}, in a memory, a file and (when the test server
 * is there) a postgres store. What they did is checked with the read commands, as an operator
 * would.
 */
class ChangeCommandsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private static JsonNode json(Cli.Run run) throws Exception {
    assertThat(run.err()).isEmpty();
    assertThat(run.status()).isZero();
    return JSON.readTree(run.out());
  }

  private static JsonNode queue(FixtureStore store, String name) throws Exception {
    for (JsonNode q : json(store.run("queues", "-o", "json"))) {
      if (q.get("name").asText().equals(name)) {
        return q;
      }
    }
    throw new AssertionError("no queue " + name);
  }

  private static JsonNode group(FixtureStore store, String queue, String group) throws Exception {
    return json(store.run("groups", queue, group, "-o", "json")).get(0);
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void redriveMovesTheDeadLetterBackAndADryRunChangesNothing(FixtureStore.Kind kind)
      throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run dry = store.run("dlq", "redrive", "$dlq/jobs", "--dry-run");
      assertThat(dry.status()).as(dry.err()).isZero();
      assertThat(dry.out())
          .isEqualTo(
              "would-move 0 -> jobs\n"
                  + "dry run, nothing changed: 1 would move, 0 already moved, 1 left in"
                  + " $dlq/jobs\n");
      assertThat(queue(store, "$dlq/jobs").get("messages").asLong()).isEqualTo(1);
      assertThat(queue(store, "jobs").get("messages").asLong()).isEqualTo(6);

      Cli.Run run = store.run("dlq", "redrive", "$dlq/jobs");
      assertThat(run.status()).as(run.err()).isZero();
      assertThat(run.out())
          .isEqualTo("moved 0 -> jobs@6\n1 moved, 0 already moved, 0 left in $dlq/jobs\n");
      assertThat(queue(store, "$dlq/jobs").get("messages").asLong()).isZero();
      JsonNode moved = json(store.run("tail", "jobs", "--from", "6", "-o", "json"));
      assertThat(moved.get("offset").asLong()).isEqualTo(6);
      assertThat(moved.get("key").get("utf8").asText()).isEqualTo("job-2");
      assertThat(moved.get("value").get("utf8").asText()).isEqualTo("send mail 2");
      assertThat(moved.get("properties").get("x-redrive-dlq").asText()).isEqualTo("$dlq/jobs");
      assertThat(moved.get("properties").get("x-dlq-original-offset").asText()).isEqualTo("2");

      Cli.Run again = store.run("dlq", "redrive", "$dlq/jobs", "-o", "json");
      JsonNode summary = json(again);
      assertThat(summary.get("moved").asLong()).isZero();
      assertThat(summary.get("messages")).isEmpty();
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void redriveRefusesAProtectedTargetAndBadArguments(FixtureStore.Kind kind) throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("dlq", "redrive", "$dlq/jobs", "--to", "orders");
      assertThat(run.status()).isEqualTo(1);
      assertThat(run.err()).contains("orders").contains("protected");
      assertThat(store.run("dlq", "redrive", "$dlq/nothing").err())
          .contains("'$dlq/nothing' not found");
      Cli.Run rate = store.run("dlq", "redrive", "$dlq/jobs", "--rate", "fast");
      assertThat(rate.status()).isEqualTo(2);
      assertThat(rate.err()).contains("--rate is 'fast'").contains("N/s");
      Cli.Run max = store.run("dlq", "redrive", "$dlq/jobs", "--max", "0");
      assertThat(max.status()).isEqualTo(2);
      assertThat(max.err()).contains("max messages is 0");
      assertThat(store.run("dlq").status()).isEqualTo(2);
      assertThat(queue(store, "$dlq/jobs").get("messages").asLong()).isEqualTo(1);
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void resetOffsetsIsADryRunUnlessExecutedAndRefusesLiveMembers(FixtureStore.Kind kind)
      throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      JsonNode before = group(store, "jobs", "workers");

      Cli.Run dry = store.run("reset-offsets", "jobs", "--group", "workers", "--to-earliest");
      assertThat(dry.status()).as(dry.err()).isZero();
      assertThat(dry.out())
          .startsWith("GROUP    QUEUE  CURSOR  COMMITTED  NEW-OFFSET  DROPPED-PENDING  MEMBERS\n")
          .contains("workers  jobs   5       1          0           3                2")
          .contains("dry run: nothing changed (the group has members [workers-1, workers-2]");
      assertThat(group(store, "jobs", "workers")).isEqualTo(before);

      Cli.Run refused =
          store.run("reset-offsets", "jobs", "--group", "workers", "--to-offset", "3", "--execute");
      assertThat(refused.status()).isEqualTo(1);
      assertThat(refused.err()).contains("[workers-1, workers-2]").contains("force");
      assertThat(group(store, "jobs", "workers")).isEqualTo(before);

      JsonNode done =
          json(
              store.run(
                  "reset-offsets",
                  "jobs",
                  "--group",
                  "workers",
                  "--to-offset",
                  "3",
                  "--execute",
                  "--force",
                  "-o",
                  "json"));
      assertThat(done.get(0).get("executed").asBoolean()).isTrue();
      assertThat(done.get(0).get("newOffset").asLong()).isEqualTo(3);
      JsonNode after = group(store, "jobs", "workers");
      assertThat(after.get("cursor").asLong()).isEqualTo(3);
      assertThat(after.get("committed").asLong()).isEqualTo(3);
      assertThat(after.get("pending").asLong()).isZero();

      // a stream group, by time and by shift
      JsonNode byTime =
          json(
              store.run(
                  "reset-offsets",
                  "orders",
                  "--group",
                  "archiver",
                  "--to-datetime",
                  "2025-01-31T09:03:21",
                  "-o",
                  "json"));
      assertThat(byTime.get(0).get("newOffset").asLong()).as("appended at 09:03:21").isEqualTo(1);
      Cli.Run shifted =
          store.run(
              "reset-offsets", "orders", "--group", "archiver", "--shift-by", "-10", "--dry-run");
      assertThat(shifted.out()).contains("archiver").contains("dry run");

      Cli.Run none = store.run("reset-offsets", "jobs", "--group", "workers");
      assertThat(none.status()).isEqualTo(2);
      Cli.Run both =
          store.run("reset-offsets", "jobs", "--group", "workers", "--to-latest", "--to-earliest");
      assertThat(both.status()).isEqualTo(2);
      Cli.Run badTime =
          store.run("reset-offsets", "jobs", "--group", "workers", "--to-datetime", "noon");
      assertThat(badTime.status()).isEqualTo(2);
      assertThat(badTime.err()).contains("--to-datetime is 'noon'");
      assertThat(store.run("reset-offsets", "jobs", "--group", "nobody", "--to-latest").err())
          .contains("consumer group 'nobody' not found");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void purgeAndDeleteGroupNeedYesAndRefuseProtectedStreams(FixtureStore.Kind kind)
      throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run unconfirmed = store.run("purge", "jobs");
      assertThat(unconfirmed.status()).isEqualTo(2);
      assertThat(unconfirmed.err()).contains("--yes");
      assertThat(queue(store, "jobs").get("messages").asLong()).isEqualTo(6);

      Cli.Run purged = store.run("purge", "jobs", "--yes");
      assertThat(purged.status()).as(purged.err()).isZero();
      assertThat(purged.out()).isEqualTo("purged jobs: 6 messages removed\n");
      assertThat(queue(store, "jobs").get("messages").asLong()).isZero();
      JsonNode workers = group(store, "jobs", "workers");
      assertThat(workers.get("cursor").asLong()).isEqualTo(6);
      assertThat(workers.get("pending").asLong()).isZero();

      Cli.Run protectedPurge = store.run("purge", "orders", "--yes");
      assertThat(protectedPurge.status()).isEqualTo(1);
      assertThat(protectedPurge.err()).contains("orders").contains("cannot be purged");
      assertThat(queue(store, "orders").get("messages").asLong()).isEqualTo(3);

      assertThat(store.run("delete-group", "jobs", "workers").status()).isEqualTo(2);
      Cli.Run missing = store.run("delete-group", "jobs", "nobody", "--yes");
      assertThat(missing.status()).isEqualTo(1);
      assertThat(missing.err()).contains("consumer group 'nobody' not found");
      Cli.Run deleted = store.run("delete-group", "jobs", "workers", "--yes");
      assertThat(deleted.status()).as(deleted.err()).isZero();
      assertThat(json(store.run("groups", "jobs", "-o", "json"))).isEmpty();
      Cli.Run protectedGroup = store.run("delete-group", "orders", "archiver", "--yes");
      assertThat(protectedGroup.status()).isEqualTo(1);
      assertThat(protectedGroup.err()).contains("orders").contains("cannot be deleted");
      assertThat(json(store.run("groups", "orders", "-o", "json"))).hasSize(1);
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void pauseAndResumeSetTheStoredFlagWhichTheGroupsTableShows(FixtureStore.Kind kind)
      throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      assertThat(group(store, "jobs", "workers").get("paused").asBoolean()).isFalse();
      Cli.Run paused = store.run("pause-group", "jobs", "workers");
      assertThat(paused.status()).as(paused.err()).isZero();
      assertThat(paused.out()).isEqualTo("paused group workers of jobs\n");
      assertThat(group(store, "jobs", "workers").get("paused").asBoolean()).isTrue();
      assertThat(store.run("groups", "jobs").out())
          .contains("GROUP    MODE   PAUSED  CURSOR")
          .contains("workers  queue  yes     5");
      assertThat(store.run("pause-group", "jobs", "workers").out())
          .isEqualTo("group workers of jobs was paused already (nothing changed)\n");
      Cli.Run stream = store.run("pause-group", "orders", "archiver", "-o", "json");
      assertThat(stream.status()).as("a group of a protected stream: " + stream.err()).isZero();
      assertThat(json(stream).get("changed").asBoolean()).isTrue();

      Cli.Run resumed = store.run("resume-group", "jobs", "workers", "-o", "json");
      assertThat(resumed.status()).as(resumed.err()).isZero();
      assertThat(json(resumed).get("paused").asBoolean()).isFalse();
      assertThat(json(resumed).get("changed").asBoolean()).isTrue();
      assertThat(group(store, "jobs", "workers").get("paused").asBoolean()).isFalse();
      assertThat(group(store, "jobs", "workers").get("pending").asLong())
          .as("the pause changed nothing else")
          .isEqualTo(3);
      assertThat(store.run("resume-group", "jobs", "workers").out())
          .isEqualTo("group workers of jobs was not paused (nothing changed)\n");

      Cli.Run missing = store.run("pause-group", "jobs", "nobody");
      assertThat(missing.status()).isEqualTo(1);
      assertThat(missing.err()).contains("consumer group 'nobody' not found");
      assertThat(store.run("pause-group", "jobs").status()).as("no group named").isEqualTo(2);
    }
  }
}
