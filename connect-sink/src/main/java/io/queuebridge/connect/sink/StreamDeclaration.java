package io.queuebridge.connect.sink;

import io.queuebridge.core.ProtectedQueueContractDriftException;
import io.queuebridge.core.QueueAlreadyExistsException;
import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueNotFoundException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Declares a protected durable stream the way RabbitMQ declares a queue: created if absent with the
 * contract as its configuration, asserted equal on the contract's fields if present, and then
 * registered as protected so the exact publish path accepts it. A stored stream is never changed.
 *
 * <p>Thread-safe: declarations against one manager are serialised (the registry is replaced as a
 * whole, so two tasks adding contracts at once must not lose one).
 */
final class StreamDeclaration {
  private StreamDeclaration() {}

  /**
   * Checks an existing stream against {@code contract} without changing anything.
   *
   * @throws ProtectedQueueContractDriftException naming each differing field
   */
  static void check(QueueManager manager, QueueConfig contract) {
    stored(manager, contract.name())
        .ifPresent(s -> QueueManager.validateProtectedQueueContract(contract, s));
  }

  /**
   * Creates the stream if absent, asserts it against {@code contract} and registers the contract.
   *
   * @throws ProtectedQueueContractDriftException if the stored stream differs
   */
  static void declare(QueueManager manager, QueueConfig contract) {
    synchronized (manager) {
      if (stored(manager, contract.name()).isEmpty()) {
        try {
          manager.createQueue(contract);
        } catch (QueueAlreadyExistsException raced) {
          // created meanwhile (another worker on a shared store): assert it below
        }
      }
      QueueManager.validateProtectedQueueContract(
          contract, stored(manager, contract.name()).orElseThrow());
      List<QueueConfig> contracts = new ArrayList<>();
      for (QueueConfig c : manager.protectedQueueContracts()) {
        if (!c.name().equals(contract.name())) {
          contracts.add(c);
        }
      }
      contracts.add(contract);
      manager.replaceProtectedQueueContracts(contracts);
    }
  }

  private static Optional<QueueConfig> stored(QueueManager manager, String name) {
    try {
      return Optional.of(manager.getQueue(name));
    } catch (QueueNotFoundException e) {
      return Optional.empty();
    }
  }
}
