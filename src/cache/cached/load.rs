//! Blocks: from the memory tier, or loaded once however many readers want them (single-flight),
//! from the disk tier or the inner source; several at once for a read over many.

use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use bytes::Bytes;

use super::span::MAX_SPAN_BLOCKS;
use super::Cached;
#[cfg(feature = "disk-cache")]
use crate::cache::disk::{DiskKey, DiskTier};
#[cfg(feature = "disk-cache")]
use crate::cache::key::SourceKey;
use crate::cache::load_error::{LoadError, SharedError};
use crate::cache::slot::{Block, Slot};
use crate::cache::stats::bump;
use crate::source::PositionalSource;
use crate::stats::metrics::{self, Tier};

/// The most block requests one `read_at` has in flight at once.
const MAX_BLOCKS_IN_FLIGHT: usize = 16;

/// Whether a block missing from memory is kept there once loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Admit {
    /// Kept (a lookup's block), and loaded once for all the readers that want it at once.
    Yes,
    /// Handed to this reader only (a scan's block: see `Cached`'s "Scans").
    No,
}

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

impl<S: PositionalSource> Cached<S> {
    /// Block `index`: from the cache, or loaded (once, however many readers want it at once;
    /// with [`Admit::No`], by this reader alone, and not kept in memory). Empty at or past the
    /// end of the source.
    pub(super) async fn block(&self, index: u64, admit: Admit) -> io::Result<Bytes> {
        let key = self.block_key(index);
        let blocks = self.cache.blocks();
        let c = self.cache.counters();
        let slot = if let Some(slot) = blocks.get(&key) {
            bump(&c.hits);
            metrics::cache_hits(Tier::Memory, 1);
            slot
        } else if admit == Admit::No {
            metrics::cache_misses(Tier::Memory, 1);
            match self.fetch_block(index).await {
                Ok(block) => Slot::Kept(Block {
                    bytes: block,
                    _held: None,
                }),
                Err(e) => Slot::Passed(Arc::new(e)),
            }
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

    /// Block `index` as the memory tier keeps it: [`fetch_block`](Self::fetch_block)'s, with
    /// its share of the budget, if the cache has one. The cache's loader.
    async fn load(&self, index: u64) -> Result<Block, LoadError> {
        let block = self.fetch_block(index).await?;
        self.keep(block)
    }

    /// Block `index` from the disk tier if it holds it (checked), else from the inner source
    /// (and then written to the disk tier).
    async fn fetch_block(&self, index: u64) -> Result<Bytes, LoadError> {
        #[cfg(feature = "disk-cache")]
        let disk_key = match self.disk_key(index).await? {
            DiskLookup::None => None,
            DiskLookup::PastEnd => return Err(LoadError::PastEnd),
            DiskLookup::Key(disk, key, expected) => {
                if let Some(block) = disk.get(&key).await {
                    if block.len() == expected {
                        metrics::cache_hits(Tier::Disk, 1);
                        return Ok(block);
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
        Ok(block)
    }

    /// `block` as the memory tier keeps it: with its share of the budget, if the cache has one.
    pub(super) fn keep(&self, block: Bytes) -> Result<Block, LoadError> {
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

    /// Whether missing blocks have a disk tier to come from and go to (then a scan reads them
    /// block by block through it: see `Cached`'s "Scans").
    pub(super) fn has_disk_tier(&self) -> bool {
        #[cfg(feature = "disk-cache")]
        if let (Some(_), SourceKey::Named(_)) = (self.cache.disk(), &self.key) {
            return true;
        }
        false
    }

    /// Blocks `first..=last` in order, up to the first short one (the end of the source:
    /// none after it is requested or returned). Admitted, the first [`MAX_SPAN_BLOCKS`] that
    /// memory lacks and no other reader loads are loaded a run in a row per request
    /// ([`span`](Self::span)); the others (and all of them, not admitted or with a disk tier)
    /// one by one, at most [`MAX_BLOCKS_IN_FLIGHT`] at once.
    pub(super) async fn blocks(
        &self,
        first: u64,
        last: u64,
        admit: Admit,
    ) -> io::Result<Vec<Bytes>> {
        type BlockFuture<'a> = Pin<Box<dyn Future<Output = io::Result<Bytes>> + Send + 'a>>;
        // `got[k]` is block `first + k` once loaded; blocks from `end` on are not wanted.
        // (The range may reach far past the end of a source whose length is not known: `got`
        // grows as blocks are asked for.)
        let mut got: Vec<Option<Bytes>> =
            if admit == Admit::Yes && first < last && !self.has_disk_tier() {
                let span_last = last.min(first + MAX_SPAN_BLOCKS - 1);
                self.span(first, span_last).await?
            } else {
                Vec::new()
            };
        let mut end = last - first + 1;
        let short = |b: &Option<Bytes>| {
            b.as_ref()
                .is_some_and(|b| (b.len() as u64) < self.block_size)
        };
        if let Some(k) = got.iter().position(short) {
            end = k as u64 + 1;
        }
        // The next block to load (or to skip: `span` had it).
        let mut next = 0;
        let mut running: Vec<(u64, BlockFuture<'_>)> = Vec::new();
        poll_fn(|cx| loop {
            while running.len() < MAX_BLOCKS_IN_FLIGHT && next < end {
                let k = next;
                next += 1;
                if k as usize == got.len() {
                    got.push(None);
                }
                if got[k as usize].is_none() {
                    running.push((k, Box::pin(self.block(first + k, admit))));
                }
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
            if running.is_empty() && next >= end {
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
