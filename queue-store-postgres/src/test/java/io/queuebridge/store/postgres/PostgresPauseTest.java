package io.queuebridge.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.fixtures.FixtureContent;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The pause flag on a store an earlier release wrote: a version-5 schema reads every group as not
 * paused, read-only, without migrating; a writable open adds the column and a pause is then seen by
 * every view opened after it.
 */
class PostgresPauseTest {
  private static final Instant T0 = Instant.parse("2024-05-01T12:00:00Z");

  @Test
  void aVersionFiveStoreReadsUnpausedMigratesAndThenKeepsAPause() throws Exception {
    try (PostgresTestDatabase db = PostgresTestDatabase.create()) {
      Map<String, String> config =
          PostgresFixtureGenerator.restoreAtVersion(db, Schema.PAUSED_FROM - 1);
      String queue = FixtureContent.ORDERS;
      try (Storage old = QueueStores.provider("postgres").openReadOnly(config)) {
        assertThat(old.groups().listGroups(queue))
            .as("groups of a version-5 schema, read as they are")
            .isNotEmpty()
            .noneMatch(ConsumerGroupState::paused);
        String group = old.groups().listGroups(queue).get(0).id();
        try (Storage s = QueueStores.open("postgres", config)) {
          s.groups().setPaused(queue, group, true, T0);
          assertThat(s.groups().getGroup(queue, group).paused()).isTrue();
        }
        try (Storage after = QueueStores.provider("postgres").openReadOnly(config)) {
          assertThat(after.groups().getGroup(queue, group).paused()).isTrue();
          assertThat(after.groups().overview(queue, group).group().paused()).isTrue();
        }
      }
    }
  }
}
