package io.queuebridge.core.store.file;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Random;
import java.util.zip.CRC32C;

/**
 * The child process of {@link CrashRecoveryTest}: opens the store, appends with {@code
 * appendAndSync} from several threads until it is killed, and prints every acknowledged append as
 * {@code ack <offset> <crc32c of the value> <value length>} only after the call returned.
 *
 * <p>Arguments: store directory, thread count, run id.
 */
public final class CrashWriter {
  private CrashWriter() {}

  static final String QUEUE = "crash";

  /** The store settings both processes use: small segments so that kills land during rolls too. */
  static FileStoreConfig config(Path dir) {
    return FileStoreConfig.defaults(dir).withSegmentBytes(64 * 1024).withSyncIntervalMs(60_000);
  }

  static String hash(byte[] value) {
    CRC32C c = new CRC32C();
    c.update(value);
    return Long.toHexString(c.getValue());
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int threads = Integer.parseInt(args[1]);
    String run = args[2];
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    FileStorage storage = FileStorage.open(config(dir), Clock.systemUTC(), StoreIo.DEFAULT);
    DurableQueueStore queues = storage.queues();
    try {
      queues.createQueue(QueueConfig.durable(QUEUE).build());
    } catch (QueueAlreadyExistsException e) {
      // a later cycle
    }
    synchronized (out) {
      out.println("ready " + queues.tail(QUEUE));
      out.flush();
    }
    for (int t = 0; t < threads; t++) {
      int thread = t;
      Thread w =
          new Thread(
              () -> {
                Random rnd = new Random(run.hashCode() * 31L + thread);
                for (long i = 0; ; i++) {
                  byte[] pad = new byte[rnd.nextInt(3000)];
                  rnd.nextBytes(pad);
                  String head = run + ":" + thread + ":" + i + ":";
                  byte[] value = new byte[head.length() + pad.length];
                  System.arraycopy(
                      head.getBytes(StandardCharsets.US_ASCII), 0, value, 0, head.length());
                  System.arraycopy(pad, 0, value, head.length(), pad.length);
                  long offset;
                  try {
                    offset =
                        queues.appendAndSync(
                            QUEUE, Message.builder().id(head).value(value).build());
                  } catch (Exception e) {
                    synchronized (out) {
                      out.println("error " + e);
                      out.flush();
                    }
                    return;
                  }
                  synchronized (out) {
                    out.println("ack " + offset + " " + hash(value) + " " + value.length);
                    out.flush();
                  }
                }
              },
              "writer-" + t);
      w.start();
    }
    Thread.currentThread().join(); // until killed
  }
}
