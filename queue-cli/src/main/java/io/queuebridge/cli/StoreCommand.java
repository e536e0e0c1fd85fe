package io.queuebridge.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * What every read command shares: the store options, the output format, and the run: name the
 * store, open it, {@link #run} on it, close it. Any failure becomes the command's one-line error
 * (exit status 1), with the store's password never shown.
 */
abstract class StoreCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin StoreOptions storeOptions;

  @Mixin Output output;

  /** Prints what the command shows of the open store (or does to it). */
  abstract void run(StoreSession session, PrintWriter out);

  /**
   * Checks what the arguments can be checked for without the store, before it is opened, so that a
   * usage error is reported as one whatever the store.
   *
   * @throws picocli.CommandLine.ParameterException for a bad argument
   */
  void checkArguments() {}

  /** Whether the command changes the store: it then opens it writable. */
  boolean writes() {
    return false;
  }

  @Override
  public final Integer call() {
    QueueBridgeCli root = (QueueBridgeCli) spec.root().userObject();
    checkArguments();
    StoreSpec store = storeOptions.spec();
    try (StoreSession session = StoreSession.open(root.opener(), store, root.clock(), writes())) {
      run(session, spec.commandLine().getOut());
      return QueueBridgeCli.OK;
    } catch (ParameterException e) {
      throw e; // a usage error found while running: exit status 2
    } catch (RuntimeException e) {
      throw new CliException(store.redact(QueueBridgeCli.messageOf(e)));
    }
  }
}
