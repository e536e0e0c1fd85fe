/**
 * The {@code file} store: a durable segmented log per queue in one local directory, with group
 * commit, crash recovery and crash-safe consumer-group state.
 *
 * <p><b>Public surface.</b> {@link io.queuebridge.core.store.file.FileStoreProvider} (found by
 * {@link java.util.ServiceLoader} as {@code file}; its javadoc lists every configuration key),
 * {@link io.queuebridge.core.store.file.FileStorage} (the open store; {@code recovery()} reports
 * what opening repaired and found damaged), {@link io.queuebridge.core.store.file.RecoveryReport},
 * and {@link io.queuebridge.core.store.file.FileStores} with its {@link
 * io.queuebridge.core.store.file.RepairReport} (the explicit repair). Everything else is
 * package-private. The naming rules and the queue-configuration format it shares with other stores
 * are in {@link io.queuebridge.core.store.support}.
 *
 * <p><b>On-disk format, version 1</b> (details next to the code that reads each file):
 *
 * <ul>
 *   <li>Directory layout and locking: {@code FileStorage}.
 *   <li>Segment files ({@code <20-digit base offset>.log}) and the batch frame: {@code Frames}.
 *       Big-endian; every frame carries magic {@code QBLG}, format version, length and a CRC-32C
 *       over everything after the CRC field; records keep every field of a message exactly.
 *   <li>Offset and time indexes ({@code .idx}, {@code .tix}): {@code SparseIndex}; hints only,
 *       verified on use and rebuilt when missing or damaged.
 *   <li>Small files (store marker, queue configuration, checkpoint snapshot, indexes, logical head)
 *       share one envelope (magic, version, length, CRC-32C) and are replaced atomically: {@code
 *       Blobs}.
 *   <li>Logical head ({@code queue.head}): where an exact truncation put the head inside a segment,
 *       {@code LogHead}; absent in stores written before it existed, which open as before.
 *   <li>Deduplication ids of truncated messages ({@code queue.dedup}, the base, and {@code
 *       queue.dedup.<from>}, one chunk per later truncation with only the ids it removed, merged as
 *       a binary counter carries): {@code DedupSnapshot}; absent until a truncation of a queue that
 *       deduplicates.
 *   <li>Verified sealed segments ({@code queue.verified}): {@code VerifiedSegments}; absent until
 *       an open verified one, and a hint only (missing or damaged = verify again).
 *   <li>Queue configuration ({@code queue.cfg}): JSON written by {@link
 *       io.queuebridge.core.store.support.QueueConfigCodec}, in the envelope.
 *   <li>Consumer groups ({@code groups/<g>.grp}): an operation log with snapshots, {@code
 *       GroupLog}.
 *   <li>Names: {@link io.queuebridge.core.config.Names} (percent-encoding, never an escaping path
 *       component).
 * </ul>
 *
 * <p><b>A queue's log</b> ({@code SegmentedLog}) owns one part per job: the segment set and the
 * state the parts share ({@code SegmentSet}), recovery on open ({@code LogRecovery}), appends with
 * write combining and group commit ({@code GroupCommitWriter}, {@code StickyFailure}), reads with
 * index use and rebuild ({@code LogReader}, {@code IndexLoader}), and retention with exact
 * truncation ({@code LogRetention}, {@code LogHead}).
 *
 * <p><b>Recovery</b> ({@code LogRecovery}, BEHAVIOUR F-RECOVER): the newest segment of each queue
 * is scanned on open (framing, continuity, CRC); its torn or corrupt tail is cut, logged at WARN
 * and reported. Sealed segments are verified on open as {@code verify.on.open} says — by default
 * each once in its present size and modification time ({@code VerifiedSegments}, {@code
 * queue.verified}); damage there is not cut but reported ({@link
 * io.queuebridge.core.store.file.RecoveryReport#damage()}) and refused: the range from the bad
 * frame to the segment's end is never served and the queue takes no append until {@link
 * io.queuebridge.core.store.file.FileStores#repair} ({@code FileStoreRepair}) truncates the queue
 * to its last valid frame and clamps its groups. Reads verify every frame in any case and fail
 * closed with {@link io.queuebridge.core.errors.StoreCorruptedException} naming file and byte
 * position. Opening therefore costs O(newest segment) plus one read of each sealed segment not
 * verified before.
 *
 * <p><b>Platform.</b> Meant for Linux (POSIX permissions, directory fsync, deleting files that
 * readers still have open). Names differing only by case collide on case-insensitive file systems.
 */
package io.queuebridge.core.store.file;
