package io.queuebridge.store.postgres;

import io.queuebridge.core.errors.ReadOnlyStoreException;

/** How the read-only views name a refused call. */
final class ReadOnlyViews {
  private ReadOnlyViews() {}

  /**
   * The refusal of {@code operation} on {@code queue} (and {@code groupId}, when not null), after
   * the closed check: a closed store says it is closed first, as every other call does.
   */
  static ReadOnlyStoreException refusal(Db db, String operation, String queue, String groupId) {
    db.checkOpen();
    StringBuilder call = new StringBuilder(operation);
    if (queue != null) {
      call.append(" of queue '").append(queue).append('\'');
    }
    if (groupId != null) {
      call.append(", group '").append(groupId).append('\'');
    }
    return new ReadOnlyStoreException(db.config().description() + " (read-only)", call.toString());
  }
}
