package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.InvalidConfigException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * The parsed configuration of a file store; see {@link FileStoreProvider} for the keys. Immutable.
 *
 * @param path the store directory
 * @param segmentBytes roll a segment before a batch would take it past this size
 * @param segmentMs roll a non-empty segment once its first batch is this old (0 = never by age)
 * @param indexIntervalBytes bytes between offset-index entries
 * @param timeIndexIntervalMs minimum step of the time index, in record-time milliseconds
 * @param syncIntervalMs background fsync period (0 = every append is durable on return)
 * @param maxOpenReadFiles cached read channels
 * @param groupSync when consumer-group changes are fsynced
 * @param verifyOnOpen which segments opening verifies (BEHAVIOUR F-RECOVER)
 */
record FileStoreConfig(
    Path path,
    long segmentBytes,
    long segmentMs,
    int indexIntervalBytes,
    long timeIndexIntervalMs,
    long syncIntervalMs,
    int maxOpenReadFiles,
    GroupSync groupSync,
    VerifyOnOpen verifyOnOpen) {

  static final String PATH = "path";
  static final String SEGMENT_BYTES = "segment.bytes";
  static final String SEGMENT_MS = "segment.ms";
  static final String INDEX_INTERVAL_BYTES = "index.interval.bytes";
  static final String TIME_INDEX_INTERVAL_MS = "time.index.interval.ms";
  static final String SYNC_INTERVAL_MS = "sync.interval.ms";
  static final String MAX_OPEN_READ_FILES = "max.open.read.files";
  static final String GROUP_SYNC = "group.sync";
  static final String VERIFY_ON_OPEN = "verify.on.open";

  static final long DEFAULT_SEGMENT_BYTES = 64L << 20;
  static final long DEFAULT_SEGMENT_MS = 3_600_000L;
  static final int DEFAULT_INDEX_INTERVAL_BYTES = 4096;
  static final long DEFAULT_TIME_INDEX_INTERVAL_MS = 1000L;
  static final long DEFAULT_SYNC_INTERVAL_MS = 1000L;
  static final int DEFAULT_MAX_OPEN_READ_FILES = 128;

  static final long MIN_SEGMENT_BYTES = 1024;
  static final long MAX_SEGMENT_BYTES = 1L << 30;

  /** When consumer-group changes reach the device. */
  enum GroupSync {
    /** Written on every change (survives a process kill), fsynced by the background interval. */
    INTERVAL,
    /** Written and fsynced on every change (survives a machine crash on return). */
    ALWAYS
  }

  /** Which segments of each queue opening verifies frame by frame (BEHAVIOUR F-RECOVER). */
  enum VerifyOnOpen {
    /**
     * The newest segment, and every sealed segment that has not been verified in its present size
     * and modification time (the queue's {@link VerifiedSegments} file says which were).
     */
    SEALED_ONCE("sealed-once"),
    /** Every segment at every open, whatever was verified before. */
    ALL("all"),
    /**
     * The newest segment only; older ones are verified only when read (what earlier builds did).
     */
    NEWEST("newest");

    final String key;

    VerifyOnOpen(String key) {
      this.key = key;
    }

    /** The mode named {@code value} (trimmed, any case), or null for another value. */
    static VerifyOnOpen of(String value) {
      String v = value.trim().toLowerCase(Locale.ROOT);
      for (VerifyOnOpen m : values()) {
        if (m.key.equals(v)) {
          return m;
        }
      }
      return null;
    }
  }

  FileStoreConfig {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(groupSync, "groupSync");
    Objects.requireNonNull(verifyOnOpen, "verifyOnOpen");
  }

  /** Defaults for a directory. */
  static FileStoreConfig defaults(Path path) {
    return new FileStoreConfig(
        path,
        DEFAULT_SEGMENT_BYTES,
        DEFAULT_SEGMENT_MS,
        DEFAULT_INDEX_INTERVAL_BYTES,
        DEFAULT_TIME_INDEX_INTERVAL_MS,
        DEFAULT_SYNC_INTERVAL_MS,
        DEFAULT_MAX_OPEN_READ_FILES,
        GroupSync.INTERVAL,
        VerifyOnOpen.SEALED_ONCE);
  }

  boolean syncEveryAppend() {
    return syncIntervalMs == 0;
  }

  FileStoreConfig withSegmentBytes(long v) {
    return new FileStoreConfig(
        path,
        v,
        segmentMs,
        indexIntervalBytes,
        timeIndexIntervalMs,
        syncIntervalMs,
        maxOpenReadFiles,
        groupSync,
        verifyOnOpen);
  }

  FileStoreConfig withSegmentMs(long v) {
    return new FileStoreConfig(
        path,
        segmentBytes,
        v,
        indexIntervalBytes,
        timeIndexIntervalMs,
        syncIntervalMs,
        maxOpenReadFiles,
        groupSync,
        verifyOnOpen);
  }

  FileStoreConfig withIndexIntervalBytes(int v) {
    return new FileStoreConfig(
        path,
        segmentBytes,
        segmentMs,
        v,
        timeIndexIntervalMs,
        syncIntervalMs,
        maxOpenReadFiles,
        groupSync,
        verifyOnOpen);
  }

  FileStoreConfig withTimeIndexIntervalMs(long v) {
    return new FileStoreConfig(
        path,
        segmentBytes,
        segmentMs,
        indexIntervalBytes,
        v,
        syncIntervalMs,
        maxOpenReadFiles,
        groupSync,
        verifyOnOpen);
  }

  FileStoreConfig withSyncIntervalMs(long v) {
    return new FileStoreConfig(
        path,
        segmentBytes,
        segmentMs,
        indexIntervalBytes,
        timeIndexIntervalMs,
        v,
        maxOpenReadFiles,
        groupSync,
        verifyOnOpen);
  }

  FileStoreConfig withMaxOpenReadFiles(int v) {
    return new FileStoreConfig(
        path,
        segmentBytes,
        segmentMs,
        indexIntervalBytes,
        timeIndexIntervalMs,
        syncIntervalMs,
        v,
        groupSync,
        verifyOnOpen);
  }

  FileStoreConfig withGroupSync(GroupSync v) {
    return new FileStoreConfig(
        path,
        segmentBytes,
        segmentMs,
        indexIntervalBytes,
        timeIndexIntervalMs,
        syncIntervalMs,
        maxOpenReadFiles,
        v,
        verifyOnOpen);
  }

  FileStoreConfig withVerifyOnOpen(VerifyOnOpen v) {
    return new FileStoreConfig(
        path,
        segmentBytes,
        segmentMs,
        indexIntervalBytes,
        timeIndexIntervalMs,
        syncIntervalMs,
        maxOpenReadFiles,
        groupSync,
        v);
  }

  /** Every key with its default, for docs and errors; {@code path} has none. */
  static Map<String, String> keys() {
    Map<String, String> k = new LinkedHashMap<>();
    k.put(PATH, "(required)");
    k.put(SEGMENT_BYTES, Long.toString(DEFAULT_SEGMENT_BYTES));
    k.put(SEGMENT_MS, Long.toString(DEFAULT_SEGMENT_MS));
    k.put(INDEX_INTERVAL_BYTES, Integer.toString(DEFAULT_INDEX_INTERVAL_BYTES));
    k.put(TIME_INDEX_INTERVAL_MS, Long.toString(DEFAULT_TIME_INDEX_INTERVAL_MS));
    k.put(SYNC_INTERVAL_MS, Long.toString(DEFAULT_SYNC_INTERVAL_MS));
    k.put(MAX_OPEN_READ_FILES, Integer.toString(DEFAULT_MAX_OPEN_READ_FILES));
    k.put(GROUP_SYNC, "interval");
    k.put(VERIFY_ON_OPEN, VerifyOnOpen.SEALED_ONCE.key);
    return k;
  }

  /**
   * Parses and checks a provider configuration.
   *
   * @throws InvalidConfigException naming the first bad key, its value and what was expected
   */
  static FileStoreConfig parse(Map<String, String> config) {
    Objects.requireNonNull(config, "config");
    Map<String, String> known = keys();
    for (String key : new TreeSet<>(config.keySet())) {
      if (!known.containsKey(key)) {
        throw new InvalidConfigException(
            key, config.get(key), "one of the file store keys " + known.keySet());
      }
    }
    String raw = config.get(PATH);
    if (raw == null || raw.isBlank()) {
      throw new InvalidConfigException(PATH, raw, "the store directory (required)");
    }
    Path path;
    try {
      path = Path.of(raw.trim());
    } catch (InvalidPathException e) {
      throw new InvalidConfigException(PATH, raw, "a valid directory path (" + e.getReason() + ")");
    }
    long segmentBytes =
        longValue(
            config, SEGMENT_BYTES, DEFAULT_SEGMENT_BYTES, MIN_SEGMENT_BYTES, MAX_SEGMENT_BYTES);
    long segmentMs = longValue(config, SEGMENT_MS, DEFAULT_SEGMENT_MS, 0, Long.MAX_VALUE);
    int indexInterval =
        (int)
            longValue(
                config, INDEX_INTERVAL_BYTES, DEFAULT_INDEX_INTERVAL_BYTES, 1, MAX_SEGMENT_BYTES);
    long timeIndexMs =
        longValue(
            config, TIME_INDEX_INTERVAL_MS, DEFAULT_TIME_INDEX_INTERVAL_MS, 0, Long.MAX_VALUE);
    long syncMs = longValue(config, SYNC_INTERVAL_MS, DEFAULT_SYNC_INTERVAL_MS, 0, 86_400_000L);
    int maxOpen =
        (int) longValue(config, MAX_OPEN_READ_FILES, DEFAULT_MAX_OPEN_READ_FILES, 1, 1_000_000);
    GroupSync groupSync = GroupSync.INTERVAL;
    String gs = config.get(GROUP_SYNC);
    if (gs != null) {
      switch (gs.trim().toLowerCase(Locale.ROOT)) {
        case "interval" -> groupSync = GroupSync.INTERVAL;
        case "always" -> groupSync = GroupSync.ALWAYS;
        default -> throw new InvalidConfigException(GROUP_SYNC, gs, "'interval' or 'always'");
      }
    }
    VerifyOnOpen verify = VerifyOnOpen.SEALED_ONCE;
    String vo = config.get(VERIFY_ON_OPEN);
    if (vo != null) {
      verify = VerifyOnOpen.of(vo);
      if (verify == null) {
        throw new InvalidConfigException(VERIFY_ON_OPEN, vo, "'sealed-once', 'all' or 'newest'");
      }
    }
    return new FileStoreConfig(
        path,
        segmentBytes,
        segmentMs,
        indexInterval,
        timeIndexMs,
        syncMs,
        maxOpen,
        groupSync,
        verify);
  }

  private static long longValue(
      Map<String, String> config, String key, long def, long min, long max) {
    String v = config.get(key);
    if (v == null) {
      return def;
    }
    long parsed;
    try {
      parsed = Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw new InvalidConfigException(key, v, "an integer in [" + min + ", " + max + "]");
    }
    if (parsed < min || parsed > max) {
      throw new InvalidConfigException(key, v, "an integer in [" + min + ", " + max + "]");
    }
    return parsed;
  }
}
