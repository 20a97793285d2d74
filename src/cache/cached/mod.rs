//! [`Cached`]: a positional source read through a [`BlockCache`], by concept:
//!
//! - here: the type, its key, and the reads: lookups through the blocks, scans around them;
//! - `load`: blocks from memory, or loaded once for every reader that wants them (from the disk
//!   tier or the source), several at once;
//! - `scan`: the reads of a sequential scan, served from the blocks memory holds and otherwise
//!   read around it;
//! - `scan_stream`: a long scan's stream, the inner source's, around the cache;
//! - `span`: the blocks a read over several lacks, loaded by one request.

mod load;
mod scan;
mod scan_stream;
mod span;

use std::io;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures_core::stream::BoxStream;

use self::load::Admit;
use self::scan::concat;
use self::scan_stream::ScanStream;
use crate::cache::block_cache::BlockCache;
use crate::cache::key::{BlockKey, SourceKey};
use crate::cache::sequential_runs::SequentialRuns;
use crate::cache::slot::{Block, Slot};
use crate::source::forward::forward;
use crate::source::PositionalSource;
use crate::stats::metrics::{self, Tier};

/// How many blocks a sequential run reads before its reads count as a scan's (see `is_scan`).
const SCAN_BLOCKS: u64 = 4;

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
/// A cold read of `n` blocks makes one request for them all, as it would without the cache
/// (a block another reader is loading is waited for, not asked again; each block is kept as a
/// copy of its own; past 64 blocks, the rest are asked block by block, 16 at once). A block size at least as large as the requests the inputs make (their
/// window, their read-ahead chunk) keeps a request to one or two blocks.
///
/// # Scans
///
/// A sequential scan (a checksum of a whole file, a merge, a warm-up) is read *around* the
/// cache: served from the blocks memory holds where it holds them, the rest asked of the
/// inner source as it asked, and none of it kept in memory. A read is taken as part of a scan
/// when it starts exactly where an earlier read of this `Cached` ended (up to 8 runs are
/// followed at once: clones and slices reading side by side) and takes that run past one
/// block. So:
///
/// - the scan makes at most one request per read, as it would without the cache (it is not
///   split into blocks), and pays no copy to assemble blocks, nor an insert and an eviction
///   per block: it costs what it would cost without the cache;
/// - it evicts nothing: the blocks lookups keep hitting stay, whatever the size of the scan;
/// - a lookup's first read is cached whatever its size, and so are reads that continue it
///   within a block's length from where it started; a lookup that reads on past that (a
///   long postings list) is read around from there.
///
/// Why around the cache rather than into a probationary segment: the memory tier
/// ([quick_cache](https://docs.rs/quick_cache)) already admits new blocks into a small cold
/// part, so a scan does not push out the hot blocks; but it still asks for every block on its
/// own, inserts and evicts one per block, and pushes out the cold part, where the blocks of
/// lookups that were read only once wait for their second read. A scan's blocks are rarely
/// read again soon (a verification reads each byte once), so they are not worth that.
///
/// With a disk tier (`BlockCache::with_disk_tier`, feature `disk-cache`) and a source with a
/// name, a scan's missing blocks are read block by block through the disk tier, and written
/// to it, but not kept in memory: the disk tier is sized to hold the files, and a scan is how
/// it is filled for the next run.
///
/// # The key
///
/// Blocks are kept under the source's key, which stands for its bytes: two sources with the
/// same key must serve the same bytes. [`Cached::new`] uses the source's
/// [`resource`](PositionalSource::resource) (its path or URL), so two opens of one file share
/// blocks, and a number of its own for a source without a name. [`Cached::with_key`] sets the
/// key: add a version (an ETag, a generation) where the bytes under a name can change.
///
/// A long sequential run gets the inner source's stream
/// ([`read_stream`](crate::source::PositionalSource::read_stream)), around the cache as a
/// scan's reads are: a [`PositionalFetch`](crate::PositionalFetch) opens one only once a run
/// has read 256 KiB, four blocks of the default 64 KiB, where its reads are taken for a scan's
/// anyway. So a scan through the cache makes the requests it makes without it (a few chunks,
/// then one stream), not ranged chunks whose size grows a round trip at a time. Not with a
/// disk tier, which a scan fills block by block.
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
/// first.read_bytes(&mut buf).await?; // blocks 0, 1 and 2: three misses, one request
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
    // The sequential runs it is read in: a read continuing one is a scan's ("Scans").
    // Shared with the streams it hands out (`read_stream`), whose pieces continue them.
    runs: Arc<SequentialRuns>,
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
            runs: Arc::default(),
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

    /// Whether a read of `len` bytes continuing a run that read `run` bytes (0: none) is a
    /// scan's: it continues a run and takes it past [`SCAN_BLOCKS`] blocks. A lookup whose
    /// reads cross a block or two (a window refilled once more) stays a lookup, admitted.
    fn is_scan(&self, run: u64, len: u64) -> bool {
        run > 0 && run.saturating_add(len) > self.block_size.saturating_mul(SCAN_BLOCKS)
    }

    /// Whether `at` is at or past the source's end, as far as is known.
    fn at_end(&self, at: u64) -> bool {
        self.length.get().is_some_and(|&length| at >= length)
    }

    /// A short block ends the source: its length is known from now on.
    fn saw_block(&self, index: u64, block: &Bytes) {
        if (block.len() as u64) < self.block_size {
            let _ = self
                .length
                .set(index * self.block_size + block.len() as u64);
        }
    }
}

impl<S: PositionalSource> PositionalSource for Cached<S> {
    /// The bytes at `[offset, offset + len)`, cut at the end of the source, from the blocks
    /// that cover them: cached ones from the cache, missing ones requested of the inner source
    /// (whole blocks, those of one read in one request; concurrent readers of a missing block
    /// wait for one request). A read that continues a sequential run is a scan's: what memory
    /// does not hold is read around the cache (see [Scans](Cached#scans)).
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
        if self.is_scan(self.runs.note(offset, end - offset), end - offset) {
            return self.read_around(offset, end).await;
        }
        let (first, last) = (offset / bs, (end - 1) / bs);
        let within = (offset - first * bs) as usize;
        if first == last {
            let block = self.block(first, Admit::Yes).await?;
            let stop = (end - first * bs).min(block.len() as u64) as usize;
            return Ok(block.slice(within.min(stop)..stop));
        }
        let blocks = self.blocks(first, last, Admit::Yes).await?;
        let parts = blocks
            .iter()
            .enumerate()
            .map(|(k, block)| {
                let from = if k == 0 { within } else { 0 };
                let block_end = (first + k as u64) * bs + block.len() as u64;
                let to = block.len() - (block_end.saturating_sub(end) as usize).min(block.len());
                block.slice(from.min(to)..to)
            })
            .collect();
        Ok(concat(parts))
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
    /// inner source: 0 when the first block is not cached, and when a scan would get only part
    /// of `buf` here (its `read_at` then serves the cached part and asks for the rest in one
    /// request, where a read here would cost a request for the rest and then another to go
    /// on reading ahead).
    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        let bs = self.block_size;
        let mut filled = 0;
        let mut hits = 0;
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
            hits += 1;
            let n = (block.len() - within).min(buf.len() - filled);
            buf[filled..filled + n].copy_from_slice(&block[within..within + n]);
            filled += n;
            if (block.len() as u64) < bs {
                break;
            }
        }
        if filled < buf.len()
            && !self.at_end(offset + filled as u64)
            && self.is_scan(self.runs.before(offset), buf.len() as u64)
        {
            return 0; // part of a scan's read: `read_at` serves it whole
        }
        self.cache
            .counters()
            .hits
            .fetch_add(hits, Ordering::Relaxed);
        metrics::cache_hits(Tier::Memory, hits);
        // A run of reads served here goes on in `read_at` where they stop: note it.
        self.runs.note(offset, filled as u64);
        filled
    }

    /// The inner source's stream from `offset` (around the cache, as a scan's reads: see
    /// [Scans](Cached#scans)), counted as one of the cache's `scan_reads` once polled; each
    /// piece it hands out continues the run, so ranged reads going on where it stops are
    /// still a scan's. `None` with a disk tier (a scan's blocks fill it one by one) and when
    /// the inner source has no stream.
    fn read_stream(&self, offset: u64) -> Option<BoxStream<'static, io::Result<Bytes>>> {
        if self.has_disk_tier() {
            return None;
        }
        let inner = self.inner.read_stream(offset)?;
        Some(Box::pin(ScanStream::new(
            inner,
            offset,
            Arc::clone(&self.runs),
            self.cache.clone(),
        )))
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
mod tests;
