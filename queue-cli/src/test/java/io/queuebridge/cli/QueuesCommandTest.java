package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class QueuesCommandTest {
  /** What {@code queues} prints for the {@link StoreFixture}, whatever the store. */
  static final String FIXTURE_TABLE =
"""
NAME       TYPE     DURABLE  PROTECTED  MESSAGES  BYTES  FIRST-OFFSET  LAST-OFFSET  OLDEST-AGE  GROUPS
$dlq/jobs  classic  yes      no         1         -      0             0            50m00s      0
jobs       classic  yes      no         6         -      0             5            1h00m       1
orders     stream   yes      yes        3         -      0             2            56m40s      1
""";

  @TempDir Path dir;

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void listsEveryQueueInATable(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("queues");

      assertThat(run.err()).isEmpty();
      assertThat(run.status()).isZero();
      assertThat(run.out()).isEqualTo(FIXTURE_TABLE);
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void printsAJsonArrayForScripts(FixtureStore.Kind kind) throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("queues", "-o", "json");

      assertThat(run.status()).isZero();
      JsonNode queues = new ObjectMapper().readTree(run.out());
      assertThat(queues.isArray()).isTrue();
      assertThat(queues).hasSize(3);
      JsonNode orders = queues.get(2);
      assertThat(orders.get("name").asText()).isEqualTo("orders");
      assertThat(orders.get("type").asText()).isEqualTo("stream");
      assertThat(orders.get("messages").asLong()).isEqualTo(3);
      assertThat(orders.get("bytes").isNull()).as("not available from the store API").isTrue();
      assertThat(orders.get("protected").asBoolean()).isTrue();
      assertThat(orders.get("firstOffset").asLong()).isZero();
      assertThat(orders.get("lastOffset").asLong()).isEqualTo(2);
      assertThat(orders.get("oldestAgeMs").asLong()).isEqualTo(3_400_000);
      assertThat(orders.get("groups").asInt()).isEqualTo(1);
    }
  }

  @Test
  void anEmptyStoreListsNoQueue() {
    Cli.Run run = Cli.run("queues", "--store-type", "memory");

    assertThat(run.status()).isZero();
    assertThat(run.out()).startsWith("NAME ").hasLineCount(1);
    assertThat(Cli.run("queues", "--store-type", "memory", "-o", "json").out().strip())
        .isEqualTo("[ ]");
  }
}
