package io.queuebridge.examples.quickstart;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The operator command lines ({@code bin/queue-bridge}, module queue-cli) the quickstart suggests
 * for the store a run leaves: ready to paste into a shell in the directory {@code ./quickstart} was
 * run from. A path under that directory is shown relative to it, any other absolute; a word a shell
 * would split or expand is single-quoted.
 *
 * <p>The {@code ./quickstart} script passes where the launcher is ({@value #LAUNCHER_PROPERTY}) and
 * the directory it was run from ({@value #CALLER_DIR_PROPERTY}); without them both default to this
 * JVM's working directory ({@code bin/queue-bridge} under it).
 */
final class CliHints {
  static final String LAUNCHER_PROPERTY = "queuebridge.quickstart.launcher";
  static final String CALLER_DIR_PROPERTY = "queuebridge.quickstart.caller.dir";

  /** What a shell takes as one word as it is: no quoting needed. */
  private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9_./=:@%+,-]+");

  private final Path launcher;
  private final Path callerDir;

  CliHints(Path launcher, Path callerDir) {
    this.launcher = Objects.requireNonNull(launcher, "launcher").toAbsolutePath().normalize();
    this.callerDir = Objects.requireNonNull(callerDir, "callerDir").toAbsolutePath().normalize();
  }

  /** The {@code bin/queue-bridge} launcher. */
  Path launcher() {
    return launcher;
  }

  /** From the system properties the script sets, or this JVM's working directory. */
  static CliHints fromSystemProperties() {
    Path workingDir = Path.of("").toAbsolutePath();
    String launcher = System.getProperty(LAUNCHER_PROPERTY);
    String callerDir = System.getProperty(CALLER_DIR_PROPERTY);
    return new CliHints(
        launcher == null || launcher.isBlank()
            ? workingDir.resolve("bin").resolve("queue-bridge")
            : Path.of(launcher),
        callerDir == null || callerDir.isBlank() ? workingDir : Path.of(callerDir));
  }

  /**
   * The commands to try on the file store at {@code store} holding {@code stream}: its queues, the
   * stream described, its newest five messages, its consumer groups.
   */
  List<String> commands(Path store, String stream) {
    String cli = word(shown(launcher));
    String storeArgs = "--store-type file --store " + word("path=" + shown(store));
    String name = word(stream);
    return List.of(
        cli + " queues " + storeArgs,
        cli + " describe " + name + " " + storeArgs,
        cli + " tail " + name + " --max 5 " + storeArgs,
        cli + " groups " + name + " " + storeArgs);
  }

  /** {@code path} relative to the caller's directory when under it (./x for a bare name). */
  String shown(Path path) {
    Path absolute = path.toAbsolutePath().normalize();
    if (!absolute.startsWith(callerDir) || absolute.equals(callerDir)) {
      return absolute.toString();
    }
    Path relative = callerDir.relativize(absolute);
    return relative.getNameCount() == 1 ? "./" + relative : relative.toString();
  }

  /** {@code s} as one shell word: as it is when plain, else single-quoted. */
  static String word(String s) {
    if (PLAIN.matcher(s).matches()) {
      return s;
    }
    return "'" + s.replace("'", "'\\''") + "'";
  }
}
