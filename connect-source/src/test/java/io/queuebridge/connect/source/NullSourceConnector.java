package io.queuebridge.connect.source;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/**
 * A source connector whose one task hands the worker {@value #RECORDS_CONFIG} ready-made records
 * (the values built once at start) and then nothing: {@link SourceThroughputBenchmark} times it as
 * the framework's ceiling, what the worker alone ({@link SourceRecord}s, converters, the producer,
 * offset commits) allows any source task with the same converters. A benchmark reference, not a
 * product: it lives in the test sources only.
 */
public final class NullSourceConnector extends SourceConnector {
  static final String TOPIC_CONFIG = "topic";
  static final String RECORDS_CONFIG = "null.records";
  static final String VALUE_BYTES_CONFIG = "null.value.bytes";
  static final String BATCH_CONFIG = "null.batch";

  private Map<String, String> props;

  /**
   * The {@code i}-th record's value: {@code bytes} ASCII characters (the harnesses' streams and
   * files hold the same lines). Here, so that the connector deployed alone on a worker needs no
   * other class.
   */
  static String line(int i, int bytes) {
    String head = String.format(Locale.ROOT, "line-%09d-", i);
    char[] pad = new char[bytes - head.length()];
    Arrays.fill(pad, (char) ('a' + i % 26));
    return head + new String(pad);
  }

  @Override
  public void start(Map<String, String> props) {
    this.props = props;
  }

  @Override
  public Class<? extends Task> taskClass() {
    return NullSourceTask.class;
  }

  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    return Collections.singletonList(props);
  }

  @Override
  public void stop() {}

  @Override
  public ConfigDef config() {
    return new ConfigDef();
  }

  @Override
  public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
    return ExactlyOnceSupport.SUPPORTED;
  }

  @Override
  public String version() {
    return "bench";
  }

  /**
   * Returns up to {@code null.batch} records a poll, each with its own source offset, as a source
   * of a stream does; after the last, polls park 100 ms and return nothing.
   */
  public static final class NullSourceTask extends SourceTask {
    private static final Map<String, String> PARTITION = Map.of("null", "bench");

    private String topic;
    private byte[][] values;
    private int batch;
    private int next;

    @Override
    public void start(Map<String, String> props) {
      topic = props.get(TOPIC_CONFIG);
      int records = Integer.parseInt(props.get(RECORDS_CONFIG));
      int bytes = Integer.parseInt(props.get(VALUE_BYTES_CONFIG));
      batch = Integer.parseInt(props.get(BATCH_CONFIG));
      values = new byte[records][];
      for (int i = 0; i < records; i++) {
        values[i] = line(i, bytes).getBytes(StandardCharsets.UTF_8);
      }
    }

    @Override
    public List<SourceRecord> poll() {
      if (next >= values.length) {
        LockSupport.parkNanos(100_000_000L);
        return null;
      }
      int end = Math.min(values.length, next + batch);
      List<SourceRecord> out = new ArrayList<>(end - next);
      for (; next < end; next++) {
        out.add(
            new SourceRecord(
                PARTITION,
                Map.of("offset", (long) next),
                topic,
                null,
                null,
                null,
                Schema.BYTES_SCHEMA,
                values[next]));
      }
      return out;
    }

    @Override
    public void stop() {}

    @Override
    public String version() {
      return "bench";
    }
  }
}
