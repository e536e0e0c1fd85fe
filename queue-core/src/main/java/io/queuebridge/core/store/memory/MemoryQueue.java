package io.queuebridge.core.store.memory;

import io.queuebridge.core.config.QueueConfig;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * One queue of a {@link MemoryStorage}: its configuration, its log and its consumer groups. The
 * configuration is replaced under the storage's admin lock and read without it (volatile); each
 * group is changed under its own monitor ({@link GroupData}).
 */
final class MemoryQueue {
  final String name;
  final MemoryLog log;
  final ConcurrentMap<String, GroupData> groups = new ConcurrentHashMap<>();
  volatile QueueConfig config;

  MemoryQueue(QueueConfig config) {
    this.name = config.name();
    this.config = config;
    this.log = new MemoryLog(name);
  }

  /** Deletes every group: each is detached, so calls still holding one report it missing. */
  void dropGroups() {
    for (GroupData g : groups.values()) {
      synchronized (g) {
        g.deleted = true;
      }
    }
    groups.clear();
  }
}
