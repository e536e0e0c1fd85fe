package io.queuebridge.core.job;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/** An slf4j logger that keeps what it is given. Thread-safe. */
final class RecordingLogger extends LegacyAbstractLogger {
  private static final long serialVersionUID = 1L;

  record Event(Level level, String message, Throwable error) {}

  final transient List<Event> events = new CopyOnWriteArrayList<>();

  RecordingLogger() {
    this.name = "recording";
  }

  @Override
  protected String getFullyQualifiedCallerName() {
    return null;
  }

  @Override
  protected void handleNormalizedLoggingCall(
      Level level, Marker marker, String pattern, Object[] args, Throwable error) {
    events.add(new Event(level, MessageFormatter.basicArrayFormat(pattern, args), error));
  }

  @Override
  public boolean isTraceEnabled() {
    return true;
  }

  @Override
  public boolean isDebugEnabled() {
    return true;
  }

  @Override
  public boolean isInfoEnabled() {
    return true;
  }

  @Override
  public boolean isWarnEnabled() {
    return true;
  }

  @Override
  public boolean isErrorEnabled() {
    return true;
  }
}
