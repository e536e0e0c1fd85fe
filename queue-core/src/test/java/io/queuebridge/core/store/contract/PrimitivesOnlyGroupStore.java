package io.queuebridge.core.store.contract;

import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import java.util.List;
import java.util.Optional;

/**
 * A group store's five primitives and nothing else: every other method is the interface's default,
 * which reads whole groups. Tests compare a store's own answers with these; benchmarks measure a
 * store's indexes against them.
 */
public final class PrimitivesOnlyGroupStore implements ConsumerGroupStore {
  private final ConsumerGroupStore store;

  public PrimitivesOnlyGroupStore(ConsumerGroupStore store) {
    this.store = store;
  }

  @Override
  public void createGroup(ConsumerGroupState group) {
    store.createGroup(group);
  }

  @Override
  public Optional<ConsumerGroupState> findGroup(String queue, String groupId) {
    return store.findGroup(queue, groupId);
  }

  @Override
  public void updateGroup(ConsumerGroupState group) {
    store.updateGroup(group);
  }

  @Override
  public void deleteGroup(String queue, String groupId) {
    store.deleteGroup(queue, groupId);
  }

  @Override
  public List<ConsumerGroupState> listGroups(String queue) {
    return store.listGroups(queue);
  }
}
