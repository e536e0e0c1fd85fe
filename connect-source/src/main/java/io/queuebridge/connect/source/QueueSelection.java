package io.queuebridge.connect.source;

import io.queuebridge.connect.source.QueueSourceConfig.ConsumerMode;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.topic.TopicFilters;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which queues a connector reads and which task reads which.
 *
 * <p>Resolution: {@code queue.names} — the named queues that exist; {@code queue.filter} — every
 * queue whose NAME the filter matches ({@link TopicFilters#matches}). Sorted by name, so every
 * resolution of the same store state gives the same list and the same assignment.
 *
 * <p>Assignment: {@link ConsumerMode#DEDICATED} spreads the queues round robin over {@code
 * min(maxTasks, queues)} tasks (each queue to exactly one task); {@link ConsumerMode#SHARED} gives
 * every one of {@code maxTasks} tasks every queue.
 *
 * <p>Stateless and thread-safe.
 */
final class QueueSelection {
  private QueueSelection() {}

  /** The queues {@code config} selects in the store, sorted by name, with their types. */
  static Map<String, Boolean> resolve(QueueSourceConfig config, QueueManager manager) {
    Set<String> wanted = new TreeSet<>(config.queueNames());
    String filter = config.queueFilter();
    Map<String, Boolean> streams = new HashMap<>();
    for (QueueConfig q : manager.listQueues()) {
      boolean selected =
          filter.isEmpty() ? wanted.contains(q.name()) : TopicFilters.matches(filter, q.name());
      if (selected) {
        streams.put(q.name(), q.isStream());
      }
    }
    Map<String, Boolean> sorted = new LinkedHashMap<>();
    new TreeSet<>(streams.keySet()).forEach(name -> sorted.put(name, streams.get(name)));
    return sorted;
  }

  /** The named queues that are streams, for the shared-mode check. */
  static List<String> streams(Map<String, Boolean> resolved) {
    List<String> out = new ArrayList<>();
    resolved.forEach(
        (name, stream) -> {
          if (stream) {
            out.add(name);
          }
        });
    return out;
  }

  /**
   * The queue lists of the tasks.
   *
   * @param queues the resolved queues, sorted
   * @return one list per task; empty when there is nothing to read
   */
  static List<List<String>> assign(List<String> queues, int maxTasks, ConsumerMode mode) {
    List<List<String>> tasks = new ArrayList<>();
    if (queues.isEmpty() || maxTasks <= 0) {
      return tasks;
    }
    if (mode == ConsumerMode.SHARED) {
      for (int i = 0; i < maxTasks; i++) {
        tasks.add(List.copyOf(queues));
      }
      return tasks;
    }
    int n = Math.min(maxTasks, queues.size());
    for (int i = 0; i < n; i++) {
      tasks.add(new ArrayList<>());
    }
    for (int j = 0; j < queues.size(); j++) {
      tasks.get(j % n).add(queues.get(j));
    }
    return tasks.stream().map(List::copyOf).toList();
  }
}
