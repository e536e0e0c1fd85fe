package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.fixtures.FixtureChecks;
import io.queuebridge.core.store.fixtures.FixtureContent;
import io.queuebridge.core.store.fixtures.FixtureManifest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A file written by a newer version is refused with a message naming the file and both versions,
 * and nothing is changed (docs/STORES.md, "Formats and versions"): every versioned kind of file of
 * the store, each in a copy of the {@code file-v1} fixture with that file's version raised to 2,
 * through a writable and a read-only open. Indexes are the exception: hints, rebuilt from the
 * segment whatever version they carry.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FormatVersionsTest {
  private static Path fixture;
  private static FixtureManifest manifest;

  @TempDir Path tmp;

  @BeforeAll
  static void readManifest() {
    fixture =
        FixtureChecks.resourceDirectory(
            FormatVersionsTest.class, "/fixtures/file-v1/" + FixtureManifest.FILE);
    manifest = FixtureManifest.read(fixture.resolve(FixtureManifest.FILE));
  }

  /** A kind of versioned file: which file of the fixture, and the call that meets it. */
  enum Kind {
    STORE_MARKER(dir -> dir.resolve(FileStorage.MARKER), s -> {}),
    QUEUE_CONFIGURATION(
        dir -> orders(dir).resolve(FileStorage.QUEUE_CONFIG), s -> s.queues().listQueues()),
    LOGICAL_HEAD(dir -> LogHead.file(orders(dir)), s -> s.queues().head(FixtureContent.ORDERS)),
    CHECKPOINT_SNAPSHOT(
        dir -> newest(queue(dir, FixtureContent.STREAM), ".cpt"),
        s -> s.queues().checkpoints(FixtureContent.STREAM)),
    CONSUMER_GROUP_LOG(
        dir ->
            orders(dir)
                .resolve(FileStorage.GROUPS)
                .resolve(FixtureContent.WORKERS + GroupLog.SUFFIX),
        s -> s.groups().getGroup(FixtureContent.ORDERS, FixtureContent.WORKERS)),
    /** The newest segment: scanned by a writable open. */
    NEWEST_SEGMENT_FRAMES(
        dir -> newest(orders(dir), ".log"),
        s -> s.queues().read(FixtureContent.ORDERS, FixtureContent.ORDERS_COUNT - 1)),
    /** An older segment: met when read. */
    OLDEST_SEGMENT_FRAMES(
        dir -> oldest(orders(dir), ".log"),
        s -> s.queues().read(FixtureContent.ORDERS, FixtureContent.ORDERS_HEAD));

    final IoFunction file;
    final Consumer<Storage> touch;

    Kind(IoFunction file, Consumer<Storage> touch) {
      this.file = file;
      this.touch = touch;
    }
  }

  interface IoFunction {
    Path apply(Path dir) throws IOException;
  }

  private static Path queue(Path dir, String name) {
    return FileFixtureGenerator.queueDir(dir, name);
  }

  private static Path orders(Path dir) {
    return queue(dir, FixtureContent.ORDERS);
  }

  private static Path newest(Path qdir, String suffix) throws IOException {
    List<Long> bases = FileFixtureGenerator.segmentBases(qdir);
    return qdir.resolve(String.format("%020d", bases.get(bases.size() - 1)) + suffix);
  }

  private static Path oldest(Path qdir, String suffix) throws IOException {
    return qdir.resolve(
        String.format("%020d", FileFixtureGenerator.segmentBases(qdir).get(0)) + suffix);
  }

  /** Sets the version of {@code file} to {@code version}: every frame of a segment, re-CRCed. */
  static void setVersion(Path file, int version) throws IOException {
    byte[] b = Files.readAllBytes(file);
    if (file.getFileName().toString().endsWith(".log")) {
      int pos = 0;
      while (pos < b.length) {
        Frames.FrameHeader h = Frames.header(b, pos);
        b[pos + Frames.OFF_VERSION] = (byte) version;
        // a well-formed frame of a newer version, not damage: its CRC matches
        int crc = Frames.crc(b, pos, h.length());
        b[pos + Frames.OFF_CRC] = (byte) (crc >>> 24);
        b[pos + Frames.OFF_CRC + 1] = (byte) (crc >>> 16);
        b[pos + Frames.OFF_CRC + 2] = (byte) (crc >>> 8);
        b[pos + Frames.OFF_CRC + 3] = (byte) crc;
        pos += h.length();
      }
    } else {
      // envelope and group-log header alike: big-endian short at byte 4 (the envelope's CRC
      // covers the payload only)
      b[4] = (byte) (version >>> 8);
      b[5] = (byte) version;
    }
    Files.write(file, b);
  }

  private Path copyWithNewer(Kind kind) throws IOException {
    Path dir =
        FixtureChecks.copyTree(fixture.resolve(FileFixtureGenerator.STORE), tmp.resolve("store"));
    Path file = kind.file.apply(dir);
    assertThat(file).as("the %s file of the fixture", kind).isRegularFile();
    setVersion(file, 4); // newer than every reader: the group log reads versions 1 to 3
    return file;
  }

  private static Map<String, String> filesBesidesTheLock(Path dir) throws IOException {
    Map<String, String> d = new java.util.TreeMap<>(FixtureChecks.digests(dir));
    d.remove(FileStorage.LOCK);
    return d;
  }

  private static void assertRefusedNamingFileAndVersions(Throwable t, Path file) {
    assertThat(t)
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("version 4")
        .hasMessageContaining("reads version")
        .hasMessageContaining("newer version");
    assertThat(((StoreCorruptedException) t).file()).isEqualTo(file.toString());
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aWritableOpenRefusesAFileOfANewerVersionAndChangesNothing(Kind kind) throws Exception {
    Path file = copyWithNewer(kind);
    Path dir = tmp.resolve("store");
    Map<String, String> before = filesBesidesTheLock(dir);
    Throwable t =
        org.assertj.core.api.Assertions.catchThrowable(
            () -> {
              try (Storage s = QueueStores.file(dir)) {
                kind.touch.accept(s);
              }
            });
    assertRefusedNamingFileAndVersions(t, file);
    assertThat(filesBesidesTheLock(dir)).as("files after the refused open").isEqualTo(before);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aReadOnlyOpenRefusesAFileOfANewerVersion(Kind kind) throws Exception {
    Path file = copyWithNewer(kind);
    Path dir = tmp.resolve("store");
    Map<String, String> before = FixtureChecks.digests(dir);
    Throwable t =
        org.assertj.core.api.Assertions.catchThrowable(
            () -> {
              try (Storage s =
                  QueueStores.provider("file").openReadOnly(Map.of("path", dir.toString()))) {
                kind.touch.accept(s);
              }
            });
    assertRefusedNamingFileAndVersions(t, file);
    assertThat(FixtureChecks.digests(dir)).isEqualTo(before);
  }

  @Test
  void anIndexOfAnotherVersionIsAHintRebuiltFromTheSegment() throws Exception {
    Path dir =
        FixtureChecks.copyTree(fixture.resolve(FileFixtureGenerator.STORE), tmp.resolve("store"));
    Path idx = oldest(orders(dir), ".idx");
    Path tix = oldest(orders(dir), ".tix");
    setVersion(idx, 2);
    setVersion(tix, 2);
    try (Storage s = QueueStores.provider("file").openReadOnly(Map.of("path", dir.toString()))) {
      FixtureChecks.assertMessages(s, manifest);
    }
    assertThat(Files.readAllBytes(idx)[5]).as("left alone by a read-only open").isEqualTo((byte) 2);
    try (Storage s = QueueStores.file(dir)) {
      FixtureChecks.assertMessages(s, manifest);
    }
    assertThat(FileFixtureGenerator.versions(dir))
        .as("rebuilt and saved by a writable open")
        .containsEntry("offset index (<base>.idx)", Blobs.VERSION)
        .containsEntry("time index (<base>.tix)", Blobs.VERSION);
  }

  @Test
  void theFixtureOpensBeforeItsVersionsAreRaised() throws Exception {
    // the refusals above are the raised version's doing, not a fixture this build cannot read
    Path dir =
        FixtureChecks.copyTree(fixture.resolve(FileFixtureGenerator.STORE), tmp.resolve("store"));
    try (Storage s = QueueStores.file(dir)) {
      for (Kind kind : Kind.values()) {
        kind.touch.accept(s);
      }
    }
  }
}
