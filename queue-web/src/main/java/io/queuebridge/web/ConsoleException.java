package io.queuebridge.web;

/**
 * A request the console cannot serve as asked: an unknown store or queue, a malformed form, a
 * change refused. Its message is shown on the page as it is; nothing was changed.
 */
final class ConsoleException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int status;

  ConsoleException(int status, String message) {
    super(message);
    this.status = status;
  }

  /** The HTTP status the page is sent with. */
  int status() {
    return status;
  }

  static ConsoleException badRequest(String message) {
    return new ConsoleException(400, message);
  }

  static ConsoleException notFound(String message) {
    return new ConsoleException(404, message);
  }

  static ConsoleException forbidden(String message) {
    return new ConsoleException(403, message);
  }
}
