package io.queuebridge.core.delivery;

/**
 * A snapshot of the push delivery engine's counters (BEHAVIOUR Q-METRICS). Monotonic since the
 * engine was built, except {@code subscriptions}, a gauge.
 *
 * @param subscriptions live push subscriptions now (gauge)
 * @param passes delivery passes run (one claim or stream read for one subscription each)
 * @param delivered messages handed to handlers
 * @param handlerFailures handler calls that threw
 * @param unsettled handler calls that returned without settling their delivery
 * @param released claimed messages given back unhandled because their subscription was closing
 * @param triggersDropped delivery triggers dropped because the trigger queue was full (the sweep
 *     catches up)
 * @param sweeps periodic sweeps run
 */
public record DeliveryMetrics(
    long subscriptions,
    long passes,
    long delivered,
    long handlerFailures,
    long unsettled,
    long released,
    long triggersDropped,
    long sweeps) {

  /** All zero. */
  public static final DeliveryMetrics EMPTY = new DeliveryMetrics(0, 0, 0, 0, 0, 0, 0, 0);
}
