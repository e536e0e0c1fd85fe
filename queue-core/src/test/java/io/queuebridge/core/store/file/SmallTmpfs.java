package io.queuebridge.core.store.file;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * A size-limited tmpfs mounted by a test on a fresh directory under {@code java.io.tmpdir}, for
 * full-disk tests: {@link #fill} takes all but a little of its space with a filler file, {@link
 * #free} deletes the filler. Needs Linux and root (to mount); {@link #mount} skips the calling test
 * visibly, with the reason, where the machine cannot host it. {@link #close} unmounts and removes
 * the directory.
 *
 * <p>Shipped in queue-core's test-jar for the connectors' full-disk tests.
 */
public final class SmallTmpfs implements AutoCloseable {
  private static final int PAGE = 4096;

  private final Path dir;
  private final Path filler;
  private boolean mounted;

  private SmallTmpfs(Path dir) {
    this.dir = dir;
    this.filler = dir.resolve("filler");
  }

  /**
   * Mounts a tmpfs of {@code bytes} bytes on a new directory named after {@code name}; skips the
   * calling test (JUnit assumption, with the reason) when not on Linux, not root, or the mount
   * fails.
   */
  public static SmallTmpfs mount(String name, long bytes) throws IOException {
    assumeTrue(
        System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux"),
        "full-disk test skipped: needs Linux to mount a size-limited tmpfs, this is "
            + System.getProperty("os.name"));
    String uid = run("id", "-u").trim();
    assumeTrue(
        uid.equals("0"),
        "full-disk test skipped: mounting a size-limited tmpfs needs root, this runs as uid "
            + uid);
    Path dir = Files.createTempDirectory("qb-full-disk-" + name + "-").toRealPath();
    SmallTmpfs fs = new SmallTmpfs(dir);
    Process p =
        new ProcessBuilder(
                "mount",
                "-t",
                "tmpfs",
                "-o",
                "size=" + bytes + ",mode=0700",
                "tmpfs",
                dir.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    boolean ok = waitFor(p) && p.exitValue() == 0;
    if (!ok) {
      Files.deleteIfExists(dir);
    }
    assumeTrue(
        ok,
        "full-disk test skipped: 'mount -t tmpfs -o size="
            + bytes
            + " tmpfs "
            + dir
            + "' failed: "
            + out);
    fs.mounted = true;
    return fs;
  }

  /** The mount point. */
  public Path dir() {
    return dir;
  }

  /** Free bytes on the file system, as {@code statfs} reports them. */
  public long usable() throws IOException {
    return Files.getFileStore(dir).getUsableSpace();
  }

  /**
   * Makes the file system full but for about {@code leave} bytes (rounded down to whole 4 KiB
   * pages): appends to the filler file until the disk is full, then cuts the filler back by {@code
   * leave} bytes. Calling it again fills what was freed since.
   */
  public void fill(long leave) throws IOException {
    byte[] chunk = new byte[64 * 1024];
    try (OutputStream out =
        Files.newOutputStream(filler, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
      while (true) {
        out.write(chunk);
      }
    } catch (IOException full) {
      if (!String.valueOf(full.getMessage()).contains("No space left on device")) {
        throw full;
      }
    }
    // the last chunk may have been written in part; what the file holds is whole pages
    long size = Files.size(filler);
    long keep = Math.max(0, (size / PAGE) * PAGE - (leave / PAGE) * PAGE);
    try (var ch = java.nio.channels.FileChannel.open(filler, StandardOpenOption.WRITE)) {
      ch.truncate(keep);
    }
  }

  /** Deletes the filler file: the space it took is free again. */
  public void free() throws IOException {
    Files.deleteIfExists(filler);
  }

  /** Unmounts the file system and removes the mount point. */
  @Override
  public void close() throws IOException {
    if (mounted) {
      String out = run("umount", dir.toString());
      mounted = false;
      if (Files.isDirectory(dir) && isMountPoint()) {
        // something still holds a file open: detach it now, it goes once released
        out += run("umount", "-l", dir.toString());
      }
      if (isMountPoint()) {
        throw new IOException("could not unmount " + dir + ": " + out);
      }
    }
    Files.deleteIfExists(dir);
  }

  private boolean isMountPoint() throws IOException {
    List<String> mounts = Files.readAllLines(Path.of("/proc/self/mounts"));
    String target = dir.toString();
    return mounts.stream()
        .map(l -> l.split(" "))
        .anyMatch(f -> f.length > 1 && f[1].equals(target));
  }

  private static String run(String... command) throws IOException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!waitFor(p)) {
      throw new IOException(Arrays.toString(command) + " did not finish within 30 s");
    }
    return out;
  }

  /** Whether {@code p} ended within 30 s (else it is killed). */
  private static boolean waitFor(Process p) throws IOException {
    try {
      if (p.waitFor(30, TimeUnit.SECONDS)) {
        return true;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted waiting for " + p.info().command().orElse("a command"), e);
    }
    p.destroyForcibly();
    return false;
  }

  @Override
  public String toString() {
    return "tmpfs " + dir;
  }
}
