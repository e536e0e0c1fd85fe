package io.queuebridge.core.topic;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
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
 * {@link TopicIndex#findMatching} (the two-half trie) against the reference measured in the same
 * run: a linear scan of the same patterns with {@link TopicFilters#matches}, for a topic that
 * matches a few patterns and one that matches none.
 *
 * <p>Patterns model a device fleet, {@code site/device/kind/metric/aggregate}, 2–5 levels: the
 * device and metric levels are {@code +} a quarter of the time, one pattern in seven ends in {@code
 * #} after at least three levels, and one in twenty lives under {@code $queue/}. The non-matching
 * topic shares the first two levels with many patterns, so the trie walks two levels (literal and
 * {@code +} branches) before giving up.
 *
 * <p>Run: {@code mvn -B -ntp -Pbench -pl queue-core test-compile exec:exec
 * -Djmh.args="TopicIndexBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc"}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class TopicIndexBenchmark {
  static final String[] KINDS = {"sensors", "events", "status", "cmd"};
  static final String[] METRICS = {"temp", "humidity", "co2", "power", "door"};
  static final String[] AGGREGATES = {"raw", "avg", "max"};

  @Param({"32", "512", "10000"})
  public int patterns;

  private TopicIndex index;
  private String[] filters;
  private String[] queues;
  private String matchingTopic;
  private String nonMatchingTopic;

  @Setup(Level.Trial)
  public void setUp() {
    Random random = new Random(7);
    filters = new String[patterns];
    queues = new String[patterns];
    // a few patterns guaranteed to match the matching topic
    filters[0] = "site3/device7/sensors/temp";
    filters[1] = "site3/+/sensors/#";
    filters[2] = "site3/device7/sensors/+";
    for (int i = 3; i < patterns; i++) {
      filters[i] = randomPattern(random);
    }
    index = new TopicIndex();
    for (int i = 0; i < patterns; i++) {
      queues[i] = "queue-" + i;
      index.addQueue(queues[i], List.of(filters[i]));
    }
    matchingTopic = "site3/device7/sensors/temp";
    nonMatchingTopic = "site3/device7/diagnostics/temp";

    int matches = linear(matchingTopic).size();
    if (matches < 3 || !linear(nonMatchingTopic).isEmpty()) {
      throw new IllegalStateException("fixture broken: " + matches + " matches");
    }
    for (String topic : List.of(matchingTopic, nonMatchingTopic)) {
      if (!new HashSet<>(index.findMatching(topic)).equals(new HashSet<>(linear(topic)))) {
        throw new IllegalStateException("trie and linear scan disagree on " + topic);
      }
    }
    System.out.println("patterns=" + patterns + " queues matching the matching topic=" + matches);
  }

  static String randomPattern(Random random) {
    String[] levels = {
      "site" + random.nextInt(16),
      random.nextInt(4) == 0 ? "+" : "device" + random.nextInt(64),
      KINDS[random.nextInt(KINDS.length)],
      random.nextInt(4) == 0 ? "+" : METRICS[random.nextInt(METRICS.length)],
      AGGREGATES[random.nextInt(AGGREGATES.length)]
    };
    int depth = 2 + random.nextInt(4); // 2..5
    boolean hash = depth >= 4 && random.nextInt(7) == 0;
    StringBuilder sb = new StringBuilder();
    if (random.nextInt(20) == 0) {
      sb.append("$queue/");
    }
    int literalLevels = hash ? depth - 1 : depth;
    for (int i = 0; i < literalLevels; i++) {
      sb.append(i == 0 ? "" : "/").append(levels[i]);
    }
    if (hash) {
      sb.append("/#");
    }
    return sb.toString();
  }

  private List<String> linear(String topic) {
    List<String> out = null;
    String[] f = filters;
    for (int i = 0; i < f.length; i++) {
      if (TopicFilters.matches(f[i], topic)) {
        if (out == null) {
          out = new ArrayList<>();
        }
        out.add(queues[i]);
      }
    }
    return out == null ? List.of() : out;
  }

  @Benchmark
  public List<String> trieMatch() {
    return index.findMatching(matchingTopic);
  }

  @Benchmark
  public List<String> trieNoMatch() {
    return index.findMatching(nonMatchingTopic);
  }

  @Benchmark
  public List<String> linearMatch() {
    return linear(matchingTopic);
  }

  @Benchmark
  public List<String> linearNoMatch() {
    return linear(nonMatchingTopic);
  }
}
