package io.queuebridge.core.store.file;

import io.queuebridge.core.config.Names;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.support.ReadOnlyGroupStore;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The consumer-group half of {@link ReadOnlyFileStorage}: one {@link GroupFollower} per group file
 * ({@code groups/<encoded id>.grp}), behind the shared refusals of {@link ReadOnlyGroupStore}.
 * {@link #findGroup} follows one file; {@link #listGroups} lists the queue's group directory; the
 * other reads are the interface's defaults on {@link #findGroup}. A missing queue is a {@link
 * io.queuebridge.core.errors.QueueNotFoundException}, a missing group an empty answer (or {@link
 * io.queuebridge.core.errors.GroupNotFoundException} where the method says so).
 *
 * <p>Thread-safe.
 */
final class ReadOnlyFileGroupStore extends ReadOnlyGroupStore {
  private final ReadOnlyFileStorage storage;

  ReadOnlyFileGroupStore(ReadOnlyFileStorage storage) {
    super(storage.description());
    this.storage = storage;
  }

  @Override
  protected void checkOpen() {
    storage.checkOpen();
  }

  @Override
  public Optional<ConsumerGroupState> findGroup(String queue, String groupId) {
    Objects.requireNonNull(groupId, "groupId");
    ReadOnlyFileStorage.FollowedQueue q = storage.queue(queue);
    String encoded;
    try {
      encoded = Names.encode("group id", groupId);
    } catch (InvalidConfigException e) {
      return Optional.empty(); // no store could hold it
    }
    Path file = q.groupsDir().resolve(encoded + GroupLog.SUFFIX);
    return state(q, groupId, file);
  }

  @Override
  public List<ConsumerGroupState> listGroups(String queue) {
    ReadOnlyFileStorage.FollowedQueue q = storage.queue(queue);
    List<ConsumerGroupState> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(q.groupsDir())) {
      for (Path f : ds) {
        String n = f.getFileName().toString();
        if (!n.endsWith(GroupLog.SUFFIX)) {
          continue; // a temporary file of a compaction or creation
        }
        String id;
        try {
          id = Names.decode(n.substring(0, n.length() - GroupLog.SUFFIX.length()));
        } catch (IllegalArgumentException e) {
          continue; // not a group log
        }
        seen.add(id);
        state(q, id, f).ifPresent(out::add);
      }
    } catch (NoSuchFileException e) {
      // deleted meanwhile, or a queue directory without groups: no groups
    } catch (IOException e) {
      throw new QueueStoreException(
          queue, "listing the consumer groups of queue " + queue + " failed: " + e, e);
    }
    q.groups.entrySet().removeIf(e -> !seen.contains(e.getKey()) && close(e.getValue()));
    return out;
  }

  private static boolean close(GroupFollower f) {
    f.close();
    return true;
  }

  private Optional<ConsumerGroupState> state(
      ReadOnlyFileStorage.FollowedQueue q, String id, Path file) {
    try {
      return storage.group(q, id, file).state();
    } catch (IOException e) {
      throw new QueueStoreException(
          q.name, "reading consumer group " + id + " of queue " + q.name + " failed: " + e, e);
    }
  }
}
