package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.StoreLockedException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code repair} end to end on a real file store whose second sealed segment of queue {@code q} has
 * a flipped byte (BEHAVIOUR F-RECOVER): the dry run reports and changes no byte, {@code --yes}
 * cuts, a store held by a writer is refused, other stores are not supported, and usage errors are
 * usage errors.
 */
class RepairCommandTest {
  private static final Instant T = Instant.parse("2025-01-31T09:00:00Z");

  @TempDir Path tmp;
  private Path store;
  private final List<Message> appended = new ArrayList<>();
  private Path damaged;
  private long damagedFrom;
  private long damagedTo;
  private long tail;

  @BeforeEach
  void damagedStore() throws IOException {
    store = tmp.resolve("store");
    try (Storage s =
        QueueStores.open("file", Map.of("path", store.toString(), "segment.bytes", "1024"))) {
      s.queues().createQueue(QueueConfig.durable("q").build());
      s.queues().createQueue(QueueConfig.durable("ok").build());
      for (int i = 0; i < 40; i++) {
        Message m =
            Message.builder()
                .id("m" + i)
                .topic("t")
                .value(("message " + i + " " + "x".repeat(100)).getBytes(StandardCharsets.UTF_8))
                .build();
        appended.add(m.withOffset(s.queues().append("q", m)));
      }
      s.queues().append("ok", Message.builder().value(new byte[] {1}).build());
      tail = s.queues().tail("q");
      s.groups()
          .createGroup(
              new ConsumerGroupState(
                  "q",
                  "reader",
                  "",
                  GroupMode.STREAM,
                  true,
                  tail,
                  tail,
                  List.of(),
                  Map.of(),
                  T,
                  T));
    }
    List<Path> logs;
    try (Stream<Path> files = Files.list(store.resolve("queues").resolve("q"))) {
      logs = files.filter(p -> p.toString().endsWith(".log")).sorted().toList();
    }
    assertThat(logs).hasSizeGreaterThanOrEqualTo(4);
    damaged = logs.get(1);
    damagedFrom = base(damaged);
    damagedTo = base(logs.get(2));
    byte[] b = Files.readAllBytes(damaged);
    b[44 + 10] ^= 0x33; // inside the first record of the segment's first frame
    Files.write(damaged, b);
  }

  @Test
  void theDryRunPrintsTheDamageAndWhatWouldBeCutAndChangesNoByte() throws Exception {
    Map<String, String> before = hashes(store);

    Cli.Run run = run("repair", "--dry-run");

    assertThat(run.err()).isEmpty();
    assertThat(run.status()).isZero();
    List<String> lines = run.out().lines().toList();
    assertThat(lines.get(0))
        .isEqualTo(
            "queue 'q': segment "
                + damaged
                + " is damaged at byte 0 (CRC-32C mismatch in the frame of offset "
                + damagedFrom
                + "): offsets ["
                + damagedFrom
                + ", "
                + damagedTo
                + ") cannot be served");
    assertThat(lines.get(1))
        .startsWith(
            "  would cut offsets ["
                + damagedFrom
                + ", "
                + tail
                + "): "
                + (tail - damagedFrom)
                + " messages, ")
        .endsWith("bytes; the next append gets offset " + damagedFrom);
    assertThat(lines.get(2)).startsWith("  " + damaged + ": truncated to 0 bytes (");
    assertThat(lines)
        .contains(
            "  group 'reader': cursor "
                + tail
                + " -> "
                + damagedFrom
                + ", committed "
                + tail
                + " -> "
                + damagedFrom
                + ", 0 pending entries dropped");
    assertThat(lines.get(lines.size() - 1))
        .startsWith(
            "dry run: nothing was changed in file:"
                + store.toRealPath()
                + "; repair --yes cuts "
                + (tail - damagedFrom)
                + " messages (")
        .endsWith(" bytes) from 1 queue");
    assertThat(hashes(store)).as("no byte changed").isEqualTo(before);

    Cli.Run json = run("repair", "--dry-run", "-o", "json");
    assertThat(json.status()).isZero();
    JsonNode report = new ObjectMapper().readTree(json.out());
    assertThat(report.get("dryRun").asBoolean()).isTrue();
    JsonNode q = report.get("queues").get(0);
    assertThat(q.get("queue").asText()).isEqualTo("q");
    assertThat(q.get("damage").get(0).get("segment").asText()).isEqualTo(damaged.toString());
    assertThat(q.get("damage").get(0).get("position").asLong()).isZero();
    assertThat(q.get("fromOffset").asLong()).isEqualTo(damagedFrom);
    assertThat(q.get("toOffset").asLong()).isEqualTo(tail);
    assertThat(q.get("messages").asLong()).isEqualTo(tail - damagedFrom);
    assertThat(q.get("groups").get(0).get("cursorAfter").asLong()).isEqualTo(damagedFrom);
    assertThat(hashes(store)).isEqualTo(before);
  }

  @Test
  void yesCutsTheDamagedQueueAndTheStoreThenOpensCleanAndTakesAppends() throws Exception {
    Cli.Run run = run("repair", "--yes");

    assertThat(run.err()).isEmpty();
    assertThat(run.status()).isZero();
    assertThat(run.out())
        .contains("  cut offsets [" + damagedFrom + ", " + tail + ")")
        .contains("repaired file:" + store.toRealPath() + ": cut " + (tail - damagedFrom));
    assertThat(Files.size(damaged)).isZero();

    try (Storage s = QueueStores.file(store)) {
      assertThat(s.queues().tail("q")).isEqualTo(damagedFrom);
      assertThat(s.queues().readBatch("q", 0, 1000))
          .isEqualTo(appended.subList(0, (int) damagedFrom));
      assertThat(s.groups().getGroup("q", "reader").cursor()).isEqualTo(damagedFrom);
      Message m = Message.builder().value(new byte[] {42}).build();
      assertThat(s.queues().append("q", m)).isEqualTo(damagedFrom);
      assertThat(s.queues().count("ok")).isEqualTo(1);
    }
    Cli.Run again = run("repair", "--dry-run");
    assertThat(again.status()).isZero();
    assertThat(again.out())
        .isEqualTo("no damage found in file:" + store.toRealPath() + ": nothing to repair\n");
  }

  @Test
  void aStoreHeldByAWriterIsRefusedWithTheLocksMessageAndLeftAsItWas() throws Exception {
    try (Storage held = QueueStores.file(store)) {
      StoreLockedException expected =
          catchThrowableOfType(StoreLockedException.class, () -> QueueStores.file(store));
      Map<String, String> before = hashes(store);
      for (String flag : List.of("--yes", "--dry-run")) {
        Cli.Run run = run("repair", flag);
        assertThat(run.status()).as(flag).isEqualTo(1);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).isEqualTo("queue-bridge: " + expected.getMessage() + "\n");
      }
      assertThat(hashes(store)).isEqualTo(before);
      assertThat(held.queues().tail("q")).isEqualTo(tail);
    }
  }

  @Test
  void repairNeedsExactlyOneOfDryRunAndYes() throws Exception {
    Map<String, String> before = hashes(store);
    Cli.Run neither = run("repair");
    assertThat(neither.status()).isEqualTo(2);
    assertThat(neither.err())
        .startsWith(
            "queue-bridge: repair cuts the damaged part of the store's queues (expected --dry-run"
                + " to see what it would cut, or --yes to cut it)\n")
        .contains("Try 'queue-bridge repair --help'");
    Cli.Run both = run("repair", "--yes", "--dry-run");
    assertThat(both.status()).isEqualTo(2);
    assertThat(both.err())
        .startsWith("queue-bridge: --dry-run and --yes both given (expected one of them)\n");
    assertThat(hashes(store)).isEqualTo(before);
  }

  @Test
  void otherStoresAreNotSupported() {
    Cli.Run run =
        Cli.run("repair", "--dry-run", "--store-type", "memory", "--store", "name=repair-test");
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "queue-bridge: repair is not supported for store type 'memory' (expected --store-type"
                + " file: only the file store has segment files to repair)\n");
  }

  @Test
  void aMissingStoreIsAnErrorAndNothingIsCreated() {
    Path absent = tmp.resolve("no").resolve("store");
    Cli.Run run = Cli.run("repair", "--yes", "--store-type", "file", "--store", "path=" + absent);
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "queue-bridge: store file:"
                + absent
                + " does not exist: the directory does not exist (expected an existing store)\n");
    assertThat(tmp.resolve("no")).doesNotExist();
  }

  @Test
  void aBadStoreKeyIsAnErrorNamingIt() {
    Cli.Run run =
        Cli.run(
            "repair",
            "--dry-run",
            "--store-type",
            "file",
            "--store",
            "path=" + store,
            "--store",
            "verify.on.open=sometimes");
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "queue-bridge: invalid verify.on.open: 'sometimes' (expected 'sealed-once', 'all' or"
                + " 'newest')\n");
  }

  private Cli.Run run(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of("--store-type", "file", "--store", "path=" + store));
    return Cli.run(all.toArray(String[]::new));
  }

  private static long base(Path log) {
    return Long.parseLong(log.getFileName().toString().substring(0, 20));
  }

  /** Every file under {@code root} by relative path, with the SHA-256 of its bytes. */
  private static Map<String, String> hashes(Path root) throws Exception {
    Map<String, String> out = new TreeMap<>();
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    try (Stream<Path> files = Files.walk(root)) {
      for (Path p : files.sorted().toList()) {
        out.put(
            root.relativize(p).toString(),
            Files.isDirectory(p)
                ? "dir"
                : HexFormat.of().formatHex(sha.digest(Files.readAllBytes(p))));
      }
    }
    return out;
  }
}
