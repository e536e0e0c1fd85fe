package io.queuebridge.core.store.file;

import io.queuebridge.core.store.fixtures.FixtureContent;
import io.queuebridge.core.store.fixtures.FixtureManifest;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Writes the file store fixture {@code queue-core/src/test/resources/fixtures/file-v1}: a store
 * directory {@code store/} holding {@link FixtureContent}, and its {@code manifest.json}.
 *
 * <p>Rerun (from the repository root; replaces {@code file-v1/store} and the manifest):
 *
 * <pre>
 *   mvn -B -o -q -Pfixtures -pl queue-core test-compile exec:java
 * </pre>
 *
 * or with another output directory as the only argument. The store is written with a fixed clock
 * (set to each append's time), 1 KiB segments, 256-byte index intervals, every append and group
 * change fsynced on return (no background thread), so a rerun writes the same bytes. The lock file
 * is removed afterwards; empty directories (the DLQ's {@code groups/}, {@code trash/}) are not kept
 * by git, and the store re-creates them on a writable open.
 *
 * <p><b>It writes today's format.</b> The fixture stands for an earlier release's data: after a
 * change of format, do not rerun it over the fixture of the version before; keep that one and write
 * the new version's next to it (docs/STORES.md, "Compatibility fixtures").
 *
 * <p>The manifest's {@code formats} are read back from the files written (magic and version of
 * every file), not copied from constants; the generator fails if the layout it promises (at least
 * two segments of {@code orders} left, the head inside the first of them, a {@code queue.head}
 * file) did not come out.
 */
public final class FileFixtureGenerator {
  static final String FIXTURE = "file-v1";
  static final String STORE = "store";

  private FileFixtureGenerator() {}

  public static void main(String[] args) throws IOException {
    Path out =
        args.length > 0
            ? Paths.get(args[0])
            : repositoryRoot().resolve("queue-core/src/test/resources/fixtures/" + FIXTURE);
    Path manifest = generate(out.toAbsolutePath().normalize());
    System.out.println("wrote " + out.resolve(STORE) + " and " + manifest);
  }

  /**
   * Writes the fixture into {@code out} ({@code store/} and the manifest); returns the manifest.
   */
  static Path generate(Path out) throws IOException {
    Path dir = out.resolve(STORE);
    clear(dir);
    Files.createDirectories(out);
    SetClock clock = new SetClock(FixtureContent.T0);
    FileStoreConfig config =
        FileStoreConfig.parse(
            Map.of(
                "path", dir.toString(),
                "segment.bytes", "1024",
                "segment.ms", "0",
                "index.interval.bytes", "256",
                "time.index.interval.ms", "1",
                "sync.interval.ms", "0",
                "group.sync", "always"));
    FixtureManifest written;
    try (FileStorage storage = FileStorage.open(config, clock, StoreIo.DEFAULT)) {
      written = FixtureContent.write(storage, clock::set, FIXTURE);
    }
    Files.delete(dir.resolve(FileStorage.LOCK));
    checkLayout(dir);
    FixtureManifest manifest =
        new FixtureManifest(
            written.fixture(),
            FileFixtureGenerator.class.getName(),
            versions(dir),
            written.legacyStoredNames(),
            written.queues(),
            written.messages(),
            written.groups());
    return manifest.write(out.resolve(FixtureManifest.FILE));
  }

  /** The repository root: the first directory up from {@code user.dir} with a queue-core module. */
  static Path repositoryRoot() {
    Path p = Paths.get(System.getProperty("user.dir")).toAbsolutePath();
    while (p != null && !Files.isRegularFile(p.resolve("queue-core/pom.xml"))) {
      p = p.getParent();
    }
    if (p == null) {
      throw new IllegalStateException(
          "no repository root (a directory holding queue-core/pom.xml) above "
              + System.getProperty("user.dir")
              + "; pass the output directory as the argument");
    }
    return p;
  }

  /** Deletes {@code dir} if it is a file store (holds a qb-store marker) or empty. */
  private static void clear(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    boolean empty;
    try (Stream<Path> s = Files.list(dir)) {
      empty = s.findAny().isEmpty();
    }
    if (!empty && !Files.exists(dir.resolve(FileStorage.MARKER))) {
      throw new IllegalStateException(
          "refusing to replace " + dir + ": it is neither empty nor a file store (no qb-store)");
    }
    Files.walkFileTree(
        dir,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.delete(file);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
            if (e != null) {
              throw e;
            }
            Files.delete(d);
            return FileVisitResult.CONTINUE;
          }
        });
  }

  /** The directory of queue {@code name} in the store {@code dir}. */
  static Path queueDir(Path dir, String name) {
    return dir.resolve(FileStorage.QUEUES)
        .resolve(io.queuebridge.core.config.Names.encode("queue name", name));
  }

  /** The base offsets of the segments of the queue in {@code qdir}, ascending. */
  static List<Long> segmentBases(Path qdir) throws IOException {
    List<Long> bases = new ArrayList<>();
    try (Stream<Path> s = Files.list(qdir)) {
      s.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".log"))
          .sorted()
          .forEach(n -> bases.add(Long.parseLong(n.substring(0, n.length() - 4))));
    }
    return bases;
  }

  private static void checkLayout(Path dir) throws IOException {
    Path orders = queueDir(dir, FixtureContent.ORDERS);
    List<Long> bases = segmentBases(orders);
    if (bases.size() < 2
        || bases.get(0) >= FixtureContent.ORDERS_HEAD
        || (bases.size() > 1 && bases.get(1) <= FixtureContent.ORDERS_HEAD)
        || !Files.exists(LogHead.file(orders))) {
      throw new IllegalStateException(
          "the fixture's queue "
              + FixtureContent.ORDERS
              + " has segments "
              + bases
              + " and "
              + (Files.exists(LogHead.file(orders)) ? "a" : "no")
              + " queue.head; expected at least two segments, the first holding head "
              + FixtureContent.ORDERS_HEAD
              + " above its base, and a queue.head file (change the message sizes)");
    }
    if (segmentBases(queueDir(dir, FixtureContent.STREAM)).size() < 2) {
      throw new IllegalStateException(
          "the fixture's queue "
              + FixtureContent.STREAM
              + " has fewer than two segments (no checkpoint snapshot but the first); enlarge its"
              + " messages");
    }
  }

  /**
   * The format version of every kind of file in the store {@code dir}, read from the files: the
   * envelope's or header's version field, and every frame's of the segments (the lock file, which
   * has no format, left out).
   *
   * @throws IllegalStateException if a kind holds two versions or a file has an unknown magic
   */
  static Map<String, Integer> versions(Path dir) throws IOException {
    Map<String, TreeSet<Integer>> found = new TreeMap<>();
    List<Path> files;
    try (Stream<Path> s = Files.walk(dir)) {
      files =
          s.filter(Files::isRegularFile)
              .filter(f -> !f.getFileName().toString().equals(FileStorage.LOCK))
              .sorted()
              .toList();
    }
    for (Path f : files) {
      byte[] b = Files.readAllBytes(f);
      String name = f.getFileName().toString();
      if (name.endsWith(".log")) {
        int pos = 0;
        while (pos < b.length) {
          if (Frames.magic(b, pos) != Frames.MAGIC) {
            throw new IllegalStateException(f + ": no frame magic at byte " + pos);
          }
          Frames.FrameHeader h = Frames.header(b, pos);
          found.computeIfAbsent(kind(f), k -> new TreeSet<>()).add(h.version());
          pos += h.length();
        }
      } else {
        found
            .computeIfAbsent(kind(f), k -> new TreeSet<>())
            .add((b[4] & 0xFF) << 8 | (b[5] & 0xFF));
        int magic = ByteSource.getIntAt(b, 0);
        int expected = magicOf(f);
        if (magic != expected) {
          throw new IllegalStateException(
              String.format("%s: magic 0x%08X, expected 0x%08X", f, magic, expected));
        }
      }
    }
    Map<String, Integer> out = new TreeMap<>();
    found.forEach(
        (k, v) -> {
          if (v.size() != 1) {
            throw new IllegalStateException(k + " files of versions " + v + " in " + dir);
          }
          out.put(k, v.first());
        });
    return out;
  }

  /** The kind of a store file, as the manifest and docs/STORES.md name it. */
  static String kind(Path f) {
    String n = f.getFileName().toString();
    if (n.equals(FileStorage.MARKER)) {
      return "store marker (qb-store)";
    }
    if (n.equals(FileStorage.QUEUE_CONFIG)) {
      return "queue configuration (queue.cfg)";
    }
    if (n.equals(LogHead.FILE)) {
      return "logical head (queue.head)";
    }
    if (n.equals(VerifiedSegments.FILE)) {
      return "verified segments (queue.verified)";
    }
    if (n.endsWith(".log")) {
      return "segment frame (<base>.log)";
    }
    if (n.endsWith(".idx")) {
      return "offset index (<base>.idx)";
    }
    if (n.endsWith(".tix")) {
      return "time index (<base>.tix)";
    }
    if (n.endsWith(".cpt")) {
      return "checkpoint snapshot (<base>.cpt)";
    }
    if (n.endsWith(GroupLog.SUFFIX)) {
      return "consumer-group log (groups/<g>.grp)";
    }
    throw new IllegalStateException("unexpected file in the fixture store: " + f);
  }

  private static int magicOf(Path f) {
    String n = f.getFileName().toString();
    if (n.equals(FileStorage.MARKER)) {
      return Blobs.STORE_MAGIC;
    }
    if (n.equals(FileStorage.QUEUE_CONFIG)) {
      return Blobs.QUEUE_CONFIG_MAGIC;
    }
    if (n.equals(LogHead.FILE)) {
      return Blobs.HEAD_MAGIC;
    }
    if (n.equals(VerifiedSegments.FILE)) {
      return Blobs.VERIFIED_MAGIC;
    }
    if (n.endsWith(".idx")) {
      return Blobs.OFFSET_INDEX_MAGIC;
    }
    if (n.endsWith(".tix")) {
      return Blobs.TIME_INDEX_MAGIC;
    }
    if (n.endsWith(".cpt")) {
      return Blobs.CHECKPOINT_MAGIC;
    }
    return GroupLog.MAGIC;
  }

  /** A clock the generator sets before each append. Not thread-safe; the generator is single. */
  static final class SetClock extends Clock {
    private volatile Instant now;

    SetClock(Instant start) {
      this.now = start;
    }

    void set(Instant t) {
      now = t;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }
}
