package io.queuebridge.core.store.file;

import io.queuebridge.core.config.Names;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.support.GroupTable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * One consumer group's log ({@link GroupLog}) read beside its writer, which may be another process:
 * the state is the replay of the file's whole, valid records, kept up to date on each call.
 *
 * <p><b>Refresh.</b> A {@code stat} of the file ({@link FileStamp}): unchanged, nothing to do;
 * grown in place, only the new bytes are read and their records applied; replaced (the writer
 * compacted it into a fresh snapshot and renamed that over the file), shrunk, or on a file system
 * without file identities, the file is read again from the start. A record the writer is still
 * writing (or a torn one) stops the replay; it is applied once it is whole. A missing file is a
 * deleted group. The channel is opened between two {@code stat} calls that must agree, so it is the
 * file those calls describe, not one renamed over it meanwhile.
 *
 * <p>Thread-safe: every method is synchronized.
 */
final class GroupFollower {
  private static final int OPEN_ATTEMPTS = 10;

  private final String queue;
  private final Path file;
  private final StoreIo io;
  private FileChannel channel;
  private FileStamp stamp;
  private long position;
  private int version; // of the log read, from its header
  private GroupTable table;

  GroupFollower(String queue, Path file, StoreIo io) {
    this.queue = queue;
    this.file = file;
    this.io = io;
  }

  /**
   * The group's state as the file holds it now; empty if the file is gone (the group was deleted)
   * or holds no whole snapshot yet.
   *
   * @throws StoreCorruptedException if the file is not a group log of this version
   * @throws IOException if it cannot be read
   */
  synchronized Optional<ConsumerGroupState> state() throws IOException {
    FileStamp now = FileStamp.of(file);
    if (now == null) {
      closeChannel();
      return Optional.empty();
    }
    if (!now.equals(stamp)) {
      if (channel != null && now.sameFile(stamp) && now.size() >= position) {
        readFrom(now);
      } else if (!reopen()) {
        return Optional.empty();
      }
    }
    return table == null ? Optional.empty() : Optional.of(table.snapshot());
  }

  /** Applies the records added since {@link #position}, up to the size {@code now} reports. */
  private void readFrom(FileStamp now) throws IOException {
    long end = Math.max(now.size(), channel.size());
    if (end > position) {
      byte[] bytes = read(channel, position, end);
      GroupLog.Replay r = GroupLog.replay(queue, bytes, 0, bytes.length, table, version);
      table = r.table();
      position += r.end();
    }
    stamp = now;
  }

  /** Reads the file again from the start; false if it vanished meanwhile. */
  private boolean reopen() throws IOException {
    closeChannel();
    for (int attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
      FileStamp before = FileStamp.of(file);
      if (before == null) {
        return false;
      }
      FileChannel ch;
      try {
        ch = io.openReadable(file);
      } catch (NoSuchFileException e) {
        return false;
      }
      FileStamp after = FileStamp.of(file);
      if (after == null || (before.key() != null && !before.sameFile(after))) {
        ch.close(); // replaced between the two looks: the channel may be the old file
        continue;
      }
      try {
        byte[] bytes = read(ch, 0, ch.size());
        int v = GroupLog.checkHeader(queue, file, bytes);
        GroupLog.Replay r = GroupLog.replay(queue, bytes, GroupLog.HEADER, bytes.length, null, v);
        if (r.table() != null) {
          String expected = file.getFileName().toString();
          String id = r.table().id();
          if (!expected.equals(Names.encode("group id", id) + GroupLog.SUFFIX)) {
            throw new StoreCorruptedException(
                queue,
                file.toString(),
                -1,
                "holds group '" + id + "', not the group its name encodes");
          }
        }
        table = r.table();
        position = r.end();
        version = v;
        channel = ch;
        stamp = after;
        return true;
      } catch (IOException | RuntimeException e) {
        ch.close();
        throw e;
      }
    }
    throw new QueueStoreException(
        queue,
        "reading consumer-group log "
            + file
            + " beside its writer failed: it was replaced on each of "
            + OPEN_ATTEMPTS
            + " attempts to open it (expected it to hold still for a moment)");
  }

  private static byte[] read(FileChannel ch, long from, long to) throws IOException {
    byte[] bytes = new byte[Math.toIntExact(to - from)];
    ByteBuffer b = ByteBuffer.wrap(bytes);
    while (b.hasRemaining()) {
      if (ch.read(b, from + b.position()) < 0) {
        break;
      }
    }
    if (b.hasRemaining()) {
      byte[] shorter = new byte[b.position()];
      System.arraycopy(bytes, 0, shorter, 0, shorter.length);
      return shorter;
    }
    return bytes;
  }

  private void closeChannel() throws IOException {
    FileChannel ch = channel;
    channel = null;
    stamp = null;
    table = null;
    position = 0;
    if (ch != null) {
      ch.close();
    }
  }

  /** Releases the file. Idempotent. */
  synchronized void close() {
    try {
      closeChannel();
    } catch (IOException ignored) {
      // a read-only channel: nothing to lose
    }
  }
}
