package io.queuebridge.cli;

import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerInfo;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;

/**
 * One member of a consumer group, as {@code groups --members} shows it.
 *
 * @param group the group's id
 * @param consumer the member's id
 * @param client the client it belongs to
 * @param pending entries it holds
 * @param idleMs time since its last heartbeat
 * @param lastHeartbeat when it last showed life
 * @param registeredAt when it (re-)joined
 */
record MemberRow(
    String group,
    String consumer,
    String client,
    int pending,
    long idleMs,
    Instant lastHeartbeat,
    Instant registeredAt) {

  static final String[] COLUMNS = {
    "GROUP", "CONSUMER", "CLIENT", "PENDING", "IDLE", "LAST-HEARTBEAT", "REGISTERED"
  };

  /** The members of {@code g}, by id. */
  static List<MemberRow> of(ConsumerGroupState g, Instant now) {
    return g.consumers().values().stream()
        .sorted(Comparator.comparing(ConsumerInfo::id))
        .map(
            c ->
                new MemberRow(
                    g.id(),
                    c.id(),
                    c.clientId(),
                    g.pendingOf(c.id()).size(),
                    Text.millisSince(c.lastHeartbeat(), now),
                    c.lastHeartbeat(),
                    c.registeredAt()))
        .toList();
  }

  Object[] cells() {
    return new Object[] {
      group,
      consumer,
      client,
      pending,
      Text.age(idleMs),
      Text.instant(lastHeartbeat),
      Text.instant(registeredAt)
    };
  }
}
