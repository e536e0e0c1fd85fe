package io.queuebridge.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code claimPending} inside a section is sent with the section's next statement or with its
 * {@code COMMIT} ({@code Db#writeDeferred}): what follows in the section sees it, a section that
 * throws leaves nothing of it, and a group that is gone is reported by the section.
 */
class PostgresDeferredWriteTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();

  private Storage storage;
  private ConsumerGroupStore groups;

  @BeforeEach
  void open() {
    storage = QueueStores.open("postgres", database.config("deferred"));
    groups = storage.groups();
    storage.queues().createQueue(QueueConfig.durable("q").build());
    groups.createGroup(ConsumerGroupState.create("q", "g", "", GroupMode.QUEUE, true, T0));
  }

  @AfterEach
  void close() {
    storage.queues().deleteQueue("q");
    storage.close();
  }

  private static List<PendingEntry> entries(long... offsets) {
    return java.util.Arrays.stream(offsets)
        .mapToObj(o -> new PendingEntry(o, "c1", T0, 1, T0, T0.plusSeconds(30)))
        .toList();
  }

  @Test
  void theNextStatementOfTheSectionSeesTheClaimAndTheCommitKeepsIt() {
    List<PendingEntry> seen =
        groups.atomically(
            "q",
            "g",
            () -> {
              groups.claimPending("q", "g", entries(0, 1), 2, T0);
              return groups.getAllPending("q", "g");
            });
    assertThat(seen).extracting(PendingEntry::offset).containsExactly(0L, 1L);
    ConsumerGroupState g = groups.getGroup("q", "g");
    assertThat(g.pending()).extracting(PendingEntry::offset).containsExactly(0L, 1L);
    assertThat(g.cursor()).isEqualTo(2);
  }

  @Test
  void twoClaimsInOneSectionAreBothWrittenInOrder() {
    groups.atomically(
        "q",
        "g",
        () -> {
          groups.claimPending("q", "g", entries(0), 1, T0);
          groups.claimPending("q", "g", entries(1), 2, T0);
          return null;
        });
    ConsumerGroupState g = groups.getGroup("q", "g");
    assertThat(g.pending()).extracting(PendingEntry::offset).containsExactly(0L, 1L);
    assertThat(g.cursor()).isEqualTo(2);
  }

  @Test
  void aSectionThatThrowsAfterAClaimLeavesNothingOfIt() {
    assertThatThrownBy(
            () ->
                groups.atomicallyLazy(
                    "q",
                    "g",
                    () -> {
                      groups.claimPending("q", "g", entries(0), 1, T0);
                      throw new IllegalStateException("the engine changed its mind");
                    }))
        .hasMessage("the engine changed its mind");
    ConsumerGroupState g = groups.getGroup("q", "g");
    assertThat(g.pending()).isEmpty();
    assertThat(g.cursor()).isZero();
  }

  @Test
  void aClaimOnAGroupThatIsGoneFailsTheSection() {
    assertThatThrownBy(
            () ->
                groups.atomically(
                    "q",
                    "other",
                    () -> {
                      groups.claimPending("q", "other", entries(0), 1, T0);
                      return null;
                    }))
        .isInstanceOf(GroupNotFoundException.class);
    assertThat(groups.getGroup("q", "g").pending()).isEmpty();
  }

  @Test
  void outsideASectionTheClaimIsWrittenAtOnce() {
    groups.claimPending("q", "g", entries(0), 1, T0);
    assertThat(groups.getGroup("q", "g").pending()).hasSize(1);
    assertThatThrownBy(() -> groups.claimPending("q", "other", entries(0), 1, T0))
        .isInstanceOf(GroupNotFoundException.class);
  }
}
