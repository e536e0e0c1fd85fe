package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.fixtures.FixtureChecks;
import io.queuebridge.core.store.fixtures.FixtureContent;
import io.queuebridge.core.store.fixtures.FixtureManifest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Data written by an earlier release opens in this one: the checked-in file store {@code
 * fixtures/file-v1/store} (written by {@link FileFixtureGenerator}, property names of the earlier
 * release) read through a read-only and a writable open of a copy, compared with its manifest
 * record by record, then written to and reopened. The checked-in copy is never opened in place: a
 * writable open may recover and write.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FileStoreFixtureTest {
  private static Path fixture;
  private static FixtureManifest manifest;

  @TempDir Path tmp;

  @BeforeAll
  static void readManifest() {
    fixture =
        FixtureChecks.resourceDirectory(
            FileStoreFixtureTest.class, "/fixtures/file-v1/" + FixtureManifest.FILE);
    manifest = FixtureManifest.read(fixture.resolve(FixtureManifest.FILE));
  }

  private Path copy() throws Exception {
    return FixtureChecks.copyTree(
        fixture.resolve(FileFixtureGenerator.STORE), tmp.resolve("store"));
  }

  @Test
  void theManifestListsMessagesStoredUnderEveryOldPropertyName() {
    FixtureChecks.assertManifestCoversTheLegacyNames(manifest);
  }

  @Test
  void theSegmentsHoldTheOldPropertyNamesNotTheNewOnes() throws Exception {
    Path store = fixture.resolve(FileFixtureGenerator.STORE);
    StringBuilder all = new StringBuilder();
    try (Stream<Path> s = Files.walk(store)) {
      for (Path f : s.filter(p -> p.toString().endsWith(".log")).toList()) {
        all.append(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1));
      }
    }
    for (String old : manifest.legacyStoredNames().keySet()) {
      assertThat(all.indexOf(old)).as("old name %s in the segments", old).isNotNegative();
    }
    for (String now : List.of("x-dlq-original-queue", "x-dlq-reason", "x-dlq-moved-at")) {
      assertThat(all.indexOf(now)).as("new name %s in the segments", now).isNegative();
    }
  }

  @Test
  void theFixtureHasSeveralSegmentsAndItsHeadInsideTheFirst() throws Exception {
    Path orders =
        FileFixtureGenerator.queueDir(
            fixture.resolve(FileFixtureGenerator.STORE), FixtureContent.ORDERS);
    List<Long> bases = FileFixtureGenerator.segmentBases(orders);
    long head = manifest.queue(FixtureContent.ORDERS).head();
    assertThat(bases).as("segments of orders").hasSizeGreaterThanOrEqualTo(2);
    assertThat(bases.get(0)).as("first segment's base, below the head").isLessThan(head);
    assertThat(bases.get(1)).as("second segment's base, above the head").isGreaterThan(head);
    assertThat(LogHead.read(FixtureContent.ORDERS, orders)).hasValue(head);
    assertThat(
            FileFixtureGenerator.segmentBases(
                FileFixtureGenerator.queueDir(
                    fixture.resolve(FileFixtureGenerator.STORE), FixtureContent.STREAM)))
        .as("segments of the stream")
        .hasSizeGreaterThanOrEqualTo(2);
  }

  @Test
  void everyFileCarriesTheVersionTheManifestRecordsAndThisBuildReads() throws Exception {
    Map<String, Integer> versions =
        FileFixtureGenerator.versions(fixture.resolve(FileFixtureGenerator.STORE));
    assertThat(versions).isEqualTo(manifest.formats());
    assertThat(versions)
        .as("the kinds of file in the fixture")
        .containsOnlyKeys(
            "store marker (qb-store)",
            "queue configuration (queue.cfg)",
            "segment frame (<base>.log)",
            "offset index (<base>.idx)",
            "time index (<base>.tix)",
            "checkpoint snapshot (<base>.cpt)",
            "logical head (queue.head)",
            "consumer-group log (groups/<g>.grp)");
    assertThat(versions.get("segment frame (<base>.log)")).isEqualTo(Frames.VERSION);
    assertThat(versions.get("consumer-group log (groups/<g>.grp)")).isEqualTo(GroupLog.VERSION);
    versions.forEach(
        (kind, v) -> {
          if (!kind.startsWith("segment frame") && !kind.startsWith("consumer-group log")) {
            assertThat(v).as(kind).isEqualTo(Blobs.VERSION);
          }
        });
  }

  @Test
  void aReadOnlyOpenReadsEveryRecordAndChangesNoFile() throws Exception {
    Path dir = copy();
    Map<String, String> before = FixtureChecks.digests(dir);
    try (Storage s = QueueStores.provider("file").openReadOnly(Map.of("path", dir.toString()))) {
      FixtureChecks.assertMatches(s, manifest);
    }
    assertThat(FixtureChecks.digests(dir)).as("files after a read-only open").isEqualTo(before);
  }

  @Test
  void aWritableOpenReadsEveryRecordWithoutRepairsAndTakesWrites() throws Exception {
    Path dir = copy();
    try (Storage s = QueueStores.file(dir)) {
      assertThat(((FileStorage) s).recovery().clean())
          .as("opened without repairs: %s", ((FileStorage) s).recovery())
          .isTrue();
      FixtureChecks.assertMatches(s, manifest);
      FixtureChecks.assertWritable(s, manifest);
    }
    try (Storage s = QueueStores.file(dir)) {
      assertThat(((FileStorage) s).recovery().clean()).isTrue();
      FixtureChecks.assertWritesSurvived(s, manifest);
    }
  }
}
