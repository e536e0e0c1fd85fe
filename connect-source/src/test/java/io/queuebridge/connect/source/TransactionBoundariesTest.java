package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.TransactionContext;
import org.junit.jupiter.api.Test;

class TransactionBoundariesTest {
  private final List<String> requests = new ArrayList<>();
  private final TransactionContext context =
      new TransactionContext() {
        @Override
        public void commitTransaction() {
          requests.add("commit");
        }

        @Override
        public void commitTransaction(SourceRecord record) {
          requests.add("commit@" + record.sourceOffset().get("offset"));
        }

        @Override
        public void abortTransaction() {
          requests.add("abort");
        }

        @Override
        public void abortTransaction(SourceRecord record) {
          requests.add("abort@" + record);
        }
      };

  private static List<SourceRecord> batch(long from, int n) {
    List<SourceRecord> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(
          new SourceRecord(
              SourceOffsets.partition("q", "g"),
              SourceOffsets.offset(from + i + 1),
              "t",
              null,
              null));
    }
    return out;
  }

  @Test
  void commitsOnTheLastRecordOfTheBatchThatFillsATransaction() {
    TransactionBoundaries t = new TransactionBoundaries(context, 250);
    t.polled(batch(0, 100));
    t.polled(batch(100, 100));
    assertThat(requests).isEmpty();
    t.polled(batch(200, 100));
    assertThat(requests).containsExactly("commit@300");
  }

  @Test
  void commitsAnOpenTransactionWhenIdleAndNothingWhenNoneIsOpen() {
    TransactionBoundaries t = new TransactionBoundaries(context, 1_000);
    assertThat(t.idle()).isFalse();
    t.polled(batch(0, 10));
    assertThat(t.idle()).isTrue();
    assertThat(t.idle()).isFalse();
    assertThat(requests).containsExactly("commit");
  }

  @Test
  void withoutAContextNothingIsRequested() {
    TransactionBoundaries t = new TransactionBoundaries(null, 1);
    t.polled(batch(0, 5));
    assertThat(t.idle()).isFalse();
    assertThat(t.definesBoundaries()).isFalse();
    assertThat(requests).isEmpty();
  }
}
