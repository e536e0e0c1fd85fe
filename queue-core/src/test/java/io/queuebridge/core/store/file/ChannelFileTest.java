package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The default store file writes a frame of any size whole, at its position, in slices. */
class ChannelFileTest {
  @TempDir Path dir;

  @Test
  void aWriteOfManyChunksLandsWholeAtItsPosition() throws Exception {
    byte[] src = new byte[5 * StoreIo.ChannelFile.WRITE_CHUNK / 2 + 17];
    new Random(5).nextBytes(src);
    Path file = dir.resolve("f.log");
    try (StoreIo.WritableFile f = StoreIo.DEFAULT.openWritable(file, true)) {
      f.write(new byte[] {1, 2, 3}, 0, 3, 0);
      f.write(src, 3, src.length - 3, 3);
      assertThat(f.size()).isEqualTo(src.length);
    }
    byte[] expected = src.clone();
    expected[0] = 1;
    expected[1] = 2;
    expected[2] = 3;
    assertThat(Files.readAllBytes(file)).isEqualTo(expected);
  }

  @Test
  void aCallerInterruptedBeforeTheWriteStillWritesEverythingAndKeepsItsInterrupt()
      throws Exception {
    byte[] src = new byte[3 * StoreIo.ChannelFile.WRITE_CHUNK + 1];
    new Random(6).nextBytes(src);
    Path file = dir.resolve("g.log");
    try (StoreIo.WritableFile f = StoreIo.DEFAULT.openWritable(file, true)) {
      Thread.currentThread().interrupt();
      try {
        f.write(src, 0, src.length, 0);
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
      } finally {
        Thread.interrupted();
      }
    }
    assertThat(Arrays.equals(Files.readAllBytes(file), src)).isTrue();
  }
}
