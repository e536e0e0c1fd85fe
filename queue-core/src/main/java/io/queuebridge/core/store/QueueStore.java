package io.queuebridge.core.store;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.ReservedQueueException;
import io.queuebridge.core.errors.StoreClosedException;
import io.queuebridge.core.message.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The append-only log of every queue, plus the queue configurations.
 *
 * <p><b>Threads.</b> Every method may be called from any thread, concurrently; implementations are
 * thread-safe. Appends to one queue are serialised by the store and get contiguous offsets in call
 * order.
 *
 * <p><b>Blocking.</b> Methods block for the I/O they do (a disk write, a database round trip) and
 * no longer, unless a method says otherwise. None waits for data to arrive except {@link
 * #awaitAppend}.
 *
 * <p><b>Durability.</b> Nothing a plain {@code QueueStore} method does is promised to survive a
 * crash when it returns: a buffered store may hold it in memory or in the OS page cache. Only
 * {@link DurableQueueStore#appendAndSync} and friends promise a durability barrier, and only when
 * {@link DurableQueueStore#supportsDurableSync()} is true. Queue configuration changes ({@code
 * createQueue}, {@code updateQueue}, {@code deleteQueue}) are durable on return in a persistent
 * store, because a queue must exist before it can back an acknowledgement.
 *
 * <p><b>Values.</b> Messages are immutable values; the store never keeps a caller's array (the
 * {@link Message} builder already copied it). Configurations returned are values too.
 *
 * <p><b>Errors.</b> Unchecked {@link io.queuebridge.core.errors.QueueException} subclasses as
 * listed per method; any I/O failure is a {@link QueueStoreException} (a {@link
 * io.queuebridge.core.errors.QueueStoreException} when a retry may pass, a {@link
 * io.queuebridge.core.errors.StoreCorruptedException} for damaged data); after {@link #close()}
 * every method but {@code close} throws {@link StoreClosedException}.
 */
public interface QueueStore extends AutoCloseable {

  /**
   * Creates an empty queue (head = tail = 0) and indexes its topic filters.
   *
   * @throws InvalidConfigException if the config is invalid (the memory store applies the full
   *     {@link QueueConfig#validate()}, every store at least checks the topic filters)
   * @throws QueueAlreadyExistsException if a queue of that name exists
   */
  void createQueue(QueueConfig config);

  /**
   * The stored configuration.
   *
   * @throws QueueNotFoundException if there is no such queue
   */
  QueueConfig getQueue(String name);

  /**
   * Replaces a queue's configuration wholesale and re-indexes its topic filters. Only the topic
   * filters are validated, so a drifted configuration can be stored: contract enforcement is the
   * manager's job.
   *
   * @throws InvalidConfigException for a malformed topic filter
   * @throws QueueNotFoundException if there is no such queue
   */
  void updateQueue(QueueConfig config);

  /**
   * Deletes a queue with its log, consumer groups and index entries.
   *
   * @throws ReservedQueueException for a reserved queue (nothing is deleted)
   * @throws QueueNotFoundException if there is no such queue
   */
  void deleteQueue(String name);

  /** Every queue's configuration, in no particular order; empty when there are none. */
  List<QueueConfig> listQueues();

  /**
   * Names of the queues with at least one topic filter matching {@code topic}, without duplicates,
   * in first-match order (as {@link io.queuebridge.core.topic.TopicIndex#findMatching} defines it).
   * An empty topic matches nothing.
   */
  List<String> findMatchingQueues(String topic);

  /**
   * Appends one message at offset {@link #tail}; returns that offset. The stored copy carries the
   * offset; the rest of the message is kept as given.
   *
   * @throws QueueNotFoundException if there is no such queue
   */
  long append(String queue, Message message);

  /**
   * Appends messages at contiguous offsets in list order; returns the first offset.
   *
   * @throws IllegalArgumentException if {@code messages} is empty
   * @throws QueueNotFoundException if there is no such queue
   */
  long appendBatch(String queue, List<Message> messages);

  /**
   * Appends {@code message} as {@link #append} does unless the queue remembers its deduplication id
   * (BEHAVIOUR Q-DEDUP), atomically: of concurrent appends of one id, in this process or any other
   * sharing the store, exactly one stores its message and the others answer its offset.
   *
   * <p>The id is the message's {@link io.queuebridge.core.message.MessageProperties#DEDUP_ID}
   * property, stored with it. A store remembers an id from the message it was stored with, keyed by
   * queue, for as long as that message's {@link Message#createdAt()} is not before {@code
   * windowStart}: the caller (the manager, with its clock) passes now minus the queue's window, so
   * an id older than the window is forgotten and stored anew, and the store may drop such ids at
   * any time (memory bounded by the window). Ids stay remembered when their message is truncated
   * away; a persistent store remembers them across close, reopen and crash as far as it keeps the
   * message itself (an acknowledged append's id is remembered when the append is). Deleting the
   * queue forgets them.
   *
   * @param windowStart ids of messages created before it are forgotten
   * @return where the message was stored, or the first offset of its id and {@code duplicate}
   * @throws IllegalArgumentException if the message has no (or an empty) deduplication id
   * @throws QueueNotFoundException if there is no such queue
   * @throws UnsupportedOperationException if the store cannot deduplicate (this default)
   */
  default AppendResult appendDeduplicated(String queue, Message message, Instant windowStart) {
    throw new UnsupportedOperationException("the store " + this + " cannot deduplicate appends");
  }

  /**
   * Where the queue stored the message of deduplication id {@code id} (BEHAVIOUR Q-DEDUP), if it
   * remembers the id from a message created at or after {@code windowStart}; empty when it does
   * not, or while the id's first append is still under way. A lookup only: nothing is stored or
   * forgotten. The manager asks when a classic queue is full, so that a retry of a publish already
   * stored answers its offset instead of {@link io.queuebridge.core.errors.QueueFullException}. The
   * default answers empty (a store that cannot deduplicate remembers nothing).
   *
   * @throws IllegalArgumentException if {@code id} is empty
   * @throws QueueNotFoundException if there is no such queue
   */
  default OptionalLong deduplicatedOffset(String queue, String id, Instant windowStart) {
    return OptionalLong.empty();
  }

  /**
   * The message at {@code offset}.
   *
   * @throws OffsetOutOfRangeException if {@code offset < head} or {@code offset >= tail}, or the
   *     offset was removed by truncation or lies in a recovery gap
   * @throws QueueNotFoundException if there is no such queue
   */
  Message read(String queue, long offset);

  /**
   * Up to {@code limit} messages from {@code start} in offset order. A start below the head is
   * raised to the head; a start at or past the tail gives an empty list. Never returns null.
   *
   * @throws IllegalArgumentException if {@code limit <= 0}
   * @throws QueueNotFoundException if there is no such queue
   */
  List<Message> readBatch(String queue, long start, int limit);

  /** The first readable offset. @throws QueueNotFoundException if there is no such queue */
  long head(String queue);

  /** The offset the next append gets. @throws QueueNotFoundException if there is no such queue */
  long tail(String queue);

  /** {@code tail - head}. @throws QueueNotFoundException if there is no such queue */
  default long count(String queue) {
    return tail(queue) - head(queue);
  }

  /**
   * Removes the messages below {@code minOffset}. A {@code minOffset <= head} does nothing; one
   * above the tail is clamped to the tail. Stores may work at a coarser granularity (whole
   * segments) and keep more than asked, never less. Afterwards {@link #head} reports what is really
   * readable.
   *
   * @throws QueueNotFoundException if there is no such queue
   */
  void truncate(String queue, long minOffset);

  /**
   * The first offset whose message was appended at or after {@code time}: the tail if none, the
   * head when the queue is empty. A store may answer coarsely, but never later than the exact
   * answer. Empty when the store cannot look up by time (callers then use the head).
   *
   * @throws QueueNotFoundException if there is no such queue
   */
  default OptionalLong timeOffset(String queue, Instant time) {
    return OptionalLong.empty();
  }

  /**
   * The offset from which the newest messages fit in {@code retentionBytes}. A store may under-trim
   * (answer lower) but never over-trim. Empty when the store cannot tell.
   *
   * @throws QueueNotFoundException if there is no such queue
   */
  default OptionalLong sizeOffset(String queue, long retentionBytes) {
    return OptionalLong.empty();
  }

  /**
   * The bytes the queue's retained messages occupy in the store, as stored: an estimate for
   * display, never negative. Empty when the store cannot tell.
   *
   * @throws QueueNotFoundException if there is no such queue (a store that cannot tell may answer
   *     empty instead)
   */
  default OptionalLong bytes(String queue) {
    return OptionalLong.empty();
  }

  /**
   * Waits until the queue's tail is beyond {@code offset} (a message at {@code offset} exists or
   * was truncated away), the timeout passes, or the thread is interrupted. Returns whether the tail
   * moved past {@code offset}. Stores wake waiters on append; this default polls the tail every
   * millisecond and suits only stores without a notification mechanism.
   *
   * @throws InterruptedException if interrupted while waiting
   * @throws QueueNotFoundException if there is no such queue
   */
  default boolean awaitAppend(String queue, long offset, Duration timeout)
      throws InterruptedException {
    long deadline =
        System.nanoTime() + io.queuebridge.core.store.support.StoreChecks.awaitNanos(timeout);
    while (tail(queue) <= offset) {
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
    return true;
  }

  /**
   * Releases the store's resources after making buffered appends durable where the store can.
   * Idempotent: a second call does nothing.
   */
  @Override
  void close();
}
