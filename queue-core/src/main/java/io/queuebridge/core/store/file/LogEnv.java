package io.queuebridge.core.store.file;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Clock;
import java.util.concurrent.atomic.LongAdder;

/**
 * What every queue log of one store shares.
 *
 * @param config the store configuration
 * @param clock append times and segment age
 * @param io the I/O seam
 * @param handles cached read channels
 * @param sealedIndexes loaded indexes of sealed segments, bounded
 * @param syncs barriers completed (fsyncs of segment files), for tests and metrics
 * @param indexRebuilds indexes rebuilt from segment data because a file was missing or damaged
 * @param store the store's description, for errors
 * @param writable false for a store opened read-only beside its writer: nothing may be written
 *     (indexes rebuilt in memory are not saved)
 */
record LogEnv(
    FileStoreConfig config,
    Clock clock,
    StoreIo io,
    ReadHandles handles,
    Cache<Segment, SegmentIndexes> sealedIndexes,
    LongAdder syncs,
    LongAdder indexRebuilds,
    String store,
    boolean writable) {

  /** The two indexes of a sealed segment. */
  record SegmentIndexes(SparseIndex offsets, SparseIndex times) {}

  /**
   * What the queue logs of one store share: a read-channel cache of {@code max.open.read.files}
   * channels and an index cache of about 8 Mi entries (16 bytes each: ~128 MiB at most).
   */
  static LogEnv create(
      FileStoreConfig config, Clock clock, StoreIo io, String store, boolean writable) {
    return new LogEnv(
        config,
        clock,
        io,
        new ReadHandles(io, config.maxOpenReadFiles()),
        Caffeine.newBuilder()
            .maximumWeight(8L << 20)
            .<Segment, SegmentIndexes>weigher(
                (s, ix) -> 1 + ix.offsets().size() + ix.times().size())
            .executor(Runnable::run)
            .build(),
        new LongAdder(),
        new LongAdder(),
        store,
        writable);
  }
}
