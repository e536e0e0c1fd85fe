package io.queuebridge.core.job;

import io.queuebridge.core.errors.DeliveryUnsettledException;

/**
 * Handles one delivery on a consumer's thread. The handler owns the delivery: it must settle it
 * ({@link Delivery#acknowledge()}, {@link Delivery#retry}, {@link Delivery#reject()} or {@link
 * Delivery#fail}) before returning, or the driver fails it and ends {@link JobDriver#consume} with
 * {@link DeliveryUnsettledException}. A handler that throws ends {@code consume} too (see there).
 */
@FunctionalInterface
public interface JobHandler {

  /**
   * Handles a delivery.
   *
   * @throws Exception anything; the driver logs it, fails the delivery unless the handler already
   *     settled it, and ends the consume call
   */
  void handle(Delivery delivery) throws Exception;
}
