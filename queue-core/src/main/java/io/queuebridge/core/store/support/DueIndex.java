package io.queuebridge.core.store.support;

import io.queuebridge.core.store.PendingEntry;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.TreeSet;

/**
 * The due index of a {@link PendingLog}: its live entries in {@link PendingEntry#BY_VISIBILITY}
 * order, for {@link PendingLog#due}, at almost no cost on the claim-and-ack path.
 *
 * <p><b>Layout.</b> Each indexed entry has a {@link Node}, which the log keeps beside the entry and
 * hands back when the entry goes; a node knows whether it is still live and where it sits, so
 * forgetting an entry never searches. Most entries are added in visibility order: a claim, a steal
 * or a renewal makes its entry visible again at <em>now</em> plus the visibility timeout, later
 * than every entry made before it. Those go to the end of {@code run}, a deque kept in order, in
 * O(1). An entry that would break that order (a scheduled message, a nack's retry time, a released
 * key, a clock that went back) goes to {@code rest}, a sorted set. A blocked entry (visible {@link
 * PendingEntry#NEVER}) is never due and is not indexed at all: in the run it would push every later
 * claim into the set. {@code run} is cleaned lazily: a node that stops being live (its entry
 * acknowledged or replaced) stays where it is until it reaches the front, where removals trim it,
 * or until the dead ones outnumber the live ones, when the deque is rebuilt. {@link #due} merges
 * the two, skipping dead nodes.
 *
 * <p>Not thread-safe: the owning log's lock guards it.
 */
final class DueIndex {
  /**
   * One indexed entry. {@code dead} once the log has removed or replaced the entry; a node is never
   * made live again (an entry added again gets a new node), so a deque holds each live entry once.
   */
  static final class Node {
    final PendingEntry entry;
    private boolean dead;
    private boolean inRest;

    private Node(PendingEntry entry) {
      this.entry = entry;
    }
  }

  private static final Comparator<Node> ORDER =
      (a, b) -> PendingEntry.BY_VISIBILITY.compare(a.entry, b.entry);

  private final ArrayDeque<Node> run = new ArrayDeque<>();
  private final TreeSet<Node> rest = new TreeSet<>(ORDER);
  // live nodes in run: the dead ones are run.size() minus this
  private int liveInRun;

  /**
   * Indexes {@code e}, which the log has just made live.
   *
   * @return its node, for {@link #removed}; null when {@code e} is blocked (not indexed)
   */
  Node add(PendingEntry e) {
    if (e.isBlocked()) {
      return null; // never due (BEHAVIOUR Q-ORDER): a release replaces it with an entry that is
    }
    Node n = new Node(e);
    Node last = run.peekLast();
    if (last == null || PendingEntry.BY_VISIBILITY.compare(e, last.entry) >= 0) {
      run.addLast(n);
      liveInRun++;
    } else {
      n.inRest = true;
      rest.add(n);
    }
    return n;
  }

  /** Forgets the entry of {@code n} (null: one never indexed), which the log has just removed. */
  void removed(Node n) {
    if (n == null || n.dead) {
      return;
    }
    n.dead = true;
    if (n.inRest) {
      rest.remove(n);
      return;
    }
    liveInRun--;
    if (run.peekFirst() == n) {
      run.pollFirst(); // in-order acknowledgements: the common case
      trimFront();
    } else if (run.size() - liveInRun > liveInRun + 64) {
      run.removeIf(x -> x.dead); // competing members ack out of order: rebuild, O(1) amortised
    }
  }

  /**
   * Drops the dead nodes at the front of {@code run}, so its first node is live: an entry acked out
   * of order (competing members settle their batches in any order) is dropped as soon as the ones
   * before it are, and {@link #due} looks at one live node, not at a prefix of dead ones, to learn
   * that nothing is due.
   */
  private void trimFront() {
    Node first;
    while ((first = run.peekFirst()) != null && first.dead) {
      run.pollFirst();
    }
  }

  /** Forgets everything (the log drops its nodes with it). */
  void clear() {
    run.clear();
    rest.clear();
    liveInRun = 0;
  }

  /**
   * The live entries with {@code visibleAt <= now} after {@code after} (from the first when null)
   * in {@link PendingEntry#BY_VISIBILITY} order, at most {@code limit}.
   */
  List<PendingEntry> due(Instant now, PendingEntry after, int limit) {
    if (after == null && notDue(run.peekFirst(), now) && notDue(first(rest), now)) {
      return List.of(); // the common answer of a claim that finds nothing to steal: no allocation
    }
    List<PendingEntry> out = new ArrayList<>(Math.min(limit, 16));
    Iterator<Node> a = run.iterator();
    Iterator<Node> b = (after == null ? rest : rest.tailSet(new Node(after), false)).iterator();
    Node x = next(a, after);
    Node y = b.hasNext() ? b.next() : null;
    while (out.size() < limit && (x != null || y != null)) {
      Node pick;
      if (y == null || (x != null && ORDER.compare(x, y) <= 0)) {
        pick = x;
        x = next(a, after);
      } else {
        pick = y;
        y = b.hasNext() ? b.next() : null;
      }
      if (pick.entry.visibleAt().isAfter(now)) {
        break; // both sources are in order: nothing later is due either
      }
      out.add(pick.entry);
    }
    return out;
  }

  private static Node first(TreeSet<Node> set) {
    return set.isEmpty() ? null : set.first();
  }

  /**
   * Whether {@code first}, the first node of {@code run} (live, see {@link #trimFront}) or of
   * {@code rest}, says that nothing in its source is due at {@code now}: null (empty) or later.
   */
  private static boolean notDue(Node first, Instant now) {
    return first == null || first.entry.visibleAt().isAfter(now);
  }

  /** The next live node of {@code run} after {@code after}; null at the end. */
  private static Node next(Iterator<Node> it, PendingEntry after) {
    while (it.hasNext()) {
      Node n = it.next();
      if (!n.dead && (after == null || PendingEntry.BY_VISIBILITY.compare(n.entry, after) > 0)) {
        return n;
      }
    }
    return null;
  }
}
