package io.queuebridge.connect.source;

import io.queuebridge.connect.common.RetryBudget;
import io.queuebridge.connect.common.metrics.TaskMetrics;
import io.queuebridge.connect.source.QueueSourceConfig.ConsumerMode;
import io.queuebridge.core.QueueBridgeVersion;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.store.QueueStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the task's queues and hands their messages to Connect.
 *
 * <h2>Threads</h2>
 *
 * <ul>
 *   <li>The <b>poll thread</b> (Connect's task thread) reads: streams by offset, classic queues by
 *       claims ({@link StreamReader}, {@link ClassicReader}). When nothing is there it waits with
 *       the store's {@code awaitAppend} (one queue: for the whole {@code poll.timeout.ms}; several:
 *       in turns of at most {@value #WAIT_SLICE_MS} ms each), or for in-flight room, and returns
 *       {@code null} after {@code poll.timeout.ms}, so {@code poll()} always returns regularly.
 *   <li>{@code commitRecord} runs on the producer's callback thread (or, with exactly-once, on the
 *       task thread after the transaction committed). It only records progress: stream offsets in
 *       an {@link OffsetTracker}, classic deliveries handed to the housekeeper.
 *   <li>The {@link Housekeeper} thread acknowledges deliveries, renews claims, heartbeats, and
 *       writes stream progress to the groups. Its failures, and any store failure of the poll
 *       thread, surface from the next {@code poll()}: a {@link RetriableException} (after {@code
 *       queue.retry.backoff.ms}) for transient store errors, a {@link ConnectException} otherwise.
 *       Transient store errors in a row, with no successful read between them, are retried for
 *       {@code queue.retry.timeout.ms}; the first one after that fails the task with a {@link
 *       ConnectException} naming the store and the last error ({@link RetryBudget}).
 *   <li>{@link #stop()} wakes a poll blocked in a wait (workers before Kafka 4 call it from another
 *       thread; newer ones after the last poll) and waits for it to leave before releasing the
 *       store.
 * </ul>
 *
 * <h2>Acknowledgement</h2>
 *
 * Only in {@link #commitRecord}, never in {@link #commit()}: a classic-queue delivery is
 * acknowledged once Kafka accepted its record (or Connect dropped it: {@code metadata == null},
 * filtered by a transformation or skipped by {@code errors.tolerance}); a stream's group offset
 * moves to the contiguous prefix Kafka accepted. With exactly-once, Connect calls {@code
 * commitRecord} only after the transaction committed.
 */
public class QueueSourceTask extends SourceTask {
  private static final Logger log = LoggerFactory.getLogger(QueueSourceTask.class);

  /** The longest single wait on one queue when a task waits on several. */
  static final long WAIT_SLICE_MS = 20;

  private QueueSourceConfig config;
  private SharedStores.Lease lease;
  private QueueStore queues;
  private InFlight inFlight;
  private SourceMetrics metrics;
  private Housekeeper housekeeper;
  private TransactionBoundaries boundaries;
  private volatile List<QueueReader> readers = List.of();
  private final Map<String, QueueReader> byQueue = new ConcurrentHashMap<>();

  private final AtomicReference<ConnectException> backgroundFailure = new AtomicReference<>();
  private RuntimeException deferred;
  private RetryBudget retryBudget;
  private long backoffUntilNanos;
  private int rotation;

  private volatile boolean stopping;
  private boolean closed;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final ReentrantLock pollLock = new ReentrantLock();
  private final Object waitLock = new Object();
  private Thread waitingThread;

  @Override
  public String version() {
    return QueueBridgeVersion.get();
  }

  @Override
  public void start(Map<String, String> props) {
    config = new QueueSourceConfig(props);
    retryBudget = config.retryBudget(Clock.systemUTC());
    try {
      lease = config.acquireStore();
    } catch (RuntimeException e) {
      throw SourceErrors.toConnect("cannot open the store", e);
    }
    try {
      open();
    } catch (RuntimeException e) {
      release();
      throw SourceErrors.toConnect("cannot start reading " + config.taskQueues(), e);
    }
  }

  private void open() {
    queues = lease.storage().queues();
    var groups = lease.manager().consumerGroups();
    String consumerId = config.connectorName() + "-" + config.taskIndex();
    inFlight = new InFlight(config.maxPendingMessages(), config.maxPendingBytes());
    metrics =
        new SourceMetrics(
            TaskMetrics.forTask(
                context, SourceTaskContext.class, config.connectorName(), config.taskIndex()),
            this::lag,
            inFlight::count,
            inFlight::bytes);
    ReaderContext ctx =
        new ReaderContext(
            lease.manager(),
            queues,
            groups,
            config.group(),
            consumerId,
            new RecordFactory(
                TopicNamer.of(config),
                config.restoreMode(),
                config.kafkaDlqTopic(),
                config.deliverAtHeader()),
            inFlight,
            metrics,
            config.maxDeliveries(),
            config.toleratesErrors());
    TransactionContext tx = context.transactionContext();
    boundaries = new TransactionBoundaries(tx, config.transactionMaxRecords());

    Map<String, Long> stored = storedOffsets(config.taskQueues(), config.group());
    List<QueueReader> opened = new ArrayList<>();
    Duration minVisibility = null;
    String minVisibilityQueue = null;
    // the member must heartbeat well within the shortest consumer timeout of its queues
    Duration minConsumerTimeout = groups.settings().consumerTimeout();
    for (String queue : config.taskQueues()) {
      QueueConfig qc;
      try {
        qc = lease.manager().getQueue(queue);
      } catch (QueueNotFoundException e) {
        log.warn("Queue '{}' does not exist (any more); not reading it", queue);
        continue;
      }
      Duration consumerTimeout = groups.settings().consumerTimeout(qc);
      if (consumerTimeout.compareTo(minConsumerTimeout) < 0) {
        minConsumerTimeout = consumerTimeout;
      }
      QueueReader reader;
      if (qc.isStream()) {
        if (config.consumerMode() == ConsumerMode.SHARED) {
          throw new ConnectException(
              "queue '"
                  + queue
                  + "' is a stream, but consumer.mode=shared reads classic queues only (streams"
                  + " have no competing consumers); use consumer.mode=dedicated");
        }
        reader = StreamReader.open(ctx, queue, stored.get(queue), config);
      } else {
        ClassicReader c =
            ClassicReader.open(
                ctx, queue, stored.get(queue), config, (r, p) -> housekeeper.settle(r, p));
        if (minVisibility == null || c.visibility().compareTo(minVisibility) < 0) {
          minVisibility = c.visibility();
          minVisibilityQueue = queue;
        }
        reader = c;
      }
      opened.add(reader);
      byQueue.put(queue, reader);
    }
    Duration renew = null;
    if (minVisibility != null) {
      renew = renewInterval(minVisibility, minVisibilityQueue);
    }
    readers = List.copyOf(opened);
    housekeeper =
        new Housekeeper(
            "qb-source-" + consumerId,
            readers,
            renew,
            minConsumerTimeout.dividedBy(4),
            config.commitInterval(),
            this::backgroundFailed);
    housekeeper.start();
    log.info(
        "Source task {} reading {} queue(s) {} of store {} in group {}{}",
        consumerId,
        readers.size(),
        byQueue.keySet(),
        lease.storage().description(),
        config.group(),
        renew == null ? "" : ", renewing claims every " + renew);
  }

  private Duration renewInterval(Duration visibility, String queue) {
    Duration configured = config.claimRenewInterval();
    if (configured.isZero()) {
      Duration auto = visibility.dividedBy(4);
      return auto.isZero() ? Duration.ofMillis(1) : auto;
    }
    if (configured.compareTo(visibility.dividedBy(2)) >= 0) {
      throw new ConnectException(
          QueueSourceConfig.CLAIM_RENEW_INTERVAL_MS_CONFIG
              + "="
              + configured.toMillis()
              + " is not below half of the visibility timeout "
              + visibility
              + " of queue '"
              + queue
              + "': claims would lapse before they are renewed");
    }
    return configured;
  }

  /** Connect's stored next offset per queue; absent when none. */
  private Map<String, Long> storedOffsets(List<String> queueNames, String group) {
    OffsetStorageReader reader = context.offsetStorageReader();
    List<Map<String, String>> partitions = new ArrayList<>();
    for (String q : queueNames) {
      partitions.add(SourceOffsets.partition(q, group));
    }
    Map<String, Long> out = new HashMap<>();
    if (reader == null || partitions.isEmpty()) {
      return out;
    }
    Map<Map<String, String>, Map<String, Object>> offsets = reader.offsets(partitions);
    if (offsets == null) {
      return out;
    }
    offsets.forEach(
        (partition, offset) -> {
          if (offset != null) {
            out.put(SourceOffsets.queueOf(partition), SourceOffsets.nextOffset(partition, offset));
          }
        });
    return out;
  }

  private void backgroundFailed(Throwable e) {
    ConnectException c =
        e instanceof ConnectException ce
            ? ce
            : new ConnectException("background failure: " + e.getMessage(), e);
    backgroundFailure.compareAndSet(null, c);
  }

  // ------------------------------------------------------------------ poll

  @Override
  public List<SourceRecord> poll() throws InterruptedException {
    pollLock.lock();
    try {
      if (stopping) {
        return null;
      }
      throwPendingFailure();
      long now = System.nanoTime();
      if (now - backoffUntilNanos < 0) {
        long left = Math.min(backoffUntilNanos - now, config.pollTimeout().toNanos());
        stopped.await(left, TimeUnit.NANOSECONDS);
        return null;
      }
      long deadline = now + config.pollTimeout().toNanos();
      while (!stopping) {
        List<SourceRecord> out = pass();
        if (deferred == null) {
          retryBudget.succeeded(); // every queue was read
        }
        if (!out.isEmpty()) {
          boundaries.polled(out);
          metrics.polled(out.size());
          return out;
        }
        if (deferred != null) {
          throwPendingFailure();
        }
        if (boundaries.idle()) {
          return null; // let Connect commit the open transaction now
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return null;
        }
        idleWait(left);
      }
      return null;
    } catch (RuntimeException e) {
      throw failed(e);
    } finally {
      pollLock.unlock();
    }
  }

  private void throwPendingFailure() {
    RuntimeException e = deferred;
    deferred = null;
    if (e == null) {
      e = backgroundFailure.getAndSet(null);
    }
    if (e != null) {
      throw e;
    }
  }

  /** Turns a failure into what poll throws, backing off for retriable ones. */
  private ConnectException failed(RuntimeException e) {
    ConnectException c = SourceErrors.toConnect("reading " + byQueue.keySet() + " failed", e);
    if (c instanceof RetriableException && RetryBudget.isStoreFailure(e)) {
      ConnectException spent = retryBudget.failed(lease.storage().description(), e);
      if (spent != null) {
        log.error("{}", spent.getMessage());
        return spent;
      }
    }
    if (c instanceof RetriableException) {
      backoffUntilNanos = System.nanoTime() + config.retryBackoff().toNanos();
      log.warn(
          "Transient failure reading {}, polling again in {}: {}",
          byQueue.keySet(),
          config.retryBackoff(),
          e.toString());
    }
    return c;
  }

  /** One read of every queue, fairly rotated; a failure after records were read is deferred. */
  private List<SourceRecord> pass() {
    List<QueueReader> rs = readers;
    int budget = config.pollMaxRecords();
    List<SourceRecord> out = new ArrayList<>(Math.min(budget, 512));
    int n = rs.size();
    Instant now = Instant.now();
    List<QueueReader> gone = null;
    for (int i = 0; i < n && out.size() < budget; i++) {
      QueueReader r = rs.get((rotation + i) % n);
      try {
        r.read(out, budget - out.size(), now);
      } catch (RuntimeException e) {
        if (SourceErrors.classify(e) == SourceErrors.Kind.GONE) {
          log.warn("Queue '{}' was deleted; no longer reading it", r.queue);
          gone = gone == null ? new ArrayList<>() : gone;
          gone.add(r);
          continue;
        }
        if (out.isEmpty()) {
          throw e;
        }
        deferred = e; // hand over what was read; fail on the next poll
        break;
      }
    }
    if (gone != null) {
      List<QueueReader> left = new ArrayList<>(rs);
      left.removeAll(gone);
      readers = List.copyOf(left);
    }
    rotation = n == 0 ? 0 : (rotation + 1) % n;
    return out;
  }

  /** Waits until some queue may have news, {@code nanos} pass, or the task stops. */
  private void idleWait(long nanos) throws InterruptedException {
    synchronized (waitLock) {
      if (stopping) {
        return;
      }
      waitingThread = Thread.currentThread();
    }
    try {
      List<QueueReader> rs = readers;
      if (rs.isEmpty()) {
        stopped.await(nanos, TimeUnit.NANOSECONDS);
      } else if (rs.size() == 1) {
        waitOn(rs.get(0), nanos);
      } else {
        long deadline = System.nanoTime() + nanos;
        for (int i = 0; !stopping; i++) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return;
          }
          long slice = Math.min(left, TimeUnit.MILLISECONDS.toNanos(WAIT_SLICE_MS));
          if (waitOn(rs.get((rotation + i) % rs.size()), slice)) {
            return;
          }
        }
      }
    } catch (InterruptedException e) {
      if (!stopping) {
        throw e;
      }
    } catch (RuntimeException e) {
      if (SourceErrors.classify(e) != SourceErrors.Kind.GONE) {
        throw e;
      }
      // a deleted queue: the next pass drops it
    } finally {
      synchronized (waitLock) {
        waitingThread = null;
      }
      if (stopping) {
        Thread.interrupted(); // stop() may have interrupted us just after the wait ended
      }
    }
  }

  /** Waits on one reader; returns whether it may have news. */
  private boolean waitOn(QueueReader r, long nanos) throws InterruptedException {
    if (r.blockedOnRoom()) {
      return inFlight.awaitRoom(nanos);
    }
    long position = r.waitPosition();
    if (position < 0) {
      return true;
    }
    return queues.awaitAppend(r.queue, position, Duration.ofNanos(nanos));
  }

  // ------------------------------------------------------------------ acknowledgement

  /**
   * Records that Kafka accepted {@code record} ({@code metadata} non-null) or that Connect dropped
   * it ({@code metadata} null: filtered or tolerated); both count as handled. Never blocks on the
   * store: stream progress is kept in memory, classic deliveries are acknowledged by the
   * housekeeping thread.
   */
  @Override
  public void commitRecord(SourceRecord record, RecordMetadata metadata) {
    Map<String, ?> partition = record.sourcePartition();
    Map<String, ?> offset = record.sourceOffset();
    if (partition == null || offset == null) {
      return;
    }
    QueueReader r = byQueue.get(SourceOffsets.queueOf(partition));
    Object next = offset.get(SourceOffsets.OFFSET_KEY);
    if (r == null || !(next instanceof Number n)) {
      return;
    }
    r.committed(record, n.longValue(), metadata != null);
    if (metrics != null) {
      metrics.committed();
    }
  }

  /** Does nothing: acknowledgements happen per record in {@link #commitRecord}. */
  @Override
  public void commit() {}

  // ------------------------------------------------------------------ stop

  @Override
  public void stop() {
    stopping = true;
    stopped.countDown();
    synchronized (waitLock) {
      if (waitingThread != null && waitingThread != Thread.currentThread()) {
        waitingThread.interrupt();
      }
    }
    boolean locked = false;
    try {
      long wait = config == null ? 0 : config.pollTimeout().toMillis() + 5_000;
      locked = pollLock.tryLock(wait, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      if (!locked) {
        log.warn("A poll did not return in time; releasing the store anyway");
      }
      release();
    } finally {
      if (locked) {
        pollLock.unlock();
      }
    }
  }

  private synchronized void release() {
    if (closed) {
      return;
    }
    closed = true;
    if (housekeeper != null) {
      housekeeper.close();
    }
    for (QueueReader r : byQueue.values()) {
      if (r instanceof ClassicReader c) {
        c.drainPending().forEach(c::release);
      }
      r.leave();
    }
    if (metrics != null) {
      metrics.close();
    }
    if (lease != null) {
      lease.close();
    }
  }

  private long lag() {
    long total = 0;
    for (QueueReader r : readers) {
      total += r.lag();
    }
    return total;
  }

  /** Whether a poll is waiting for news, for tests. */
  boolean isWaiting() {
    synchronized (waitLock) {
      return waitingThread != null;
    }
  }

  /** The task's readers, for tests. */
  List<QueueReader> readers() {
    return readers;
  }
}
