package io.queuebridge.core.store.file;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;

/**
 * What one {@code stat} tells about a file, to notice cheaply that another process changed it: the
 * file's identity (device and inode where the file system has them, so a replacement by rename is a
 * new file), size and modification time. Immutable.
 *
 * @param key the file's identity, or null where the file system has none
 * @param size its size in bytes
 * @param modified its modification time
 */
record FileStamp(Object key, long size, FileTime modified) {

  /**
   * The stamp of {@code file} now, or null if it does not exist.
   *
   * @throws IOException if it cannot be read
   */
  static FileStamp of(Path file) throws IOException {
    BasicFileAttributes a;
    try {
      a = Files.readAttributes(file, BasicFileAttributes.class);
    } catch (NoSuchFileException e) {
      return null;
    }
    return new FileStamp(a.fileKey(), a.size(), a.lastModifiedTime());
  }

  /**
   * Whether {@code other} is known to be the same file as this one, perhaps changed in place: equal
   * identities. False where the file system gives no identity (then a change may have been a
   * replacement, and the caller reads the file again from the start).
   */
  boolean sameFile(FileStamp other) {
    return other != null && key != null && key.equals(other.key);
  }
}
