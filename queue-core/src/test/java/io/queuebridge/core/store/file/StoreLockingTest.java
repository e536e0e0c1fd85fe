package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.errors.StoreLockedException;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** One opener per store directory (BEHAVIOUR S-LOCK): same JVM and another process. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class StoreLockingTest {
  @TempDir Path tmp;

  @Test
  void aSecondOpenerInTheSameJvmGetsStoreLockedNamingTheDirectory() throws Exception {
    Path dir = tmp.resolve("store");
    try (Storage first = QueueStores.file(dir)) {
      assertThatThrownBy(() -> QueueStores.file(dir))
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining(dir.toRealPath().toString())
          .hasMessageContaining("this JVM");
      // another spelling of the same directory, through a symbolic link and "..", is the same store
      Path link = Files.createSymbolicLink(tmp.resolve("link"), dir);
      assertThatThrownBy(() -> QueueStores.file(link.resolve("..").resolve("link")))
          .isInstanceOf(StoreLockedException.class);
      assertThat(first.queues().listQueues()).isEmpty();
    }
    try (Storage again = QueueStores.file(dir)) {
      assertThat(again.queues().listQueues()).as("released on close").isEmpty();
    }
  }

  @Test
  void anOpenerInAnotherProcessGetsStoreLockedNamingTheDirectoryAndHolder() throws Exception {
    Path dir = tmp.resolve("store");
    Process child =
        new ProcessBuilder(
                CrashRecoveryTest.javaBin(),
                "-cp",
                System.getProperty("java.class.path"),
                LockHolder.class.getName(),
                dir.toString())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      assertThat(out.readLine()).isEqualTo("locked");
      assertThatThrownBy(() -> QueueStores.file(dir))
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining(dir.toRealPath().toString())
          .hasMessageContaining("another process")
          .hasMessageContaining("pid " + child.pid());
      child.getOutputStream().close();
      assertThat(out.readLine()).isEqualTo("released");
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      child.destroyForcibly();
    }
    try (Storage mine = QueueStores.file(dir)) {
      assertThat(mine.queues().listQueues()).isEmpty();
    }
  }
}
