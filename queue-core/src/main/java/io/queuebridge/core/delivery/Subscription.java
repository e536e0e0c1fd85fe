package io.queuebridge.core.delivery;

import io.queuebridge.core.config.GroupMode;
import java.util.Optional;

/**
 * A live push subscription: one member of one consumer group whose messages the delivery engine
 * hands to a {@link DeliveryHandler} ({@link io.queuebridge.core.QueueManager#consume}).
 *
 * <p>A subscription ends when it is closed, when the manager stops, or when the engine finds it can
 * no longer deliver to it: the queue or group was deleted, or the member was removed from the group
 * (an explicit {@code unsubscribe}, or the stale-consumer cleanup). {@link #endCause()} tells which
 * error ended it in the last two cases.
 *
 * <p>Thread-safe.
 */
public interface Subscription extends AutoCloseable {

  /** The queue read. */
  String queue();

  /** The effective group id ({@code group} or {@code group@pattern}). */
  String group();

  /** The member id the subscription claims and reads as. */
  String consumerId();

  /** The group's mode. */
  GroupMode mode();

  /** Whether messages may still be handed to the handler. */
  boolean isActive();

  /**
   * The error that ended the subscription, if the engine ended it (empty while active or closed).
   */
  Optional<Throwable> endCause();

  /**
   * Ends the subscription and leaves the group. No handler call starts after this returns, and the
   * same consumer may subscribe to the group again at once; a call in progress is waited for
   * (unless {@code close} is called from the handler itself, which then returns at once and the
   * subscription ends when the handler returns). Messages claimed in the current batch but not yet
   * handed over are released: in queue mode they are nacked with no delay (each such release still
   * counts as a delivery of that message), in stream mode the cursor is committed only past what
   * was handed over. Pending entries of messages handed over and not settled stay pending and are
   * redelivered after the visibility timeout. Idempotent; if the waiting thread is interrupted, the
   * wait ends and the interrupt status is kept.
   */
  @Override
  void close();
}
