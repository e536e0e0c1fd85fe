package io.queuebridge.core.store.support;

import io.queuebridge.core.store.PendingEntry;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The pending entries of one consumer group ({@link GroupTable}), sorted by offset, in a form that
 * is cheap for the way a queue-mode group uses them: claims add entries at offsets above every
 * pending one, acks remove them mostly from the front.
 *
 * <p><b>Layout.</b> Parallel arrays, {@code offsets} (ascending), {@code entries} and {@code nodes}
 * (each entry's node in the due index), used between {@code head} (inclusive) and {@code tail}
 * (exclusive). A removed entry leaves a tombstone (a null entry; its offset stays, so the offsets
 * stay sorted and binary search still works); tombstones at either end are trimmed at once, and the
 * live entries are compacted to the front when tombstones outnumber them. So appending above the
 * highest offset and removing the lowest are O(1) amortised, finding or removing any offset is
 * O(log n), inserting in the middle (after a cursor rewind) is O(n), and the lowest live offset is
 * at {@code head}.
 *
 * <p><b>Due index.</b> The live entries that can become due are also kept in {@link
 * PendingEntry#BY_VISIBILITY} order by a {@link DueIndex} (an in-order deque beside a sorted set
 * for the entries out of order), so the entries claimable at a time ({@link #due}) are found
 * without looking at the others: redeliveries and scheduled messages (BEHAVIOUR Q-DELAY) alike. The
 * log hands the index back an entry's node when the entry goes, so forgetting it never searches.
 *
 * <p><b>Key index.</b> The offsets of the live entries that carry an ordering key (BEHAVIOUR
 * Q-ORDER), by key, so whether a key has an entry and its lowest entry are found in O(log n); empty
 * for a queue that orders nothing.
 *
 * <p>Not thread-safe: the owning group's lock guards it.
 */
final class PendingLog {
  private static final int MIN_CAPACITY = 8;

  private long[] offsets = new long[MIN_CAPACITY];
  private PendingEntry[] entries = new PendingEntry[MIN_CAPACITY];
  // each entry's node in the due index (null for a blocked entry and at tombstones)
  private DueIndex.Node[] nodes = new DueIndex.Node[MIN_CAPACITY];
  private int head;
  private int tail;
  private int live;
  private int scheduled;
  private int blocked;
  private final DueIndex byVisibility = new DueIndex();
  // By ordering key: the key's only live entry (most keys have one), or a KeyRun of its offsets.
  private final Map<String, Object> byKey = new HashMap<>();

  /** Live entries. */
  int size() {
    return live;
  }

  /** Live entries that are {@linkplain PendingEntry#isScheduled() scheduled}. */
  int scheduledCount() {
    return scheduled;
  }

  /** Live entries that are {@linkplain PendingEntry#isBlocked() blocked}. */
  int blockedCount() {
    return blocked;
  }

  /** The highest live offset, or -1 when there is none. */
  long highestOffset() {
    return live == 0 ? -1 : offsets[tail - 1]; // tombstones at the ends are trimmed
  }

  boolean isEmpty() {
    return live == 0;
  }

  /** The live entry at {@code offset}, or null. */
  PendingEntry get(long offset) {
    int i = indexOf(offset);
    return i < 0 ? null : entries[i];
  }

  /** The lowest live entry, or null. */
  PendingEntry first() {
    return live == 0 ? null : entries[head];
  }

  /** The lowest live entry at an offset other than {@code offset}, or null. */
  PendingEntry lowestExcept(long offset) {
    for (int i = head; i < tail; i++) {
      PendingEntry e = entries[i];
      if (e != null && e.offset() != offset) {
        return e;
      }
    }
    return null;
  }

  /** Adds {@code e}, replacing the entry at its offset if there is one. */
  void put(PendingEntry e) {
    long offset = e.offset();
    if (e.isScheduled()) {
      scheduled++;
    }
    if (tail == head || offset > offsets[tail - 1]) {
      keyAdded(e);
      if (tail == offsets.length) {
        makeRoom();
      }
      offsets[tail] = offset;
      entries[tail] = e;
      nodes[tail] = byVisibility.add(e);
      tail++;
      live++;
      return;
    }
    int i = Arrays.binarySearch(offsets, head, tail, offset);
    if (i >= 0) {
      PendingEntry old = entries[i];
      if (old == e) {
        if (e.isScheduled()) {
          scheduled--; // counted above; nothing changes
        }
        return;
      }
      entries[i] = e;
      if (old == null) {
        live++;
      } else {
        if (old.isScheduled()) {
          scheduled--;
        }
        byVisibility.removed(nodes[i]);
        keyRemoved(old);
      }
      nodes[i] = byVisibility.add(e);
      keyAdded(e);
      return;
    }
    keyAdded(e);
    insertAt(-i - 1, e, byVisibility.add(e));
  }

  /** Removes the live entry at {@code offset}; returns it, or null when there was none. */
  PendingEntry remove(long offset) {
    int i = indexOf(offset);
    return i < 0 ? null : removeIndex(i);
  }

  /**
   * Removes the live entry at {@code offset} if {@code consumerId} holds it with {@code
   * deliveryCount} deliveries; returns it, or null when there was none or another delivery holds it
   * (then nothing changes). One search for the fence and the removal (an ack).
   */
  PendingEntry removeHeld(long offset, String consumerId, int deliveryCount) {
    int i = indexOf(offset);
    if (i < 0) {
      return null;
    }
    PendingEntry e = entries[i];
    return e.deliveryCount() == deliveryCount && e.consumerId().equals(consumerId)
        ? removeIndex(i)
        : null;
  }

  private PendingEntry removeIndex(int i) {
    PendingEntry e = entries[i];
    if (e.isScheduled()) {
      scheduled--;
    }
    entries[i] = null;
    DueIndex.Node node = nodes[i];
    nodes[i] = null;
    live--;
    while (head < tail && entries[head] == null) {
      head++;
    }
    while (tail > head && entries[tail - 1] == null) {
      tail--;
    }
    if (live == 0) {
      head = 0;
      tail = 0;
    } else if (tail - head - live > live && tail - head > MIN_CAPACITY) {
      compact();
    }
    byVisibility.removed(node);
    keyRemoved(e);
    return e;
  }

  /** Removes everything. */
  void clear() {
    Arrays.fill(entries, head, tail, null);
    Arrays.fill(nodes, head, tail, null);
    head = 0;
    tail = 0;
    live = 0;
    scheduled = 0;
    blocked = 0;
    byVisibility.clear();
    byKey.clear();
  }

  /**
   * The live entries claimable at {@code now} ({@code visibleAt <= now}) that come after {@code
   * after} in {@link PendingEntry#BY_VISIBILITY} order (from the first when null), in that order,
   * at most {@code limit}.
   */
  List<PendingEntry> due(Instant now, PendingEntry after, int limit) {
    return byVisibility.due(now, after, limit);
  }

  /** Whether a live entry carries the ordering key {@code key}. */
  boolean hasKey(String key) {
    return byKey.containsKey(key);
  }

  /**
   * The live entry with the lowest offset of those carrying the ordering key {@code key}, or null.
   */
  PendingEntry firstWithKey(String key) {
    Object at = byKey.get(key);
    if (at == null || at instanceof PendingEntry) {
      return (PendingEntry) at;
    }
    return get(((KeyRun) at).first());
  }

  private void keyAdded(PendingEntry e) {
    if (e.isBlocked()) {
      blocked++;
    }
    if (e.hasOrderKey()) {
      Object at = byKey.putIfAbsent(e.orderKey(), e);
      if (at instanceof PendingEntry only) {
        byKey.put(e.orderKey(), new KeyRun(only.offset(), e.offset()));
      } else if (at != null) {
        ((KeyRun) at).add(e.offset());
      }
    }
  }

  private void keyRemoved(PendingEntry e) {
    if (e.isBlocked()) {
      blocked--;
    }
    if (e.hasOrderKey()) {
      Object at = byKey.get(e.orderKey());
      if (at instanceof PendingEntry only) {
        if (only.offset() == e.offset()) {
          byKey.remove(e.orderKey());
        }
      } else if (at != null) {
        KeyRun run = (KeyRun) at;
        if (run.remove(e.offset()) && run.size() == 1) {
          byKey.put(e.orderKey(), get(run.first())); // back to the single entry
        }
      }
    }
  }

  /**
   * The offsets of two or more live entries of one ordering key, ascending: appended at the end in
   * the common case (the cursor reads in offset order), removed mostly from the front.
   */
  private static final class KeyRun {
    private long[] offsets = new long[4];
    private int head;
    private int tail;

    KeyRun(long a, long b) {
      offsets[0] = Math.min(a, b);
      offsets[1] = Math.max(a, b);
      tail = 2;
    }

    int size() {
      return tail - head;
    }

    long first() {
      return offsets[head];
    }

    void add(long offset) {
      if (tail == offsets.length) {
        int n = tail - head;
        long[] grown = n * 2 > offsets.length ? new long[offsets.length * 2] : offsets;
        System.arraycopy(offsets, head, grown, 0, n);
        offsets = grown;
        head = 0;
        tail = n;
      }
      int at = tail;
      while (at > head && offsets[at - 1] > offset) {
        at--; // below the highest: after a cursor rewind
      }
      System.arraycopy(offsets, at, offsets, at + 1, tail - at);
      offsets[at] = offset;
      tail++;
    }

    boolean remove(long offset) {
      if (offsets[head] == offset) {
        head++;
        return true;
      }
      int i = Arrays.binarySearch(offsets, head, tail, offset);
      if (i < 0) {
        return false;
      }
      System.arraycopy(offsets, i + 1, offsets, i, tail - i - 1);
      tail--;
      return true;
    }
  }

  /** The live entries, by offset, as a new array. */
  PendingEntry[] toArray() {
    PendingEntry[] out = new PendingEntry[live];
    int n = 0;
    for (int i = head; i < tail; i++) {
      if (entries[i] != null) {
        out[n++] = entries[i];
      }
    }
    return out;
  }

  /**
   * Replaces the content with {@code sorted}, which must be sorted by offset without duplicates.
   */
  void reset(List<PendingEntry> sorted) {
    clear();
    if (sorted.size() > offsets.length) {
      offsets = new long[sorted.size()];
      entries = new PendingEntry[sorted.size()];
      nodes = new DueIndex.Node[sorted.size()];
    }
    for (PendingEntry e : sorted) {
      offsets[tail] = e.offset();
      entries[tail] = e;
      nodes[tail] = byVisibility.add(e);
      tail++;
      keyAdded(e);
      if (e.isScheduled()) {
        scheduled++;
      }
    }
    live = tail;
  }

  private int indexOf(long offset) {
    if (live == 0 || offset < offsets[head] || offset > offsets[tail - 1]) {
      return -1;
    }
    if (offset == offsets[head]) {
      return head; // the lowest entry is live (tombstones at the ends are trimmed): in-order acks
    }
    int i = Arrays.binarySearch(offsets, head, tail, offset);
    return i >= 0 && entries[i] != null ? i : -1;
  }

  /** Inserts below the highest offset, {@code at} being the binary search's insertion point. */
  private void insertAt(int at, PendingEntry e, DueIndex.Node node) {
    if (at > head && entries[at - 1] == null) {
      at--; // reuse the tombstone just below: its offset is lower, so the order holds
    } else if (at < tail && entries[at] == null) {
      // reuse the tombstone at the insertion point: its offset is higher, so the order holds
    } else if (at == head && head > 0) {
      head--; // below every entry: take the free slot in front
      at = head;
    } else {
      if (tail == offsets.length) {
        makeRoom();
        at = -Arrays.binarySearch(offsets, head, tail, e.offset()) - 1;
      }
      System.arraycopy(offsets, at, offsets, at + 1, tail - at);
      System.arraycopy(entries, at, entries, at + 1, tail - at);
      System.arraycopy(nodes, at, nodes, at + 1, tail - at);
      tail++;
    }
    offsets[at] = e.offset();
    entries[at] = e;
    nodes[at] = node;
    live++;
  }

  /**
   * Compacts to the front and doubles the arrays when they would still be more than half full, so
   * the next compaction is at least half a capacity of appends away (O(1) amortised).
   */
  private void makeRoom() {
    compact();
    if (tail > offsets.length / 2) {
      int capacity = Math.max(MIN_CAPACITY, offsets.length * 2);
      offsets = Arrays.copyOf(offsets, capacity);
      entries = Arrays.copyOf(entries, capacity);
      nodes = Arrays.copyOf(nodes, capacity);
    }
  }

  /** Moves the live entries to the front, dropping tombstones. */
  private void compact() {
    int n = 0;
    for (int i = head; i < tail; i++) {
      if (entries[i] != null) {
        offsets[n] = offsets[i];
        entries[n] = entries[i];
        nodes[n] = nodes[i];
        n++;
      }
    }
    Arrays.fill(entries, n, tail, null);
    Arrays.fill(nodes, n, tail, null);
    head = 0;
    tail = n;
  }
}
