package io.queuebridge.examples.quickstart;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * The quickstart's sample orders: every shape a byte-exact bridge must keep, in a fixed,
 * reproducible sequence. Record {@code i} (from 0) goes to partition {@code i % partitions} with
 * create-time {@code baseTimestamp + i * 1000}; among them:
 *
 * <ul>
 *   <li>plain orders: key {@code order-<n>}, a JSON value, headers {@code source} and {@code
 *       trace-id};
 *   <li>every 4th (i = 3, 7, ...): a repeated header {@code tag} (two values, order matters);
 *   <li>i = 2: a <b>tombstone</b> (key {@code order-1}, null value);
 *   <li>i = 4: <b>no key</b>;
 *   <li>i = 5: a header with a <b>null value</b> and one with raw non-UTF-8 bytes.
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
public final class SampleRecords {
  /** The fewest records that hold every shape above. */
  public static final int MIN_RECORDS = 6;

  private SampleRecords() {}

  /**
   * The first {@code count} sample records for {@code topic}.
   *
   * @throws IllegalArgumentException if {@code count < MIN_RECORDS} or {@code partitions < 1}
   */
  public static List<ProducerRecord<byte[], byte[]>> build(
      String topic, int count, int partitions, long baseTimestamp) {
    if (count < MIN_RECORDS) {
      throw new IllegalArgumentException(
          "sample record count must be at least " + MIN_RECORDS + ": " + count);
    }
    if (partitions < 1) {
      throw new IllegalArgumentException("partitions must be at least 1: " + partitions);
    }
    List<ProducerRecord<byte[], byte[]>> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      out.add(record(topic, i, partitions, baseTimestamp));
    }
    return out;
  }

  /** Sample record number {@code i} (see the class comment). */
  public static ProducerRecord<byte[], byte[]> record(
      String topic, int i, int partitions, long baseTimestamp) {
    int order = i + 1;
    byte[] key = i == 4 ? null : utf8(i == 2 ? "order-1" : "order-" + order);
    byte[] value =
        i == 2
            ? null
            : utf8(
                "{\"order\":"
                    + order
                    + ",\"item\":\""
                    + ITEMS[i % ITEMS.length]
                    + "\",\"qty\":"
                    + (1 + i % 5)
                    + "}");
    ProducerRecord<byte[], byte[]> r =
        new ProducerRecord<>(topic, i % partitions, baseTimestamp + i * 1000L, key, value);
    r.headers().add(new RecordHeader("source", utf8("quickstart")));
    r.headers().add(new RecordHeader("trace-id", utf8(String.format("%016x", 0x5eedL * order))));
    if (i % 4 == 3) {
      r.headers().add(new RecordHeader("tag", utf8("priority")));
      r.headers().add(new RecordHeader("tag", utf8("gift")));
    }
    if (i == 5) {
      r.headers().add(new RecordHeader("empty", (byte[]) null));
      r.headers().add(new RecordHeader("raw", new byte[] {0, (byte) 0xff, (byte) 0xfe, 7}));
    }
    return r;
  }

  private static final String[] ITEMS = {"coffee", "tea", "bagel", "juice", "muffin", "water"};

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
