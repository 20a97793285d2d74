use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::Poll;

use bytes::{Bytes, BytesMut};

use crate::cache::block_cache::BlockCache;
#[cfg(feature = "disk-cache")]
use crate::cache::disk::{DiskKey, DiskTier};
use crate::cache::key::{BlockKey, SourceKey};
use crate::cache::load_error::{LoadError, SharedError};
use crate::cache::slot::{Block, Slot};
use crate::cache::stats::bump;
use crate::source::forward::forward;
use crate::source::PositionalSource;
use crate::stats::metrics::{self, Tier};

/// Where a block is looked for on disk (see `Cached::disk_key`).
#[cfg(feature = "disk-cache")]
enum DiskLookup {
    /// Nowhere: no disk tier, or a source without a name.
    None,
    /// The block starts at or past the end of the source.
    PastEnd,
    /// Under this key, with this many bytes.
    Key(DiskTier, DiskKey, usize),
}

/// The most block requests one `read_at` has in flight at once.
const MAX_BLOCKS_IN_FLIGHT: usize = 16;

/// A [`PositionalSource`] wrapper that reads its inner source through a [`BlockCache`], in
/// aligned blocks, so that what one reader fetched serves the next: inputs over it, their
/// clones and slices, and other `Cached` sources with the same key.
///
/// - [`read_at`](PositionalSource::read_at) takes each block of the range from the cache, and
///   asks the inner source for the whole block when it is missing. Concurrent misses on one
///   block make one request, whose bytes every waiting reader gets (single-flight). A block is
///   kept as the source returned it: the last block of a source can be short. A range in one
///   block is a slice of it, with no copy; a range over several is copied once.
/// - [`try_read_at`](PositionalSource::try_read_at) copies what the cache holds at the offset,
///   without waiting, so that a [`PositionalFetch`](crate::PositionalFetch) over this
///   source serves cached blocks at once, with no request and no task.
/// - Errors of the inner source are returned with their kind and are not cached: the next read
///   of the block asks again.
///
/// A cold read of `n` blocks makes `n` block requests, at most 16 at once. A block size at
/// least as large as the requests the inputs make (their window, their read-ahead chunk) keeps
/// a request to one or two blocks.
///
/// # The key
///
/// Blocks are kept under the source's key, which stands for its bytes: two sources with the
/// same key must serve the same bytes. [`Cached::new`] uses the source's
/// [`resource`](PositionalSource::resource) (its path or URL), so two opens of one file share
/// blocks, and a number of its own for a source without a name. [`Cached::with_key`] sets the
/// key: add a version (an ETag, a generation) where the bytes under a name can change.
///
/// # Examples
///
/// Two inputs over one cached source, and a clone and a slice of one of them: the blocks read
/// by the first are not requested again.
///
/// ```
/// use async_buffered_input::PositionalFetch;
/// use async_buffered_input::cache::{BlockCache, Cached};
/// use async_buffered_input::source::MemorySource;
/// use async_buffered_input::AsyncBufferedInput;
/// use std::sync::Arc;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let data: Vec<u8> = (0..=255).cycle().take(10_000).collect();
/// let cache = BlockCache::with_block_size(64 * 1024, 1024);
/// let source = Arc::new(Cached::new(MemorySource::new(data), cache.clone()));
///
/// let mut first = AsyncBufferedInput::with_capacity(256, PositionalFetch::from_arc(source.clone()));
/// let mut buf = [0u8; 3000];
/// first.read_bytes(&mut buf).await?; // blocks 0, 1 and 2: three requests
/// assert_eq!(cache.stats().misses, 3);
///
/// let mut second = AsyncBufferedInput::with_capacity(256, PositionalFetch::from_arc(source));
/// second.seek_to(1500);
/// assert_eq!(second.read_byte().await?, (1500 % 256) as u8);
/// let mut clone = first.clone();
/// clone.seek_to(2900);
/// assert_eq!(clone.read_byte().await?, (2900 % 256) as u8);
/// let mut slice = first.slice(100, 900).await?;
/// assert_eq!(slice.read_byte().await?, 100);
/// assert_eq!(cache.stats().misses, 3); // no more requests
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Cached<S> {
    inner: S,
    cache: BlockCache,
    key: SourceKey,
    // The cache's, kept here for the arithmetic of every read.
    block_size: u64,
    // The source's length once known: asked of the source, or seen where a block came back
    // short. The cache assumes the bytes do not change, so it is kept.
    length: OnceLock<u64>,
}

impl<S: PositionalSource> Cached<S> {
    /// Wraps `inner` with `cache`, keyed by the source's
    /// [`resource`](PositionalSource::resource) when it has one (two sources with the same name
    /// share blocks), else by a key of its own.
    pub fn new(inner: S, cache: BlockCache) -> Self {
        let key = match inner.resource() {
            Some(name) => SourceKey::Named(name.into()),
            None => cache.unique_key(),
        };
        Self::with_source_key(inner, cache, key)
    }

    /// Wraps `inner` with `cache`, keyed by `key`: sources with the same key share blocks, so
    /// they must serve the same bytes.
    pub fn with_key(inner: S, cache: BlockCache, key: impl Into<Arc<str>>) -> Self {
        Self::with_source_key(inner, cache, SourceKey::Named(key.into()))
    }

    fn with_source_key(inner: S, cache: BlockCache, key: SourceKey) -> Self {
        Self {
            block_size: cache.block_size() as u64,
            inner,
            cache,
            key,
            length: OnceLock::new(),
        }
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The cache.
    pub fn cache(&self) -> &BlockCache {
        &self.cache
    }

    /// The key the blocks are kept under, if it is a name (`None` for a key of its own).
    pub fn key(&self) -> Option<&str> {
        match &self.key {
            SourceKey::Named(name) => Some(name),
            SourceKey::Unique(_) => None,
        }
    }

    // ----- private helpers -----

    fn block_key(&self, index: u64) -> BlockKey {
        BlockKey {
            source: self.key.clone(),
            index,
        }
    }

    /// Block `index`: from the cache, or loaded (once, however many readers want it at once).
    /// Empty at or past the end of the source.
    async fn block(&self, index: u64) -> io::Result<Bytes> {
        let key = self.block_key(index);
        let blocks = self.cache.blocks();
        let c = self.cache.counters();
        let slot = if let Some(slot) = blocks.get(&key) {
            bump(&c.hits);
            metrics::cache_hits(Tier::Memory, 1);
            slot
        } else {
            match blocks.get_value_or_guard_async(&key).await {
                // Another reader's load, waited for (or one that landed in between).
                Ok(slot) => {
                    bump(&c.coalesced);
                    slot
                }
                // This reader loads it. If this future is dropped first, so is the guard, and
                // a waiting reader takes over.
                Err(guard) => {
                    metrics::cache_misses(Tier::Memory, 1);
                    let slot = match self.load(index).await {
                        Ok(block) => Slot::Kept(block),
                        Err(e) => Slot::Passed(Arc::new(e)),
                    };
                    // Hands the slot to the waiting readers; kept only if it is a block.
                    let _ = guard.insert(slot.clone());
                    slot
                }
            }
        };
        let block = match slot {
            Slot::Kept(block) => block.bytes,
            Slot::Passed(outcome) => match Arc::try_unwrap(outcome) {
                // No waiter holds it any more: the source's own error.
                Ok(LoadError::Source(e)) => return Err(e),
                Ok(LoadError::PastEnd) => return Ok(Bytes::new()),
                Ok(LoadError::NoBudget(block)) => block,
                Err(shared) => match &*shared {
                    LoadError::PastEnd => return Ok(Bytes::new()),
                    LoadError::NoBudget(block) => block.clone(),
                    LoadError::Source(e) => {
                        return Err(io::Error::new(e.kind(), SharedError(shared)))
                    }
                },
            },
        };
        self.saw_block(index, &block);
        Ok(block)
    }

    /// Block `index` from the disk tier if it holds it (checked), else from the inner source
    /// (and then written to the disk tier): the cache's loader. Its bytes are taken from the
    /// budget, if the cache has one.
    async fn load(&self, index: u64) -> Result<Block, LoadError> {
        #[cfg(feature = "disk-cache")]
        let disk_key = match self.disk_key(index).await? {
            DiskLookup::None => None,
            DiskLookup::PastEnd => return Err(LoadError::PastEnd),
            DiskLookup::Key(disk, key, expected) => {
                if let Some(block) = disk.get(&key).await {
                    if block.len() == expected {
                        metrics::cache_hits(Tier::Disk, 1);
                        return self.keep(block);
                    }
                }
                metrics::cache_misses(Tier::Disk, 1);
                Some((disk, key))
            }
        };
        bump(&self.cache.counters().misses);
        let start = index * self.block_size;
        let mut block = self
            .inner
            .read_at(start, self.block_size as usize)
            .await
            .map_err(LoadError::Source)?;
        if block.is_empty() {
            return Err(LoadError::PastEnd);
        }
        block.truncate(self.block_size as usize); // a source that returned more than asked
        #[cfg(feature = "disk-cache")]
        if let Some((disk, key)) = disk_key {
            disk.put(&key, block.clone()).await;
        }
        self.keep(block)
    }

    /// `block` as the memory tier keeps it: with its share of the budget, if the cache has one.
    fn keep(&self, block: Bytes) -> Result<Block, LoadError> {
        let held = match self.cache.budget() {
            None => None,
            Some(budget) => match budget.try_reserve(block.len()) {
                Some(reservation) => Some(Arc::new(reservation)),
                None => {
                    bump(&self.cache.counters().unbudgeted);
                    return Err(LoadError::NoBudget(block));
                }
            },
        };
        Ok(Block {
            bytes: block,
            _held: held,
        })
    }

    /// Where block `index` is kept on disk: nowhere without a disk tier or a name; else under
    /// the name, the source's length (asked of the source once) and the index, with the
    /// block's length.
    #[cfg(feature = "disk-cache")]
    async fn disk_key(&self, index: u64) -> Result<DiskLookup, LoadError> {
        let (Some(disk), SourceKey::Named(name)) = (self.cache.disk(), &self.key) else {
            return Ok(DiskLookup::None);
        };
        let source_len = self.len().await.map_err(LoadError::Source)?;
        let start = index.saturating_mul(self.block_size);
        if start >= source_len {
            return Ok(DiskLookup::PastEnd);
        }
        let expected = (source_len - start).min(self.block_size) as usize;
        let key = DiskKey {
            name: Arc::clone(name),
            source_len,
            index,
        };
        Ok(DiskLookup::Key(disk.clone(), key, expected))
    }

    /// A short block ends the source: its length is known from now on.
    fn saw_block(&self, index: u64, block: &Bytes) {
        if (block.len() as u64) < self.block_size {
            let _ = self
                .length
                .set(index * self.block_size + block.len() as u64);
        }
    }

    /// Blocks `first..=last` in order, loaded at most [`MAX_BLOCKS_IN_FLIGHT`] at once, up to
    /// the first short one (the end of the source: none after it is requested or returned).
    async fn blocks(&self, first: u64, last: u64) -> io::Result<Vec<Bytes>> {
        type BlockFuture<'a> = Pin<Box<dyn Future<Output = io::Result<Bytes>> + Send + 'a>>;
        // `got[k]` is block `first + k` once loaded; blocks from `end` on are not wanted.
        let mut got: Vec<Option<Bytes>> = Vec::new();
        let mut end = last - first + 1;
        let mut running: Vec<(u64, BlockFuture<'_>)> = Vec::new();
        poll_fn(|cx| loop {
            while running.len() < MAX_BLOCKS_IN_FLIGHT && (got.len() as u64) < end {
                let k = got.len() as u64;
                running.push((k, Box::pin(self.block(first + k))));
                got.push(None);
            }
            let mut progressed = false;
            let mut i = 0;
            while i < running.len() {
                let (k, block) = &mut running[i];
                let k = *k;
                match block.as_mut().poll(cx) {
                    Poll::Pending => i += 1,
                    Poll::Ready(result) => {
                        drop(running.swap_remove(i));
                        progressed = true;
                        if k >= end {
                            continue; // past a short block: not wanted
                        }
                        let block = result?;
                        if (block.len() as u64) < self.block_size {
                            end = k + 1;
                        }
                        got[k as usize] = Some(block);
                    }
                }
            }
            running.retain(|(k, _)| *k < end);
            if running.is_empty() && got.len() as u64 >= end {
                return Poll::Ready(Ok::<(), io::Error>(()));
            }
            if !progressed {
                return Poll::Pending;
            }
        })
        .await?;
        got.truncate(end as usize);
        Ok(got.into_iter().map(Option::unwrap_or_default).collect())
    }
}

impl<S: PositionalSource> PositionalSource for Cached<S> {
    /// The bytes at `[offset, offset + len)`, cut at the end of the source, from the blocks
    /// that cover them: cached ones from the cache, missing ones requested of the inner source
    /// (a whole block each, at most 16 at once; concurrent readers of a missing block wait for
    /// one request).
    ///
    /// # Errors
    ///
    /// The inner source's, with their kind, for the first block (in offset order) that failed;
    /// nothing is cached for it.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future keeps the blocks already loaded. A request it had in flight is
    /// dropped with it; another reader waiting for that block then makes its own.
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let mut end = offset.saturating_add(len as u64);
        if let Some(&length) = self.length.get() {
            end = end.min(length);
        }
        if end <= offset {
            return Ok(Bytes::new());
        }
        let bs = self.block_size;
        let (first, last) = (offset / bs, (end - 1) / bs);
        let within = (offset - first * bs) as usize;
        if first == last {
            let block = self.block(first).await?;
            let stop = (end - first * bs).min(block.len() as u64) as usize;
            return Ok(block.slice(within.min(stop)..stop));
        }
        let blocks = self.blocks(first, last).await?;
        let parts: Vec<Bytes> = blocks
            .iter()
            .enumerate()
            .map(|(k, block)| {
                let from = if k == 0 { within } else { 0 };
                let block_end = (first + k as u64) * bs + block.len() as u64;
                let to = block.len() - (block_end.saturating_sub(end) as usize).min(block.len());
                block.slice(from.min(to)..to)
            })
            .filter(|part| !part.is_empty())
            .collect();
        match parts.as_slice() {
            [] => Ok(Bytes::new()),
            [one] => Ok(one.clone()),
            _ => {
                let total = parts.iter().map(Bytes::len).sum();
                let mut out = BytesMut::with_capacity(total);
                for part in &parts {
                    out.extend_from_slice(part);
                }
                Ok(out.freeze())
            }
        }
    }

    /// The inner source's length, asked once and kept (or known from the short last block).
    async fn len(&self) -> io::Result<u64> {
        if let Some(&length) = self.length.get() {
            return Ok(length);
        }
        let length = self.inner.len().await?;
        Ok(*self.length.get_or_init(|| length))
    }

    /// Copies what the cache holds from `offset` on, block after block, up to the first block
    /// it does not hold (or the end of `buf`, or of the source). Never waits and never asks the
    /// inner source: 0 when the first block is not cached.
    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        let bs = self.block_size;
        let mut filled = 0;
        while filled < buf.len() {
            let at = offset.saturating_add(filled as u64);
            let index = at / bs;
            let key = self.block_key(index);
            let Some(Slot::Kept(Block { bytes: block, .. })) = self.cache.blocks().get(&key) else {
                break;
            };
            self.saw_block(index, &block);
            let within = (at - index * bs) as usize;
            if within >= block.len() {
                break; // at or past the end of the source
            }
            bump(&self.cache.counters().hits);
            metrics::cache_hits(Tier::Memory, 1);
            let n = (block.len() - within).min(buf.len() - filled);
            buf[filled..filled + n].copy_from_slice(&block[within..within + n]);
            filled += n;
            if (block.len() as u64) < bs {
                break;
            }
        }
        filled
    }

    forward!(inner =>
        /// The inner source's (no request).
        known_len,
        /// The inner source's.
        resource,
        description,
        /// The inner source's (the cache's blocks are not the input's buffers: they stay).
        release_buffers
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory_budget::MemoryBudget;
    use crate::source::MemorySource;

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    #[tokio::test]
    async fn ranges_across_blocks_and_the_end() {
        let bytes = data(1000);
        let cache = BlockCache::with_block_size(1 << 20, 64);
        let source = Cached::new(MemorySource::new(bytes.clone()), cache.clone());
        for (offset, len) in [
            (0, 1),
            (0, 64),
            (63, 2),
            (10, 500),
            (960, 100),
            (999, 5),
            (1000, 1),
            (5000, 3),
        ] {
            let got = source.read_at(offset, len).await.unwrap();
            let start = (offset as usize).min(bytes.len());
            let end = (start + len).min(bytes.len());
            assert_eq!(&got[..], &bytes[start..end], "read_at({offset}, {len})");
        }
        assert_eq!(source.len().await.unwrap(), 1000);
    }

    #[tokio::test]
    async fn one_block_is_a_slice_of_the_cached_block() {
        let cache = BlockCache::with_block_size(1 << 20, 64);
        let source = Cached::new(MemorySource::new(data(200)), cache);
        let a = source.read_at(70, 10).await.unwrap();
        let b = source.read_at(72, 10).await.unwrap();
        assert_eq!(a.as_ptr().wrapping_add(2), b.as_ptr());
    }

    #[tokio::test]
    async fn try_read_at_serves_cached_blocks_only() {
        let cache = BlockCache::with_block_size(1 << 20, 64);
        let source = Cached::new(MemorySource::new(data(200)), cache.clone());
        let mut buf = [0u8; 100];
        assert_eq!(source.try_read_at(0, &mut buf), 0);
        source.read_at(0, 70).await.unwrap(); // blocks 0 and 1
        assert_eq!(source.try_read_at(10, &mut buf), 100);
        assert_eq!(&buf[..], &data(200)[10..110]);
        assert_eq!(source.try_read_at(100, &mut buf), 28); // block 2 is not cached
        source.read_at(195, 1).await.unwrap(); // block 3, short: the end
        assert_eq!(source.try_read_at(192, &mut buf), 8);
        assert_eq!(source.try_read_at(200, &mut buf), 0);
    }

    #[tokio::test]
    async fn evicted_blocks_give_their_budget_back() {
        let budget = MemoryBudget::new(1 << 20);
        let cache = BlockCache::with_budget(2 * 64, 64, &budget);
        let source = Cached::new(MemorySource::new(data(64 * 8)), cache.clone());
        for block in 0..8u64 {
            source.read_at(block * 64, 64).await.unwrap();
            let stats = cache.stats();
            assert!(stats.bytes <= 128, "{stats:?}");
            assert_eq!(budget.used() as u64, stats.bytes, "{stats:?}");
        }
        assert_eq!(cache.stats().unbudgeted, 0);
    }
}
