package io.queuebridge.connect.sink;

import static io.queuebridge.connect.sink.SinkFixture.records;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ErrantRecordsTest {
  private static final TopicPartition TP0 = new TopicPartition("in", 0);

  @TempDir Path dir;
  private SinkFixture fixture;
  private final List<SinkRecord> reported = new ArrayList<>();
  private final ErrantRecordReporter reporter =
      (record, error) -> {
        reported.add(record);
        return CompletableFuture.completedFuture(null);
      };

  @BeforeEach
  void open() {
    fixture = new SinkFixture(dir);
  }

  @AfterEach
  void close() {
    fixture.close();
  }

  @Test
  void theReporterIsAskedForOnlyUnderTolerance() {
    FakeSinkTaskContext context = new FakeSinkTaskContext(fixture.pluginMetrics, TP0);
    context.reporter = reporter;
    assertThat(ErrantRecords.reporter(context, false)).isNull();
    assertThat(ErrantRecords.reporter(context, true)).isSameAs(reporter);
  }

  @Test
  void withoutAReporterAnErrantRecordFailsTheTaskNamingIt() {
    ErrantRecords errant = new ErrantRecords(null, fixture.sinkMetrics);
    SinkRecord record = records(TP0, 41, 42).get(0);
    assertThatThrownBy(() -> errant.report(record, new DataException("unconvertible")))
        .isInstanceOf(ConnectException.class)
        .hasMessageStartingWith("cannot write record in-0@41: unconvertible")
        .hasMessageContaining("errors.deadletterqueue.topic.name")
        .hasCauseInstanceOf(DataException.class);
    assertThat(fixture.metric("records-errant-total")).isEqualTo(0.0);
  }

  @Test
  void aMessageThatNamesTheRecordAlreadyIsNotPrefixedTwice() {
    ErrantRecords errant = new ErrantRecords(null, fixture.sinkMetrics);
    SinkRecord record = records(TP0, 41, 42).get(0);
    assertThatThrownBy(
            () -> errant.report(record, new DataException("record in-0@41: header 'h' is bad")))
        .hasMessageStartingWith("cannot write record in-0@41: header 'h' is bad (set");
    assertThatThrownBy(
            () -> errant.report(record, new DataException("record in-0@4 is not this one")))
        .hasMessageStartingWith("cannot write record in-0@41: record in-0@4 is not this one");
  }

  @Test
  void aReportedRecordIsCountedAndAwaited() {
    ErrantRecords errant = new ErrantRecords(reporter, fixture.sinkMetrics);
    List<Future<Void>> futures = new ArrayList<>();
    for (SinkRecord record : records(TP0, 0, 2)) {
      futures.add(errant.report(record, new DataException("bad")));
    }
    ErrantRecords.awaitAll(futures);
    assertThat(reported).hasSize(2);
    assertThat(fixture.metric("records-errant-total")).isEqualTo(2.0);
  }

  @Test
  void aReportThatFailedFailsTheTask() {
    CompletableFuture<Void> failed = CompletableFuture.failedFuture(new IllegalStateException("x"));
    assertThatThrownBy(() -> ErrantRecords.awaitAll(List.of(failed)))
        .isInstanceOf(ConnectException.class)
        .hasMessage("could not report an errant record")
        .hasCauseInstanceOf(IllegalStateException.class);
  }
}
