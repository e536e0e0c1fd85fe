package io.queuebridge.core.store.support;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.ReservedQueueException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStore;
import io.queuebridge.core.topic.TopicFilters;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Support for store implementers: the argument checks of {@link QueueStore}, {@link
 * DurableQueueStore} and {@link ConsumerGroupStore} that every store applies the same way, so that
 * stores agree on what they refuse and on the error, and how they read {@link
 * QueueStore#awaitAppend}'s timeout ({@link #awaitNanos}). Applications do not need it.
 *
 * <p>Thread-safe (stateless). Nothing blocks. A store calls the checks before it looks anything up
 * or changes anything, so a refused call changes nothing.
 */
public final class StoreChecks {
  private StoreChecks() {}

  /**
   * The check of the checkpoints of {@link DurableQueueStore#appendBatchAndSync}: an unmodifiable
   * copy, in the caller's iteration order. Not {@link Map#copyOf}, whose iteration order changes
   * from JVM to JVM: a store writing the entries in map order would write other bytes (or rows in
   * another order) for the same batch.
   *
   * @throws NullPointerException if {@code checkpoints}, a key or a value is null
   */
  public static Map<String, String> checkCheckpoints(Map<String, String> checkpoints) {
    Objects.requireNonNull(checkpoints, "checkpoints");
    if (checkpoints.isEmpty()) {
      return Map.of();
    }
    Map<String, String> copy = new LinkedHashMap<>(checkpoints.size() * 2);
    for (Map.Entry<String, String> e : checkpoints.entrySet()) {
      copy.put(
          Objects.requireNonNull(e.getKey(), "checkpoint key"),
          Objects.requireNonNull(e.getValue(), "checkpoint value"));
    }
    return Collections.unmodifiableMap(copy);
  }

  /**
   * The check of {@link QueueStore#appendDeduplicated}: the message is not null and carries a
   * non-empty {@link io.queuebridge.core.message.MessageProperties#DEDUP_ID}; returns that id.
   *
   * @throws IllegalArgumentException naming the property if it is missing or empty
   */
  public static String checkDeduplicationId(String queue, Message message) {
    Objects.requireNonNull(message, "message");
    String id = message.properties().get(io.queuebridge.core.message.MessageProperties.DEDUP_ID);
    if (id == null || id.isEmpty()) {
      throw new IllegalArgumentException(
          "a deduplicated append to queue "
              + queue
              + " needs a message with a non-empty property "
              + io.queuebridge.core.message.MessageProperties.DEDUP_ID
              + "; got "
              + (id == null ? "none" : "an empty one"));
    }
    return id;
  }

  /**
   * The check of {@link QueueStore#deduplicatedOffset}: {@code id} is not null or empty.
   *
   * @throws IllegalArgumentException naming the id if it is empty
   */
  public static void checkDeduplicationId(String queue, String id) {
    Objects.requireNonNull(id, "id");
    if (id.isEmpty()) {
      throw new IllegalArgumentException(
          "a deduplication id lookup on queue "
              + queue
              + ": id is empty; expected the non-empty id a message was published with");
    }
  }

  /**
   * The checks of {@link QueueStore#createQueue}: {@code config} non-null, then {@code checkOpen}
   * (the store's own "is it open" check, so a closed store reports that first), then the full
   * {@link QueueConfig#validate()}.
   *
   * @throws NullPointerException if {@code config} is null
   * @throws io.queuebridge.core.errors.InvalidConfigException if the configuration is invalid
   */
  public static void checkCreate(QueueConfig config, Runnable checkOpen) {
    Objects.requireNonNull(config, "config");
    checkOpen.run();
    config.validate();
  }

  /**
   * The checks of {@link QueueStore#updateQueue}: {@code config} and its name non-null, then {@code
   * checkOpen}, then every topic filter (the only part an update validates, so that a drifted
   * configuration can still be stored).
   *
   * @throws NullPointerException if {@code config} or its name is null
   * @throws io.queuebridge.core.errors.InvalidConfigException if a topic filter is invalid
   */
  public static void checkUpdate(QueueConfig config, Runnable checkOpen) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(config.name(), "config.name");
    checkOpen.run();
    for (String filter : config.topics()) {
      TopicFilters.validateFilter(filter);
    }
  }

  /**
   * The check of {@link QueueStore#deleteQueue}: a reserved queue is never deleted.
   *
   * @param stored the configuration of the queue to delete, as stored
   * @throws ReservedQueueException if the queue is reserved
   */
  public static void checkDeletable(QueueConfig stored) {
    if (stored.reserved()) {
      throw new ReservedQueueException(stored.name());
    }
  }

  /**
   * A batch to append: non-null, non-empty, no null element.
   *
   * @return an immutable copy (so the caller cannot change it while it is written)
   * @throws NullPointerException if {@code messages} or an element is null
   * @throws IllegalArgumentException if {@code messages} is empty
   */
  public static List<Message> checkBatch(String queue, List<Message> messages) {
    Objects.requireNonNull(messages, "messages");
    if (messages.isEmpty()) {
      throw new IllegalArgumentException("cannot append an empty batch to queue " + queue);
    }
    return List.copyOf(messages); // rejects null elements before anything is written
  }

  /**
   * Refuses a sync append on a thread interrupted before it started; clears the interrupt.
   *
   * @throws InterruptedException if the thread was interrupted (nothing was written)
   */
  public static void checkNotInterrupted(String queue) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException(
          "interrupted before appending to queue " + queue + "; nothing was written");
    }
  }

  /**
   * The limit of {@link QueueStore#readBatch}.
   *
   * @throws IllegalArgumentException if {@code limit} is not positive
   */
  public static void checkReadLimit(String queue, int limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException(
          "limit must be > 0 to read queue " + queue + ", got " + limit);
    }
  }

  /**
   * The budget of {@link QueueStore#sizeOffset}.
   *
   * @throws IllegalArgumentException if {@code retentionBytes} is negative
   */
  public static void checkRetentionBytes(String queue, long retentionBytes) {
    if (retentionBytes < 0) {
      throw new IllegalArgumentException(
          "retentionBytes must be >= 0 for queue " + queue + ", got " + retentionBytes);
    }
  }

  /**
   * The timeout of {@link QueueStore#awaitAppend} in nanoseconds: 0 (do not wait) for a zero or
   * negative timeout, about a hundred years for one too long to count in nanoseconds.
   *
   * @throws NullPointerException if {@code timeout} is null
   */
  public static long awaitNanos(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      return 0;
    }
    try {
      return timeout.toNanos();
    } catch (ArithmeticException tooLong) {
      return TimeUnit.DAYS.toNanos(365L * 100);
    }
  }

  /**
   * The checks of {@link ConsumerGroupStore#transferPending}: {@code from}, {@code to}, {@code now}
   * and {@code visibility} non-null, in that order.
   *
   * @throws NullPointerException naming the first null argument
   */
  public static void checkTransfer(String from, String to, Instant now, Duration visibility) {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(visibility, "visibility");
  }

  /**
   * The checks of {@link ConsumerGroupStore#claimDue}: every argument non-null, {@code limit} at
   * least 1, a non-empty claimer and a visibility that is not negative.
   *
   * @throws NullPointerException naming the first null argument
   * @throws IllegalArgumentException naming the bad value and what was expected
   */
  public static void checkClaimDue(
      String queue,
      String groupId,
      String consumerId,
      Instant now,
      Duration visibility,
      int limit) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    Objects.requireNonNull(consumerId, "consumerId");
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(visibility, "visibility");
    if (limit < 1) {
      throw new IllegalArgumentException(
          "claimDue on group "
              + groupId
              + " of queue "
              + queue
              + ": limit is "
              + limit
              + "; expected at least 1");
    }
    if (consumerId.isEmpty()) {
      throw new IllegalArgumentException(
          "claimDue on group " + groupId + " of queue " + queue + ": consumerId must be non-empty");
    }
    if (visibility.isNegative()) {
      throw new IllegalArgumentException(
          "claimDue on group "
              + groupId
              + " of queue "
              + queue
              + ": visibility must not be negative, got "
              + visibility);
    }
  }

  /**
   * The checks of {@link ConsumerGroupStore#claimPending}: {@code entries} and {@code now}
   * non-null, and no null entry.
   *
   * @throws NullPointerException naming the first null argument ({@code entry} for an element)
   */
  public static void checkClaim(List<PendingEntry> entries, Instant now) {
    Objects.requireNonNull(entries, "entries");
    Objects.requireNonNull(now, "now");
    for (PendingEntry e : entries) {
      Objects.requireNonNull(e, "entry");
    }
  }

  /**
   * The checks of {@link ConsumerGroupStore#acknowledgeAllPending}: every argument non-null and the
   * three arrays of one length.
   *
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the arrays differ in length
   */
  public static void checkAcknowledgeAll(
      String queue,
      String groupId,
      String consumerId,
      long[] offsets,
      int[] deliveryCounts,
      boolean[] removed,
      Instant now) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    Objects.requireNonNull(consumerId, "consumerId");
    Objects.requireNonNull(now, "now");
    if (offsets.length != deliveryCounts.length || offsets.length != removed.length) {
      throw new IllegalArgumentException(
          "acknowledgeAllPending of group "
              + groupId
              + " on queue "
              + queue
              + ": offsets, deliveryCounts and removed must have one length, got "
              + offsets.length
              + ", "
              + deliveryCounts.length
              + " and "
              + removed.length);
    }
  }

  /**
   * The argument checks of {@link io.queuebridge.core.store.ConsumerGroupStore#duePending}.
   *
   * @throws IllegalArgumentException if {@code limit < 1}
   */
  public static void checkDuePending(String queue, String groupId, Instant now, int limit) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    Objects.requireNonNull(now, "now");
    if (limit < 1) {
      throw new IllegalArgumentException(
          "duePending of group "
              + groupId
              + " on queue "
              + queue
              + ": limit is "
              + limit
              + "; expected at least 1");
    }
  }

  /**
   * Checks the arguments of {@code firstPendingByKey}: none null, no key empty (the empty key means
   * "no ordering key" and is never looked up).
   */
  public static void checkOrderKeys(String queue, String groupId, Collection<String> keys) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    Objects.requireNonNull(keys, "keys");
    for (String k : keys) {
      checkKey(queue, groupId, k);
    }
  }

  private static void checkKey(String queue, String groupId, String k) {
    if (k == null || k.isEmpty()) {
      throw new IllegalArgumentException(
          "ordering key lookup in group "
              + groupId
              + " on queue "
              + queue
              + ": key is "
              + (k == null ? "null" : "empty")
              + "; expected a non-empty ordering key");
    }
  }
}
