package io.queuebridge.connect.common;

import io.queuebridge.core.config.Names;
import io.queuebridge.core.errors.InvalidConfigException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

/** Validators the connectors' configs share, so that {@code validate} refuses what a task would. */
public final class ConfigValidators {
  private ConfigValidators() {}

  /**
   * A queue name every store accepts (the rules of {@link Names#encode}: non-empty, no control
   * character or unpaired surrogate, short enough to be a file name once encoded).
   */
  public static ConfigDef.Validator queueName() {
    return new QueueName();
  }

  /** A list of names, each a {@link #queueName()}. */
  public static ConfigDef.Validator queueNames() {
    return new QueueNameList();
  }

  /**
   * An absolute path, or none. A relative {@code queue.store.path} would resolve against the
   * worker's working directory, which is not the same for every worker or every start.
   */
  public static ConfigDef.Validator absolutePathOrNone() {
    return new AbsolutePath();
  }

  private static void checkName(String key, Object whole, String name) {
    try {
      Names.encode(key, name);
    } catch (InvalidConfigException e) {
      // the element Names refused, as it shows it (control characters escaped, long names cut)
      throw new ConfigException(key, e.value() == null ? "" : e.value(), e.getMessage());
    }
  }

  private static final class QueueName implements ConfigDef.Validator {
    @Override
    public void ensureValid(String name, Object value) {
      checkName(name, value, (String) value);
    }

    @Override
    public String toString() {
      return "a queue name: non-empty, no control characters, at most "
          + Names.MAX_ENCODED_BYTES
          + " bytes once encoded for the file system";
    }
  }

  private static final class QueueNameList implements ConfigDef.Validator {
    @Override
    public void ensureValid(String name, Object value) {
      if (value == null) {
        return;
      }
      for (Object element : (List<?>) value) {
        checkName(name, value, (String) element);
      }
    }

    @Override
    public String toString() {
      return "queue names, each non-empty, without control characters, at most "
          + Names.MAX_ENCODED_BYTES
          + " bytes once encoded for the file system";
    }
  }

  /**
   * A value as an error shows it: control characters and surrogates as {@code \\uXXXX}, at most 200
   * characters shown, so a hostile value cannot garble the worker's log or REST answer.
   */
  public static String shown(Object value) {
    if (value == null) {
      return "null";
    }
    return shown(value.toString());
  }

  private static String shown(String value) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < value.length() && i < 200; i++) {
      char c = value.charAt(i);
      if (Character.isISOControl(c) || Character.isSurrogate(c)) {
        sb.append(String.format("\\u%04X", (int) c));
      } else {
        sb.append(c);
      }
    }
    return value.length() > 200 ? sb + "...(" + value.length() + " chars)" : sb.toString();
  }

  private static final class AbsolutePath implements ConfigDef.Validator {
    @Override
    public void ensureValid(String name, Object value) {
      if (value == null) {
        return;
      }
      String path = (String) value;
      boolean absolute;
      try {
        absolute = Path.of(path).isAbsolute();
      } catch (InvalidPathException e) {
        throw new ConfigException(
            name,
            shown(path),
            "not a path (expected an absolute path): " + shown((Object) e.getReason()));
      }
      if (!absolute) {
        throw new ConfigException(
            name,
            shown(path),
            "a relative path would resolve against the worker's working directory, which differs"
                + " between workers and restarts (expected an absolute path)");
      }
    }

    @Override
    public String toString() {
      return "an absolute path";
    }
  }
}
