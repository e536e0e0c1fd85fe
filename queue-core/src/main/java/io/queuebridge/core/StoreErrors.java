package io.queuebridge.core;

import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.errors.QueueStoreException;

/**
 * How the manager reports what a store raised (BEHAVIOUR Q-ERR): a {@link QueueException} passes
 * through unchanged so that callers can classify it by type; anything else is wrapped in a {@link
 * QueueStoreException} naming what was being done, with the cause kept. Stateless.
 */
final class StoreErrors {
  private StoreErrors() {}

  static QueueException wrap(String queue, String action, RuntimeException e) {
    if (e instanceof QueueException q) {
      return q;
    }
    return new QueueStoreException(queue, action + " failed: " + e, e);
  }
}
