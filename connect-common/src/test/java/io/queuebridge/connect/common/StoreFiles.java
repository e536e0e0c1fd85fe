package io.queuebridge.connect.common;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What a directory holds, for tests that assert that something changed no byte of a store: every
 * file and directory under it by relative path, a file with its size and SHA-256.
 */
public final class StoreFiles {
  private StoreFiles() {}

  /**
   * Every entry under {@code root} (not {@code root} itself), sorted by relative path: {@code
   * "dir"} for a directory, {@code "<size> bytes sha256 <hex>"} for a file.
   */
  public static Map<String, String> snapshot(Path root) {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> all = Files.walk(root)) {
      all.filter(p -> !p.equals(root))
          .forEach(
              p ->
                  out.put(
                      root.relativize(p).toString(),
                      Files.isDirectory(p) ? "dir" : Files.isRegularFile(p) ? file(p) : "other"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + root, e);
    }
    return out;
  }

  private static String file(Path p) {
    try (InputStream in = Files.newInputStream(p)) {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      byte[] buf = new byte[8192];
      long size = 0;
      for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
        sha.update(buf, 0, n);
        size += n;
      }
      return size + " bytes sha256 " + HexFormat.of().formatHex(sha.digest());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + p, e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("no SHA-256 in this JVM", e);
    }
  }
}
