package io.queuebridge.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.message.Header;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The quickstart's verdicts: each comparison must catch what it claims to check. */
class QuickstartComparisonTest {
  private static RecordSnapshot rec(
      int partition, long offset, long ts, String key, String value, List<Header> headers) {
    return new RecordSnapshot(
        "orders",
        partition,
        offset,
        offset,
        ts,
        key == null ? null : key.getBytes(StandardCharsets.UTF_8),
        value == null ? null : value.getBytes(StandardCharsets.UTF_8),
        headers);
  }

  private static final List<RecordSnapshot> PRODUCED =
      List.of(
          rec(0, 0, 1000, "a", "1", List.of(Header.of("h", "x"), Header.of("h", "y"))),
          rec(1, 0, 2000, "b", null, List.of()),
          rec(0, 1, 3000, null, "3", List.of(Header.of("n", (byte[]) null))));

  private static RecordSnapshot moved(RecordSnapshot r, String topic, long offset) {
    return new RecordSnapshot(
        topic, r.partition(), offset, offset, r.timestamp(), r.key(), r.value(), r.headers());
  }

  @Test
  void restoredIdenticalRecordsPass() {
    List<RecordSnapshot> restored = new ArrayList<>();
    restored.add(moved(PRODUCED.get(0), "orders-restored", 0));
    restored.add(moved(PRODUCED.get(1), "orders-restored", 0));
    restored.add(moved(PRODUCED.get(2), "orders-restored", 1));
    assertThat(QuickstartRun.compareRestored(PRODUCED, restored)).isEmpty();
  }

  @Test
  void restoreCatchesHeaderOrderTimestampPartitionOrderMissingAndExtra() {
    RecordSnapshot a = PRODUCED.get(0);
    RecordSnapshot swappedHeaders =
        new RecordSnapshot(
            "r",
            0,
            0,
            0,
            a.timestamp(),
            a.key(),
            a.value(),
            List.of(Header.of("h", "y"), Header.of("h", "x")));
    assertThat(
            QuickstartRun.compareRestored(
                PRODUCED,
                List.of(
                    swappedHeaders,
                    moved(PRODUCED.get(1), "r", 0),
                    moved(PRODUCED.get(2), "r", 1))))
        .singleElement()
        .asString()
        .contains("headers");

    RecordSnapshot b = PRODUCED.get(1);
    RecordSnapshot otherTime = new RecordSnapshot("r", 1, 0, 0, 9, b.key(), b.value(), b.headers());
    assertThat(
            QuickstartRun.compareRestored(
                PRODUCED, List.of(moved(a, "r", 0), otherTime, moved(PRODUCED.get(2), "r", 1))))
        .singleElement()
        .asString()
        .contains("timestamp");

    // partition 0 in the wrong order
    assertThat(
            QuickstartRun.compareRestored(
                PRODUCED,
                List.of(moved(PRODUCED.get(2), "r", 0), moved(b, "r", 0), moved(a, "r", 1))))
        .hasSize(2);

    assertThat(QuickstartRun.compareRestored(PRODUCED, List.of(moved(a, "r", 0), moved(b, "r", 0))))
        .singleElement()
        .asString()
        .startsWith("missing in partition 0");
    assertThat(
            QuickstartRun.compareRestored(
                PRODUCED,
                List.of(
                    moved(a, "r", 0),
                    moved(b, "r", 0),
                    moved(PRODUCED.get(2), "r", 1),
                    moved(b, "r", 1))))
        .singleElement()
        .asString()
        .startsWith("extra record in partition 1");
  }

  @Test
  void replayCatchesAChangedTombstoneAndADuplicate() {
    RecordSnapshot b = PRODUCED.get(1);
    RecordSnapshot notATombstone =
        new RecordSnapshot("p", 0, 1, 1, 0, b.key(), new byte[0], b.headers());
    assertThat(
            QuickstartRun.compareReplayed(
                PRODUCED,
                List.of(
                    moved(PRODUCED.get(2), "p", 0), notATombstone, moved(PRODUCED.get(0), "p", 2))))
        .hasSize(2)
        .anySatisfy(p -> assertThat(p).startsWith("missing"))
        .anySatisfy(p -> assertThat(p).startsWith("extra"));
    assertThat(
            QuickstartRun.compareReplayed(
                PRODUCED,
                List.of(
                    moved(PRODUCED.get(2), "p", 0),
                    moved(b, "p", 1),
                    moved(PRODUCED.get(0), "p", 2),
                    moved(PRODUCED.get(0), "p", 3))))
        .singleElement()
        .asString()
        .startsWith("extra");
  }

  @Test
  void streamComparisonMatchesByKafkaCoordinatesAndCatchesDuplicatesAndGaps() {
    List<RecordSnapshot> stream = new ArrayList<>();
    for (int i = 0; i < PRODUCED.size(); i++) {
      RecordSnapshot r = PRODUCED.get(i);
      stream.add(
          new RecordSnapshot(
              "orders",
              r.partition(),
              r.offset(),
              i,
              r.timestamp(),
              r.key(),
              r.value(),
              r.headers()));
    }
    assertThat(QuickstartRun.compareStream(PRODUCED, stream)).isEmpty();

    List<RecordSnapshot> duplicated = new ArrayList<>(stream);
    duplicated.set(2, stream.get(0));
    assertThat(QuickstartRun.compareStream(PRODUCED, duplicated))
        .hasSize(2)
        .anySatisfy(p -> assertThat(p).contains("duplicates orders[0]@0"))
        .anySatisfy(p -> assertThat(p).startsWith("not in the stream"));
  }
}
