use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quick_cache::DefaultHashBuilder;

#[cfg(feature = "disk-cache")]
use crate::cache::disk::DiskTier;
use crate::cache::key::SourceKey;
use crate::cache::slot::{cache_options, BlockWeight, Blocks, Evictions};
use crate::cache::stats::{BlockCacheStats, Counters};
use crate::memory_budget::MemoryBudget;

/// A cache of source blocks in memory, bounded in bytes and shared by every source wrapped in a
/// [`Cached`](crate::cache::Cached) with it (clones of a `BlockCache` are handles on the same cache).
///
/// Sources are read through it in aligned blocks of [`block_size`](Self::block_size) bytes:
/// block `i` of a source is its bytes `[i * block_size, (i + 1) * block_size)`, the last one
/// shorter where the source ends. A block is kept under the key of its source (see
/// [`Cached::new`](crate::cache::Cached::new)) and its number, so inputs over the same source, their clones and slices, and
/// several `Cached` over the same file all share its blocks.
///
/// The cache is [quick_cache](https://docs.rs/quick_cache)'s sharded `sync::Cache`: a block
/// weighs its length in bytes and the blocks held weigh at most the capacity, at every moment
/// (a block is evicted in the insert that needs its room). Which blocks stay is decided by a
/// CLOCK-PRO-like policy with ghost entries: once the cache is full, a new block enters a small
/// cold part (3% of the capacity) and moves to the hot part only if it is read again while
/// there, or if it was evicted not long ago; so blocks read once do not flush the cache. A
/// sequential scan is not admitted at all: [`Cached`](crate::cache::Cached) reads it around
/// the cache ([Scans](crate::cache::Cached#scans)). A hit takes a shard's read lock and sets a
/// flag; no hit pays for another's bookkeeping. Concurrent misses on one block are coalesced into one source request
/// (single-flight).
///
/// # Memory
///
/// The blocks held weigh at most the capacity. A cache made
/// [`with_budget`](Self::with_budget) also takes every block it keeps from a [`MemoryBudget`],
/// the one the inputs' read-ahead draws on, and gives it back in the insert that evicts the
/// block: so the read-ahead of every input and the cached blocks together stay under one
/// bound. A block read while the budget is full is handed to the readers that wanted it and
/// not kept ([`BlockCacheStats::unbudgeted`]).
///
/// # Examples
///
/// ```
/// use async_buffered_input::cache::{BlockCache, Cached};
/// use async_buffered_input::source::{MemorySource, PositionalSource};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let cache = BlockCache::with_block_size(1 << 20, 4096); // 1 MiB of 4 KiB blocks
/// let source = Cached::new(MemorySource::new(vec![7u8; 10_000]), cache.clone());
/// assert_eq!(source.read_at(4000, 200).await?.len(), 200); // blocks 0 and 1
/// assert_eq!(source.read_at(5000, 10).await?[..], [7; 10]); // block 1 again
/// let stats = cache.stats();
/// assert_eq!((stats.misses, stats.hits), (2, 1));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct BlockCache {
    shared: Arc<Shared>,
}

struct Shared {
    blocks: Blocks,
    block_size: usize,
    capacity: u64,
    // What every kept block reserves its bytes from, if the cache was made with one.
    budget: Option<MemoryBudget>,
    // The next key of a `Cached` whose source has no name.
    next_unique: AtomicU64,
    counters: Arc<Counters>,
    // The tier under the memory, if the cache was made with one.
    #[cfg(feature = "disk-cache")]
    disk: Option<DiskTier>,
}

impl BlockCache {
    /// The block size of [`BlockCache::new`]: 64 KiB.
    pub(crate) const DEFAULT_BLOCK_SIZE: usize = 64 * 1024;

    /// A cache holding at most `capacity` bytes of blocks of
    /// 64 KiB.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0.
    pub fn new(capacity: u64) -> Self {
        Self::with_block_size(capacity, Self::DEFAULT_BLOCK_SIZE)
    }

    /// A cache holding at most `capacity` bytes of blocks of `block_size` bytes.
    ///
    /// A block larger than the capacity is never kept, so the capacity should hold many blocks.
    ///
    /// # Panics
    ///
    /// If `capacity` or `block_size` is 0.
    pub fn with_block_size(capacity: u64, block_size: usize) -> Self {
        Self::build(capacity, block_size, None, None)
    }

    /// A cache like [`with_block_size`](Self::with_block_size)'s whose blocks also take their
    /// bytes from `budget` while they are kept: share it with the inputs'
    /// [`PositionalFetch::with_budget`](crate::PositionalFetch::with_budget), and their
    /// read-ahead and the cached blocks together stay under it.
    ///
    /// When the budget is full, a block that was read is handed to its readers and not kept;
    /// the budget fills up as blocks are kept and frees as they are evicted, so leave room in
    /// it for the read-ahead (a capacity well under the budget's limit).
    ///
    /// # Panics
    ///
    /// As [`with_block_size`](Self::with_block_size).
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::MemoryBudget;
    /// use async_buffered_input::cache::{BlockCache, Cached};
    /// use async_buffered_input::source::{MemorySource, PositionalSource};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let budget = MemoryBudget::new(8192);
    /// let cache = BlockCache::with_budget(1 << 20, 4096, &budget);
    /// let source = Cached::new(MemorySource::new(vec![1u8; 16_384]), cache.clone());
    /// let bytes = source.read_at(0, 16_384).await?; // four blocks; the budget holds two
    /// assert_eq!(bytes.len(), 16_384);
    /// assert_eq!(budget.used(), 8192);
    /// assert_eq!(cache.stats().unbudgeted, 2);
    /// drop(source);
    /// drop(cache); // the kept blocks go, and give their bytes back
    /// assert_eq!(budget.used(), 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_budget(capacity: u64, block_size: usize, budget: &MemoryBudget) -> Self {
        Self::build(capacity, block_size, Some(budget.clone()), None)
    }

    /// A cache holding at most `capacity` bytes of blocks in memory, over `disk`, which holds
    /// more: blocks read from the sources are written to it, and blocks memory does not hold
    /// are read from it (their checksums checked) before a source is asked. The blocks are of
    /// the disk tier's [`block_size`](DiskTier::block_size). See [`DiskTier`].
    ///
    /// # Panics
    ///
    /// If `capacity` is 0.
    #[cfg(feature = "disk-cache")]
    #[cfg_attr(docsrs, doc(cfg(feature = "disk-cache")))]
    pub fn with_disk_tier(capacity: u64, disk: DiskTier) -> Self {
        let block_size = disk.block_size();
        Self::build(capacity, block_size, None, Some(disk))
    }

    fn build(
        capacity: u64,
        block_size: usize,
        budget: Option<MemoryBudget>,
        #[cfg(feature = "disk-cache")] disk: Option<DiskTier>,
        #[cfg(not(feature = "disk-cache"))] _disk: Option<std::convert::Infallible>,
    ) -> Self {
        assert!(
            capacity > 0,
            "a BlockCache needs a capacity of at least 1 byte"
        );
        assert!(
            block_size > 0,
            "a BlockCache needs a block size of at least 1 byte"
        );
        let counters = Arc::new(Counters::default());
        let blocks = Blocks::with_options(
            cache_options(capacity, block_size),
            BlockWeight,
            DefaultHashBuilder::default(),
            Evictions(Arc::clone(&counters)),
        );
        debug_assert!(
            blocks.capacity() <= capacity,
            "{} shards",
            blocks.num_shards()
        );
        Self {
            shared: Arc::new(Shared {
                blocks,
                block_size,
                capacity,
                budget,
                next_unique: AtomicU64::new(0),
                counters,
                #[cfg(feature = "disk-cache")]
                disk,
            }),
        }
    }

    /// The size of the blocks sources are read in.
    pub fn block_size(&self) -> usize {
        self.shared.block_size
    }

    /// The most bytes of blocks the cache holds.
    pub fn capacity(&self) -> u64 {
        self.shared.capacity
    }

    /// What the cache did so far, and what it holds.
    pub fn stats(&self) -> BlockCacheStats {
        let c = &self.shared.counters;
        #[allow(unused_mut)] // without a disk tier
        let mut stats = BlockCacheStats {
            hits: c.hits.load(Ordering::Relaxed),
            misses: c.misses.load(Ordering::Relaxed),
            coalesced: c.coalesced.load(Ordering::Relaxed),
            evictions: c.evictions.load(Ordering::Relaxed),
            bytes: self.shared.blocks.weight(),
            blocks: self.shared.blocks.len() as u64,
            unbudgeted: c.unbudgeted.load(Ordering::Relaxed),
            scan_reads: c.scan_reads.load(Ordering::Relaxed),
            ..BlockCacheStats::default()
        };
        #[cfg(feature = "disk-cache")]
        if let Some(disk) = &self.shared.disk {
            let d = disk.stats();
            stats.disk_hits = d.hits;
            stats.disk_writes = d.writes;
            stats.disk_corrupt = d.corrupt;
            stats.disk_evictions = d.evictions;
            stats.disk_errors = d.errors;
            stats.disk_bytes = d.bytes;
            stats.disk_blocks = d.blocks;
        }
        stats
    }

    // ----- for `Cached` -----

    /// A key no other source of this cache has.
    pub(super) fn unique_key(&self) -> SourceKey {
        SourceKey::Unique(self.shared.next_unique.fetch_add(1, Ordering::Relaxed))
    }

    pub(super) fn counters(&self) -> &Counters {
        &self.shared.counters
    }

    /// The memory tier.
    pub(super) fn blocks(&self) -> &Blocks {
        &self.shared.blocks
    }

    /// The disk tier, if there is one.
    #[cfg(feature = "disk-cache")]
    pub(super) fn disk(&self) -> Option<&DiskTier> {
        self.shared.disk.as_ref()
    }

    /// What kept blocks reserve their bytes from, if anything.
    pub(super) fn budget(&self) -> Option<&MemoryBudget> {
        self.shared.budget.as_ref()
    }
}

impl BlockCache {
    fn disk_debug(&self) -> Option<&dyn fmt::Debug> {
        #[cfg(feature = "disk-cache")]
        if let Some(disk) = &self.shared.disk {
            return Some(disk);
        }
        None
    }
}

impl fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockCache")
            .field("block_size", &self.shared.block_size)
            .field("capacity", &self.shared.capacity)
            .field("budget", &self.shared.budget)
            .field("disk", &self.disk_debug())
            .field("stats", &self.stats())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "block size")]
    fn a_zero_block_size_is_refused() {
        let _ = BlockCache::with_block_size(100, 0);
    }

    #[test]
    #[should_panic(expected = "capacity")]
    fn a_zero_capacity_is_refused() {
        let _ = BlockCache::new(0);
    }
}
