package io.queuebridge.cli;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import java.time.Clock;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * One open store as the read commands see it: the store, a {@link QueueManager} over it that is
 * never started (so none of its loops runs: nothing is expired, retained or swept while a command
 * reads), and the clock ages are measured with. Closing it closes the store.
 */
final class StoreSession implements AutoCloseable {
  private final Storage storage;
  private final QueueManager manager;
  private final Clock clock;

  private StoreSession(Storage storage, Clock clock) {
    this.storage = storage;
    this.clock = clock;
    this.manager = new QueueManager(storage, QueueManagerConfig.builder().clock(clock).build());
  }

  static StoreSession open(StoreOpener opener, StoreSpec spec, Clock clock, boolean writable) {
    return new StoreSession(opener.open(spec, writable), clock);
  }

  /**
   * The manager over the store, never started: what the commands that change the store call, so
   * that they keep the core's rules (protected queues, group sections, exactly-once redrive).
   */
  QueueManager manager() {
    return manager;
  }

  Instant now() {
    return clock.instant();
  }

  /** The store's own description ({@code file:/var/lib/qb}); never holds secrets. */
  String description() {
    return storage.description();
  }

  /** The queue logs, for reading messages. */
  DurableQueueStore log() {
    return storage.queues();
  }

  /** Every queue's configuration, by name. */
  List<QueueConfig> queues() {
    return manager.listQueues().stream().sorted(Comparator.comparing(QueueConfig::name)).toList();
  }

  /**
   * The configuration of {@code name}.
   *
   * @throws CliException if the store has no such queue
   */
  QueueConfig queue(String name) {
    try {
      return manager.getQueue(name);
    } catch (QueueNotFoundException e) {
      throw new CliException(
          "queue '"
              + name
              + "' not found in "
              + description()
              + " (expected one of its queues: 'queue-bridge queues' lists them)");
    }
  }

  /** Whether the store has a queue of that name. */
  boolean hasQueue(String name) {
    return manager.listQueues().stream().anyMatch(q -> q.name().equals(name));
  }

  /** Every consumer group of {@code queue}, by id. */
  List<ConsumerGroupState> groups(String queue) {
    return manager.consumerGroups().groups(queue).stream()
        .sorted(Comparator.comparing(ConsumerGroupState::id))
        .toList();
  }

  /**
   * The group {@code id} of {@code queue}.
   *
   * @throws CliException if the queue has no such group
   */
  ConsumerGroupState group(String queue, String id) {
    Optional<ConsumerGroupState> group = manager.consumerGroups().group(queue, id);
    if (group.isEmpty()) {
      String known =
          groups(queue).stream().map(g -> "'" + g.id() + "'").collect(Collectors.joining(", "));
      throw new CliException(
          "consumer group '"
              + id
              + "' not found on queue '"
              + queue
              + "' (expected one of its groups: "
              + (known.isEmpty() ? "it has none" : known)
              + ")");
    }
    return group.get();
  }

  /** The dead-letter queue of {@code queue}: its configured DLQ topic, else {@code $dlq/<name>}. */
  String deadLetterQueue(QueueConfig queue) {
    return manager.consumerGroups().deadLetterQueue(queue);
  }

  /** The oldest readable message of {@code queue}, if any. */
  Optional<Message> first(String queue) {
    return log().readBatch(queue, log().head(queue), 1).stream().findFirst();
  }

  /** The newest message of {@code queue}, if any (none when its offset is unreadable). */
  Optional<Message> last(String queue) {
    DurableQueueStore log = log();
    long tail = log.tail(queue);
    if (tail <= log.head(queue)) {
      return Optional.empty();
    }
    try {
      return Optional.of(log.read(queue, tail - 1));
    } catch (OffsetOutOfRangeException e) {
      return Optional.empty(); // truncated since, or in a recovery gap
    }
  }

  /**
   * The first offset of {@code queue} whose message was appended at or after {@code time}: the
   * store's time lookup (which may answer early), then a scan forward to the exact message. The
   * tail when none is.
   */
  long offsetAt(String queue, Instant time) {
    DurableQueueStore log = log();
    long at = log.timeOffset(queue, time).orElse(log.head(queue));
    while (true) {
      List<Message> batch = log.readBatch(queue, at, 512);
      if (batch.isEmpty()) {
        return log.tail(queue);
      }
      for (Message m : batch) {
        if (m.createdAt() == null || !m.createdAt().isBefore(time)) {
          return m.offset();
        }
      }
      at = batch.get(batch.size() - 1).offset() + 1;
    }
  }

  /** Closes the store. The manager was never started, so it has nothing to stop. */
  @Override
  public void close() {
    storage.close();
  }
}
