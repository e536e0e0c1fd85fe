package io.queuebridge.connect.sink;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/**
 * A sink connector whose tasks do the least a durable sink can do: every record's coordinates
 * (topic, partition, Kafka offset, timestamp), key, value and headers are appended,
 * length-prefixed, to a file, and the file is fsynced before its offsets are committed. {@link
 * SinkThroughputBenchmark} times it beside the {@link NullSinkConnector} as the ceiling of a sink
 * that keeps what the Queue Bridge sink keeps with the same guarantee (every committed offset is on
 * disk). A benchmark reference, not a product: it lives in the test sources only.
 *
 * <p>Config: {@code file}, the path of the output (appended to; created if absent). With more than
 * one task, task {@code i} writes {@code <file>-<i>}.
 */
public final class DurableFileSinkConnector extends SinkConnector {
  /** The output file. */
  public static final String FILE_CONFIG = "file";

  private Map<String, String> props;

  @Override
  public void start(Map<String, String> props) {
    this.props = props;
  }

  @Override
  public Class<? extends Task> taskClass() {
    return DurableFileSinkTask.class;
  }

  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    List<Map<String, String>> configs = new ArrayList<>(maxTasks);
    for (int i = 0; i < maxTasks; i++) {
      Map<String, String> c = new HashMap<>(props);
      if (maxTasks > 1) {
        c.put(FILE_CONFIG, props.get(FILE_CONFIG) + "-" + i);
      }
      configs.add(c);
    }
    return configs;
  }

  @Override
  public void stop() {}

  @Override
  public ConfigDef config() {
    return new ConfigDef()
        .define(FILE_CONFIG, ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "The output file.");
  }

  @Override
  public String version() {
    return "bench";
  }

  /**
   * Appends each record to a 64 KiB heap buffer, writes the buffer to the file when it is full, and
   * on {@code flush} (the default {@code preCommit} calls it before the offsets are committed)
   * writes the rest and forces the file's data to disk.
   */
  public static final class DurableFileSinkTask extends SinkTask {
    private static final int BUFFER_BYTES = 64 * 1024;

    private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES);
    private FileChannel channel;
    private String lastTopic; // the topic's bytes are encoded once, not per record
    private byte[] lastTopicBytes;

    @Override
    public void start(Map<String, String> props) {
      String file = props.get(FILE_CONFIG);
      if (file == null || file.isEmpty()) {
        throw new ConnectException("'" + FILE_CONFIG + "' is not set");
      }
      try {
        channel =
            FileChannel.open(
                Path.of(file),
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE,
                StandardOpenOption.APPEND);
      } catch (IOException e) {
        throw new ConnectException("cannot open " + file, e);
      }
    }

    @Override
    public void put(Collection<SinkRecord> batch) {
      try {
        for (SinkRecord r : batch) {
          if (!r.topic().equals(lastTopic)) {
            lastTopic = r.topic();
            lastTopicBytes = lastTopic.getBytes(StandardCharsets.UTF_8);
          }
          putBytes(lastTopicBytes);
          room(Integer.BYTES + 2 * Long.BYTES);
          buffer.putInt(r.kafkaPartition() == null ? -1 : r.kafkaPartition());
          buffer.putLong(r.kafkaOffset());
          buffer.putLong(r.timestamp() == null ? Long.MIN_VALUE : r.timestamp());
          putBytes(bytes(r.key()));
          putBytes(bytes(r.value()));
          room(Integer.BYTES);
          buffer.putInt(r.headers().size());
          for (Header h : r.headers()) {
            putBytes(h.key().getBytes(StandardCharsets.UTF_8));
            putBytes(bytes(h.value()));
          }
        }
      } catch (IOException e) {
        throw new ConnectException("cannot write", e);
      }
    }

    @Override
    public void flush(Map<TopicPartition, OffsetAndMetadata> currentOffsets) {
      try {
        drain();
        channel.force(false);
      } catch (IOException e) {
        throw new ConnectException("cannot flush", e);
      }
    }

    @Override
    public void stop() {
      if (channel == null) {
        return;
      }
      try {
        try {
          drain();
        } finally {
          channel.close();
        }
      } catch (IOException e) {
        throw new ConnectException("cannot close", e);
      } finally {
        channel = null;
      }
    }

    @Override
    public String version() {
      return "bench";
    }

    private static byte[] bytes(Object o) {
      if (o == null || o instanceof byte[]) {
        return (byte[]) o;
      }
      return String.valueOf(o).getBytes(StandardCharsets.UTF_8);
    }

    /** A length (-1: null) and the bytes; bytes larger than the buffer go to the file directly. */
    private void putBytes(byte[] b) throws IOException {
      room(Integer.BYTES);
      if (b == null) {
        buffer.putInt(-1);
        return;
      }
      buffer.putInt(b.length);
      if (b.length <= buffer.remaining()) {
        buffer.put(b);
      } else if (b.length <= BUFFER_BYTES) {
        drain();
        buffer.put(b);
      } else {
        drain();
        write(ByteBuffer.wrap(b));
      }
    }

    /** Writes the buffer out first if fewer than {@code n} bytes are left in it. */
    private void room(int n) throws IOException {
      if (buffer.remaining() < n) {
        drain();
      }
    }

    private void drain() throws IOException {
      buffer.flip();
      write(buffer);
      buffer.clear();
    }

    private void write(ByteBuffer b) throws IOException {
      while (b.hasRemaining()) {
        channel.write(b);
      }
    }
  }
}
