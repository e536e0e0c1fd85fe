package io.queuebridge.core.store.file;

import java.nio.file.Path;
import java.time.Clock;

/**
 * The child process of {@link StoreLockingTest}: opens the store, prints {@code locked}, and keeps
 * it open until its standard input closes.
 */
public final class LockHolder {
  private LockHolder() {}

  public static void main(String[] args) throws Exception {
    try (FileStorage s =
        FileStorage.open(
            FileStoreConfig.defaults(Path.of(args[0])), Clock.systemUTC(), StoreIo.DEFAULT)) {
      System.out.println(s.queues().listQueues().isEmpty() ? "locked" : "locked (not empty)");
      System.out.flush();
      while (System.in.read() >= 0) {
        // wait for the parent to close our stdin
      }
    }
    System.out.println("released");
    System.out.flush();
  }
}
