package io.queuebridge.core.internal.group;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.errors.DeliveryAlreadySettledException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The {@link GroupDelivery} the {@link GroupCoordinator} hands out: the settle-once state machine
 * (unsettled, settling, settled) and the forwarding of each settlement to the coordinator that
 * created it, which applies it ({@link Settlement}) under its lock and the group's fence.
 */
final class ClaimedDelivery implements GroupDelivery {
  private static final int UNSETTLED = 0;
  private static final int SETTLING = 1;
  private static final int SETTLED = 2;
  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(ClaimedDelivery.class, "state", int.class);
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
  private final Instant deliveredAt;
  private final Instant firstDeliveredAt;
  private final String workGroup; // null: the queue names no primary group, or queue mode
  private final long workCommitted;
  private final String orderKey; // "" unless an ordered queue's message has a key (Q-ORDER)
  // Starts UNSETTLED (0) by default: an explicit initialiser would be a volatile store, a full
  // fence per delivery on the claim path.
  private volatile int state;

  ClaimedDelivery(
      GroupCoordinator coordinator,
      String queue,
      String group,
      String consumerId,
      GroupMode mode,
      int deliveryCount,
      Message message,
      Instant deliveredAt,
      Instant firstDeliveredAt,
      String workGroup,
      long workCommitted,
      String orderKey) {
    this.coordinator = coordinator;
    this.queue = queue;
    this.group = group;
    this.consumerId = consumerId;
    this.mode = mode;
    this.deliveryCount = deliveryCount;
    this.message = message;
    this.deliveredAt = deliveredAt;
    this.firstDeliveredAt = firstDeliveredAt;
    this.workGroup = workGroup;
    this.workCommitted = workCommitted;
    this.orderKey = orderKey;
  }

  /**
   * The ordering key of the entry this delivery holds (BEHAVIOUR Q-ORDER); empty when the queue
   * orders nothing or the message has no key.
   */
  String orderKey() {
    return orderKey;
  }

  @Override
  public String queue() {
    return queue;
  }

  @Override
  public String group() {
    return group;
  }

  @Override
  public String consumerId() {
    return consumerId;
  }

  @Override
  public GroupMode mode() {
    return mode;
  }

  @Override
  public long offset() {
    return message.offset();
  }

  @Override
  public int deliveryCount() {
    return deliveryCount;
  }

  @Override
  public Message message() {
    return message;
  }

  @Override
  public Instant deliveredAt() {
    return deliveredAt;
  }

  @Override
  public Instant firstDeliveredAt() {
    return firstDeliveredAt;
  }

  @Override
  public Map<String, String> deliveryProperties() {
    long offset = message.offset();
    Map<String, String> stamps = new LinkedHashMap<>(16);
    stamps.put(MessageProperties.MESSAGE_ID, queue + ":" + offset);
    stamps.put(MessageProperties.GROUP_ID, group);
    stamps.put(MessageProperties.QUEUE, queue);
    stamps.put(MessageProperties.OFFSET, Long.toString(offset));
    stamps.put(MessageProperties.SOURCE_TOPIC, message.topic());
    if (mode == GroupMode.STREAM) {
      stamps.put(MessageProperties.STREAM_OFFSET, Long.toString(offset));
      if (message.createdAt() != null) {
        stamps.put(
            MessageProperties.STREAM_TIMESTAMP, Long.toString(message.createdAt().toEpochMilli()));
      }
      if (workGroup != null) {
        stamps.put(MessageProperties.WORK_GROUP, workGroup);
        stamps.put(MessageProperties.WORK_COMMITTED_OFFSET, Long.toString(workCommitted));
        stamps.put(MessageProperties.WORK_ACKED, Boolean.toString(offset < workCommitted));
      }
    }
    return Collections.unmodifiableMap(stamps);
  }

  @Override
  public boolean isSettled() {
    return state == SETTLED;
  }

  @Override
  public boolean renew() {
    return mode == GroupMode.QUEUE && coordinator.renewDelivery(this);
  }

  /** Whether no settlement has started or succeeded; read under the coordinator's lock. */
  boolean isUnsettled() {
    return state == UNSETTLED;
  }

  @Override
  public void ack() {
    settle(ACK, null, null);
  }

  @Override
  public void nack() {
    settle(NACK, null, null);
  }

  @Override
  public void nack(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException(
          "nack delay must be >= 0 for offset " + offset() + " of queue " + queue + ": " + delay);
    }
    settle(NACK, delay, null);
  }

  @Override
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
