package io.queuebridge.core.store.support;

import io.queuebridge.core.store.PendingEntry;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The due index of a {@link PendingLog}: its live entries in {@link PendingEntry#BY_VISIBILITY}
 * order, for {@link PendingLog#due}, at almost no cost on the claim-and-ack path.
 *
 * <p><b>Layout.</b> Most entries are added in visibility order: a claim, a steal or a renewal makes
 * its entry visible again at <em>now</em> plus the visibility timeout, later than every entry made
 * before it. Those go to the end of {@code run}, a deque kept in order, in O(1) and without
 * allocating. An entry that would break that order (a scheduled message, a nack's retry time, a
 * clock that went back) goes to {@code rest}, a sorted set. A blocked entry (visible {@link
 * PendingEntry#NEVER}) is never due and is not indexed at all: in the run it would push every later
 * claim into the set, and in the set it would make every removal a lookup. {@code run} is cleaned
 * lazily: an entry that stops being live (acknowledged, replaced) stays where it is until it
 * reaches the front, where removals trim it, or until the dead ones outnumber the live ones, when
 * the deque is rebuilt. In-order acknowledgements therefore cost one liveness check each. {@link
 * #due} merges the two, skipping what is not live.
 *
 * <p>Not thread-safe: the owning log's lock guards it.
 */
final class DueIndex {
  private final ArrayDeque<PendingEntry> run = new ArrayDeque<>();
  private final TreeSet<PendingEntry> rest = new TreeSet<>(PendingEntry.BY_VISIBILITY);
  private final Predicate<PendingEntry> live;

  /**
   * @param live whether an entry is the log's live entry at its offset (by identity)
   */
  DueIndex(Predicate<PendingEntry> live) {
    this.live = live;
  }

  /** Indexes {@code e}, which the log has just made live. */
  void add(PendingEntry e) {
    if (e.isBlocked()) {
      return; // never due (BEHAVIOUR Q-ORDER): a release replaces it with an entry that is
    }
    PendingEntry last = run.peekLast();
    if (last == null || PendingEntry.BY_VISIBILITY.compare(e, last) >= 0) {
      run.addLast(e);
    } else {
      rest.add(e);
    }
  }

  /**
   * Forgets {@code e}, which the log has just removed or replaced; {@code liveCount} is the log's
   * live entries afterwards that are not blocked (the ones indexed).
   */
  void removed(PendingEntry e, int liveCount) {
    if (e.isBlocked()) {
      return; // never indexed
    }
    // The same entry object can be in both (taken off and put back): rest holds only live ones.
    boolean wasInRest = !rest.isEmpty() && rest.remove(e);
    if (run.peekFirst() == e) {
      run.pollFirst(); // in-order acknowledgements: the common case, no lookup
      trimFront();
      return;
    }
    if (wasInRest) {
      return;
    }
    // otherwise e stays in run, dead, until the dead entries outnumber the live ones
    if (run.size() > 2 * (liveCount - rest.size()) + 64) {
      run.removeIf(x -> !live.test(x));
    }
  }

  /**
   * Drops the dead entries at the front of {@code run}, so its first entry is live: an entry acked
   * out of order (competing members settle their batches in any order) is dropped as soon as the
   * ones before it are, and {@link #due} looks at one live entry, not at a prefix of dead ones, to
   * learn that nothing is due. Each dead entry is dropped once; an entry made live again is added
   * again ({@link #add}), so dropping a dead one never loses a live one.
   */
  private void trimFront() {
    PendingEntry first;
    while ((first = run.peekFirst()) != null && !live.test(first)) {
      run.pollFirst();
    }
  }

  /** Forgets everything. */
  void clear() {
    run.clear();
    rest.clear();
  }

  /**
   * The live entries with {@code visibleAt <= now} after {@code after} (from the first when null)
   * in {@link PendingEntry#BY_VISIBILITY} order, at most {@code limit}.
   */
  List<PendingEntry> due(Instant now, PendingEntry after, int limit) {
    if (after == null
        && notDue(run.peekFirst(), now)
        && (rest.isEmpty() || notDue(rest.first(), now))) {
      return List.of(); // the common answer of a claim that finds nothing to steal: no allocation
    }
    List<PendingEntry> out = new ArrayList<>(Math.min(limit, 16));
    // An entry object removed and added again can sit in run twice: emit each offset once.
    Set<Long> seen = new HashSet<>();
    Iterator<PendingEntry> a = run.iterator();
    Iterator<PendingEntry> b = (after == null ? rest : rest.tailSet(after, false)).iterator();
    PendingEntry x = next(a, after, seen);
    PendingEntry y = b.hasNext() ? b.next() : null;
    while (out.size() < limit && (x != null || y != null)) {
      PendingEntry pick;
      if (y == null || (x != null && PendingEntry.BY_VISIBILITY.compare(x, y) <= 0)) {
        pick = x;
        x = next(a, after, seen);
      } else {
        pick = y;
        y = b.hasNext() ? b.next() : null;
      }
      if (pick.visibleAt().isAfter(now)) {
        break; // both sources are in order: nothing later is due either
      }
      if (live.test(pick) && seen.add(pick.offset())) {
        out.add(pick);
      }
    }
    return out;
  }

  /**
   * Whether {@code first}, the first entry of {@code run} (live, see {@link #trimFront}) or of
   * {@code rest}, says that nothing in its source is due at {@code now}: null (empty) or later.
   */
  private static boolean notDue(PendingEntry first, Instant now) {
    return first == null || first.visibleAt().isAfter(now);
  }

  /** The next live entry of {@code run} after {@code after}, not yet emitted; null at the end. */
  private PendingEntry next(Iterator<PendingEntry> it, PendingEntry after, Set<Long> seen) {
    while (it.hasNext()) {
      PendingEntry e = it.next();
      if (live.test(e)
          && !seen.contains(e.offset())
          && (after == null || PendingEntry.BY_VISIBILITY.compare(e, after) > 0)) {
        return e;
      }
    }
    return null;
  }
}
