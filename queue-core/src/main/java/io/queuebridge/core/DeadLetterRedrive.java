package io.queuebridge.core;

import static io.queuebridge.core.message.MessageProperties.DLQ_ORIGINAL_QUEUE;
import static io.queuebridge.core.message.MessageProperties.DLQ_ORIGINAL_TOPIC;

import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.RedriveRefusedException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.DurableQueueStore;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves dead letters back to a queue, exactly once across kills (BEHAVIOUR M-REDRIVE).
 *
 * <p><b>How a kill cannot lose or duplicate.</b> Dead letters are taken in offset order, a batch at
 * a time. Each run of consecutive messages bound for one target is appended to it with one barrier,
 * together with a checkpoint of the target ({@code redrive:<dlq>} = the next dead-letter offset and
 * the id of the last message moved) that the store writes atomically with the messages. Only then
 * is the dead-letter queue truncated past the batch. A redrive killed between the two finds, on its
 * next run, the messages still in the dead-letter queue but covered by the target's checkpoint: it
 * skips them ({@link RedrivenMessage.Outcome#ALREADY_MOVED}) and truncates. The id in the
 * checkpoint guards against a dead-letter queue deleted and created again (its offsets start over):
 * a checkpoint whose last message is not the one at its offset is from an earlier queue and is
 * ignored.
 *
 * <p>A rerun must name the same target as the interrupted run (the default, each message's origin,
 * always does): a checkpoint is looked for only in the target a message goes to now.
 *
 * <p>Not thread-safe; one redrive of a dead-letter queue at a time (two at once may both move the
 * same messages).
 */
final class DeadLetterRedrive {
  private static final Logger LOG = LoggerFactory.getLogger(QueueManager.class);

  /** The checkpoint key prefix a redrive keeps in each target. */
  static final String CHECKPOINT_PREFIX = "redrive:";

  private final LifecycleState state;
  private final DurableQueueStore queues;
  private final QueueAdministration administration;
  private final DurableStreamWriter writer;
  private final Clock clock;

  DeadLetterRedrive(
      LifecycleState state,
      DurableQueueStore queues,
      QueueAdministration administration,
      DurableStreamWriter writer,
      Clock clock) {
    this.state = state;
    this.queues = queues;
    this.administration = administration;
    this.writer = writer;
    this.clock = clock;
  }

  /** {@link QueueManager#redriveDeadLetters}. */
  RedriveReport run(RedriveRequest request, Consumer<RedrivenMessage> listener)
      throws InterruptedException {
    state.ensureUsable();
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(listener, "listener");
    String dlq = request.deadLetterQueue();
    administration.get(dlq); // QueueNotFoundException names it
    String key = CHECKPOINT_PREFIX + dlq;
    Map<String, Long> byTarget = new LinkedHashMap<>();
    Map<String, Boolean> checkedTargets = new HashMap<>();
    long moved = 0;
    long alreadyMoved = 0;
    long seen = 0;
    long from = queues.head(dlq);
    long started = System.nanoTime();
    while (seen < request.maxMessages()) {
      int limit = (int) Math.min(request.batchSize(), request.maxMessages() - seen);
      List<Message> batch = queues.readBatch(dlq, from, limit);
      if (batch.isEmpty()) {
        break;
      }
      int i = 0;
      while (i < batch.size()) {
        String target = targetOf(request, dlq, batch.get(i));
        int j = i + 1;
        while (j < batch.size() && target.equals(targetOf(request, dlq, batch.get(j)))) {
          j++;
        }
        long at = batch.get(i).offset();
        checkedTargets.computeIfAbsent(target, t -> checkTarget(dlq, at, t));
        List<Message> run = batch.subList(i, j);
        long done = movedBelow(dlq, key, target);
        List<Message> todo = new ArrayList<>(run.size());
        for (Message m : run) {
          if (m.offset() < done) {
            alreadyMoved++;
            listener.accept(
                new RedrivenMessage(m.offset(), target, -1, RedrivenMessage.Outcome.ALREADY_MOVED));
          } else {
            todo.add(m);
          }
        }
        if (!todo.isEmpty()) {
          if (request.dryRun()) {
            for (Message m : todo) {
              listener.accept(
                  new RedrivenMessage(m.offset(), target, -1, RedrivenMessage.Outcome.WOULD_MOVE));
            }
          } else {
            pace(request.ratePerSecond(), moved + todo.size(), started);
            long first = append(dlq, key, target, todo);
            for (int k = 0; k < todo.size(); k++) {
              listener.accept(
                  new RedrivenMessage(
                      todo.get(k).offset(), target, first + k, RedrivenMessage.Outcome.MOVED));
            }
          }
          moved += todo.size();
          byTarget.merge(target, (long) todo.size(), Long::sum);
        }
        i = j;
      }
      long next = batch.get(batch.size() - 1).offset() + 1;
      if (!request.dryRun()) {
        queues.truncate(dlq, next);
      }
      from = next;
      seen += batch.size();
    }
    long remaining = queues.count(dlq);
    LOG.info(
        "redrive of {}{}: {} moved, {} found moved before, {} left",
        dlq,
        request.dryRun() ? " (dry run)" : "",
        moved,
        alreadyMoved,
        remaining);
    return new RedriveReport(dlq, moved, alreadyMoved, remaining, byTarget, request.dryRun());
  }

  private static String targetOf(RedriveRequest request, String dlq, Message m) {
    if (request.target().isPresent()) {
      return request.target().get();
    }
    String origin = m.properties().get(DLQ_ORIGINAL_QUEUE);
    if (origin == null || origin.isEmpty()) {
      throw new RedriveRefusedException(
          dlq,
          m.offset(),
          "it has no "
              + DLQ_ORIGINAL_QUEUE
              + " property (expected a dead letter the queue core wrote, or name a target)");
    }
    return origin;
  }

  /** The target exists, is not protected and is not the dead-letter queue itself. */
  private boolean checkTarget(String dlq, long offset, String target) {
    if (target.equals(dlq)) {
      throw new RedriveRefusedException(
          dlq, offset, "the target is the dead-letter queue itself (expected another queue)");
    }
    administration.refuseIfProtected(
        administration.get(target), "a protected queue cannot be a dead-letter redrive target");
    return true;
  }

  /**
   * The dead-letter offset below which {@code target} already holds every message bound for it: the
   * checkpoint's offset when its last message is still the one at that offset (or no longer in the
   * dead-letter queue at all), else 0.
   */
  private long movedBelow(String dlq, String key, String target) {
    String mark = queues.checkpoints(target).get(key);
    if (mark == null) {
      return 0;
    }
    int space = mark.indexOf(' ');
    long next;
    try {
      next = Long.parseLong(space < 0 ? mark : mark.substring(0, space));
    } catch (NumberFormatException e) {
      LOG.warn("queue {}: unreadable checkpoint {}={}, ignored", target, key, mark);
      return 0;
    }
    String id = space < 0 ? "" : mark.substring(space + 1);
    long last = next - 1;
    if (last < queues.head(dlq)) {
      return next; // the moved messages are gone from the DLQ; nothing there to skip or keep
    }
    try {
      if (queues.read(dlq, last).id().equals(id)) {
        return next;
      }
    } catch (OffsetOutOfRangeException gone) {
      return next; // truncated meanwhile
    }
    LOG.info(
        "queue {}: checkpoint {} is from an earlier dead-letter queue of that name, ignored",
        target,
        key);
    return 0;
  }

  private long append(String dlq, String key, String target, List<Message> todo)
      throws InterruptedException {
    String movedAt = DateTimeFormatter.ISO_INSTANT.format(clock.instant());
    List<PublishRequest> requests = new ArrayList<>(todo.size());
    for (Message m : todo) {
      Map<String, String> props = new LinkedHashMap<>(m.properties());
      props.put(MessageProperties.REDRIVE_DLQ, dlq);
      props.put(MessageProperties.REDRIVE_DLQ_OFFSET, Long.toString(m.offset()));
      props.put(MessageProperties.REDRIVEN_AT, movedAt);
      String topic = m.properties().getOrDefault(DLQ_ORIGINAL_TOPIC, "");
      requests.add(
          PublishRequest.builder(topic.isEmpty() ? target : topic)
              .key(m.keyUnsafe())
              .value(m.valueUnsafe())
              .headers(m.headers())
              .properties(props)
              .timestamp(m.timestamp(), m.timestampType())
              .build());
    }
    Message last = todo.get(todo.size() - 1);
    String mark = (last.offset() + 1) + " " + last.id();
    return writer.publishBatchOrdered(target, requests, Map.of(key, mark));
  }

  /** Parks until {@code count} messages are within {@code perSecond} since {@code started}. */
  private static void pace(double perSecond, long count, long started) throws InterruptedException {
    if (perSecond <= 0) {
      return;
    }
    long due = started + (long) (count / perSecond * TimeUnit.SECONDS.toNanos(1));
    for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
      LockSupport.parkNanos(wait);
      if (Thread.interrupted()) {
        throw new InterruptedException("redrive interrupted while pacing");
      }
    }
  }
}
