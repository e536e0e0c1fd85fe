package io.queuebridge.core.job;

import io.queuebridge.core.errors.DeliveryAlreadySettledException;
import io.queuebridge.core.errors.DeliveryUnsettledException;
import io.queuebridge.core.errors.JobHandlerException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;

/**
 * The settle-once state machine of BEHAVIOUR J-SETTLE and the handler outcome rules of J-HAND,
 * shared by every {@link JobDriver}: a driver supplies only what each settlement does ({@link
 * #onAcknowledge}, {@link #onRetry}, {@link #onReject}, {@link #onFail}).
 *
 * <p>States: unsettled → settling (while an action runs) → settled. A settlement while settling or
 * settled throws {@link DeliveryAlreadySettledException}; an interrupted thread gets {@link
 * InterruptedException} and the delivery stays unsettled; an action that throws returns the
 * delivery to unsettled and the error propagates. Thread-safe (one compare-and-set decides).
 */
abstract class SettleOnceDelivery implements Delivery {
  private static final int UNSETTLED = 0;
  private static final int SETTLING = 1;
  private static final int SETTLED = 2;

  private final JobMessage job;
  private final AtomicInteger state = new AtomicInteger(UNSETTLED);

  SettleOnceDelivery(JobMessage job) {
    this.job = job;
  }

  /** The job; the driver's own copy (reading a payload through it copies). */
  @Override
  public final JobMessage message() {
    return job;
  }

  @Override
  public final void acknowledge() throws InterruptedException {
    settle(true, this::onAcknowledge);
  }

  @Override
  public final void retry(Duration delay) throws InterruptedException {
    Objects.requireNonNull(delay, "delay");
    settle(true, () -> onRetry(delay));
  }

  @Override
  public final void reject() throws InterruptedException {
    settle(true, this::onReject);
  }

  @Override
  public final void fail(Throwable cause) throws InterruptedException {
    settle(true, () -> onFail(cause));
  }

  /** Whether a settlement succeeded. */
  final boolean isSettled() {
    return state.get() == SETTLED;
  }

  /** What an acknowledgement does. */
  abstract void onAcknowledge();

  /** What a retry does ({@code delay} is not null). */
  abstract void onRetry(Duration delay);

  /** What a rejection does. */
  abstract void onReject();

  /** What a failure does; {@code cause} may be null. */
  abstract void onFail(Throwable cause);

  /**
   * The driver's terminal cleanup (BEHAVIOUR J-HAND): fails the delivery with {@code cause},
   * ignoring interruption and an earlier settlement (which stands); a failing action is logged.
   */
  final void cleanup(Throwable cause, Logger log) {
    try {
      settle(false, () -> onFail(cause));
    } catch (DeliveryAlreadySettledException | InterruptedException e) {
      // The handler's own settlement stands (InterruptedException cannot happen here).
    } catch (RuntimeException e) {
      log.warn(
          "cannot fail job {} of queue '{}'; the driver redelivers it if it can",
          job.id(),
          job.queue(),
          e);
    }
  }

  private void settle(boolean checkInterrupt, Runnable action) throws InterruptedException {
    if (!state.compareAndSet(UNSETTLED, SETTLING)) {
      throw new DeliveryAlreadySettledException(job.queue(), job.id());
    }
    boolean done = false;
    try {
      if (checkInterrupt && Thread.interrupted()) {
        throw new InterruptedException("settlement interrupted");
      }
      action.run();
      done = true;
    } finally {
      state.set(done ? SETTLED : UNSETTLED);
    }
  }

  /**
   * Runs {@code handler} on {@code delivery} with the outcome rules of BEHAVIOUR J-HAND: a handler
   * that throws is logged, the delivery failed (a settlement it made stands) and consume ends with
   * {@link JobHandlerException} (or the {@link InterruptedException} itself); a handler that
   * returns without settling is logged, failed with {@link DeliveryUnsettledException}, and consume
   * ends with it; an {@link Error} fails the delivery and propagates.
   */
  static void run(JobHandler handler, SettleOnceDelivery delivery, Logger log)
      throws InterruptedException {
    JobMessage job = delivery.message();
    Exception failure = null;
    try {
      handler.handle(delivery);
    } catch (Exception e) {
      failure = e;
    } catch (Error e) {
      delivery.cleanup(e, log);
      throw e;
    }
    if (failure != null) {
      log.warn(
          "job delivery handler failed on job {} of queue '{}'; failing the delivery",
          job.id(),
          job.queue(),
          failure);
      delivery.cleanup(failure, log);
      if (failure instanceof InterruptedException ie) {
        throw ie;
      }
      throw new JobHandlerException(job.id(), job.queue(), failure);
    }
    if (!delivery.isSettled()) {
      DeliveryUnsettledException unsettled = new DeliveryUnsettledException(job.id(), job.queue());
      log.warn("{}; failing the delivery", unsettled.getMessage());
      delivery.cleanup(unsettled, log);
      throw unsettled;
    }
  }
}
