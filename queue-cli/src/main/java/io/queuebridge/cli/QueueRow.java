package io.queuebridge.cli;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import java.util.Locale;

/**
 * One queue as {@code queues} lists it. Null is "not available": {@code bytes} when the store
 * reports no byte size, the offsets and the age of an empty queue, the age when the store does not
 * stamp when it accepted a message.
 *
 * @param name the queue's name
 * @param type {@code classic} or {@code stream}
 * @param durable whether the queue is durable
 * @param reserved the stored {@code reserved} flag, shown as PROTECTED: every protected stream is
 *     reserved (its deletion is refused); the contract itself is registered by the process that
 *     writes the stream and is not stored
 * @param messages {@code tail - head}
 * @param bytes what the queue's messages occupy in the store, as the store counts it (file: its
 *     segment files; memory: keys, values and headers; postgres: the encoded messages)
 * @param firstOffset the head, when the queue holds messages
 * @param lastOffset {@code tail - 1}, when the queue holds messages
 * @param oldestAgeMs how long ago the store accepted the oldest readable message
 * @param groups how many consumer groups read the queue
 */
record QueueRow(
    String name,
    String type,
    boolean durable,
    @JsonProperty("protected") boolean reserved,
    long messages,
    Long bytes,
    Long firstOffset,
    Long lastOffset,
    Long oldestAgeMs,
    int groups) {

  static final String[] COLUMNS = {
    "NAME",
    "TYPE",
    "DURABLE",
    "PROTECTED",
    "MESSAGES",
    "BYTES",
    "FIRST-OFFSET",
    "LAST-OFFSET",
    "OLDEST-AGE",
    "GROUPS"
  };

  static QueueRow of(StoreSession session, QueueConfig queue) {
    String name = queue.name();
    long head = session.log().head(name);
    long tail = session.log().tail(name);
    boolean empty = tail <= head;
    Long oldestAgeMs =
        session
            .first(name)
            .map(Message::createdAt)
            .map(at -> Text.millisSince(at, session.now()))
            .orElse(null);
    return new QueueRow(
        name,
        typeOf(queue),
        queue.durable(),
        queue.reserved(),
        tail - head,
        session.log().bytes(name).stream().boxed().findFirst().orElse(null),
        empty ? null : head,
        empty ? null : tail - 1,
        oldestAgeMs,
        session.groups(name).size());
  }

  static String typeOf(QueueConfig queue) {
    return queue.type().name().toLowerCase(Locale.ROOT);
  }

  Object[] cells() {
    return new Object[] {
      name,
      type,
      Text.yesNo(durable),
      Text.yesNo(reserved),
      messages,
      Text.orNone(bytes),
      Text.orNone(firstOffset),
      Text.orNone(lastOffset),
      Text.age(oldestAgeMs),
      groups
    };
  }
}
