package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class PendingCommandTest {
  @TempDir Path dir;

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void listsThePendingEntriesByOffset(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("pending", "jobs", "workers");

      assertThat(run.err()).isEmpty();
      assertThat(run.status()).isZero();
      assertThat(run.out())
          .isEqualTo(
"""
OFFSET  CONSUMER   DELIVERIES  CLAIMED-AT            IDLE    FIRST-CLAIMED-AT      VISIBLE-AT
1       workers-1  2           2025-01-31T09:20:00Z  40m00s  2025-01-31T09:10:00Z  2025-01-31T09:20:30Z
3       workers-2  1           2025-01-31T09:10:00Z  50m00s  2025-01-31T09:10:00Z  2025-01-31T09:10:30Z
4       workers-2  1           2025-01-31T09:10:00Z  50m00s  2025-01-31T09:10:00Z  2025-01-31T09:10:30Z
""");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void printsJson(FixtureStore.Kind kind) throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      JsonNode pending =
          new ObjectMapper().readTree(store.run("pending", "jobs", "workers", "-o", "json").out());

      assertThat(pending).hasSize(3);
      JsonNode first = pending.get(0);
      assertThat(first.get("offset").asLong()).isEqualTo(1);
      assertThat(first.get("consumer").asText()).isEqualTo("workers-1");
      assertThat(first.get("deliveries").asInt()).isEqualTo(2);
      assertThat(first.get("claimedAt").asText()).isEqualTo("2025-01-31T09:20:00Z");
      assertThat(first.get("idleMs").asLong()).isEqualTo(2_400_000);
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void anEntryBlockedBehindItsKeyShowsAsBlocked(FixtureStore.Kind kind) throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      store.amend(StoreFixture::fillOrdered);
      Cli.Run run = store.run("pending", "ordered", "w");

      assertThat(run.err()).isEmpty();
      assertThat(run.status()).isZero();
      assertThat(run.out())
          .isEqualTo(
"""
OFFSET  CONSUMER  DELIVERIES  CLAIMED-AT            IDLE   FIRST-CLAIMED-AT      VISIBLE-AT
1                 0           2025-01-31T09:00:00Z  1h00m  2025-01-31T09:00:00Z  2025-01-31T09:00:00Z
2       w-1       1           2025-01-31T09:00:00Z  1h00m  2025-01-31T09:00:00Z  2025-01-31T09:00:30Z
3                 0           2025-01-31T09:00:00Z  1h00m  2025-01-31T09:00:00Z  blocked
4                 0           2025-01-31T09:00:00Z  1h00m  2025-01-31T09:00:00Z  2025-01-31T09:10:00Z
""");
      JsonNode json =
          new ObjectMapper().readTree(store.run("pending", "ordered", "w", "-o", "json").out());
      assertThat(json.get(2).get("offset").asLong()).isEqualTo(3);
      assertThat(json.get(2).get("blocked").asBoolean()).isTrue();
      assertThat(json.get(2).get("visibleAt").isNull()).isTrue();
      assertThat(json.get(3).get("blocked").asBoolean()).as("delayed, not blocked").isFalse();
      assertThat(json.get(3).get("visibleAt").asText()).isEqualTo("2025-01-31T09:10:00Z");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void aStreamGroupHasNoPendingEntries(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("pending", "orders", "archiver");

      assertThat(run.status()).isZero();
      assertThat(run.out()).hasLineCount(1).startsWith("OFFSET ");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void anUnknownGroupIsAOneLineError(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("pending", "jobs", "nope");

      assertThat(run.status()).isEqualTo(1);
      assertThat(run.err()).hasLineCount(1).contains("consumer group 'nope' not found");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void aMissingGroupArgumentIsAUsageError(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("pending", "jobs");

      assertThat(run.status()).isEqualTo(2);
      assertThat(run.err()).contains("GROUP");
    }
  }
}
