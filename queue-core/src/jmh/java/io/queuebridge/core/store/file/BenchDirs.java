package io.queuebridge.core.store.file;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where benchmarks write: {@code -Dbench.dir=...}, by default {@code target/bench-tmp} of the
 * working directory (the module directory under {@code exec:exec}). Never {@code /tmp}, which may
 * be a tmpfs where fsync costs nothing.
 */
public final class BenchDirs {
  private BenchDirs() {}

  public static Path fresh(String name) throws IOException {
    Path base = Path.of(System.getProperty("bench.dir", "target/bench-tmp")).toAbsolutePath();
    Files.createDirectories(base);
    Path dir = base.resolve(name + "-" + System.nanoTime());
    FileStorage.deleteRecursively(dir);
    return dir;
  }

  public static void delete(Path dir) throws IOException {
    FileStorage.deleteRecursively(dir);
  }
}
