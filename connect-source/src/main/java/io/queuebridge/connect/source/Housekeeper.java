package io.queuebridge.connect.source;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task's one background thread: it acknowledges what Kafka accepted, renews in-flight claims,
 * keeps the task's group memberships alive and writes stream progress to the groups.
 *
 * <p>Why a thread: {@code commitRecord} runs on the producer's network thread (without
 * exactly-once) and must not do store I/O or wait for the group engine's lock there; it only hands
 * the delivery over ({@link Settler#settle}). Renewals must happen on a clock, whatever Connect is
 * doing.
 *
 * <p><b>Schedule.</b> Settlements as they arrive; renewals every {@code renewInterval} for claims
 * at least that old; heartbeats every {@code heartbeatInterval}; stream progress every {@code
 * commitInterval}.
 *
 * <p><b>Failures</b> (a store error while settling, renewing, heartbeating or committing) are
 * handed to {@code onFailure} (the task rethrows them from its next {@code poll}); the thread keeps
 * running, so a transient failure heals. A settlement that fails stays unacknowledged: the message
 * is redelivered after its visibility timeout.
 *
 * <p><b>Close</b> settles what was handed over, writes the last stream progress, and stops.
 *
 * <p>Thread-safe.
 */
final class Housekeeper implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Housekeeper.class);

  /** Receives deliveries to acknowledge; safe to call from any thread. */
  interface Settler {
    void settle(ClassicReader reader, ClassicReader.Pending pending);
  }

  private record Settlement(ClassicReader reader, ClassicReader.Pending pending) {}

  private static final Settlement STOP = new Settlement(null, null);

  private final List<QueueReader> readers;
  private final long renewNanos;
  private final long heartbeatNanos;
  private final long commitNanos;
  private final Consumer<Throwable> onFailure;
  private final LinkedBlockingQueue<Settlement> settlements = new LinkedBlockingQueue<>();
  private final Thread thread;
  private volatile boolean closed;

  /**
   * @param renewInterval how often claims are renewed; null when there are no classic queues
   */
  Housekeeper(
      String name,
      List<QueueReader> readers,
      Duration renewInterval,
      Duration heartbeatInterval,
      Duration commitInterval,
      Consumer<Throwable> onFailure) {
    this.readers = List.copyOf(readers);
    this.renewNanos = renewInterval == null ? Long.MAX_VALUE : renewInterval.toNanos();
    this.heartbeatNanos = heartbeatInterval.toNanos();
    this.commitNanos = commitInterval.toNanos();
    this.onFailure = onFailure;
    this.thread = new Thread(this::run, name);
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** Hands a delivery Kafka accepted over for acknowledgement; any thread, never blocks. */
  void settle(ClassicReader reader, ClassicReader.Pending pending) {
    if (closed) {
      reader.release(pending);
      log.debug(
          "Queue '{}' offset {} accepted by Kafka after the task stopped; it stays claimed and"
              + " is redelivered after its visibility timeout",
          reader.queue,
          pending.delivery.offset());
      return;
    }
    settlements.add(new Settlement(reader, pending));
  }

  private void run() {
    long now = System.nanoTime();
    boolean renewing = renewNanos != Long.MAX_VALUE;
    long nextRenew = renewing ? now + renewNanos : now;
    long nextHeartbeat = now + heartbeatNanos;
    long nextCommit = now + commitNanos;
    List<Settlement> batch = new ArrayList<>();
    boolean stopping = false;
    while (!stopping) {
      now = System.nanoTime();
      long wait = Math.min(nextHeartbeat - now, nextCommit - now);
      if (renewing) {
        wait = Math.min(wait, nextRenew - now);
      }
      wait = Math.max(0, wait);
      try {
        Settlement first = settlements.poll(wait, TimeUnit.NANOSECONDS);
        if (first != null) {
          batch.add(first);
          settlements.drainTo(batch);
        }
      } catch (InterruptedException e) {
        stopping = true;
      }
      Map<ClassicReader, List<ClassicReader.Pending>> accepted = new LinkedHashMap<>();
      for (Settlement s : batch) {
        if (s == STOP) {
          stopping = true;
        } else if (s.pending().poisonReason != null) {
          guarded("acknowledging", () -> s.reader().settle(s.pending()));
        } else {
          accepted.computeIfAbsent(s.reader(), r -> new ArrayList<>()).add(s.pending());
        }
      }
      // One batch acknowledgement (one locked section) per reader for what was drained together.
      accepted.forEach((r, ps) -> guarded("acknowledging", () -> r.acknowledgeAll(ps)));
      batch.clear();
      now = System.nanoTime();
      if (renewing && now - nextRenew >= 0) {
        long t = now;
        for (QueueReader r : readers) {
          guarded("renewing claims", () -> r.renew(t, renewNanos));
        }
        nextRenew = now + renewNanos;
      }
      if (now - nextHeartbeat >= 0) {
        for (QueueReader r : readers) {
          guarded("heartbeating", r::heartbeat);
        }
        nextHeartbeat = now + heartbeatNanos;
      }
      if (stopping || now - nextCommit >= 0) {
        for (QueueReader r : readers) {
          guarded("committing stream progress", r::flush);
        }
        nextCommit = now + commitNanos;
      }
    }
  }

  private void guarded(String what, Runnable action) {
    try {
      action.run();
    } catch (RuntimeException e) {
      if (SourceErrors.classify(e) == SourceErrors.Kind.GONE) {
        log.debug("{} skipped: the queue is gone", what, e); // the connector reconfigures the tasks
      } else if (closed) {
        log.debug("{} failed while the task stops", what, e);
      } else {
        log.warn("Background {} failed: {}", what, e.toString());
        onFailure.accept(SourceErrors.toConnect(what + " failed", e));
      }
    }
  }

  /**
   * Settles everything handed over so far, writes the last stream progress, and stops the thread,
   * waiting up to {@code timeout} for it.
   */
  @Override
  public void close() {
    close(Duration.ofSeconds(10));
  }

  void close(Duration timeout) {
    if (closed) {
      return;
    }
    closed = true;
    settlements.add(STOP);
    if (!thread.isAlive()) {
      return;
    }
    try {
      thread.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      log.warn("Housekeeping thread {} did not stop within {}", thread.getName(), timeout);
      thread.interrupt();
    }
  }
}
