package io.queuebridge.core.group;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.CommitOffsetOnlyForStreamModeException;
import io.queuebridge.core.errors.ConsumerNotFoundException;
import io.queuebridge.core.errors.GroupModeMismatchException;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.InvalidOffsetException;
import io.queuebridge.core.errors.MessageNotPendingException;
import io.queuebridge.core.errors.PelFullException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * The consumer groups of a {@link io.queuebridge.core.QueueManager}'s queues, as applications and
 * connectors use them: membership, claims and settlement (queue mode), cursor reads and commits
 * (stream mode), and the groups' state. Returned by {@link
 * io.queuebridge.core.QueueManager#consumerGroups()}; the engine behind it also runs the manager's
 * sweeps (stale members, retention, ephemeral queues), which are not part of this interface.
 *
 * <p>Thread-safe. Every method that changes a group is atomic for that group, across processes on a
 * shared store. Unless a method says otherwise, arguments must not be null, and a method that
 * throws changed nothing.
 */
public interface ConsumerGroups {
  /** The engine's settings: PEL cap, visibility, heartbeat timeouts. */
  GroupSettings settings();

  /**
   * Joins {@code consumerId} to a group of {@code queue}, creating the group when needed (BEHAVIOUR
   * Q-SUB).
   *
   * <p>The group is {@code groupId} (or the default for the cursor's mode when null or empty)
   * qualified by {@code pattern}. A new group starts at offset 0 with the cursor's mode and
   * auto-commit; an existing group keeps its auto-commit and must have the requested mode. Then the
   * cursor's position is applied to the group's <em>shared</em> cursor: earliest = head, latest =
   * tail, an offset clamped to [head, tail], a timestamp through the store's time lookup (the head
   * when the store cannot look up; a null timestamp does not move), default = resume. The committed
   * offset is not touched. The member is registered (re-joining refreshes it) and an ephemeral
   * queue's disconnect time is cleared.
   *
   * <p>The queue must exist: creating it, and converting a classic queue for a stream reader, are
   * the manager's decisions.
   *
   * <p>A group never lacks a mode, so there is no mode to adopt for an existing group: {@link
   * ConsumerGroupState#mode()} is never null, and stores load a missing mode as {@link
   * GroupMode#QUEUE} (BEHAVIOUR Q-GROUP). So a group's mode is fixed when it is created and any
   * other requested mode is a mismatch.
   *
   * @param pattern the group's routing-key filter; null or empty = all messages
   * @param cursor where and how to read; null = resume in queue mode
   * @return the group after joining
   * @throws QueueNotFoundException if the queue does not exist
   * @throws GroupModeMismatchException if the group exists in the other mode
   * @throws IllegalArgumentException if the consumer id is empty, or the group id is empty after
   *     applying the default rule
   * @throws io.queuebridge.core.errors.InvalidConfigException if the pattern is not a valid filter
   */
  ConsumerGroupState join(
      String queue, String pattern, String groupId, String consumerId, CursorOption cursor);

  /**
   * Removes {@code consumerId} from a group ({@code unsubscribe}, BEHAVIOUR Q-SUB). Its pending
   * entries stay, to be stolen after their visibility timeout. With a null or empty {@code groupId}
   * the consumer leaves the default group it is a member of: the queue-mode default ({@code
   * worker-7} → {@code worker}) is tried first, then the stream-mode one (the full id). When no
   * group of the queue has members left and the queue is ephemeral (not durable, not reserved), its
   * disconnect time is set to now.
   *
   * @return whether the consumer was a member (false also when the queue or group does not exist)
   */
  boolean leave(String queue, String pattern, String groupId, String consumerId);

  /**
   * Refreshes a member's heartbeat.
   *
   * @throws GroupNotFoundException if the group does not exist
   * @throws ConsumerNotFoundException if the consumer is not a member
   * @throws QueueNotFoundException if the queue does not exist
   */
  void heartbeat(String queue, String group, String consumerId);

  /**
   * Refreshes the heartbeat of every group membership of {@code clientId} (BEHAVIOUR Q-HEARTBEAT),
   * found through the heartbeat index (client id → memberships) rather than by scanning the groups.
   * A membership that is gone (the queue, the group or the member no longer exists) is dropped from
   * the index. Null or empty ids are ignored. Never fails for a missing membership.
   *
   * @return how many memberships were refreshed
   */
  int heartbeat(String clientId);

  /** Deletes a group with its cursor, committed offset, members and pending entries. Idempotent. */
  void deleteGroup(String queue, String group);

  /**
   * Claims up to {@code limit} messages for a member of a queue-mode group: new ones from the
   * cursor first, then, to fill the batch, stealable pending entries (see the class javadoc).
   *
   * @param limit how many at most; {@code <= 0} means the queue's {@code batchSize}, or {@link
   *     GroupSettings#claimBatchSize()} when it sets none ({@link
   *     GroupSettings#claimBatchSize(QueueConfig)})
   * @return the deliveries in claim order; empty when there is nothing to claim (also when the PEL
   *     is full and nothing was stealable)
   * @throws GroupNotFoundException if the group does not exist
   * @throws GroupModeMismatchException if the group is in stream mode
   * @throws ConsumerNotFoundException if the consumer is not a member
   * @throws QueueNotFoundException if the queue does not exist
   */
  List<GroupDelivery> claimBatch(String queue, String group, String consumerId, int limit);

  /**
   * Claims one message: the next one from the cursor, else a stealable one.
   *
   * @return the delivery, or empty when there is nothing to claim
   * @throws PelFullException if the group's PEL is full and nothing was stealable
   * @throws GroupNotFoundException if the group does not exist
   * @throws GroupModeMismatchException if the group is in stream mode
   * @throws ConsumerNotFoundException if the consumer is not a member
   * @throws QueueNotFoundException if the queue does not exist
   */
  Optional<GroupDelivery> claimNext(String queue, String group, String consumerId);

  /**
   * Extends the visibility of the entries {@code consumerId} holds at {@code offsets} to now plus
   * the visibility timeout, so a slow consumer keeps its claims (the source connector renews what
   * Kafka has not acknowledged yet). Offsets the consumer does not hold are skipped.
   *
   * @return how many entries were renewed
   * @throws GroupNotFoundException if the group does not exist
   * @throws GroupModeMismatchException if the group is in stream mode
   * @throws QueueNotFoundException if the queue does not exist
   */
  int renew(String queue, String group, String consumerId, long... offsets);

  /**
   * Acknowledges many deliveries of one group at once. Per delivery the effect and the rules are
   * those of {@link GroupDelivery#ack()} — settle once; in queue mode fenced by holder and delivery
   * count, removes the pending entry and advances the committed offset (BEHAVIOUR Q-ACKN); in
   * stream mode checkpoints when the group auto-commits — but the whole batch takes the
   * coordinator's lock once, runs in one {@link ConsumerGroupStore#atomically} section, reads the
   * time once and makes one {@link ConsumerGroupStore#acknowledgeAllPending} call per holder. A
   * pull consumer that handles a claimed batch before settling it (the source connector, a batch
   * job) pays one round trip instead of one per message.
   *
   * <p><b>Partial success.</b> Every delivery that can be acked is acked, whatever happens to the
   * others; the ones that cannot are skipped and returned, in the collection's order:
   *
   * <ul>
   *   <li>a delivery whose settlement already started or succeeded (by another call, or because it
   *       appears twice in {@code deliveries}) is left as it is, and still {@link
   *       GroupDelivery#isSettled()} if it was settled;
   *   <li>a queue-mode delivery that no longer holds its message (stolen or redelivered since, or
   *       already removed) changes nothing and is returned to unsettled, as a single ack that threw
   *       {@link MessageNotPendingException} leaves it.
   * </ul>
   *
   * <p><b>Metrics.</b> {@code acks} counts each delivery acked by this call; the PEL gauge drops by
   * each entry removed; {@code ackLatencyNanos} grows once by the wall-clock time of the whole call
   * (lock wait included; timed on a sample of the calls, see {@link GroupMetrics}), so {@link
   * GroupMetrics#averageAckLatencyNanos()} charges each message of a batch an equal share of its
   * call — the time the settlement cost per message, as a claimed batch's time is shared by its
   * claim attempts — and never counts one call's time twice.
   *
   * <p><b>Failures.</b> If the store fails, or the queue or group is gone, the exception
   * propagates, no ack is counted, and every delivery this call started to settle is returned to
   * unsettled. A transactional store has then applied none of the batch; a store that is not
   * transactional may have removed the entries of deliveries before the failing one, whose later
   * ack then throws {@link MessageNotPendingException}: a delivery is never reported settled unless
   * its settlement was applied.
   *
   * <p>Thread-safe; blocks for the coordinator's lock and does store I/O.
   *
   * @param deliveries deliveries this coordinator handed out, all of one queue and group, in any
   *     order; empty means nothing happens (no lock, no metric)
   * @return the deliveries this call did not ack; empty when it acked them all
   * @throws NullPointerException if {@code deliveries} or one of them is null (nothing is settled)
   * @throws IllegalArgumentException if a delivery is of another queue, group or coordinator than
   *     the first one (nothing is settled)
   * @throws GroupNotFoundException if the group no longer exists
   * @throws QueueNotFoundException if the queue does not exist
   */
  List<GroupDelivery> ackAll(Collection<GroupDelivery> deliveries);

  /** The dead-letter queue of {@code config}: its DLQ topic, else prefix + queue name. */
  String deadLetterQueue(QueueConfig config);

  /**
   * Reads up to {@code limit} messages from a stream-mode group's cursor without moving it:
   * matching, unexpired messages in offset order, plus where the scan stopped (commit it with
   * {@link #commitCursor} once the messages are handed over). At most a few thousand messages are
   * examined per call.
   *
   * @param limit how many at most; {@code <= 0} means the queue's {@code batchSize}, or {@link
   *     GroupSettings#claimBatchSize()} when it sets none ({@link
   *     GroupSettings#claimBatchSize(QueueConfig)})
   * @throws GroupNotFoundException if the group does not exist
   * @throws GroupModeMismatchException if the group is in queue mode
   * @throws ConsumerNotFoundException if the consumer is not a member
   * @throws QueueNotFoundException if the queue does not exist
   */
  StreamBatch peek(String queue, String group, String consumerId, int limit);

  /**
   * Moves a stream-mode group's cursor to {@code next} (after delivering up to it). Ignored when
   * {@code next} is not beyond the cursor. When the group auto-commits, the committed offset
   * follows: every time when {@code autoCommitInterval} is zero, else at most once per interval per
   * group (skipped commits leave committed behind the cursor until the next one).
   *
   * @throws IllegalArgumentException if {@code next} is beyond the queue's tail
   * @throws CommitOffsetOnlyForStreamModeException if the group is in queue mode
   * @throws GroupNotFoundException if the group does not exist
   */
  void commitCursor(String queue, String group, long next);

  /**
   * Sets a stream-mode group's committed offset by hand (manual commit); it may move backwards.
   *
   * @throws CommitOffsetOnlyForStreamModeException if the group is in queue mode
   * @throws InvalidOffsetException if {@code offset} is beyond the group's cursor
   * @throws IllegalArgumentException if {@code offset} is negative
   * @throws GroupNotFoundException if the group does not exist
   */
  void commitOffset(String queue, String group, long offset);

  /**
   * Pauses the group's delivery: from then on its claims ({@link #claimBatch}, {@link #claimNext})
   * and stream reads ({@link #peek}) hand out nothing, in this process and in every other one
   * sharing the store, and the pause is stored, so it holds after a restart until {@link #resume}.
   * What members already hold stays theirs: acks, nacks, rejects and renewals work as before, and
   * an entry whose visibility times out waits for the resume instead of going to another member.
   * Members keep their membership (a claim or a read still counts as a heartbeat).
   *
   * @return false when the group was already paused (nothing changed)
   * @throws GroupNotFoundException if the group does not exist
   * @throws QueueNotFoundException if the queue does not exist
   */
  boolean pause(String queue, String group);

  /**
   * Resumes a paused group's delivery ({@link #pause}); push subscriptions of this process are
   * woken at once, those of other processes within their periodic sweep.
   *
   * @return false when the group was not paused (nothing changed)
   * @throws GroupNotFoundException if the group does not exist
   * @throws QueueNotFoundException if the queue does not exist
   */
  boolean resume(String queue, String group);

  /**
   * What {@link #resetOffsets} would do to {@code group} of {@code queue}: its position now, the
   * offset it would move to ({@code offset} clamped to the queue's {@code [head, tail]}), the
   * pending claims it would drop and its members. Changes nothing.
   *
   * @throws io.queuebridge.core.errors.QueueNotFoundException if there is no such queue
   * @throws io.queuebridge.core.errors.GroupNotFoundException if the queue has no such group
   */
  OffsetReset planOffsetReset(String queue, String group, long offset);

  /**
   * Moves {@code group}'s cursor and committed offset to {@code offset} (clamped to the queue's
   * {@code [head, tail]}) and drops all its pending claims, atomically for the group: messages from
   * the new offset on are delivered again (or for the first time), messages before it are never
   * delivered to this group again. Deliveries its members still hold can no longer be settled.
   * Works in both modes. Refused while members are registered in the group unless {@code force}.
   *
   * @throws io.queuebridge.core.errors.GroupHasMembersException if the group has members and {@code
   *     force} is false (nothing changed)
   * @throws io.queuebridge.core.errors.QueueNotFoundException if there is no such queue
   * @throws io.queuebridge.core.errors.GroupNotFoundException if the queue has no such group
   */
  OffsetReset resetOffsets(String queue, String group, long offset, boolean force);

  /**
   * After the messages of {@code queue} below {@code head} were removed (a purge): moves every
   * group's cursor and committed offset up to {@code head} and drops the pending claims below it.
   * Returns how many claims were dropped.
   *
   * @throws io.queuebridge.core.errors.QueueNotFoundException if there is no such queue
   */
  int movePast(String queue, long head);

  /**
   * Messages the group has not committed: {@code max(0, tail - committed)} (undelivered plus
   * pending). Lock-free.
   *
   * @throws GroupNotFoundException if the group does not exist
   * @throws QueueNotFoundException if the queue does not exist
   */
  long lag(String queue, String group);

  /** The group's current state, or empty. @throws QueueNotFoundException if no such queue */
  Optional<ConsumerGroupState> group(String queue, String group);

  /** Every group of the queue. @throws QueueNotFoundException if no such queue */
  List<ConsumerGroupState> groups(String queue);

  /** A snapshot of the counters. */
  GroupMetrics metrics();
}
