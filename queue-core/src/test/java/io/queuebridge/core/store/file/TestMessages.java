package io.queuebridge.core.store.file;

import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageState;
import io.queuebridge.core.message.TimestampType;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Random;

/** Messages with every field set, for round-trip checks. */
final class TestMessages {
  private TestMessages() {}

  /** A message whose every field derives from {@code seed}; sizes vary up to {@code maxValue}. */
  static Message random(Random rnd, int maxValue) {
    byte[] value = rnd.nextInt(10) == 0 ? null : new byte[rnd.nextInt(maxValue + 1)];
    if (value != null) {
      rnd.nextBytes(value);
    }
    byte[] key =
        rnd.nextInt(4) == 0 ? null : ("k" + rnd.nextInt(1000)).getBytes(StandardCharsets.UTF_8);
    Message.Builder b =
        Message.builder()
            .id("id-" + rnd.nextLong())
            .topic("t/" + rnd.nextInt(10))
            .key(key)
            .value(value)
            .timestamp(rnd.nextInt(1_000_000), TimestampType.CREATE_TIME)
            .createdAt(
                Instant.ofEpochSecond(
                    1_700_000_000L + rnd.nextInt(1000), rnd.nextInt(1_000_000_000)))
            .state(MessageState.values()[rnd.nextInt(MessageState.values().length)]);
    if (rnd.nextBoolean()) {
      b.expiresAt(Instant.ofEpochSecond(1_800_000_000L, rnd.nextInt(1_000_000_000)));
    }
    int headers = rnd.nextInt(3);
    for (int i = 0; i < headers; i++) {
      b.header(Header.of("h" + rnd.nextInt(2), rnd.nextBoolean() ? null : new byte[] {(byte) i}));
    }
    if (rnd.nextBoolean()) {
      b.property("p", "v" + rnd.nextInt(100));
    }
    return b.build();
  }

  static Message text(String value) {
    return Message.builder().value(value.getBytes(StandardCharsets.UTF_8)).build();
  }

  static String text(Message m) {
    return new String(m.valueUnsafe(), StandardCharsets.UTF_8);
  }
}
