package io.queuebridge.core.config;

import java.util.Objects;

/**
 * Where a queue's dead letters go (BEHAVIOUR Q-CONFIG, Q-DLQ).
 *
 * @param enabled whether rejected and poison messages are dead-lettered
 * @param topic the dead-letter queue (and its topic); empty = the manager's prefix + queue name
 */
public record DlqConfig(boolean enabled, String topic) {
  /** Enabled, default topic. */
  public static final DlqConfig DEFAULT = new DlqConfig(true, "");

  /** Disabled: used for dead-letter queues themselves, so dead letters never chain. */
  public static final DlqConfig DISABLED = new DlqConfig(false, "");

  public DlqConfig {
    topic = Objects.requireNonNullElse(topic, "");
  }
}
