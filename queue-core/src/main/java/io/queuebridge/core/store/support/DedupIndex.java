package io.queuebridge.core.store.support;

import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.store.AppendResult;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Supplier;

/**
 * Support for store implementers: one queue's remembered deduplication ids (BEHAVIOUR Q-DEDUP) for
 * a store that keeps a {@link QueueLog} per queue in the process (memory, file). Holds id →
 * (offset, createdAt) in append order and forgets, on every deduplicated append, the ids whose
 * message was created before the caller's window start, so it holds no more than the window's ids.
 *
 * <p><b>Loading.</b> Built lazily, at the first deduplicated append after the store opened, from
 * the log itself: the messages from {@link QueueLog#timeOffset} of the window start to the tail
 * that carry {@link MessageProperties#DEDUP_ID}. A persistent log therefore remembers, after a
 * reopen or a crash, the ids of every message it kept; the time lookup bounds the read to the
 * window (a coarse answer only reads a little more). The ids of messages a truncation removed come
 * from what the store saved before truncating ({@link #rememberedBelow}), handed back through the
 * {@code persisted} supplier.
 *
 * <p><b>Atomicity.</b> {@link #append} reserves the id under the index's monitor, appends outside
 * it (so concurrent appends of different ids still share group commits) and records the offset; a
 * concurrent append of the same id waits for the reservation to resolve, then answers its offset,
 * or, if that append failed, tries again itself.
 *
 * <p>Thread-safe.
 */
public final class DedupIndex {
  /** How many messages a load reads at a time. */
  private static final int LOAD_BATCH = 1024;

  /** The append a deduplicated append performs once its id is reserved. */
  @FunctionalInterface
  public interface Appender {
    /** Appends {@code message}; returns its offset. */
    long append(Message message) throws InterruptedException;
  }

  private static final long PENDING = -1;

  private static final class Entry {
    final Instant createdAt;
    long offset = PENDING; // guarded by the index's monitor

    Entry(Instant createdAt) {
      this.createdAt = createdAt;
    }
  }

  /**
   * An id remembered from a message the log may no longer hold, as a store persists it before a
   * truncation ({@link #rememberedBelow}) and hands it back at the next load.
   *
   * @param id the deduplication id
   * @param offset where its message was stored
   * @param createdAt its message's creation time
   */
  public record Remembered(String id, long offset, Instant createdAt) {}

  private final QueueLog log;
  private final Supplier<List<Remembered>> persisted;
  private final LinkedHashMap<String, Entry> byId = new LinkedHashMap<>();
  private boolean loaded; // guarded by this

  /** The index of {@code log}, loaded from it at the first {@link #append}. */
  public DedupIndex(QueueLog log) {
    this(log, List::of);
  }

  /**
   * The index of {@code log}, loaded at the first {@link #append} from {@code persisted} (ids of
   * messages truncated away, which the store saved, in the order it saved them) and then from the
   * log.
   */
  public DedupIndex(QueueLog log, Supplier<List<Remembered>> persisted) {
    this.log = log;
    this.persisted = persisted;
  }

  /** Whether the index was loaded (a deduplicated append or {@link #ensureLoaded} ran). */
  public synchronized boolean loaded() {
    return loaded;
  }

  /**
   * Loads the index now if it was not, keeping the ids of messages created at or after {@code
   * windowStart}: for a store that must save what a truncation removes before any deduplicated
   * append ran; pass a start no later than any window a later append may use.
   */
  public synchronized void ensureLoaded(Instant windowStart) {
    if (!loaded) {
      load(windowStart);
      loaded = true;
    }
  }

  /**
   * The remembered ids whose message lies below {@code offset} (stored appends only, not the ones
   * under way), in the index's order: what a store saves before truncating to {@code offset}.
   */
  public List<Remembered> rememberedBelow(long offset) {
    return rememberedBetween(Long.MIN_VALUE, offset);
  }

  /**
   * The remembered ids whose message lies at or above {@code from} and below {@code to} (stored
   * appends only), in the index's order: what a store saves of the messages a truncation from
   * {@code from} to {@code to} removes.
   */
  public synchronized List<Remembered> rememberedBetween(long from, long to) {
    List<Remembered> out = new java.util.ArrayList<>();
    for (Map.Entry<String, Entry> e : byId.entrySet()) {
      long at = e.getValue().offset;
      if (at != PENDING && at >= from && at < to) {
        out.add(new Remembered(e.getKey(), at, e.getValue().createdAt));
      }
    }
    return out;
  }

  /**
   * Appends {@code message} with {@code appender} unless its id (checked by the caller: {@link
   * StoreChecks#checkDeduplicationId}) is remembered from a message created at or after {@code
   * windowStart}.
   *
   * @throws InterruptedException if {@code appender} was interrupted (nothing reserved remains)
   */
  public AppendResult append(String id, Message message, Instant windowStart, Appender appender)
      throws InterruptedException {
    Instant createdAt = message.createdAt() == null ? windowStart : message.createdAt();
    Entry mine;
    synchronized (this) {
      if (!loaded) {
        load(windowStart);
        loaded = true;
      }
      forgetBefore(windowStart);
      boolean interrupted = false;
      try {
        while (true) {
          Entry e = byId.get(id);
          if (e != null && e.offset != PENDING && e.createdAt.isBefore(windowStart)) {
            byId.remove(id);
            e = null;
          }
          if (e == null) {
            mine = new Entry(createdAt);
            byId.put(id, mine);
            break;
          }
          if (e.offset != PENDING) {
            return AppendResult.duplicateOf(e.offset);
          }
          try {
            wait(); // another append of this id is under way: its outcome decides
          } catch (InterruptedException ie) {
            interrupted = true; // short wait (one append); the caller sees the flag
          }
        }
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }
    long offset;
    try {
      offset = appender.append(message);
    } catch (InterruptedException | RuntimeException | Error e) {
      synchronized (this) {
        byId.remove(id, mine);
        notifyAll();
      }
      throw e;
    }
    synchronized (this) {
      mine.offset = offset;
      notifyAll();
    }
    return AppendResult.stored(offset);
  }

  /**
   * The offset remembered for {@code id} from a message created at or after {@code windowStart};
   * empty when none is, or while its append is under way. Loads the index first if it was not.
   */
  public synchronized OptionalLong lookup(String id, Instant windowStart) {
    if (!loaded) {
      load(windowStart);
      loaded = true;
    }
    Entry e = byId.get(id);
    return e == null || e.offset == PENDING || e.createdAt.isBefore(windowStart)
        ? OptionalLong.empty()
        : OptionalLong.of(e.offset);
  }

  /** How many ids the index holds now (pending ones included); 0 before it was loaded. */
  public synchronized int size() {
    return byId.size();
  }

  private void forgetBefore(Instant windowStart) {
    Iterator<Map.Entry<String, Entry>> it = byId.entrySet().iterator();
    while (it.hasNext()) {
      Entry e = it.next().getValue();
      if (e.offset == PENDING || !e.createdAt.isBefore(windowStart)) {
        return; // append order ~ creation order: the rest is newer
      }
      it.remove();
    }
  }

  private void load(Instant windowStart) {
    for (Remembered r : persisted.get()) {
      if (!r.createdAt().isBefore(windowStart)) {
        Entry e = new Entry(r.createdAt());
        e.offset = r.offset();
        byId.remove(r.id());
        byId.put(r.id(), e);
      }
    }
    long next = Math.max(log.head(), log.timeOffset(windowStart));
    while (true) {
      List<Message> batch = log.readBatch(next, LOAD_BATCH);
      if (batch.isEmpty()) {
        return;
      }
      for (Message m : batch) {
        String id = m.properties().get(MessageProperties.DEDUP_ID);
        if (id != null && m.createdAt() != null && !m.createdAt().isBefore(windowStart)) {
          Entry e = new Entry(m.createdAt());
          e.offset = m.offset();
          byId.remove(id); // a later store of the id (after its window) wins
          byId.put(id, e);
        }
      }
      next = batch.get(batch.size() - 1).offset() + 1;
    }
  }
}
