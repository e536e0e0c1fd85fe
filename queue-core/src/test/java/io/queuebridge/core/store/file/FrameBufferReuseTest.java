package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.message.Message;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The append path encodes each frame into a buffer reused by its thread and writes strings that
 * repeat (property keys, topics) by copying them: neither may change a single byte of the format.
 */
class FrameBufferReuseTest {

  private static List<Message> batch(Random rnd, int n, int maxValue) {
    List<Message> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(TestMessages.random(rnd, maxValue));
    }
    return out;
  }

  private static byte[] sealed(Frames.Encoded e) {
    Frames.seal(e, 1_000, 1_700_000_000_000L);
    return Arrays.copyOf(e.bytes(), e.length());
  }

  @Test
  void aFrameEncodedIntoAReusedBufferHasTheBytesOfAFreshOne() {
    Random rnd = new Random(7);
    Map<String, String> cp = new LinkedHashMap<>(Map.of("kafka/t/0", "42"));
    // Old bytes everywhere in the buffer the next frames reuse: any byte the encoder skips shows.
    ByteSink first = Frames.borrowSink(1 << 20);
    Frames.releaseSink(first);
    for (int round = 0; round < 20; round++) {
      List<Message> messages = batch(rnd, 1 + rnd.nextInt(30), 300);
      Map<String, String> checkpoints = round % 2 == 0 ? Map.of() : cp;
      Arrays.fill(first.array(), (byte) 0xA5);
      ByteSink reused = Frames.borrowSink(Frames.estimate(messages, checkpoints));
      assertThat(reused.array()).isSameAs(first.array());
      byte[] viaReused = sealed(Frames.encode(messages, checkpoints, reused));
      Frames.releaseSink(reused);

      byte[] viaFresh = sealed(Frames.encode(messages, checkpoints));
      assertThat(viaReused).isEqualTo(viaFresh);
      Frames.FrameHeader h = Frames.header(viaReused, 0);
      assertThat(Frames.crc(viaReused, 0, viaReused.length)).isEqualTo(h.crc());
      assertThat(Frames.decode(viaReused, 0, h, 0, messages.size()))
          .usingRecursiveFieldByFieldElementComparatorIgnoringFields("offset")
          .containsExactlyElementsOf(messages);
    }
  }

  @Test
  void aBufferStillLentIsNotHandedOutAgain() {
    ByteSink lent = Frames.borrowSink(64);
    ByteSink other = Frames.borrowSink(64);
    assertThat(other.array()).isNotSameAs(lent.array());
    Frames.releaseSink(other);
    Frames.releaseSink(lent);
  }

  @Test
  void aBufferOverTheSpareLimitIsNotKept() {
    ByteSink small = Frames.borrowSink(64);
    Frames.releaseSink(small);
    ByteSink huge = Frames.borrowSink(Frames.MAX_SPARE_BYTES + 1);
    Frames.releaseSink(huge);
    ByteSink next = Frames.borrowSink(64);
    assertThat(next.array()).isNotSameAs(huge.array()).isSameAs(small.array());
    Frames.releaseSink(next);
  }

  @Test
  void aRepeatedStringIsWrittenAsTheBytesOfPutString() {
    String key = "x-kafka-topic";
    String[] strings = {
      key,
      "",
      "naïve ☃",
      "nul\u0000inside",
      new String("x-kafka-topic"), // equal, not the same instance
      "\uD800 unpaired",
      key,
    };
    ByteSink repeated = new ByteSink(8);
    ByteSink plain = new ByteSink(8);
    Random rnd = new Random(3);
    for (int round = 0; round < 3; round++) {
      repeated.reset();
      plain.reset();
      for (int i = 0; i < 500; i++) {
        // many distinct instances too, so that slots are overwritten and collide
        String s = rnd.nextBoolean() ? strings[rnd.nextInt(strings.length)] : "v" + rnd.nextInt(50);
        repeated.putRepeatedString(s).putByte(i % 7 == 0 ? 0 : 1).putRepeatedString(s);
        plain.putString(s).putByte(i % 7 == 0 ? 0 : 1).putString(s);
      }
      assertThat(repeated.toByteArray()).isEqualTo(plain.toByteArray());
    }
  }
}
