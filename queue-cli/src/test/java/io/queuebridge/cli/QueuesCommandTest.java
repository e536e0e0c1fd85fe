package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
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

  /**
   * {@code table} with every BYTES cell shown as {@code -}: byte sizes are the store's own count
   * (file segments, memory payloads, postgres encoded messages), checked on their own below.
   */
  static String withoutBytes(String table) {
    String[] lines = table.split("\n", -1);
    int start = lines[0].indexOf("BYTES");
    int end = lines[0].indexOf("FIRST-OFFSET");
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i];
      if (i > 0 && line.length() > end) {
        line =
            line.substring(0, start)
                + String.format("%-" + (end - start) + "s", "-")
                + line.substring(end);
      }
      out.append(line).append(i < lines.length - 1 ? "\n" : "");
    }
    return out.toString();
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void listsEveryQueueInATable(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("queues");

      assertThat(run.err()).isEmpty();
      assertThat(run.status()).isZero();
      assertThat(withoutBytes(run.out())).isEqualTo(FIXTURE_TABLE);
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
      // each store counts its own way: memory keys, values and headers; file its segment files;
      // postgres the encoded messages (positive, checked against its rows in the store's tests)
      long jobsBytes = queues.get(1).get("bytes").asLong();
      long ordersBytes = orders.get("bytes").asLong();
      switch (kind) {
        case MEMORY -> assertThat(new long[] {jobsBytes, ordersBytes}).containsExactly(96, 72);
        case FILE -> assertThat(new long[] {jobsBytes, ordersBytes}).containsExactly(756, 731);
        case POSTGRES -> assertThat(Math.min(jobsBytes, ordersBytes)).isPositive();
      }
      assertThat(orders.get("protected").asBoolean()).isTrue();
      assertThat(orders.get("firstOffset").asLong()).isZero();
      assertThat(orders.get("lastOffset").asLong()).isEqualTo(2);
      assertThat(orders.get("oldestAgeMs").asLong()).isEqualTo(3_400_000);
      assertThat(orders.get("groups").asInt()).isEqualTo(1);
    }
  }

  @Test
  void anEmptyStoreListsNoQueue() {
    try (Storage empty = QueueStores.memory()) {
      StoreOpener opener = FixtureStore.serving(empty);
      Cli.Run run = Cli.run(opener, StoreFixture.CLOCK, "queues", "--store-type", "memory");

      assertThat(run.status()).isZero();
      assertThat(run.out()).startsWith("NAME ").hasLineCount(1);
      assertThat(
              Cli.run(opener, StoreFixture.CLOCK, "queues", "--store-type", "memory", "-o", "json")
                  .out()
                  .strip())
          .isEqualTo("[ ]");
    }
  }
}
