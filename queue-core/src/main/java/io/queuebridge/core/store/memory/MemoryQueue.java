package io.queuebridge.core.store.memory;

import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.store.ConsumerGroupState;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * One queue of a {@link MemoryStorage}: its configuration, its log and its consumer groups. The
 * configuration is replaced under the storage's admin lock and read without it (volatile); each
 * group is changed atomically through {@link ConcurrentMap#compute}.
 */
final class MemoryQueue {
  final String name;
  final QueueLog log;
  final ConcurrentMap<String, ConsumerGroupState> groups = new ConcurrentHashMap<>();
  volatile QueueConfig config;

  MemoryQueue(QueueConfig config) {
    this.name = config.name();
    this.config = config;
    this.log = new QueueLog(name);
  }
}
