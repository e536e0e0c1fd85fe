package io.queuebridge.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** The project version, read from a resource the build fills in. */
public final class QueueBridgeVersion {
  private static final String VERSION = load();

  private QueueBridgeVersion() {}

  /** The version of the queue-bridge build on the class path, e.g. {@code 0.1.0}. */
  public static String get() {
    return VERSION;
  }

  private static String load() {
    try (InputStream in =
        QueueBridgeVersion.class.getResourceAsStream("queue-bridge-version.properties")) {
      if (in == null) {
        throw new IllegalStateException("queue-bridge-version.properties missing from the jar");
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
