package io.queuebridge.core.store.file;

/**
 * Data that passed its CRC (or has none) does not follow the format. Internal: callers turn it into
 * a {@link io.queuebridge.core.errors.StoreCorruptedException} naming the file and position.
 */
final class FormatException extends RuntimeException {
  private final long position;

  FormatException(String message, long position) {
    super(message);
    this.position = position;
  }

  /** Position of the problem relative to the decoded buffer, or -1. */
  long position() {
    return position;
  }
}
