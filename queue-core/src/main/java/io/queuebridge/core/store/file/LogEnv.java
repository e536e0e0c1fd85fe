package io.queuebridge.core.store.file;

import com.github.benmanes.caffeine.cache.Cache;
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
}
