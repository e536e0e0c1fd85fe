package io.queuebridge.core.errors;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A protected queue's stored configuration no longer matches its registered contract. Lists every
 * differing field with the stored and the wanted value, in config-file vocabulary ({@code
 * retention.max_age}, {@code limits.max_message_size}, ...).
 */
public class ProtectedQueueContractDriftException extends FatalQueueException {
  private final List<FieldMismatch> mismatches;

  /**
   * One differing field.
   *
   * @param field the field, in config-file vocabulary
   * @param stored the value in storage ("(missing)" when the queue does not exist)
   * @param wanted the value the contract requires
   */
  public record FieldMismatch(String field, String stored, String wanted) {
    @Override
    public String toString() {
      return field + ": stored " + stored + ", configured " + wanted;
    }
  }

  public ProtectedQueueContractDriftException(String queue, List<FieldMismatch> mismatches) {
    super(
        queue,
        "protected queue contract drift on "
            + queue
            + ": "
            + mismatches.stream().map(FieldMismatch::toString).collect(Collectors.joining("; ")));
    this.mismatches = List.copyOf(mismatches);
  }

  public ProtectedQueueContractDriftException(String queue, String reason, Throwable cause) {
    super(queue, "protected queue contract drift on " + queue + ": " + reason, cause);
    this.mismatches = List.of();
  }

  /** The differing fields; empty when the stored config could not be read at all. */
  public List<FieldMismatch> mismatches() {
    return mismatches;
  }
}
