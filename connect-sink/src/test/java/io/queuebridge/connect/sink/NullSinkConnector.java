package io.queuebridge.connect.sink;

import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/**
 * A sink connector whose tasks take every record and keep nothing: {@link SinkThroughputBenchmark}
 * times it as the framework's ceiling, what the worker alone (consumer, converters, {@link
 * SinkRecord}s, offset commits) allows any sink with the same converters. A benchmark reference,
 * not a product: it lives in the test sources only.
 */
public final class NullSinkConnector extends SinkConnector {
  private Map<String, String> props;

  @Override
  public void start(Map<String, String> props) {
    this.props = props;
  }

  @Override
  public Class<? extends Task> taskClass() {
    return NullSinkTask.class;
  }

  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    return Collections.nCopies(maxTasks, props);
  }

  @Override
  public void stop() {}

  @Override
  public ConfigDef config() {
    return new ConfigDef();
  }

  @Override
  public String version() {
    return "bench";
  }

  /** Drops the records it is given; the default {@code preCommit} commits what was consumed. */
  public static final class NullSinkTask extends SinkTask {
    @Override
    public void start(Map<String, String> props) {}

    @Override
    public void put(Collection<SinkRecord> batch) {}

    @Override
    public void stop() {}

    @Override
    public String version() {
      return "bench";
    }
  }
}
