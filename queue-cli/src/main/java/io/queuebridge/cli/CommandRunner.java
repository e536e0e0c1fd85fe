package io.queuebridge.cli;

import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs {@code queue-bridge} commands in this process, as a program embedding the command line
 * would: the web console runs every read and every change through it, so that what it shows and
 * what it does are what the commands show and do (the same rules, the same exactly-once redrive,
 * the same messages on bad input).
 *
 * <p>A store a read command names is opened read-only once and kept open for later commands until
 * {@link #close()}: read-only views follow the store as it changes (BEHAVIOUR of the stores'
 * read-only opens), so a page and a sample cost no new connection. A command that changes a store
 * opens it writable for that command alone, as the command line does.
 *
 * <p>Thread-safe: each {@link #run} builds its own command line.
 */
public final class CommandRunner implements AutoCloseable {
  private final Clock clock;
  private final Map<StoreSpec, Storage> readOnly = new ConcurrentHashMap<>();
  private final StoreOpener opener;
  private volatile boolean closed;

  /**
   * What a command printed and how it ended.
   *
   * @param status the exit status: 0 success, 1 failure, 2 usage error
   * @param out what it printed on standard output
   * @param err what it printed on standard error: the one-line reason of a failure, prefixed {@code
   *     queue-bridge: }
   */
  public record Result(int status, String out, String err) {
    /** Whether the command succeeded. */
    public boolean ok() {
      return status == QueueBridgeCli.OK;
    }

    /**
     * Why the command failed, as one line without the {@code queue-bridge: } prefix (and without
     * picocli's "Try ... --help" line); empty when it succeeded.
     */
    public String error() {
      String first = err.strip().lines().findFirst().orElse("");
      return first.startsWith("queue-bridge: ")
          ? first.substring("queue-bridge: ".length())
          : first;
    }
  }

  /**
   * A connector config file as far as the runner reads it.
   *
   * @param file the file
   * @param name the connector's name; null when the file has none
   * @param connectorClass its {@code connector.class}; null when it has none
   * @param store the store it names, as a key: two files naming one store give equal keys. It holds
   *     the store's type and provider keys with the password hidden, and nothing else
   */
  public record ConnectorFile(Path file, String name, String connectorClass, String store) {}

  private CommandRunner(StoreOpener opener, Clock clock) {
    this.opener = Objects.requireNonNull(opener, "opener");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** A runner that opens existing stores only, as {@code bin/queue-bridge} does. */
  public static CommandRunner create(Clock clock) {
    return new CommandRunner(StoreOpener.existingStores(), clock);
  }

  /** A runner over the stores {@code opener} hands out (tests). */
  static CommandRunner create(StoreOpener opener, Clock clock) {
    return new CommandRunner(opener, clock);
  }

  /**
   * Reads {@code file} as the commands' {@code --config} does.
   *
   * @throws CliException if the file cannot be read or is not a connector config
   */
  public static ConnectorFile readConnector(Path file) {
    ConnectorConfigFile.Connector c = ConnectorConfigFile.readConnector(file);
    StoreSpec s = c.store();
    String key = s.type() + " " + s.redact(s.config().toString());
    return new ConnectorFile(file, c.name(), c.config().get("connector.class"), key);
  }

  /**
   * Runs the command {@code args} names ({@code queues --config sink.json -o json}).
   *
   * @throws IllegalStateException after {@link #close()}
   */
  public Result run(List<String> args) {
    if (closed) {
      throw new IllegalStateException("the command runner is closed");
    }
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int status;
    try (PrintWriter o = new PrintWriter(out);
        PrintWriter e = new PrintWriter(err)) {
      status =
          QueueBridgeCli.commandLine(this::open, clock, o, e).execute(args.toArray(new String[0]));
    }
    return new Result(status, out.toString(), err.toString());
  }

  /** {@link #run(List)} with the arguments given one by one. */
  public Result run(String... args) {
    return run(new ArrayList<>(List.of(args)));
  }

  private Storage open(StoreSpec spec, boolean writable) {
    if (writable) {
      return opener.open(spec, true);
    }
    Storage shared = readOnly.computeIfAbsent(spec, s -> opener.open(s, false));
    if (closed) {
      close();
    }
    return new KeptOpen(shared);
  }

  /** Closes every store kept open. */
  @Override
  public void close() {
    closed = true;
    for (StoreSpec spec : List.copyOf(readOnly.keySet())) {
      Storage storage = readOnly.remove(spec);
      if (storage != null) {
        storage.close();
      }
    }
  }

  /** A kept read-only store as one command sees it: closing it leaves the store open. */
  private record KeptOpen(Storage storage) implements Storage {
    @Override
    public DurableQueueStore queues() {
      return storage.queues();
    }

    @Override
    public ConsumerGroupStore groups() {
      return storage.groups();
    }

    @Override
    public String description() {
      return storage.description();
    }

    @Override
    public void close() {}
  }
}
