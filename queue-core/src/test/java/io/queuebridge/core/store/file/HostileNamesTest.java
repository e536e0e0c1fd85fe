package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.store.ConsumerGroupState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Queue and group names as path components (BEHAVIOUR S-NAMES). */
class HostileNamesTest {
  private static final List<String> ENCODED_SAFELY =
      List.of(
          ".",
          "..",
          "...",
          "a/../../b",
          "../escape",
          "/",
          "/etc/passwd",
          "\\",
          "..\\..\\win",
          "a/b/c",
          "%2E%2E",
          "$SYS/x",
          "sp ace",
          "ümlaut/日本",
          "emoji\uD83D\uDE00",
          "-dash",
          ".hidden",
          "x".repeat(200));

  private static final List<String> REJECTED =
      List.of(
          "",
          "\u0000",
          "a\u0000b",
          "line\nbreak",
          "tab\t",
          "del\u007F",
          "c1\u0085",
          "x".repeat(300),
          "/".repeat(67),
          "lone\uD800",
          "\uDC00lone");

  @TempDir Path tmp;

  @Test
  void encodingIsAPlainReversibleComponentThatCannotEscape() {
    for (String name : ENCODED_SAFELY) {
      String enc = Names.encode("queue name", name);
      assertThat(enc).as(name).matches("[A-Za-z0-9._%-]+").isNotIn(".", "..").doesNotStartWith(".");
      assertThat(enc.length()).as(name).isLessThanOrEqualTo(Names.MAX_ENCODED_BYTES);
      assertThat(Names.decode(enc)).as(name).isEqualTo(name);
      Path base = tmp.resolve("base");
      assertThat(base.resolve(enc).normalize().getParent()).as(name).isEqualTo(base);
    }
    assertThat(Names.encode("queue name", "a/b")).isNotEqualTo(Names.encode("queue name", "a%2Fb"));
  }

  @Test
  void controlCharactersNulLoneSurrogatesAndOverlongNamesAreRejectedWithTheRule() {
    for (String name : REJECTED) {
      assertThatThrownBy(() -> Names.encode("queue name", name))
          .as(name.length() > 20 ? name.substring(0, 20) : name)
          .isInstanceOf(InvalidConfigException.class)
          .hasMessageContaining("queue name")
          .hasMessageContaining("expected");
    }
    assertThatThrownBy(() -> Names.encode("queue name", "x".repeat(300)))
        .hasMessageContaining("at most 200 bytes")
        .hasMessageContaining("300 characters");
    assertThatThrownBy(() -> Names.encode("queue name", "a\u0000b"))
        .hasMessageContaining("U+0000 at index 1");
  }

  @Test
  void nothingIsEverWrittenOutsideTheStoreDirectory() throws Exception {
    Path root = tmp.resolve("root");
    Path store = root.resolve("deep").resolve("store");
    Instant t0 = Instant.parse("2024-05-01T00:00:00Z");
    try (FileStorage s =
        FileStorage.open(
            FileStoreConfig.defaults(store).withSegmentBytes(1024),
            Clock.systemUTC(),
            StoreIo.DEFAULT)) {
      for (String name : ENCODED_SAFELY) {
        s.queues().createQueue(QueueConfig.durable(name).build());
        for (int i = 0; i < 8; i++) {
          s.queues().appendAndSync(name, TestMessages.text(name + i + "x".repeat(200)));
        }
        s.queues().truncate(name, 4);
        s.groups()
            .createGroup(ConsumerGroupState.create(name, "../../g", "", GroupMode.QUEUE, true, t0));
        s.groups()
            .createGroup(
                ConsumerGroupState.create(
                    name, "g@a/../../+/#", "a/../../+/#", GroupMode.STREAM, true, t0));
        s.groups().updateCursor(name, "../../g", 3, t0);
      }
      for (String name : REJECTED) {
        assertThatThrownBy(() -> s.queues().createQueue(QueueConfig.durable(name).build()))
            .isInstanceOf(InvalidConfigException.class);
      }
      assertThatThrownBy(
              () ->
                  s.groups()
                      .createGroup(
                          ConsumerGroupState.create(
                              "..", "bad\u0000id", "", GroupMode.QUEUE, true, t0)))
          .isInstanceOf(InvalidConfigException.class)
          .hasMessageContaining("group id");
      s.queues().deleteQueue("a/../../b");
      assertThat(s.queues().listQueues()).hasSize(ENCODED_SAFELY.size() - 1);
    }
    try (FileStorage s =
        FileStorage.open(FileStoreConfig.defaults(store), Clock.systemUTC(), StoreIo.DEFAULT)) {
      assertThat(s.queues().listQueues())
          .extracting(QueueConfig::name)
          .containsExactlyInAnyOrderElementsOf(
              ENCODED_SAFELY.stream().filter(n -> !n.equals("a/../../b")).toList());
      assertThat(s.groups().getGroup("..", "../../g").cursor()).isEqualTo(3);
      assertThat(TestMessages.text(s.queues().read("/etc/passwd", 7))).startsWith("/etc/passwd7");
    }
    try (Stream<Path> all = Files.walk(tmp)) {
      assertThat(
              all.filter(p -> !p.equals(tmp) && !p.equals(root) && !p.equals(root.resolve("deep"))))
          .as("every file and directory under the test root")
          .isNotEmpty()
          .allSatisfy(p -> assertThat(p.normalize()).startsWith(store));
    }
    try (Stream<Path> queues = Files.list(store.resolve("queues"))) {
      assertThat(queues).hasSize(ENCODED_SAFELY.size() - 1);
    }
  }
}
