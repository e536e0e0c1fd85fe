package io.queuebridge.core.store;

import java.time.Instant;
import java.util.Objects;

/**
 * A member of a consumer group.
 *
 * @param id the member id (the client id)
 * @param clientId the client it belongs to
 * @param registeredAt when it (re-)registered
 * @param lastHeartbeat when it last showed life
 */
public record ConsumerInfo(
    String id, String clientId, Instant registeredAt, Instant lastHeartbeat) {
  public ConsumerInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(clientId, "clientId");
    Objects.requireNonNull(registeredAt, "registeredAt");
    Objects.requireNonNull(lastHeartbeat, "lastHeartbeat");
  }
}
