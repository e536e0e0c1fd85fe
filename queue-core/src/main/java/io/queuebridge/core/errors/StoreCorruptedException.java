package io.queuebridge.core.errors;

/**
 * Stored data failed verification (bad frame, CRC mismatch, unknown format version). Raised instead
 * of returning damaged data; names the file and byte position when there is one. Not retriable.
 */
public class StoreCorruptedException extends FatalQueueException {
  private final String file;
  private final long position;

  public StoreCorruptedException(String queue, String file, long position, String reason) {
    super(
        queue,
        "corrupt store data in "
            + file
            + (position >= 0 ? " at byte " + position : "")
            + ": "
            + reason);
    this.file = file;
    this.position = position;
  }

  /** The damaged file. */
  public String file() {
    return file;
  }

  /** The byte position of the damage, or -1 when unknown. */
  public long position() {
    return position;
  }
}
