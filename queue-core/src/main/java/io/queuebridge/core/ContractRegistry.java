package io.queuebridge.core;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.DurableSyncUnsupportedException;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException.FieldMismatch;
import io.queuebridge.core.errors.ProtectedQueueMutationException;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The protected-contract registry of a manager (BEHAVIOUR Q-PROT): which durable streams are
 * protected and by which contract, and the operations that validate, replace, narrow, check and
 * declare them. The pure rules are {@link ProtectedContracts}'; this class owns the registry and
 * its lock. It reads the store's queue configurations to compare them with contracts, writes the
 * store only to create a declared stream, and then tells the {@link DeliveryHook}.
 *
 * <p>Thread-safe. One read/write lock guards the registry: queue mutations ({@link
 * QueueAdministration}) hold its read side ({@link #mutationLock}) across their store write; {@link
 * #replace} and {@link #declare} hold the write side across validation (and creation) and swap;
 * {@link #narrow} holds it briefly. {@link #contractOf} takes the read side only to copy a contract
 * out, never across I/O. The map itself is replaced wholesale and read without the lock where a
 * snapshot suffices.
 */
final class ContractRegistry {
  // Logs under the facade's name, which is what operators configure.
  private static final Logger LOG = LoggerFactory.getLogger(QueueManager.class);

  private final LifecycleState state;
  private final Storage storage;
  private final DurableQueueStore queues;
  private final DeliveryHook deliveryHook;

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  // Replaced wholesale under the write side of lock; an unmodifiable map sorted by name.
  private volatile Map<String, QueueConfig> contracts;
  // The error building the configured contracts, surfaced by validate/start until a replace.
  private volatile RuntimeException buildError;

  /**
   * A registry holding the {@code configured} contracts; if they are invalid it starts empty and
   * remembers the error for {@link #validateAgainstStorage()}.
   */
  ContractRegistry(
      List<QueueConfig> configured,
      LifecycleState state,
      Storage storage,
      DurableQueueStore queues,
      DeliveryHook deliveryHook) {
    this.state = state;
    this.storage = storage;
    this.queues = queues;
    this.deliveryHook = deliveryHook;
    Map<String, QueueConfig> built;
    try {
      built = ProtectedContracts.build(configured);
    } catch (InvalidConfigException e) {
      buildError = e;
      built = Map.of();
    }
    this.contracts = built;
  }

  /** {@link QueueManager#validateProtectedQueueContract}: no state, no I/O. */
  static void validate(QueueConfig expected, QueueConfig persisted) {
    Objects.requireNonNull(expected, "expected");
    Objects.requireNonNull(persisted, "persisted");
    ProtectedContracts.checkSelfValid(expected);
    List<FieldMismatch> drift = ProtectedContracts.mismatches(expected, persisted);
    if (!drift.isEmpty()) {
      throw new ProtectedQueueContractDriftException(expected.name(), drift);
    }
  }

  /** {@link QueueManager#validateProtectedQueueContracts()}. */
  void validateAgainstStorage() {
    state.ensureUsable();
    RuntimeException error = buildError;
    if (error != null) {
      throw error;
    }
    validateAgainstStorage(contracts);
  }

  private void validateAgainstStorage(Map<String, QueueConfig> registry) {
    if (registry.isEmpty()) {
      return;
    }
    if (!queues.supportsDurableSync()) {
      throw new DurableSyncUnsupportedException(null, storage.description());
    }
    for (QueueConfig contract : registry.values()) { // sorted by name
      String name = contract.name();
      QueueConfig stored;
      try {
        stored = queues.getQueue(name);
      } catch (QueueNotFoundException e) {
        throw new ProtectedQueueContractDriftException(name, ProtectedContracts.missing(name));
      } catch (RuntimeException e) {
        throw new ProtectedQueueContractDriftException(
            name, "stored configuration cannot be read: " + e.getMessage(), e);
      }
      List<FieldMismatch> drift = ProtectedContracts.mismatches(contract, stored);
      if (!drift.isEmpty()) {
        throw new ProtectedQueueContractDriftException(name, drift);
      }
    }
  }

  /** {@link QueueManager#replaceProtectedQueueContracts}. */
  void replace(List<QueueConfig> replacement) {
    state.ensureUsable();
    Map<String, QueueConfig> built =
        ProtectedContracts.build(Objects.requireNonNull(replacement, "contracts"));
    ReentrantReadWriteLock.WriteLock write = lock.writeLock();
    write.lock();
    try {
      validateAgainstStorage(built);
      this.contracts = built;
      this.buildError = null;
    } finally {
      write.unlock();
    }
  }

  /** {@link QueueManager#narrowProtectedQueueContracts}. */
  void narrow(List<QueueConfig> subset) {
    Map<String, QueueConfig> built =
        ProtectedContracts.build(Objects.requireNonNull(subset, "contracts"));
    ReentrantReadWriteLock.WriteLock write = lock.writeLock();
    write.lock();
    try {
      Map<String, QueueConfig> installed = this.contracts;
      for (QueueConfig c : built.values()) {
        QueueConfig current = installed.get(c.name());
        if (current == null) {
          throw new InvalidConfigException(
              "protectedQueueContracts[" + c.name() + "]",
              c.name(),
              "a contract already installed");
        }
        List<FieldMismatch> differs = ProtectedContracts.mismatches(current, c);
        if (!differs.isEmpty()) {
          throw new InvalidConfigException(
              "protectedQueueContracts[" + c.name() + "]",
              differs.stream()
                  .map(m -> m.field() + " " + m.stored() + " (installed " + m.wanted() + ")")
                  .collect(Collectors.joining(", ")),
              "the installed contract: narrowing cannot change a contract");
        }
      }
      this.contracts = built;
    } finally {
      write.unlock();
    }
  }

  /** {@link QueueManager#checkProtectedStream}. */
  void check(QueueConfig contract) {
    state.ensureUsable();
    Objects.requireNonNull(contract, "contract");
    ProtectedContracts.checkSelfValid(contract);
    refuseIfDiffers(
        contracts, contract, "a different contract is registered; it differs on", "registered");
    if (!queues.supportsDurableSync()) {
      throw new DurableSyncUnsupportedException(contract.name(), storage.description());
    }
    QueueConfig stored = storedOrNull(contract.name());
    if (stored != null) {
      validate(contract, stored);
    }
  }

  /** {@link QueueManager#declareProtectedStream}. */
  void declare(QueueConfig contract) {
    state.ensureUsable();
    Objects.requireNonNull(contract, "contract");
    ProtectedContracts.checkSelfValid(contract);
    String name = contract.name();
    boolean created = false;
    ReentrantReadWriteLock.WriteLock write = lock.writeLock();
    write.lock();
    try {
      Map<String, QueueConfig> installed = this.contracts;
      refuseIfDiffers(
          installed, contract, "a different contract is registered; it differs on", "registered");
      if (!queues.supportsDurableSync()) {
        throw new DurableSyncUnsupportedException(name, storage.description());
      }
      QueueConfig stored = storedOrNull(name);
      if (stored == null) {
        try {
          queues.createQueue(contract);
          created = true;
        } catch (QueueAlreadyExistsException raced) {
          LOG.debug("Stream {} was created concurrently; checking it", name);
        } catch (RuntimeException e) {
          throw StoreErrors.wrap(name, "create protected stream " + name, e);
        }
        stored = storedOrNull(name);
        if (stored == null) {
          throw new ProtectedQueueContractDriftException(name, ProtectedContracts.missing(name));
        }
      }
      validate(contract, stored);
      TreeMap<String, QueueConfig> next = new TreeMap<>(installed);
      next.put(name, contract);
      this.contracts = Collections.unmodifiableMap(next);
    } finally {
      write.unlock();
    }
    if (created) {
      LOG.info("Declared protected stream {}: created", name);
      deliveryHook.schedule(name);
    }
  }

  /** The stored config, or null when the queue does not exist; other errors propagate. */
  private QueueConfig storedOrNull(String name) {
    try {
      return queues.getQueue(name);
    } catch (QueueNotFoundException e) {
      return null;
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(name, "get protected stream " + name, e);
    }
  }

  /** {@link QueueManager#protectedQueueContracts()}: a snapshot, never blocking on I/O. */
  List<QueueConfig> snapshot() {
    return List.copyOf(contracts.values());
  }

  /** The contract of {@code queue}, or null; copied out under a brief read lock. */
  QueueConfig contractOf(String queue) {
    ReentrantReadWriteLock.ReadLock read = lock.readLock();
    read.lock();
    try {
      return contracts.get(queue);
    } finally {
      read.unlock();
    }
  }

  /**
   * The read side of the registry lock: held by a queue creation, update or deletion across its
   * check ({@link #checkMutation}, {@link #checkDeletable}) and its store write, so that no {@link
   * #replace} or {@link #declare} can fall between the two.
   */
  Lock mutationLock() {
    return lock.readLock();
  }

  /**
   * Refuses a configuration that differs from its queue's contract. Caller holds {@link
   * #mutationLock}.
   *
   * @throws ProtectedQueueMutationException naming every differing field
   */
  void checkMutation(QueueConfig requested) {
    refuseIfDiffers(
        contracts, requested, "the configuration differs from its contract on", "contract");
  }

  /**
   * Refuses to delete a protected queue. Caller holds {@link #mutationLock}.
   *
   * @throws ProtectedQueueMutationException if {@code name} has a contract
   */
  void checkDeletable(String name) {
    if (contracts.containsKey(name)) {
      throw new ProtectedQueueMutationException(name, "a protected queue cannot be deleted");
    }
  }

  /** Whether {@code thread} waits for the registry lock (for race tests). */
  boolean waitsForLock(Thread thread) {
    return lock.hasQueuedThread(thread);
  }

  /**
   * Refuses {@code requested} if {@code registry} holds a contract of that name that differs from
   * it on a compared field: a {@link ProtectedQueueMutationException} saying {@code why}, then
   * "field (requested value, {@code held} value)" for each field.
   */
  private static void refuseIfDiffers(
      Map<String, QueueConfig> registry, QueueConfig requested, String why, String held) {
    QueueConfig current = registry.get(requested.name());
    if (current == null) {
      return;
    }
    List<FieldMismatch> differs = ProtectedContracts.mismatches(current, requested);
    if (!differs.isEmpty()) {
      throw new ProtectedQueueMutationException(
          requested.name(),
          why
              + " "
              + differs.stream()
                  .map(
                      m ->
                          m.field()
                              + " (requested "
                              + m.stored()
                              + ", "
                              + held
                              + " "
                              + m.wanted()
                              + ")")
                  .collect(Collectors.joining(", ")));
    }
  }
}
