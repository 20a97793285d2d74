use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a [`BlockCache`](crate::cache::BlockCache) did, from
/// [`BlockCache::stats`](crate::cache::BlockCache::stats).
///
/// Counters (`hits`, `misses`, ...) only grow; `bytes`, `blocks`, `disk_bytes` and
/// `disk_blocks` are what the cache holds at the moment of the snapshot. Two snapshots
/// subtract field by field (saturating at 0), so `later - earlier` counts what happened in
/// between; several caches' snapshots add up (`Add`, `Sum`) to their totals. `Display`
/// prints one line of `name value` pairs.
///
/// A block lookup the memory tier does not answer is served by the disk tier (`disk_hits`),
/// by another reader's request (`coalesced`) or by a request to the source (`misses`).
///
/// ```
/// use async_buffered_input::cache::BlockCacheStats;
///
/// let mut earlier = BlockCacheStats::default();
/// earlier.hits = 10;
/// let mut later = earlier;
/// later.hits = 25;
/// later.misses = 3;
/// let between = later - earlier;
/// assert_eq!((between.hits, between.misses), (15, 3));
/// assert_eq!([earlier, between].into_iter().sum::<BlockCacheStats>().hits, 25);
/// assert!(between.to_string().starts_with("hits 15, misses 3,"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct BlockCacheStats {
    /// Block lookups answered by a block the memory tier held (by `read_at`, and by
    /// `try_read_at` when it copied something).
    pub hits: u64,
    /// Block requests made to the sources, whatever their outcome: one per block missing from
    /// both tiers, however many readers wanted it at once.
    pub misses: u64,
    /// Block lookups that found the block missing and got it from a load another reader had
    /// started (they waited for it instead of making their own).
    pub coalesced: u64,
    /// Blocks dropped from memory to keep within the capacity, including new blocks the cache
    /// turned away. Replacements and removals asked for are not counted.
    pub evictions: u64,
    /// Bytes the blocks held in memory weigh: at most the capacity.
    pub bytes: u64,
    /// Blocks held in memory.
    pub blocks: u64,
    /// Blocks read from a source and handed to their readers but not kept in memory, because
    /// the cache's [`MemoryBudget`](crate::MemoryBudget) had no room for them (see
    /// [`BlockCache::with_budget`](crate::cache::BlockCache::with_budget)).
    pub unbudgeted: u64,
    /// Reads taken as part of a sequential scan (see [Scans](crate::cache::Cached#scans)):
    /// served from the blocks memory held, the rest read around the memory tier and not kept
    /// (a long scan's stream counts as one). The blocks they found count as `hits`; what they
    /// read around is not in `misses`.
    pub scan_reads: u64,
    /// Blocks the memory tier did not hold that were read from the disk tier, with a valid
    /// checksum, instead of from the source.
    pub disk_hits: u64,
    /// Blocks written to the disk tier.
    pub disk_writes: u64,
    /// Blocks read from the disk tier whose header or checksum did not match: discarded,
    /// never served, and read from the source instead.
    pub disk_corrupt: u64,
    /// Blocks dropped from the disk tier to make room for new ones.
    pub disk_evictions: u64,
    /// Disk tier reads and writes that failed with an I/O error (the block was read from the
    /// source, or not written), and blocks not written because every slot was busy.
    pub disk_errors: u64,
    /// Bytes the disk tier's blocks take in its files, headers included: at most its
    /// capacity.
    pub disk_bytes: u64,
    /// Blocks held by the disk tier.
    pub disk_blocks: u64,
}

/// Calls `$m!` with every field of [`BlockCacheStats`], in declaration order.
macro_rules! for_each_field {
    ($m:ident) => {
        $m!(
            hits,
            misses,
            coalesced,
            evictions,
            bytes,
            blocks,
            unbudgeted,
            scan_reads,
            disk_hits,
            disk_writes,
            disk_corrupt,
            disk_evictions,
            disk_errors,
            disk_bytes,
            disk_blocks
        )
    };
}

impl BlockCacheStats {
    /// `op` applied field by field.
    fn zip(self, other: Self, op: fn(u64, u64) -> u64) -> Self {
        macro_rules! zip {
            ($($f:ident),*) => { Self { $($f: op(self.$f, other.$f)),* } };
        }
        for_each_field!(zip)
    }
}

crate::stats::stats::counter_ops!(
    BlockCacheStats,
    add: "Field by field, saturating at `u64::MAX`: the totals of two caches (or two stretches \
          of work).",
    sub: "Field by field, saturating at 0: `later - earlier` counts what happened in between.",
    sum: "The totals of several caches' snapshots."
);

impl fmt::Display for BlockCacheStats {
    /// One line: `hits 3, misses 1, coalesced 0, ...`, every field in declaration order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        macro_rules! show {
            ($first:ident $(, $f:ident)*) => {{
                write!(f, "{} {}", stringify!($first), self.$first)?;
                $(write!(f, ", {} {}", stringify!($f), self.$f)?;)*
                Ok(())
            }};
        }
        for_each_field!(show)
    }
}

/// The memory tier's counters, shared by the cache's handles and its eviction listener.
#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) hits: AtomicU64,
    pub(super) misses: AtomicU64,
    pub(super) coalesced: AtomicU64,
    pub(super) evictions: AtomicU64,
    pub(super) unbudgeted: AtomicU64,
    pub(super) scan_reads: AtomicU64,
}

/// Adds one to `counter`.
pub(super) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stats whose field `k` (in declaration order) is `f(k)`.
    fn numbered(f: impl Fn(u64) -> u64) -> BlockCacheStats {
        let mut s = BlockCacheStats::default();
        let mut k = 0;
        macro_rules! set {
            ($($field:ident),*) => {{ $( s.$field = f(k); k += 1; )* }};
        }
        for_each_field!(set);
        assert_eq!(k, 15, "every field is numbered");
        s
    }

    #[test]
    fn add_and_sub_work_field_by_field() {
        let a = numbered(|k| 100 + k);
        let b = numbered(|k| k * k);
        let sum = a + b;
        let diff = a - b;
        let expected_sum = numbered(|k| 100 + k + k * k);
        let expected_diff = numbered(|k| (100 + k).saturating_sub(k * k));
        assert_eq!(sum, expected_sum);
        assert_eq!(diff, expected_diff);
        assert_eq!(sum - b, a, "adding then subtracting gives the first back");
        assert_eq!(
            b - a,
            numbered(|k| (k * k).saturating_sub(100 + k)),
            "saturates at 0"
        );
    }

    #[test]
    fn sum_adds_every_snapshot() {
        let parts = [numbered(|k| k), numbered(|k| 2 * k), numbered(|_| 1)];
        let expected = numbered(|k| 3 * k + 1);
        assert_eq!(parts.iter().sum::<BlockCacheStats>(), expected);
        assert_eq!(parts.into_iter().sum::<BlockCacheStats>(), expected);
        assert_eq!(
            std::iter::empty::<BlockCacheStats>().sum::<BlockCacheStats>(),
            BlockCacheStats::default()
        );
    }

    #[test]
    fn display_names_every_field_once() {
        let text = numbered(|k| 1000 + k).to_string();
        let pairs: Vec<&str> = text.split(", ").collect();
        assert_eq!(pairs.len(), 15, "{text}");
        assert_eq!(pairs[0], "hits 1000");
        assert_eq!(pairs[1], "misses 1001");
        assert_eq!(pairs[7], "scan_reads 1007");
        assert_eq!(pairs[8], "disk_hits 1008");
        assert_eq!(pairs[14], "disk_blocks 1014");
        for (k, pair) in pairs.iter().enumerate() {
            assert!(pair.ends_with(&format!(" {}", 1000 + k)), "{text}");
        }
    }
}
