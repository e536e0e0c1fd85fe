package io.queuebridge.core.internal.delivery;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.PeriodicScheduler;
import io.queuebridge.core.delivery.DeliveryHandler;
import io.queuebridge.core.delivery.DeliveryMetrics;
import io.queuebridge.core.delivery.Subscription;
import io.queuebridge.core.errors.ConsumerNotFoundException;
import io.queuebridge.core.errors.DeliveryAlreadySettledException;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.group.StreamBatch;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.store.ConsumerGroupState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The push delivery engine (BEHAVIOUR Q-DEL, single node): hands the messages of consumer groups to
 * the {@link DeliveryHandler}s of live {@link Subscription}s, on a bounded pool of worker threads,
 * through the {@link GroupCoordinator}'s claims (queue mode) and stream reads (stream mode). The
 * {@link io.queuebridge.core.QueueManager} builds one, starts and stops it, and tells it about
 * appends; applications use {@link io.queuebridge.core.QueueManager#consume}.
 *
 * <h2>Scheduling (coalesced)</h2>
 *
 * <ul>
 *   <li>{@link #schedule} — called after every append — ignores queues without a live subscription;
 *       otherwise it puts the queue name on a bounded trigger queue unless it is already there (a
 *       dedup set coalesces repeated triggers). When the trigger queue is full the trigger is
 *       dropped <em>and</em> the queue's dedup flag cleared, and the drop is counted; the sweep
 *       catches up. Never blocks.
 *   <li>One dispatcher thread takes a queue name, clears its flag first, and triggers every live
 *       subscription of that queue.
 *   <li>Every {@link #SWEEP_INTERVAL} (on the injected {@link PeriodicScheduler}) the sweep
 *       refreshes the heartbeat of every live subscription (at most once per tenth of its queue's
 *       consumer timeout, {@link GroupCoordinator#consumerTimeout(String)}, so a member busy in a
 *       long handler is not removed as stale) and schedules every queue that has one. It is the
 *       fallback for messages that become claimable by time rather than by an append, and what
 *       retries a stream after a handler failure.
 *   <li>Redelivery timers ({@link #redeliveryDue}): when the group engine reports the time at which
 *       a pending message becomes claimable again (a nack's backoff or delay, a visibility
 *       timeout), a one-shot timer on the same {@link PeriodicScheduler} schedules the queue at
 *       that time, so a redelivery waits about the backoff, not up to a sweep period more.
 * </ul>
 *
 * <h2>Delivery passes</h2>
 *
 * A triggered subscription runs one pass on a worker: a claim of up to its batch size (queue mode)
 * or a read from the group's cursor (stream mode), then the handler once per message, in order. The
 * batch size is the subscription's own, else the queue's {@code batchSize}, else the engine's
 * {@link Builder#defaultBatchSize default}, resolved at the subscription's first pass. A
 * subscription never runs two passes at once (a trigger that arrives during a pass makes it run
 * again afterwards), so its handler is never called concurrently and stream order is kept. A pass
 * that delivered anything schedules its queue again, so a backlog drains batch by batch while other
 * queues get their turn. Before every handler call the pass checks that the subscription is still
 * live: nothing is claimed, read or handed over for a closed subscription. In stream mode the
 * cursor is committed after the pass only past the prefix that was handed over (and not failed; see
 * {@link DeliveryHandler}); filtered-out messages after it are skipped with it.
 *
 * <p>When a pass finds that the queue, the group or the membership is gone it ends the subscription
 * ({@link Subscription#endCause()}); other errors (a failing store) are logged and the sweep tries
 * again.
 *
 * <h2>Lifecycle</h2>
 *
 * Subscriptions may be registered before {@link #start}; deliveries begin with it. {@link #stop}
 * ends every subscription (each leaves its group; messages claimed but not handed over are
 * released), stops the dispatcher and the workers without interrupting a running handler, and waits
 * for them up to a deadline.
 *
 * <p>Thread-safe.
 */
public final class DeliveryEngine {
  private static final Logger LOG = LoggerFactory.getLogger(DeliveryEngine.class);

  /** Capacity of the trigger queue (BEHAVIOUR Q-DEL: 4096). */
  public static final int DEFAULT_TRIGGER_CAPACITY = 4096;

  /** Period of the sweep (BEHAVIOUR Q-DEL: 1 s). */
  public static final Duration SWEEP_INTERVAL = Duration.ofSeconds(1);

  /** Messages per pass when neither the subscription nor its queue sets a batch size. */
  public static final int DEFAULT_BATCH_SIZE = 100;

  /** Longest redelivery timer; a later redelivery is re-armed when it fires (and swept anyway). */
  private static final Duration MAX_TIMER = Duration.ofDays(1);

  private static final int IDLE = 0;
  private static final int RUNNING = 1;
  private static final int AGAIN = 2;

  private enum State {
    NEW,
    RUNNING,
    STOPPED
  }

  private final GroupCoordinator groups;
  private final Clock clock;
  private final int workers;
  private final String threadPrefix;
  private final int defaultBatchSize;
  private final ArrayBlockingQueue<String> triggers;

  private final ConcurrentMap<String, List<Sub>> byQueue = new ConcurrentHashMap<>();
  private final AtomicInteger sweepStart = new AtomicInteger(); // scheduleAll's rotation
  private final Set<SubKey> keys = ConcurrentHashMap.newKeySet();
  private final Set<String> scheduled = ConcurrentHashMap.newKeySet();
  private final ConcurrentMap<String, Wakeup> wakeups = new ConcurrentHashMap<>();

  private final Object lifecycle = new Object();
  private final ReentrantReadWriteLock sweepGate = new ReentrantReadWriteLock();
  private volatile State state = State.NEW;
  private Thread dispatcher; // guarded by lifecycle
  private volatile ThreadPoolExecutor pool;
  private PeriodicScheduler.Cancellable sweepTask; // guarded by lifecycle
  private volatile PeriodicScheduler timers;

  private final LongAdder passes = new LongAdder();
  private final LongAdder delivered = new LongAdder();
  private final LongAdder handlerFailures = new LongAdder();
  private final LongAdder unsettled = new LongAdder();
  private final LongAdder released = new LongAdder();
  private final LongAdder triggersDropped = new LongAdder();
  private final LongAdder sweeps = new LongAdder();

  private DeliveryEngine(Builder b) {
    this.groups = b.groups;
    this.clock = b.clock;
    this.workers = b.workers;
    this.threadPrefix = b.threadPrefix;
    this.triggers = new ArrayBlockingQueue<>(b.triggerCapacity);
    this.defaultBatchSize = b.defaultBatchSize;
  }

  /** A builder over the group engine whose groups it delivers. */
  public static Builder builder(GroupCoordinator groups) {
    return new Builder(groups);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Starts the dispatcher thread and the worker pool, registers the sweep with {@code scheduler}
   * and schedules every queue that has a subscription. Never blocks.
   *
   * @throws IllegalStateException if already started or stopped
   */
  public void start(PeriodicScheduler scheduler) {
    Objects.requireNonNull(scheduler, "scheduler");
    synchronized (lifecycle) {
      if (state != State.NEW) {
        throw new IllegalStateException("delivery engine already " + state.name().toLowerCase());
      }
      AtomicInteger n = new AtomicInteger();
      ThreadPoolExecutor p =
          new ThreadPoolExecutor(
              workers,
              workers,
              30,
              TimeUnit.SECONDS,
              new LinkedBlockingQueue<>(),
              r -> {
                Thread t = new Thread(r, threadPrefix + "-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
              });
      p.allowCoreThreadTimeOut(true);
      pool = p;
      state = State.RUNNING;
      dispatcher = new Thread(this::dispatchLoop, threadPrefix + "-dispatcher");
      dispatcher.setDaemon(true);
      dispatcher.start();
      timers = scheduler;
      sweepTask = scheduler.schedule("delivery-sweep", SWEEP_INTERVAL, this::sweep);
    }
    scheduleAll();
  }

  /**
   * Stops delivering: no trigger, registration or sweep is accepted any more, every subscription
   * ends (it leaves its group; see {@link Subscription#close()} for what happens to its messages),
   * and the dispatcher and workers are told to stop. Running handlers are never interrupted: waits
   * up to {@code timeout} for them, the dispatcher and a sweep in progress. Idempotent; a repeated
   * call waits again.
   *
   * @return true if every engine thread had finished when it returned (the store may then be
   *     closed), false if the timeout passed first or the thread was interrupted (the interrupt
   *     status is kept)
   */
  public boolean stop(Duration timeout) {
    long deadline = System.nanoTime() + saturatedNanos(timeout);
    Thread d;
    ThreadPoolExecutor p;
    synchronized (lifecycle) {
      if (state != State.STOPPED) {
        state = State.STOPPED;
        if (sweepTask != null) {
          sweepTask.cancel();
        }
      }
      d = dispatcher;
      p = pool;
    }
    if (d != null) {
      d.interrupt();
    }
    if (p != null) {
      p.shutdown();
    }
    for (Sub s : subscriptionsSnapshot()) {
      s.deactivate();
    }
    triggers.clear();
    scheduled.clear();
    for (String queue : List.copyOf(wakeups.keySet())) {
      Wakeup w = wakeups.remove(queue);
      if (w != null) {
        w.timer().cancel();
      }
    }
    try {
      boolean quiet = true;
      ReentrantReadWriteLock.WriteLock w = sweepGate.writeLock();
      if (w.tryLock(remaining(deadline), TimeUnit.NANOSECONDS)) {
        w.unlock();
      } else {
        quiet = false;
      }
      if (p != null && !p.awaitTermination(remaining(deadline), TimeUnit.NANOSECONDS)) {
        quiet = false;
      }
      if (d != null) {
        TimeUnit.NANOSECONDS.timedJoin(d, Math.max(1, remaining(deadline)));
        quiet &= !d.isAlive();
      }
      return quiet;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Threads of the engine still running (dispatcher and busy workers), for stop diagnostics. */
  public int liveThreads() {
    int n = 0;
    synchronized (lifecycle) {
      if (dispatcher != null && dispatcher.isAlive()) {
        n++;
      }
    }
    ThreadPoolExecutor p = pool;
    if (p != null && !p.isTerminated()) {
      n += Math.max(1, p.getActiveCount());
    }
    return n;
  }

  // ---------------------------------------------------------------- scheduling

  /**
   * Asks for a delivery pass of every live subscription of {@code queue} (coalesced; see the class
   * comment). Ignores null and empty names, queues without a subscription and calls after {@link
   * #stop}. Never blocks; safe on any thread.
   */
  public void schedule(String queue) {
    if (queue == null || queue.isEmpty() || state == State.STOPPED) {
      return;
    }
    if (!byQueue.containsKey(queue)) {
      return;
    }
    if (scheduled.add(queue) && !triggers.offer(queue)) {
      scheduled.remove(queue);
      triggersDropped.increment();
    }
  }

  /** Forgets a pending trigger of {@code queue} (after the queue was deleted). Never blocks. */
  public void unschedule(String queue) {
    if (queue != null) {
      scheduled.remove(queue);
    }
  }

  /**
   * Schedules every queue that has a live subscription, starting one queue further on each call:
   * when the trigger queue has fewer free slots than there are queues, a fixed order would hand the
   * slots to the same first queues on every sweep and drop the same last ones every time.
   */
  public void scheduleAll() {
    List<String> queues = List.copyOf(byQueue.keySet());
    int n = queues.size();
    int from = n == 0 ? 0 : Math.floorMod(sweepStart.getAndIncrement(), n);
    for (int i = 0; i < n; i++) {
      schedule(queues.get((from + i) % n));
    }
  }

  /**
   * Arms a timer so that {@code queue}'s subscriptions get a pass at {@code at}, when a pending
   * message of the queue becomes claimable again (a nack's backoff, a visibility timeout); the
   * group engine tells it through its {@link io.queuebridge.core.group.RedeliveryListener}. One
   * timer per queue, for the earliest such time: a later time is ignored while an earlier timer is
   * armed, an earlier one replaces it, and when a timer fires it schedules the queue and re-arms
   * itself for the next time after now ({@link GroupCoordinator#nextRedelivery}). A time that has
   * passed schedules the queue at once. Ignored for queues without a subscription and when the
   * engine is not running; the sweep remains the fallback. Never blocks; safe on any thread.
   */
  public void redeliveryDue(String queue, Instant at) {
    PeriodicScheduler s = timers;
    if (queue == null || at == null || s == null || state != State.RUNNING) {
      return;
    }
    if (!byQueue.containsKey(queue)) {
      return;
    }
    Wakeup current = wakeups.get(queue);
    if (current != null && !current.due().isAfter(at)) {
      return; // the common case (every claim reports its visibility time): nothing to do
    }
    Duration delay = Duration.between(clock.instant(), at);
    if (delay.isNegative() || delay.isZero()) {
      schedule(queue);
      return;
    }
    Duration wait = delay.compareTo(MAX_TIMER) > 0 ? MAX_TIMER : delay;
    wakeups.compute(
        queue,
        (q, armed) -> {
          if (armed != null && !armed.due().isAfter(at)) {
            return armed; // an earlier (or the same) wake-up is armed
          }
          try {
            PeriodicScheduler.Cancellable timer =
                s.scheduleOnce("redelivery-" + q, wait, () -> wake(q, at));
            if (armed != null) {
              armed.timer().cancel();
            }
            return new Wakeup(at, timer);
          } catch (RuntimeException stopping) {
            LOG.debug("cannot arm the redelivery timer of queue {}", q, stopping);
            return armed;
          }
        });
  }

  /** A redelivery timer fired: deliver, then re-arm for the queue's next redelivery time. */
  private void wake(String queue, Instant due) {
    wakeups.computeIfPresent(queue, (q, w) -> w.due().equals(due) ? null : w);
    if (state != State.RUNNING) {
      return;
    }
    schedule(queue);
    try {
      groups.nextRedelivery(queue, clock.instant()).ifPresent(next -> redeliveryDue(queue, next));
    } catch (RuntimeException e) {
      LOG.debug("cannot re-arm the redelivery timer of queue {}; the sweep catches up", queue, e);
    }
  }

  private void dispatchLoop() {
    while (state == State.RUNNING) {
      String queue;
      try {
        queue = triggers.take();
      } catch (InterruptedException e) {
        continue; // stop interrupts; the loop condition decides
      }
      scheduled.remove(queue);
      List<Sub> subs = byQueue.get(queue);
      if (subs != null) {
        for (Sub s : subs) {
          s.trigger();
        }
      }
    }
  }

  private void sweep() {
    ReentrantReadWriteLock.ReadLock r = sweepGate.readLock();
    if (!r.tryLock()) {
      return; // stopping
    }
    try {
      if (state != State.RUNNING) {
        return;
      }
      sweeps.increment();
      Instant now = clock.instant();
      for (Sub s : subscriptionsSnapshot()) {
        s.heartbeatIfDue(now);
      }
      scheduleAll();
    } catch (RuntimeException e) {
      LOG.warn("delivery sweep failed; the next one retries", e);
    } finally {
      r.unlock();
    }
  }

  // ---------------------------------------------------------------- subscriptions

  /**
   * Registers a push subscription for member {@code consumerId} of group {@code group} (effective
   * id) on {@code queue}: reserves the (queue, group, member) triple, runs {@code join} (which
   * makes the member join the group and returns the group), and schedules a first pass.
   *
   * @param join joins the group; runs on the calling thread while the triple is reserved
   * @param batchSize messages per pass; {@code <= 0} = the queue's {@code batchSize}, else the
   *     engine's {@link Builder#defaultBatchSize default}, read at the first pass
   * @throws IllegalStateException if that member already has a live subscription on that group, or
   *     the engine is stopped
   * @throws RuntimeException whatever {@code join} throws (nothing is registered)
   */
  public Subscription register(
      String queue,
      String group,
      String consumerId,
      Supplier<ConsumerGroupState> join,
      DeliveryHandler handler,
      int batchSize) {
    Objects.requireNonNull(join, "join");
    Objects.requireNonNull(handler, "handler");
    if (state == State.STOPPED) {
      throw new IllegalStateException("delivery engine is stopped");
    }
    SubKey key = new SubKey(queue, group, consumerId);
    if (!keys.add(key)) {
      throw new IllegalStateException(
          "consumer '"
              + consumerId
              + "' already has a live subscription on group '"
              + group
              + "' of queue '"
              + queue
              + "'");
    }
    ConsumerGroupState g;
    try {
      g = join.get();
    } catch (RuntimeException e) {
      keys.remove(key);
      throw e;
    }
    Sub s = new Sub(key, g.mode(), handler, Math.max(0, batchSize), clock.instant());
    byQueue.compute(
        queue,
        (k, list) -> {
          List<Sub> l = list == null ? new CopyOnWriteArrayList<>() : list;
          l.add(s);
          return l;
        });
    if (state == State.STOPPED) {
      s.close();
      throw new IllegalStateException("delivery engine is stopped");
    }
    schedule(queue);
    return s;
  }

  private List<Sub> subscriptionsSnapshot() {
    List<Sub> all = new ArrayList<>();
    for (List<Sub> subs : byQueue.values()) {
      all.addAll(subs);
    }
    return all;
  }

  private void remove(Sub s) {
    byQueue.computeIfPresent(
        s.key.queue(),
        (k, list) -> {
          list.remove(s);
          return list.isEmpty() ? null : list;
        });
  }

  /** A snapshot of the counters. Never blocks. */
  public DeliveryMetrics metrics() {
    return new DeliveryMetrics(
        keys.size(),
        passes.sum(),
        delivered.sum(),
        handlerFailures.sum(),
        unsettled.sum(),
        released.sum(),
        triggersDropped.sum(),
        sweeps.sum());
  }

  private static long saturatedNanos(Duration d) {
    try {
      return Math.max(0, d.toNanos());
    } catch (ArithmeticException e) {
      return d.isNegative() ? 0 : Long.MAX_VALUE / 2;
    }
  }

  private static long remaining(long deadline) {
    return Math.max(0, deadline - System.nanoTime());
  }

  private record SubKey(String queue, String group, String consumerId) {}

  /** The armed redelivery timer of one queue. */
  private record Wakeup(Instant due, PeriodicScheduler.Cancellable timer) {}

  /** One live subscription and its pass state machine (IDLE → RUNNING ⇄ AGAIN → IDLE). */
  private final class Sub implements Subscription {
    final SubKey key;
    final GroupMode mode;
    final DeliveryHandler handler;
    int batchSize; // 0 until the first pass resolves it; touched by the (single) running pass only
    final AtomicInteger run = new AtomicInteger(IDLE);
    final AtomicBoolean left = new AtomicBoolean();
    // counted down once the group is left and the key is free again, by whichever thread did it
    private final CountDownLatch closed = new CountDownLatch(1);
    volatile boolean active = true;
    volatile Thread runner;
    volatile Throwable endCause;
    volatile Instant lastBeat;
    long lastCommit = -1; // stream mode; touched by the (single) running pass only

    Sub(SubKey key, GroupMode mode, DeliveryHandler handler, int batchSize, Instant joined) {
      this.key = key;
      this.mode = mode;
      this.handler = handler;
      this.batchSize = batchSize;
      this.lastBeat = joined;
    }

    @Override
    public String queue() {
      return key.queue();
    }

    @Override
    public String group() {
      return key.group();
    }

    @Override
    public String consumerId() {
      return key.consumerId();
    }

    @Override
    public GroupMode mode() {
      return mode;
    }

    @Override
    public boolean isActive() {
      return active;
    }

    @Override
    public Optional<Throwable> endCause() {
      return Optional.ofNullable(endCause);
    }

    @Override
    public void close() {
      deactivate();
      if (Thread.currentThread() == runner) {
        return; // called from the handler: the pass finishes the close when it returns
      }
      synchronized (this) {
        while (run.get() != IDLE) {
          try {
            wait();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return; // the running pass finishes the close
          }
        }
      }
      finishClose();
      // the pass that ended may have begun the close on its own thread: return only once the
      // consumer's key is free, so a new subscription of the same consumer is accepted at once
      try {
        closed.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    public String toString() {
      return "Subscription{queue="
          + key.queue()
          + ", group="
          + key.group()
          + ", consumer="
          + key.consumerId()
          + ", mode="
          + mode
          + ", active="
          + active
          + "}";
    }

    private boolean live() {
      return active && state == State.RUNNING;
    }

    void deactivate() {
      active = false;
      remove(this);
      if (run.get() == IDLE) {
        finishClose();
      }
    }

    /** Leaves the group, once, after the last pass. */
    private void finishClose() {
      if (!left.compareAndSet(false, true)) {
        return;
      }
      try {
        groups.leave(key.queue(), "", key.group(), key.consumerId());
      } catch (RuntimeException e) {
        LOG.debug(
            "consumer {} could not leave group {} of queue {}", consumerId(), group(), queue(), e);
      } finally {
        keys.remove(key);
        closed.countDown();
      }
    }

    private void end(Throwable cause) {
      if (active) {
        endCause = cause;
        LOG.info("push subscription {} ended: {}", this, cause.getMessage());
        deactivate();
      }
    }

    void trigger() {
      if (!active) {
        return;
      }
      while (true) {
        int s = run.get();
        if (s == IDLE) {
          if (run.compareAndSet(IDLE, RUNNING)) {
            try {
              pool.execute(this::pass);
            } catch (RejectedExecutionException stopping) {
              afterPass(false);
            }
            return;
          }
        } else if (s == RUNNING) {
          if (run.compareAndSet(RUNNING, AGAIN)) {
            return;
          }
        } else {
          return;
        }
      }
    }

    void heartbeatIfDue(Instant now) {
      if (!active) {
        return;
      }
      Duration every = groups.consumerTimeout(key.queue()).dividedBy(10);
      if (now.isBefore(lastBeat.plus(every))) {
        return;
      }
      try {
        groups.heartbeat(key.queue(), key.group(), key.consumerId());
        lastBeat = now;
      } catch (QueueNotFoundException | GroupNotFoundException | ConsumerNotFoundException gone) {
        end(gone);
      } catch (RuntimeException e) {
        LOG.debug("heartbeat of {} failed", this, e);
      }
    }

    private void pass() {
      runner = Thread.currentThread();
      boolean again = false;
      try {
        if (live()) {
          passes.increment();
          if (batchSize <= 0) {
            batchSize = groups.batchSize(key.queue(), defaultBatchSize);
          }
          again = mode == GroupMode.QUEUE ? queuePass() : streamPass();
        }
      } catch (QueueNotFoundException | GroupNotFoundException | ConsumerNotFoundException gone) {
        end(gone);
      } catch (RuntimeException e) {
        LOG.warn("delivery pass of {} failed; the sweep retries", this, e);
      } finally {
        runner = null;
        afterPass(again);
      }
    }

    private void afterPass(boolean again) {
      int previous = run.getAndSet(IDLE);
      synchronized (this) {
        notifyAll();
      }
      if (!active) {
        finishClose();
      } else if (again || previous == AGAIN) {
        schedule(key.queue());
      }
    }

    /** One claim and its hand-over; whether anything was claimed. */
    private boolean queuePass() {
      List<GroupDelivery> batch =
          groups.claimBatch(key.queue(), key.group(), key.consumerId(), batchSize);
      for (int i = 0; i < batch.size(); i++) {
        if (!live()) {
          release(batch, i);
          break;
        }
        invoke(batch.get(i));
      }
      return !batch.isEmpty();
    }

    /** One read, its hand-over and the cursor commit; whether to run again at once. */
    private boolean streamPass() {
      StreamBatch read = groups.peek(key.queue(), key.group(), key.consumerId(), batchSize);
      long commit = read.next();
      boolean stopped = false;
      for (GroupDelivery d : read.deliveries()) {
        if (!live() || !invoke(d)) {
          commit = d.offset(); // everything before it was handed over or filtered out
          stopped = true;
          break;
        }
      }
      groups.commitCursor(key.queue(), key.group(), commit);
      boolean progressed = !read.deliveries().isEmpty() || commit > lastCommit;
      lastCommit = Math.max(lastCommit, commit);
      return !stopped && progressed;
    }

    /** Hands one delivery over; whether it counts as delivered (see {@link DeliveryHandler}). */
    private boolean invoke(GroupDelivery d) {
      delivered.increment();
      try {
        handler.handle(d);
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.interrupted(); // our worker: keep it healthy
        }
        handlerFailures.increment();
        LOG.warn("handler of {} failed on offset {}; nacking it", this, d.offset(), e);
        if (d.isSettled()) {
          return true; // the handler's own settlement stands
        }
        nackQuietly(d);
        return false;
      } catch (Error e) {
        nackQuietly(d);
        throw e;
      }
      if (!d.isSettled()) {
        unsettled.increment();
        LOG.warn("handler of {} returned without settling offset {}; nacking it", this, d.offset());
        nackQuietly(d);
      }
      return true;
    }

    private void nackQuietly(GroupDelivery d) {
      if (d.isSettled()) {
        return;
      }
      try {
        d.nack();
      } catch (DeliveryAlreadySettledException settledMeanwhile) {
        // settled by another thread: that settlement stands
      } catch (RuntimeException e) {
        LOG.warn(
            "cannot nack offset {} of {}; it stays pending until its visibility timeout",
            d.offset(),
            this,
            e);
      }
    }

    private void release(List<GroupDelivery> batch, int from) {
      for (int i = from; i < batch.size(); i++) {
        GroupDelivery d = batch.get(i);
        try {
          d.nack(Duration.ZERO);
          released.increment();
        } catch (RuntimeException e) {
          LOG.debug("cannot release offset {} of {}; it stays pending", d.offset(), this, e);
        }
      }
    }
  }

  /** Configures a {@link DeliveryEngine}. Not thread-safe. */
  public static final class Builder {
    private final GroupCoordinator groups;
    private Clock clock = Clock.systemUTC();
    private int workers = 4;
    private String threadPrefix = "queuebridge-delivery";
    private int triggerCapacity = DEFAULT_TRIGGER_CAPACITY;
    private int defaultBatchSize = DEFAULT_BATCH_SIZE;

    private Builder(GroupCoordinator groups) {
      this.groups = Objects.requireNonNull(groups, "groups");
    }

    /** The clock of the heartbeat throttle; the group engine's clock. System UTC by default. */
    public Builder clock(Clock value) {
      this.clock = Objects.requireNonNull(value, "clock");
      return this;
    }

    /** Worker threads running passes (handlers); positive; 4 by default. */
    public Builder workers(int value) {
      if (value <= 0) {
        throw new IllegalArgumentException("workers must be > 0, got " + value);
      }
      this.workers = value;
      return this;
    }

    /**
     * Messages per pass of a subscription that sets no batch size, on a queue that sets no {@code
     * batchSize}; positive; {@link #DEFAULT_BATCH_SIZE} by default (the manager passes its {@code
     * deliveryBatchSize}).
     */
    public Builder defaultBatchSize(int value) {
      if (value <= 0) {
        throw new IllegalArgumentException("defaultBatchSize must be > 0, got " + value);
      }
      this.defaultBatchSize = value;
      return this;
    }

    /** Prefix of the engine's thread names; {@code queuebridge-delivery} by default. */
    public Builder threadPrefix(String value) {
      this.threadPrefix = Objects.requireNonNull(value, "threadPrefix");
      return this;
    }

    /** Capacity of the trigger queue; positive; 4096 by default. */
    Builder triggerCapacity(int value) {
      if (value <= 0) {
        throw new IllegalArgumentException("triggerCapacity must be > 0, got " + value);
      }
      this.triggerCapacity = value;
      return this;
    }

    public DeliveryEngine build() {
      return new DeliveryEngine(this);
    }
  }
}
