package io.queuebridge.core.job;

import io.queuebridge.core.errors.DeliveryUnsettledException;
import io.queuebridge.core.errors.DriverClosedException;
import io.queuebridge.core.errors.InvalidHandlerException;
import io.queuebridge.core.errors.InvalidQueueException;
import io.queuebridge.core.errors.JobHandlerException;
import java.time.Duration;

/**
 * Dispatches jobs to named queues and runs competing consumers over them (BEHAVIOUR J-DRIVER).
 *
 * <p><b>Cancellation</b> is Java interruption: these methods check the calling thread's interrupt
 * status and throw {@link InterruptedException} (clearing it) when it is set, and blocking waits
 * end with {@code InterruptedException} when the thread is interrupted.
 *
 * <p><b>Threads.</b> Implementations are thread-safe. {@link #consume} runs on, and blocks, the
 * calling thread; run one call per consumer thread.
 */
public interface JobDriver {

  /**
   * Lifecycle hook; drivers without background work do nothing.
   *
   * @throws InterruptedException if the thread is interrupted (checked before closure)
   * @throws DriverClosedException after {@link #stop}
   */
  void start() throws InterruptedException;

  /**
   * Adds a job to its queue's tail and wakes waiting consumers. Payload and metadata are copied, so
   * later changes to the caller's objects are invisible; an empty id is replaced by a unique one;
   * the input attempts count is ignored (a dispatched job has zero attempts). On any error nothing
   * is enqueued.
   *
   * @return the job id (the generated one when the message had none)
   * @throws InterruptedException if the thread is interrupted (it wins over closure)
   * @throws InvalidQueueException if the message's queue is empty
   * @throws DriverClosedException after {@link #stop}
   * @throws NullPointerException if {@code message} is null
   */
  default String dispatch(JobMessage message) throws InterruptedException {
    return dispatch(message, Duration.ZERO);
  }

  /**
   * {@link #dispatch(JobMessage)} of a job that no consumer receives before {@code delay} has
   * passed (BEHAVIOUR J-DISP, Q-DELAY): a scheduled job. {@link Duration#ZERO} is an ordinary
   * dispatch. The delay counts from the dispatch, by the driver's clock; a job falls due no earlier
   * than that, and consumers receive due jobs earliest first.
   *
   * @throws IllegalArgumentException if {@code delay} is negative (nothing is enqueued)
   * @throws io.queuebridge.core.errors.InvalidConfigException if the queue refuses a delay that
   *     long (its {@code maxDelay})
   * @throws NullPointerException if an argument is null
   */
  String dispatch(JobMessage message, Duration delay) throws InterruptedException;

  /**
   * Receives and handles jobs from {@code queue} on the calling thread until the thread is
   * interrupted or the driver stops; never returns normally. Concurrent consumers of one queue
   * compete: each job is handed to exactly one handler. Interruption and shutdown are checked
   * before each reservation; a delivery already handed to the handler stays the handler's to
   * settle. Jobs not yet handed out stay for other consumers.
   *
   * <p>If the handler throws, the error is logged, the delivery is failed (unless the handler
   * already settled it) and consume ends: with the same {@link InterruptedException} if that is
   * what the handler threw, else with a {@link JobHandlerException} whose cause is the handler's
   * error. If the handler returns without settling, the delivery is failed and consume ends with
   * {@link DeliveryUnsettledException}.
   *
   * @throws InterruptedException when the thread is interrupted (the normal way to stop consuming)
   * @throws InvalidQueueException if {@code queue} is null or empty
   * @throws InvalidHandlerException if {@code handler} is null
   * @throws DriverClosedException when the driver is stopped (at the start or later)
   * @throws JobHandlerException when the handler threw
   * @throws DeliveryUnsettledException when the handler returned without settling
   */
  void consume(String queue, JobHandler handler) throws InterruptedException;

  /**
   * Stops the driver: refuses new admissions, discards the jobs not yet handed out (queued and
   * delayed), wakes the consumers (they end with {@link DriverClosedException} at their next
   * check), then waits up to {@code timeout} for active consumers and their handlers to finish. The
   * release happens even with a zero or negative timeout or an interrupted thread; only the wait is
   * skipped. Running handlers are never forcibly stopped. Idempotent: a repeated call waits again
   * for the consumers still running.
   *
   * @return true if no consumer was running when the call returned, false if the timeout passed
   *     first
   * @throws InterruptedException if the thread was interrupted (the driver is stopped all the same)
   */
  boolean stop(Duration timeout) throws InterruptedException;

  /** The name of the messaging system behind the driver ({@code memory}, ...). */
  String messagingSystem();
}
