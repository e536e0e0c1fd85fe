package io.queuebridge.core.store.file;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A bounded cache of read-only channels, one per segment, shared by every reader of the store.
 *
 * <p><b>Closing while a read is in flight.</b> Each {@link Handle} is reference counted: the cache
 * owns one reference, every reader takes one for the duration of its read ({@link
 * Handle#tryRetain}) and gives it back ({@link Handle#release}); eviction drops the cache's
 * reference. The channel is closed when the count reaches zero, i.e. by whoever finishes last,
 * never under a reader. A reader that finds a handle already at zero (evicted between lookup and
 * retain) looks up again and gets a fresh one. So at most {@code max} handles are cached; handles
 * held by in-flight reads past eviction add at most one per concurrent reader.
 *
 * <p><b>Interrupts.</b> Reads use positional {@link FileChannel} reads, and an interrupt during one
 * closes the channel for everybody. {@link Reader} notices a closed channel, drops that handle from
 * the cache and retries on a fresh one (clearing and then restoring the reading thread's own
 * interrupt status), so one interrupted reader never breaks the others.
 *
 * <p>Thread-safe.
 */
final class ReadHandles implements AutoCloseable {
  private final StoreIo io;
  private final Cache<Segment, Handle> cache;
  private final AtomicInteger opened = new AtomicInteger();
  private final AtomicInteger open = new AtomicInteger();

  ReadHandles(StoreIo io, int max) {
    this.io = io;
    this.cache =
        Caffeine.newBuilder()
            .maximumSize(max)
            .executor(Runnable::run)
            .removalListener(
                (Segment s, Handle h, RemovalCause cause) -> {
                  if (h != null) {
                    h.release();
                  }
                })
            .build();
  }

  /** A reference-counted read channel. */
  final class Handle {
    final FileChannel channel;
    private final AtomicInteger refs = new AtomicInteger(1);

    Handle(FileChannel channel) {
      this.channel = channel;
    }

    boolean tryRetain() {
      for (; ; ) {
        int r = refs.get();
        if (r == 0) {
          return false;
        }
        if (refs.compareAndSet(r, r + 1)) {
          return true;
        }
      }
    }

    void release() {
      if (refs.decrementAndGet() == 0) {
        open.decrementAndGet();
        try {
          channel.close();
        } catch (IOException ignored) {
          // a read-only channel: nothing to lose
        }
      }
    }
  }

  /** Opens a reader on {@code segment}; close it to release its handle. */
  Reader reader(Segment segment) throws IOException {
    return new Reader(segment, acquire(segment));
  }

  private Handle acquire(Segment segment) throws IOException {
    for (; ; ) {
      Handle h;
      try {
        h = cache.get(segment, this::load);
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
      if (h.tryRetain()) {
        return h;
      }
      // evicted between lookup and retain: look up again (a fresh handle is loaded)
    }
  }

  private Handle load(Segment segment) {
    try {
      Handle h = new Handle(io.openReadable(segment.logFile));
      opened.incrementAndGet();
      open.incrementAndGet();
      return h;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Drops a segment's handle (deleted segment); in-flight reads finish on it. */
  void invalidate(Segment segment) {
    cache.invalidate(segment);
  }

  /** Channels currently open (cached or held by in-flight reads). */
  int openCount() {
    return open.get();
  }

  /** Channels opened since the start. */
  int openedCount() {
    return opened.get();
  }

  void cleanUp() {
    cache.cleanUp();
  }

  @Override
  public void close() {
    cache.invalidateAll();
    cache.cleanUp();
  }

  /** One reader's use of a segment; not thread-safe. */
  final class Reader implements AutoCloseable {
    private final Segment segment;
    private Handle handle;

    private Reader(Segment segment, Handle handle) {
      this.segment = segment;
      this.handle = handle;
    }

    /** Reads up to {@code dst.remaining()} bytes at {@code position}; -1 at end of file. */
    int read(ByteBuffer dst, long position) throws IOException {
      boolean interrupted = false;
      try {
        for (int attempt = 0; ; attempt++) {
          try {
            return handle.channel.read(dst, position);
          } catch (ClosedChannelException e) {
            // closed by an interrupt (ours or another reader's): replace the handle and retry
            interrupted |= Thread.interrupted();
            cache.asMap().remove(segment, handle);
            handle.release();
            handle = null;
            if (attempt >= 3) {
              throw e;
            }
            handle = acquire(segment);
          }
        }
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }

    /** The file's size as the OS sees it. */
    long fileSize() throws IOException {
      return handle.channel.size();
    }

    @Override
    public void close() {
      if (handle != null) {
        handle.release();
        handle = null;
      }
    }
  }
}
