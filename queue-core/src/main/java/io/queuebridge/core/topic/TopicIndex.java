package io.queuebridge.core.topic;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Which queues' topic filters match a topic ({@code T-IDX}, SEMANTICS B §4.3). Thread-safe.
 *
 * <p>NOTE: a linear placeholder with the final API; the topic work replaces it with the two-half
 * trie whose cost depends on topic depth, not pattern count.
 */
public final class TopicIndex {
  private final Map<String, List<String>> patternsByQueue = new LinkedHashMap<>();

  /** Sets {@code queue}'s filters, replacing any it had. */
  public synchronized void addQueue(String queue, List<String> filters) {
    patternsByQueue.put(queue, List.copyOf(new LinkedHashSet<>(filters)));
  }

  /** Forgets {@code queue}'s filters; unknown queues are ignored. */
  public synchronized void removeQueue(String queue) {
    patternsByQueue.remove(queue);
  }

  /**
   * Distinct names of the queues with a filter matching {@code topic}, in first-match order; empty
   * for an empty topic. Returns a new list the caller may keep.
   */
  public synchronized List<String> findMatching(String topic) {
    if (topic == null || topic.isEmpty()) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, List<String>> e : patternsByQueue.entrySet()) {
      for (String f : e.getValue()) {
        if (isWellPlaced(f) && TopicFilters.matches(f, topic)) {
          out.add(e.getKey());
          break;
        }
      }
    }
    return out;
  }

  /** The filters registered for {@code queue} (a copy); empty when unknown. */
  public synchronized List<String> filtersOf(String queue) {
    return patternsByQueue.getOrDefault(queue, List.of());
  }

  // A misplaced '#' (e.g. "#/a") is a literal path in the trie and so captures nothing.
  private static boolean isWellPlaced(String filter) {
    int hash = filter.indexOf('#');
    return hash < 0
        || (hash == filter.length() - 1 && (hash == 0 || filter.charAt(hash - 1) == '/'));
  }
}
