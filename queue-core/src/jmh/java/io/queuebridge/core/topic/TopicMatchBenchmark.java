package io.queuebridge.core.topic;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * {@link TopicFilters#matches} (index walking, allocation-free) against the reference measured in
 * the same run: the split-based {@link SplitTopicMatcher} from the tests.
 *
 * <p>Run: {@code mvn -B -ntp -Pbench -pl queue-core test-compile exec:exec
 * -Djmh.args="TopicMatchBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc"}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class TopicMatchBenchmark {
  static final String TOPIC = "site3/device7/sensors/temp";

  /** Which filter to match against the topic (the {@code $} case uses {@code $SYS/…}). */
  @Param({"exact", "plus", "hash", "missFirst", "missLast", "dollar"})
  public String shape;

  private String filter;
  private String topic;

  @Setup(Level.Trial)
  public void setUp() {
    topic = TOPIC;
    switch (shape) {
      case "exact" -> filter = new String(TOPIC.toCharArray()); // equal, not the same instance
      case "plus" -> filter = "site3/+/sensors/+";
      case "hash" -> filter = "site3/device7/#";
      case "missFirst" -> filter = "site4/+/sensors/temp";
      case "missLast" -> filter = "site3/device7/sensors/humidity";
      case "dollar" -> {
        filter = "#";
        topic = "$SYS/monitor/Clients";
      }
      default -> throw new IllegalArgumentException(shape);
    }
    if (TopicFilters.matches(filter, topic) != SplitTopicMatcher.matches(filter, topic)) {
      throw new IllegalStateException("implementations disagree on " + shape);
    }
  }

  @Benchmark
  public boolean matches() {
    return TopicFilters.matches(filter, topic);
  }

  @Benchmark
  public boolean splitReference() {
    return SplitTopicMatcher.matches(filter, topic);
  }
}
