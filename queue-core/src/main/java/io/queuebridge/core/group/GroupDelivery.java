package io.queuebridge.core.group;

import io.queuebridge.core.GroupMode;
import io.queuebridge.core.Message;
import io.queuebridge.core.MessageNotPendingException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;

/**
 * One message handed to one consumer of a group, with its settle-once handle (BEHAVIOUR Q-SETTLE).
 *
 * <p><b>Settle once.</b> {@link #ack()}, {@link #nack()}, {@link #nack(Duration)} and {@link
 * #reject(String)} follow the job API's rules (BEHAVIOUR J-SETTLE): the delivery moves from
 * unsettled to settling to settled; a settlement while it is settling or settled throws {@link
 * DeliveryAlreadySettledException}; a settlement that fails (the store failed, the message is no
 * longer held by this delivery) returns it to unsettled and throws.
 *
 * <p><b>Fencing.</b> In queue mode a settlement applies only while the group's pending entry is
 * still the one this delivery created: same consumer and same delivery count. Once the entry was
 * stolen or redelivered (after the visibility timeout or a nack), this stale handle's settlements
 * throw {@link MessageNotPendingException} and change nothing, so a slow consumer can never settle
 * the delivery another consumer is working on. There is no settling of an arbitrary pending offset
 * by any member, and no ack by bare message id across groups: handles replace both.
 *
 * <p><b>Meaning per mode.</b> Queue mode: ack removes the entry and advances the committed offset;
 * nack makes the message claimable again, by any member including this one, after the queue's retry
 * backoff or the given delay, and dead-letters it instead once its retries are exhausted; reject
 * dead-letters it with the reason (or drops it when the queue's DLQ is disabled). Stream mode: ack
 * checkpoints ({@code committed = max(committed, offset + 1)}) when the group auto-commits and does
 * nothing otherwise; nack does nothing (replay is by seeking the cursor); reject moves the cursor
 * and the committed offset past the message.
 *
 * <p><b>Batches.</b> {@link GroupCoordinator#ackAll} acknowledges many deliveries of one group in
 * one locked section, under the same settle-once and fencing rules.
 *
 * <p>Thread-safe. Settlements take the coordinator's lock and do store I/O.
 */
public final class GroupDelivery {
  private static final int UNSETTLED = 0;
  private static final int SETTLING = 1;
  private static final int SETTLED = 2;
  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(GroupDelivery.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private static final int ACK = 0;
  private static final int NACK = 1;
  private static final int REJECT = 2;

  private final GroupCoordinator coordinator;
  private final String queue;
  private final String group;
  private final String consumerId;
  private final GroupMode mode;
  private final int deliveryCount;
  private final Message message;
  // Starts UNSETTLED (0) by default: an explicit initialiser would be a volatile store, a full
  // fence per delivery on the claim path.
  private volatile int state;

  GroupDelivery(
      GroupCoordinator coordinator,
      String queue,
      String group,
      String consumerId,
      GroupMode mode,
      int deliveryCount,
      Message message) {
    this.coordinator = coordinator;
    this.queue = queue;
    this.group = group;
    this.consumerId = consumerId;
    this.mode = mode;
    this.deliveryCount = deliveryCount;
    this.message = message;
  }

  public String queue() {
    return queue;
  }

  /** The effective group id. */
  public String group() {
    return group;
  }

  /** The member the message was handed to. */
  public String consumerId() {
    return consumerId;
  }

  public GroupMode mode() {
    return mode;
  }

  /** The message's offset in the queue. */
  public long offset() {
    return message.offset();
  }

  /** Deliveries of this message to the group so far, this one included; always 1 in stream mode. */
  public int deliveryCount() {
    return deliveryCount;
  }

  /** The stored message; immutable. */
  public Message message() {
    return message;
  }

  /** Whether a settlement of this delivery succeeded. */
  public boolean isSettled() {
    return state == SETTLED;
  }

  /**
   * Extends this delivery's claim (queue mode) to now plus the visibility timeout, so a long
   * handler keeps the message (the job driver renews while its handler runs). Changes nothing once
   * a settlement of this delivery started or succeeded, so a nack's delay is never pushed back; nor
   * when the claim was already stolen or redelivered (fenced like the settlements); nor in stream
   * mode.
   *
   * @return whether the claim was extended
   * @throws io.queuebridge.core.QueueNotFoundException if the queue does not exist
   */
  public boolean renew() {
    return mode == GroupMode.QUEUE && coordinator.renewDelivery(this);
  }

  /** Whether no settlement has started or succeeded; read under the coordinator's lock. */
  boolean isUnsettled() {
    return state == UNSETTLED;
  }

  /**
   * Acknowledges the message.
   *
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws MessageNotPendingException if this delivery no longer holds the message (queue mode)
   */
  public void ack() {
    settle(ACK, null, null);
  }

  /**
   * Gives the message back for a retry after the queue's backoff for this attempt (queue mode), or
   * does nothing (stream mode).
   *
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws MessageNotPendingException if this delivery no longer holds the message (queue mode)
   */
  public void nack() {
    settle(NACK, null, null);
  }

  /**
   * Gives the message back for a retry after {@code delay} (queue mode; zero = at once), or does
   * nothing (stream mode).
   *
   * @throws IllegalArgumentException if {@code delay} is negative
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws MessageNotPendingException if this delivery no longer holds the message (queue mode)
   */
  public void nack(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException(
          "nack delay must be >= 0 for offset " + offset() + " of queue " + queue + ": " + delay);
    }
    settle(NACK, delay, null);
  }

  /**
   * Refuses the message for good: dead-letters it with {@code reason} (queue mode) or moves the
   * cursor past it (stream mode).
   *
   * @param reason why; recorded in the dead letter's {@code _dlq_reason}; null means empty
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws MessageNotPendingException if this delivery no longer holds the message (queue mode)
   * @throws io.queuebridge.core.QueueStoreException if the dead letter could not be written (the
   *     message stays pending)
   */
  public void reject(String reason) {
    String why = Objects.requireNonNullElse(reason, "");
    settle(REJECT, null, why);
  }

  private void settle(int action, Duration delay, String reason) {
    if (!beginSettling()) {
      throw new DeliveryAlreadySettledException(queue, group, offset());
    }
    boolean done = false;
    try {
      switch (action) {
        case ACK -> coordinator.settleAck(this);
        case NACK -> coordinator.settleNack(this, delay);
        default -> coordinator.settleReject(this, reason);
      }
      done = true;
    } finally {
      endSettling(done);
    }
  }

  /** The coordinator that handed this delivery out ({@link GroupCoordinator#ackAll}). */
  GroupCoordinator coordinator() {
    return coordinator;
  }

  /**
   * Moves this delivery from unsettled to settling; false (nothing changes) if a settlement already
   * started or succeeded. The caller that gets true owns the delivery until {@link #endSettling}.
   */
  boolean beginSettling() {
    return STATE.compareAndSet(this, UNSETTLED, SETTLING);
  }

  /** Ends a settlement begun by {@link #beginSettling}: settled if {@code done}, else unsettled. */
  void endSettling(boolean done) {
    STATE.setRelease(this, done ? SETTLED : UNSETTLED); // only the owner of SETTLING writes here
  }

  @Override
  public String toString() {
    return "GroupDelivery{queue="
        + queue
        + ", group="
        + group
        + ", offset="
        + offset()
        + ", consumer="
        + consumerId
        + ", deliveryCount="
        + deliveryCount
        + ", mode="
        + mode
        + "}";
  }
}
