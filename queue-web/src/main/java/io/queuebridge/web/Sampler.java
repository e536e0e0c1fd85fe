package io.queuebridge.web;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples every queue of every store at a fixed interval, while the console runs, for the charts:
 * depth, tail (for the publish rate), the sum of its groups' committed offsets (for the ack rate)
 * and the largest group lag. Keeps the samples of the configured history and drops older ones.
 * Nothing is stored: a restarted console starts with an empty history.
 */
final class Sampler implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Sampler.class);

  /** One queue at one sample. */
  record Point(long messages, long tail, long committed, long lag) {}

  /** One sample of every queue: when, and each queue's point by {@code store + "\n" + queue}. */
  private record Round(long atMs, Map<String, Point> points) {}

  private final Bridge bridge;
  private final Clock clock;
  private final Duration interval;
  private final int kept;
  private final ArrayDeque<Round> rounds = new ArrayDeque<>();
  private final Map<String, String> failures = new ConcurrentHashMap<>();
  private final ScheduledExecutorService executor;

  Sampler(Bridge bridge, Clock clock, Duration interval, int kept) {
    this.bridge = bridge;
    this.clock = clock;
    this.interval = interval;
    this.kept = kept;
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "queue-bridge-console-sampler");
              t.setDaemon(true);
              return t;
            });
  }

  /** Samples now, then every interval. */
  void start() {
    executor.scheduleWithFixedDelay(
        this::sampleSafely, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void sampleSafely() {
    try {
      sample();
    } catch (RuntimeException e) {
      LOG.warn("console sample failed: {}", e.getMessage());
    }
  }

  /** Takes one sample of every store now; a store that cannot be read is noted, not fatal. */
  void sample() {
    long at = clock.millis();
    Map<String, Point> points = new LinkedHashMap<>();
    for (Bridge.Store store : bridge.stores()) {
      try {
        for (JsonNode q : bridge.json(store, "queues")) {
          String name = q.get("name").asText();
          JsonNode d = bridge.json(store, "describe", name);
          long committed = 0;
          long lag = 0;
          for (JsonNode g : d.get("groups")) {
            committed += g.get("committed").asLong();
            lag = Math.max(lag, g.get("lag").asLong());
          }
          points.put(
              store.id() + "\n" + name,
              new Point(d.get("messages").asLong(), d.get("tail").asLong(), committed, lag));
        }
        failures.remove(store.id());
      } catch (RuntimeException e) {
        failures.put(store.id(), e.getMessage());
      }
    }
    synchronized (rounds) {
      rounds.addLast(new Round(at, points));
      while (rounds.size() > kept) {
        rounds.removeFirst();
      }
    }
  }

  /** Why the last sample of {@code storeId} failed; null when it did not. */
  String failure(String storeId) {
    return failures.get(storeId);
  }

  Duration interval() {
    return interval;
  }

  /**
   * The chart's series for one queue ({@code queue} non-null), every queue of one store ({@code
   * storeId} non-null), or every queue (both null): per sample its time in seconds, the depth
   * (summed), the publish and ack rates (messages per second since the sample before, summed over
   * the queues sampled both times; null for the first sample, and a queue whose offset went back
   * counts nothing), and the largest group lag.
   */
  Map<String, Object> series(String storeId, String queue) {
    List<Round> copy;
    synchronized (rounds) {
      copy = new ArrayList<>(rounds);
    }
    List<Object> times = new ArrayList<>();
    List<Object> depth = new ArrayList<>();
    List<Object> publish = new ArrayList<>();
    List<Object> acks = new ArrayList<>();
    List<Object> lag = new ArrayList<>();
    Round before = null;
    for (Round r : copy) {
      long messages = 0;
      long largestLag = 0;
      double published = 0;
      double acked = 0;
      boolean any = false;
      boolean rated = false;
      double seconds = before == null ? 0 : (r.atMs() - before.atMs()) / 1000.0;
      for (Map.Entry<String, Point> e : r.points().entrySet()) {
        if (!matches(e.getKey(), storeId, queue)) {
          continue;
        }
        Point p = e.getValue();
        any = true;
        messages += p.messages();
        largestLag = Math.max(largestLag, p.lag());
        Point b = before == null ? null : before.points().get(e.getKey());
        if (b != null && seconds > 0) {
          rated = true;
          published += Math.max(0, p.tail() - b.tail()) / seconds;
          acked += Math.max(0, p.committed() - b.committed()) / seconds;
        }
      }
      times.add(r.atMs() / 1000.0);
      depth.add(any ? messages : null);
      lag.add(any ? largestLag : null);
      publish.add(rated ? Math.round(published * 10) / 10.0 : null);
      acks.add(rated ? Math.round(acked * 10) / 10.0 : null);
      before = r;
    }
    Map<String, Object> series = new LinkedHashMap<>();
    series.put("intervalSeconds", interval.toSeconds());
    series.put("kept", kept);
    series.put("data", List.of(times, depth, publish, acks, lag));
    return series;
  }

  private static boolean matches(String key, String storeId, String queue) {
    if (storeId == null) {
      return true;
    }
    return queue == null ? key.startsWith(storeId + "\n") : key.equals(storeId + "\n" + queue);
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
