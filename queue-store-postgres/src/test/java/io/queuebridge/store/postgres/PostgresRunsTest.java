package io.queuebridge.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.fixtures.FixtureContent;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Rows of several messages (schema version 5): how a batch is laid out in {@code messages}, and
 * every read of the queue log (single reads, batch reads from any start, the byte total, the size
 * and time lookups of retention) checked message by message against the messages appended, with the
 * head anywhere inside a run. The contract kit runs every queue rule on this store as well; these
 * tests pin what only this layout can get wrong. Skipped, visibly, without a test server ({@link
 * PostgresTestDatabase}).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PostgresRunsTest {
  private static final Instant T0 = Instant.parse("2024-05-01T12:00:00Z");

  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();
  private final List<Storage> opened = new ArrayList<>();
  private String schema;

  @AfterEach
  void closeStorages() {
    opened.forEach(Storage::close);
  }

  private Storage open(TestInfo test) {
    schema = "r_" + Integer.toHexString(test.getDisplayName().hashCode() & 0x7fffffff);
    Storage s = QueueStores.open("postgres", database.config(schema));
    opened.add(s);
    return s;
  }

  /** A message of {@code valueBytes} bytes, created at {@code createdAt} (may be null). */
  private static Message message(int i, int valueBytes, Instant createdAt) {
    byte[] value = new byte[valueBytes];
    new Random(i).nextBytes(value);
    return Message.builder()
        .id("m-" + i)
        .key(("k" + i % 7).getBytes(StandardCharsets.UTF_8))
        .value(value)
        .createdAt(createdAt)
        .build();
  }

  /** One stored row: its first offset, its message count, its body length and size column. */
  private record Row(long off, int runLength, int bodyLength, int size) {}

  private List<Row> rows(String queue) throws SQLException {
    try (Connection c = database.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT m.off, m.run_length, length(m.body), m.size FROM "
                    + schema
                    + ".messages m JOIN "
                    + schema
                    + ".queues q ON q.id = m.queue_id WHERE q.name = ? ORDER BY m.off")) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        List<Row> out = new ArrayList<>();
        while (rs.next()) {
          out.add(new Row(rs.getLong(1), rs.getInt(2), rs.getInt(3), rs.getInt(4)));
        }
        return out;
      }
    }
  }

  @Test
  void aBatchGoesIntoRowsOfConsecutiveMessagesThatLeaveNoGap(TestInfo test) throws Exception {
    DurableQueueStore q = open(test).queues();
    q.createQueue(QueueConfig.durable("q").build());
    List<Message> batch = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      batch.add(message(i, i == 150 ? 12_000 : 200, T0.plusSeconds(i)));
    }
    assertThat(q.appendBatch("q", batch)).isEqualTo(0);
    q.append("q", message(300, 200, T0)); // a single append: a row of its own

    List<Row> rows = rows("q");
    assertThat(rows.size()).as("rows for 301 messages").isLessThan(301 / 10);
    long next = 0;
    for (Row r : rows) {
      assertThat(r.off()).as("rows leave no gap").isEqualTo(next);
      next = r.off() + r.runLength();
      if (r.runLength() > 1) {
        assertThat(r.bodyLength())
            .as("a run stays within the run size (row %s)", r)
            .isLessThanOrEqualTo(PgQueueStore.RUN_BYTES)
            .isEqualTo(r.size() + 5 + 4 * r.runLength());
      } else {
        assertThat(r.bodyLength()).as("a row of one holds its plain encoding").isEqualTo(r.size());
      }
    }
    assertThat(next).isEqualTo(301);
    assertThat(rows)
        .as("the message larger than a run has a row of its own")
        .contains(new Row(150, 1, encoded(batch.get(150)), encoded(batch.get(150))))
        .last()
        .isEqualTo(new Row(300, 1, encoded(message(300, 200, T0)), encoded(message(300, 200, T0))));
  }

  private static int encoded(Message m) {
    return MessageCodec.encode(m).length;
  }

  @Test
  void everyReadAgreesWithTheMessagesAppendedWhereverTheHeadIs(TestInfo test) throws Exception {
    DurableQueueStore q = open(test).queues();
    q.createQueue(QueueConfig.durable("q").build());
    Random random = new Random(42);
    List<Message> appended = new ArrayList<>();
    while (appended.size() < 600) {
      int n = 1 + random.nextInt(random.nextBoolean() ? 3 : 120);
      List<Message> batch = new ArrayList<>();
      for (int j = 0; j < n; j++) {
        int i = appended.size() + j;
        int size =
            random.nextInt(20) == 0 ? 9_000 : random.nextInt(random.nextBoolean() ? 60 : 900);
        Instant created = random.nextInt(8) == 0 ? null : T0.plusSeconds(random.nextInt(600));
        batch.add(message(i, size, created));
      }
      long first = n == 1 ? q.append("q", batch.get(0)) : q.appendBatch("q", batch);
      assertThat(first).isEqualTo(appended.size());
      appended.addAll(batch);
    }
    int tail = appended.size();
    assertThat(rows("q").size()).as("runs were written").isLessThan(tail / 4);

    long head = 0;
    while (true) {
      assertThat(q.head("q")).isEqualTo(head);
      checkReads(q, appended, head, tail, random);
      if (head == tail) {
        break;
      }
      head = Math.min(tail, head + 1 + random.nextInt(70)); // mostly inside a run
      q.truncate("q", head);
      for (Row r : rows("q")) {
        assertThat(r.off() + r.runLength())
            .as("truncation deletes the rows wholly below the head, and only those")
            .isGreaterThan(head);
      }
    }
    assertThat(rows("q")).isEmpty();
  }

  private static void checkReads(
      DurableQueueStore q, List<Message> appended, long head, int tail, Random random) {
    for (long o = head; o < tail; o++) {
      assertThat(q.read("q", o)).isEqualTo(appended.get((int) o).withOffset(o));
    }
    if (head > 0) {
      assertThatThrownBy(() -> q.read("q", head - 1)).isInstanceOf(OffsetOutOfRangeException.class);
    }
    assertThatThrownBy(() -> q.read("q", tail)).isInstanceOf(OffsetOutOfRangeException.class);
    for (int k = 0; k < 20; k++) {
      long start = random.nextInt(tail + 5);
      int limit = 1 + random.nextInt(random.nextBoolean() ? 5 : 400);
      List<Message> expected = new ArrayList<>();
      for (long o = Math.max(start, head); o < tail && expected.size() < limit; o++) {
        expected.add(appended.get((int) o).withOffset(o));
      }
      assertThat(q.readBatch("q", start, limit))
          .as("readBatch(%d, %d) with head %d", start, limit, head)
          .containsExactlyElementsOf(expected);
    }
    long retained = 0;
    for (long o = head; o < tail; o++) {
      retained += encoded(appended.get((int) o));
    }
    assertThat(q.bytes("q")).as("bytes with head %d", head).hasValue(retained);
    for (int k = 0; k < 10; k++) {
      long budget = k == 0 ? retained : k == 1 ? 0 : random.nextLong(retained + 2);
      long expected = tail;
      long suffix = 0;
      for (long o = tail - 1; o >= head; o--) {
        suffix += encoded(appended.get((int) o));
        if (suffix > budget) {
          break;
        }
        expected = o;
      }
      assertThat(q.sizeOffset("q", budget))
          .as("sizeOffset(%d) with head %d", budget, head)
          .hasValue(expected);
    }
    for (int k = 0; k < 10; k++) {
      Instant t = T0.plusSeconds(random.nextInt(620)).plusNanos(k == 0 ? 0 : 1);
      long expected = tail;
      for (long o = head; o < tail; o++) {
        Instant created = appended.get((int) o).createdAt();
        if (created != null && !created.isBefore(t)) {
          expected = o;
          break;
        }
      }
      assertThat(q.timeOffset("q", t))
          .as("timeOffset(%s) with head %d", t, head)
          .hasValue(expected);
    }
  }

  @Test
  void aVersionFourStoreMigratesItsRowsStayReadableAndAnOlderReadOnlyViewRefusesARun(TestInfo test)
      throws Exception {
    schema = "r_" + Integer.toHexString(test.getDisplayName().hashCode() & 0x7fffffff);
    try (PostgresTestDatabase db = PostgresTestDatabase.create()) {
      Map<String, String> config = PostgresFixtureGenerator.restoreAtVersion(db, 4);
      try (Storage before = QueueStores.provider("postgres").openReadOnly(config)) {
        String queue = FixtureContent.ORDERS;
        List<Message> old = before.queues().readBatch(queue, 0, 1_000);
        assertThat(old).isNotEmpty();
        try (Storage s = QueueStores.open("postgres", config)) {
          assertThat(s.queues().readBatch(queue, 0, 1_000))
              .as("rows of version 4 read the same after the migration")
              .isEqualTo(old);
          List<Message> batch = new ArrayList<>();
          for (int i = 0; i < 20; i++) {
            batch.add(message(i, 100, T0.plus(Duration.ofSeconds(i))));
          }
          long first = s.queues().appendBatch(queue, batch);
          assertThat(s.queues().read(queue, first + 7))
              .isEqualTo(batch.get(7).withOffset(first + 7));
          long oldest = old.get(0).offset();
          assertThat(before.queues().read(queue, oldest))
              .as("the view still reads the rows of one message")
              .isEqualTo(old.get(0));
          assertThatThrownBy(() -> before.queues().read(queue, first))
              .isInstanceOf(QueueStoreException.class)
              .hasMessageContaining("holds several messages")
              .hasMessageContaining("reopen it");
        }
        try (Storage after = QueueStores.provider("postgres").openReadOnly(config)) {
          assertThat(after.queues().readBatch(queue, 0, 1_000)).hasSizeGreaterThan(old.size());
        }
      }
    }
  }
}
