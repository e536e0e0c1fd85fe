package io.queuebridge.cli;

/**
 * One row of {@code lag}: how far one hop has got in one partition of what it reads. Null is "not
 * available" ({@code -} in the table): no committed offset or watermark yet, no {@code
 * --connect-url}, a stream that does not exist (yet).
 *
 * <p>A sink row: {@code from} is a Kafka topic and {@code partition} one of its partitions, {@code
 * to} the stream, {@code end} the partition's log-end offset, {@code committed} the offset the
 * sink's consumer group committed, {@code watermark} the next offset of the partition the stream
 * holds (stored atomically with the records: where the sink resumes).
 *
 * <p>A source row: {@code from} is a stream ({@code partition} null), {@code to} the target topic
 * (or topic template), {@code end} the stream's tail, {@code committed} the committed offset of the
 * source's stream group in the store, {@code watermark} the offset Connect stores for the source
 * (where a restart resumes; under exactly-once support committed with the records).
 *
 * @param hop {@code sink} or {@code source}
 * @param connector the connector's name
 * @param state the connector's state on the Connect worker; {@code absent} when it knows none
 * @param group the consumer group whose offset {@code committed} is: a Kafka consumer group for a
 *     sink, a stream group in the store for a source
 * @param from the topic or stream read
 * @param partition the topic's partition; null for a stream
 * @param to where the hop writes
 * @param end the offset the next record or message will get
 * @param committed the group's committed offset
 * @param committedLag {@code end - committed}
 * @param watermark the position stored with what the hop wrote
 * @param watermarkLag {@code end - watermark}
 */
record LagRow(
    String hop,
    String connector,
    String state,
    String group,
    String from,
    Integer partition,
    String to,
    Long end,
    Long committed,
    Long committedLag,
    Long watermark,
    Long watermarkLag) {

  static final String SINK = "sink";
  static final String SOURCE = "source";

  /** The state of a connector the worker does not know. */
  static final String ABSENT = "absent";

  static final String[] COLUMNS = {
    "HOP",
    "CONNECTOR",
    "STATE",
    "FROM",
    "PARTITION",
    "TO",
    "END",
    "COMMITTED",
    "COMMITTED-LAG",
    "WATERMARK",
    "WATERMARK-LAG"
  };

  static LagRow of(
      String hop,
      String connector,
      String state,
      String group,
      String from,
      Integer partition,
      String to,
      Long end,
      Long committed,
      Long watermark) {
    return new LagRow(
        hop,
        connector,
        state,
        group,
        from,
        partition,
        to,
        end,
        committed,
        lag(end, committed),
        watermark,
        lag(end, watermark));
  }

  /**
   * {@code end - position}, null when either is unknown. Not clamped: a negative lag says the
   * position is past the end (the topic or the stream was deleted and created again).
   */
  static Long lag(Long end, Long position) {
    return end == null || position == null ? null : end - position;
  }

  Object[] cells() {
    return new Object[] {
      hop,
      Text.orNone(connector),
      Text.orNone(state),
      from,
      Text.orNone(partition),
      Text.orNone(to),
      Text.orNone(end),
      Text.orNone(committed),
      Text.orNone(committedLag),
      Text.orNone(watermark),
      Text.orNone(watermarkLag)
    };
  }
}
