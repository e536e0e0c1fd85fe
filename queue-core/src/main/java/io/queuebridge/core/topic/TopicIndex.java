package io.queuebridge.core.topic;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which queues' topic filters match a topic (BEHAVIOUR T-IDX): the lookup behind every fan-out
 * publish.
 *
 * <p>Two tries keyed by level: one for patterns whose first character is {@code $}, one for all
 * others. A topic consults only the half of its own first character, so ordinary publishes never
 * walk {@code $queue/…} patterns and {@code #}/{@code +} patterns never match {@code $} topics. A
 * node holds the queues whose pattern ends there, a table of literal children, a {@code +} child
 * and a {@code #} child. The walk follows, at each level, the literal child and the {@code +}
 * child; a {@code #} child matches as soon as it is reached; when the topic is exhausted it
 * collects the node's queues and its {@code #} child's queues. The cost depends on the topic's
 * depth (and on how many {@code +} branches it meets), not on the number of patterns.
 *
 * <p>Answers agree with {@link TopicFilters#matches} for every well-formed pattern and every valid
 * topic name, with one deliberate exception: a pattern with a misplaced {@code #} ({@code #/a},
 * {@code a/#/b}) is indexed as a literal path, so it captures nothing from a valid topic name
 * (whereas {@code matches} would let its {@code #} match everything after it). Levels such as
 * {@code a#} or {@code a+} are literals, as in {@code matches}. {@code $share/<name>/<filter>} is
 * not unwrapped: it is a literal {@code $} pattern, exactly as {@link TopicFilters#matches} treats
 * it. Patterns are not validated here; callers validate with {@link TopicFilters#validateFilter}.
 *
 * <p>Concurrency: copy-on-write. The two tries are immutable once published and are replaced as one
 * {@link Snapshot} through a single volatile field. {@link #findMatching} (the publish hot path,
 * many concurrent callers) reads that field once and walks an immutable structure: no lock, no
 * shared-memory write, no allocation when nothing matches, and a result that reflects exactly one
 * state of the index (an {@link #addQueue} that replaces several filters is seen entirely or not at
 * all). Writers ({@link #addQueue}, {@link #removeQueue}: queue creation, update and deletion,
 * which are rare) serialize on a lock and copy only the nodes on the paths they change, O(levels ×
 * fan-out) per pattern. A read-write lock was rejected because every read would write the lock's
 * shared state (cache-line contention between publishers) and {@code ReentrantReadWriteLock}
 * allocates per-thread hold counters when readers overlap.
 *
 * <p>Blocking: {@code findMatching} never blocks; writers may briefly wait for each other.
 */
public final class TopicIndex {
  /** Results are deduplicated by scanning the result list up to this size, then with a set. */
  static final int DEDUP_SET_THRESHOLD = 16;

  private final Object writeLock = new Object();

  /** Queue → its distinct filters in the order given. Guarded by {@link #writeLock}. */
  private final Map<String, List<String>> filtersByQueue = new LinkedHashMap<>();

  private volatile Snapshot snapshot = Snapshot.EMPTY;

  /** Creates an empty index. */
  public TopicIndex() {}

  /**
   * Sets {@code queue}'s filters, replacing any it had; duplicates in {@code filters} count once.
   * An empty list leaves the queue registered with no filter (it matches nothing). Filters a queue
   * keeps across a replacement keep their place in first-match order.
   *
   * @throws NullPointerException if {@code queue}, {@code filters} or an element is null
   */
  public void addQueue(String queue, List<String> filters) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(filters, "filters");
    LinkedHashSet<String> wanted = new LinkedHashSet<>();
    for (String f : filters) {
      wanted.add(Objects.requireNonNull(f, "filters contains null"));
    }
    synchronized (writeLock) {
      List<String> old = filtersByQueue.getOrDefault(queue, List.of());
      Node plain = snapshot.plain;
      Node dollar = snapshot.dollar;
      for (String f : old) {
        if (!wanted.contains(f)) {
          if (isDollar(f)) {
            dollar = remove(dollar, levels(f), 0, queue);
          } else {
            plain = remove(plain, levels(f), 0, queue);
          }
        }
      }
      for (String f : wanted) {
        if (isDollar(f)) {
          dollar = add(dollar, levels(f), 0, queue);
        } else {
          plain = add(plain, levels(f), 0, queue);
        }
      }
      filtersByQueue.put(queue, List.copyOf(wanted));
      publish(plain, dollar);
    }
  }

  /** Forgets {@code queue} and its filters; an unknown (or null) queue is ignored. */
  public void removeQueue(String queue) {
    synchronized (writeLock) {
      List<String> old = filtersByQueue.remove(queue);
      if (old == null) {
        return;
      }
      Node plain = snapshot.plain;
      Node dollar = snapshot.dollar;
      for (String f : old) {
        if (isDollar(f)) {
          dollar = remove(dollar, levels(f), 0, queue);
        } else {
          plain = remove(plain, levels(f), 0, queue);
        }
      }
      publish(plain, dollar);
    }
  }

  /**
   * Distinct names of the queues with a filter matching {@code topic}, in first-match order: the
   * order the trie walk meets them. The walk goes depth-first from the first level; at each node a
   * {@code #} child matches first, then the literal child's subtree is walked, then the {@code +}
   * child's; where the topic ends, the node's own queues come before its {@code #} child's; within
   * one pattern, queues come in the order they registered it. A queue reached by several patterns
   * appears once, at its first match.
   *
   * <p>{@code topic} should be a valid topic name ({@link TopicFilters#validateTopicName}); a null
   * or empty topic matches nothing. Never blocks.
   *
   * @return a new mutable list the caller may keep, or the shared immutable {@link List#of()} when
   *     nothing matches (that path allocates nothing)
   */
  public List<String> findMatching(String topic) {
    if (topic == null || topic.isEmpty()) {
      return List.of();
    }
    Snapshot s = snapshot;
    Node root = isDollar(topic) ? s.dollar : s.plain;
    if (root == null) {
      return List.of();
    }
    Matches found = walk(root, topic, 0, null);
    return found == null ? List.of() : found.list;
  }

  /**
   * The distinct filters registered for {@code queue}, in the order given to {@link #addQueue};
   * empty when the queue is unknown. The list is immutable and never changes afterwards.
   */
  public List<String> filtersOf(String queue) {
    synchronized (writeLock) {
      return filtersByQueue.getOrDefault(queue, List.of());
    }
  }

  /** Number of trie nodes in both halves, roots included (pruning is observable through it). */
  int nodeCount() {
    Snapshot s = snapshot;
    return count(s.plain) + count(s.dollar);
  }

  private void publish(Node plain, Node dollar) {
    snapshot = plain == null && dollar == null ? Snapshot.EMPTY : new Snapshot(plain, dollar);
  }

  private static boolean isDollar(String s) {
    return !s.isEmpty() && s.charAt(0) == TopicFilters.SYSTEM_PREFIX;
  }

  private static String[] levels(String pattern) {
    return pattern.split(String.valueOf(TopicFilters.SEPARATOR), -1);
  }

  private static boolean isLast(String[] levels, int i) {
    return i == levels.length - 1;
  }

  // ---- read path: allocation-free until the first match ----

  /**
   * Walks {@code node} for the topic levels starting at {@code from}; {@code from == topic.length()
   * + 1} means the topic is exhausted. Returns {@code found}, created on the first match.
   */
  private static Matches walk(Node node, String topic, int from, Matches found) {
    int len = topic.length();
    if (from > len) {
      found = collect(node.queues, found);
      return node.hash == null ? found : collect(node.hash.queues, found);
    }
    if (node.hash != null) {
      found = collect(node.hash.queues, found);
    }
    int hash = 0; // String.hashCode() of the level, computed while finding its end
    int end = from;
    while (end < len) {
      char c = topic.charAt(end);
      if (c == TopicFilters.SEPARATOR) {
        break;
      }
      hash = 31 * hash + c;
      end++;
    }
    Node literal = node.literal(topic, from, end, hash);
    if (literal != null) {
      found = walk(literal, topic, end + 1, found);
    }
    if (node.plus != null) {
      found = walk(node.plus, topic, end + 1, found);
    }
    return found;
  }

  private static Matches collect(String[] queues, Matches found) {
    for (String q : queues) {
      if (found == null) {
        found = new Matches();
      }
      found.add(q);
    }
    return found;
  }

  /** The result being built: a list, plus a set once it is long enough for scans to cost. */
  private static final class Matches {
    final ArrayList<String> list = new ArrayList<>();
    HashSet<String> seen;

    void add(String queue) {
      if (seen != null) {
        if (seen.add(queue)) {
          list.add(queue);
        }
        return;
      }
      if (list.contains(queue)) {
        return;
      }
      list.add(queue);
      if (list.size() >= DEDUP_SET_THRESHOLD) {
        seen = new HashSet<>(list);
      }
    }
  }

  // ---- write path: persistent (path-copying) updates; callers hold the write lock ----

  /** Returns {@code node} (nullable) with {@code queue} added at the end of the given path. */
  private static Node add(Node node, String[] levels, int i, String queue) {
    if (node == null) {
      node = Node.EMPTY;
    }
    if (i == levels.length) {
      return node.withQueue(queue);
    }
    String level = levels[i];
    if (isLast(levels, i) && isMultiLevel(level)) {
      Node hash = add(node.hash, levels, i + 1, queue);
      return hash == node.hash ? node : node.withHash(hash);
    }
    if (isSingleLevel(level)) {
      Node plus = add(node.plus, levels, i + 1, queue);
      return plus == node.plus ? node : node.withPlus(plus);
    }
    Node child = node.literal(level);
    Node updated = add(child, levels, i + 1, queue);
    return updated == child ? node : node.withLiteral(level, updated);
  }

  /**
   * Returns {@code node} (nullable) without {@code queue} at the end of the given path, or null
   * when the node is left empty (pruned). Returns {@code node} itself when nothing changed.
   */
  private static Node remove(Node node, String[] levels, int i, String queue) {
    if (node == null) {
      return null;
    }
    Node result;
    if (i == levels.length) {
      result = node.withoutQueue(queue);
    } else {
      String level = levels[i];
      if (isLast(levels, i) && isMultiLevel(level)) {
        Node hash = remove(node.hash, levels, i + 1, queue);
        result = hash == node.hash ? node : node.withHash(hash);
      } else if (isSingleLevel(level)) {
        Node plus = remove(node.plus, levels, i + 1, queue);
        result = plus == node.plus ? node : node.withPlus(plus);
      } else {
        Node child = node.literal(level);
        Node updated = remove(child, levels, i + 1, queue);
        result = updated == child ? node : node.withLiteral(level, updated);
      }
    }
    return result.isEmpty() ? null : result;
  }

  private static boolean isMultiLevel(String level) {
    return level.length() == 1 && level.charAt(0) == TopicFilters.MULTI_LEVEL;
  }

  private static boolean isSingleLevel(String level) {
    return level.length() == 1 && level.charAt(0) == TopicFilters.SINGLE_LEVEL;
  }

  private static int count(Node node) {
    if (node == null) {
      return 0;
    }
    int n = 1 + count(node.plus) + count(node.hash);
    for (Node child : node.children) {
      n += count(child);
    }
    return n;
  }

  /** Both tries, published together. */
  private static final class Snapshot {
    static final Snapshot EMPTY = new Snapshot(null, null);

    final Node plain;
    final Node dollar;

    Snapshot(Node plain, Node dollar) {
      this.plain = plain;
      this.dollar = dollar;
    }
  }

  /**
   * An immutable trie node. Literal children live in an open-addressing table (linear probing,
   * capacity a power of two, at most half full) so that a topic level can be looked up by its
   * character range without creating a substring.
   */
  private static final class Node {
    static final String[] NO_STRINGS = new String[0];
    static final Node[] NO_NODES = new Node[0];
    static final Node EMPTY = new Node(NO_STRINGS, NO_NODES, 0, null, null, NO_STRINGS);

    /** Literal keys by slot, null where empty; {@code keys.length} is 0 or a power of two. */
    final String[] keys;

    /** Children by slot, parallel to {@link #keys}. */
    final Node[] slots;

    /** The non-null children of {@link #slots}, for walking the whole trie. */
    final Node[] children;

    final Node plus;
    final Node hash;

    /** The queues whose pattern ends here, distinct, in registration order. */
    final String[] queues;

    private Node(
        String[] keys, Node[] slots, int literalCount, Node plus, Node hash, String[] queues) {
      this.keys = keys;
      this.slots = slots;
      this.plus = plus;
      this.hash = hash;
      this.queues = queues;
      Node[] kids = new Node[literalCount];
      int k = 0;
      for (Node n : slots) {
        if (n != null) {
          kids[k++] = n;
        }
      }
      this.children = kids;
    }

    boolean isEmpty() {
      return children.length == 0 && plus == null && hash == null && queues.length == 0;
    }

    /** The literal child for {@code topic[from, end)} whose String hash is {@code hash}. */
    Node literal(String topic, int from, int end, int hash) {
      String[] k = keys;
      if (k.length == 0) {
        return null;
      }
      int mask = k.length - 1;
      int len = end - from;
      for (int i = spread(hash) & mask; ; i = (i + 1) & mask) {
        String key = k[i];
        if (key == null) {
          return null;
        }
        if (key.length() == len
            && key.hashCode() == hash
            && key.regionMatches(0, topic, from, len)) {
          return slots[i];
        }
      }
    }

    Node literal(String level) {
      return literal(level, 0, level.length(), level.hashCode());
    }

    Node withQueue(String queue) {
      for (String q : queues) {
        if (q.equals(queue)) {
          return this; // adding the same (pattern, queue) twice is a no-op
        }
      }
      String[] qs = Arrays.copyOf(queues, queues.length + 1);
      qs[queues.length] = queue;
      return new Node(keys, slots, children.length, plus, hash, qs);
    }

    Node withoutQueue(String queue) {
      for (int i = 0; i < queues.length; i++) {
        if (queues[i].equals(queue)) {
          String[] qs = new String[queues.length - 1];
          System.arraycopy(queues, 0, qs, 0, i);
          System.arraycopy(queues, i + 1, qs, i, queues.length - i - 1);
          return new Node(keys, slots, children.length, plus, hash, qs);
        }
      }
      return this;
    }

    Node withPlus(Node newPlus) {
      return new Node(keys, slots, children.length, newPlus, hash, queues);
    }

    Node withHash(Node newHash) {
      return new Node(keys, slots, children.length, plus, newHash, queues);
    }

    /** This node with the literal child {@code level} set to {@code child}, or removed if null. */
    Node withLiteral(String level, Node child) {
      int count = children.length;
      boolean present = literal(level) != null;
      int newCount = count + (child == null ? (present ? -1 : 0) : (present ? 0 : 1));
      int capacity = tableCapacity(newCount);
      String[] newKeys = capacity == 0 ? NO_STRINGS : new String[capacity];
      Node[] newSlots = capacity == 0 ? NO_NODES : new Node[capacity];
      for (int i = 0; i < keys.length; i++) {
        if (keys[i] != null && !keys[i].equals(level)) {
          insert(newKeys, newSlots, keys[i], slots[i]);
        }
      }
      if (child != null) {
        insert(newKeys, newSlots, level, child);
      }
      return new Node(newKeys, newSlots, newCount, plus, hash, queues);
    }

    private static void insert(String[] keys, Node[] slots, String key, Node child) {
      int mask = keys.length - 1;
      int i = spread(key.hashCode()) & mask;
      while (keys[i] != null) {
        i = (i + 1) & mask;
      }
      keys[i] = key;
      slots[i] = child;
    }

    private static int tableCapacity(int entries) {
      if (entries == 0) {
        return 0;
      }
      int capacity = 2;
      while (capacity < entries * 2) {
        capacity <<= 1;
      }
      return capacity;
    }

    private static int spread(int h) {
      return h ^ (h >>> 16);
    }
  }
}
