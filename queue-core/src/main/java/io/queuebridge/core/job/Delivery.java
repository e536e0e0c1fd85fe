package io.queuebridge.core.job;

import io.queuebridge.core.errors.DeliveryAlreadySettledException;
import io.queuebridge.core.errors.DriverClosedException;
import java.time.Duration;

/**
 * One job handed to one handler, settled exactly once (BEHAVIOUR J-SETTLE).
 *
 * <p><b>Settle once.</b> A delivery moves from <em>unsettled</em> to <em>settling</em> while a
 * settlement runs, then to <em>settled</em>. Any settlement call while it is settling or settled
 * throws {@link DeliveryAlreadySettledException} and changes nothing. If the thread is interrupted
 * when a settlement is called, it throws {@link InterruptedException} (the interrupt status is
 * cleared) and the delivery stays unsettled. If a settlement's action fails, the delivery returns
 * to unsettled, so it may be settled again, and the failure is thrown.
 *
 * <p><b>Threads.</b> Thread-safe: a handler may pass its delivery to another thread; concurrent
 * settlement attempts race and exactly one wins. Settlements do not block in the memory driver;
 * other drivers may block for their store's I/O.
 */
public interface Delivery {

  /** The job as delivered: attempts counts this delivery. Immutable; reading copies the payload. */
  JobMessage message();

  /**
   * The job is done; the message is dropped.
   *
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws InterruptedException if the thread is interrupted (delivery stays unsettled)
   */
  void acknowledge() throws InterruptedException;

  /**
   * Offers the job again after {@code delay}, keeping its attempts count (the next delivery adds
   * one). A zero delay means the driver's default retry delay; an effective delay that is not
   * positive requeues at the queue's tail at once.
   *
   * @throws DriverClosedException if the driver is stopped (delivery stays unsettled)
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws InterruptedException if the thread is interrupted (delivery stays unsettled)
   * @throws NullPointerException if {@code delay} is null
   */
  void retry(Duration delay) throws InterruptedException;

  /**
   * The job is refused for good; the message is dropped (the memory driver has no dead letters).
   *
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws InterruptedException if the thread is interrupted (delivery stays unsettled)
   */
  void reject() throws InterruptedException;

  /**
   * The job failed terminally: {@code cause} (may be null) is logged and the message dropped.
   *
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws InterruptedException if the thread is interrupted (delivery stays unsettled)
   */
  void fail(Throwable cause) throws InterruptedException;
}
