package io.queuebridge.core.internal.group;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The heartbeat index of BEHAVIOUR Q-HEARTBEAT: for every consumer (client) id, the groups it is a
 * member of, so a client-wide heartbeat refreshes exactly those memberships instead of scanning
 * every group of every queue; and the reverse, so deleting a group forgets its members.
 *
 * <p>A membership is binary here (joining twice is one membership): a set, not a reference count
 * per (client, queue, group). The index is a cache of the store's memberships: {@link Members}
 * fills it from the store when it is built and keeps it in step with every join, leave, removal and
 * group deletion; a heartbeat that finds a membership gone drops it.
 *
 * <p>Not thread-safe: the {@link GroupCoordinator}'s lock guards it.
 */
final class MembershipIndex {
  /** One group membership. */
  record Membership(String queue, String group) {}

  private final Map<String, Set<Membership>> byConsumer = new HashMap<>();
  private final Map<Membership, Set<String>> byGroup = new HashMap<>();

  void add(String consumerId, String queue, String group) {
    Membership m = new Membership(queue, group);
    byConsumer.computeIfAbsent(consumerId, k -> new LinkedHashSet<>()).add(m);
    byGroup.computeIfAbsent(m, k -> new LinkedHashSet<>()).add(consumerId);
  }

  void remove(String consumerId, String queue, String group) {
    Membership m = new Membership(queue, group);
    Set<Membership> of = byConsumer.get(consumerId);
    if (of != null && of.remove(m) && of.isEmpty()) {
      byConsumer.remove(consumerId);
    }
    Set<String> members = byGroup.get(m);
    if (members != null && members.remove(consumerId) && members.isEmpty()) {
      byGroup.remove(m);
    }
  }

  /** Forgets every member of a deleted group. */
  void removeGroup(String queue, String group) {
    Set<String> members = byGroup.remove(new Membership(queue, group));
    if (members == null) {
      return;
    }
    for (String consumerId : members) {
      Set<Membership> of = byConsumer.get(consumerId);
      if (of != null && of.remove(new Membership(queue, group)) && of.isEmpty()) {
        byConsumer.remove(consumerId);
      }
    }
  }

  /** The memberships of {@code consumerId}, as a copy (empty when none). */
  List<Membership> of(String consumerId) {
    Set<Membership> of = byConsumer.get(consumerId);
    return of == null ? List.of() : List.copyOf(of);
  }

  /** Consumers with at least one membership; for tests. */
  int consumers() {
    return byConsumer.size();
  }
}
