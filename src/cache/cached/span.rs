//! A read over several blocks that memory lacks: the missing blocks in a row loaded by one
//! request, not one each (see `Cached::read_at`).

use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use quick_cache::sync::{GuardResult, PlaceholderGuard};

use super::Cached;
use crate::cache::key::BlockKey;
use crate::cache::load_error::{LoadError, SharedError};
use crate::cache::slot::{Block, BlockWeight, Evictions, Slot};
use crate::cache::stats::bump;
use crate::source::PositionalSource;
use crate::stats::metrics::{self, Tier};

/// The most blocks one [`span`](Cached::span) claims: a read over more (a lookup's first read
/// of several MiB) loads the rest block by block after them.
pub(super) const MAX_SPAN_BLOCKS: u64 = 64;

/// A claim on a missing block: this reader loads it, the others wait (single-flight).
type Claim<'a> =
    PlaceholderGuard<'a, BlockKey, Slot, BlockWeight, quick_cache::DefaultHashBuilder, Evictions>;

impl<S: PositionalSource> Cached<S> {
    /// Blocks `first..=last` (`first < last`, at most [`MAX_SPAN_BLOCKS`]) as far as they can
    /// be had without waiting for another reader: `got[k]` is block `first + k`, from memory,
    /// or loaded here, empty at or past the end of the source. The blocks memory lacks and no
    /// other reader loads are claimed (single-flight, as `block` does) and each run of them in
    /// a row loaded by one request, the runs at once: a cold read over `n` blocks costs one
    /// request, as it would without the cache, not `n`. `None` for a block another reader
    /// loads (the caller waits for it). Not for a cache with a disk tier, whose blocks are
    /// read one by one through it.
    ///
    /// # Errors
    ///
    /// The inner source's, with its kind; the readers that waited for the blocks of the
    /// request that failed get it too, and nothing of it is kept.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops its claims with its requests: a reader waiting for a
    /// claimed block then loads it.
    pub(super) async fn span(&self, first: u64, last: u64) -> io::Result<Vec<Option<Bytes>>> {
        debug_assert!(first < last && last - first < MAX_SPAN_BLOCKS && !self.has_disk_tier());
        let blocks = self.cache.blocks();
        let c = self.cache.counters();
        let mut got: Vec<Option<Bytes>> = vec![None; (last - first + 1) as usize];
        // The claimed blocks, in runs of blocks in a row: (first block of the run, claims).
        let mut runs: Vec<(u64, Vec<Claim<'_>>)> = Vec::new();
        for (k, slot) in got.iter_mut().enumerate() {
            let index = first + k as u64;
            // A zero timeout: never waits for a block another reader loads.
            match blocks.get_value_or_guard(&self.block_key(index), Some(Duration::ZERO)) {
                GuardResult::Value(Slot::Kept(Block { bytes, .. })) => {
                    bump(&c.hits);
                    metrics::cache_hits(Tier::Memory, 1);
                    self.saw_block(index, &bytes);
                    *slot = Some(bytes);
                }
                GuardResult::Guard(claim) => {
                    bump(&c.misses);
                    metrics::cache_misses(Tier::Memory, 1);
                    match runs.last_mut() {
                        Some((start, claims)) if *start + claims.len() as u64 == index => {
                            claims.push(claim);
                        }
                        _ => runs.push((index, vec![claim])),
                    }
                }
                // Another reader's load (or an outcome not kept): left to the caller.
                GuardResult::Value(Slot::Passed(_)) | GuardResult::Timeout => {}
            }
        }
        type RunFuture<'a> =
            Pin<Box<dyn Future<Output = io::Result<(u64, Vec<Bytes>)>> + Send + 'a>>;
        let mut loads: Vec<RunFuture<'_>> = runs
            .into_iter()
            .map(|(start, claims)| Box::pin(self.load_run(start, claims)) as RunFuture<'_>)
            .collect();
        poll_fn(|cx| {
            let mut i = 0;
            while i < loads.len() {
                match loads[i].as_mut().poll(cx) {
                    Poll::Pending => i += 1,
                    Poll::Ready(result) => {
                        drop(loads.swap_remove(i));
                        let (start, run) = result?;
                        for (j, block) in run.into_iter().enumerate() {
                            got[(start - first) as usize + j] = Some(block);
                        }
                    }
                }
            }
            match loads.is_empty() {
                true => Poll::Ready(Ok::<(), io::Error>(())),
                false => Poll::Pending,
            }
        })
        .await?;
        Ok(got)
    }

    /// Blocks `start..start + claims.len()`, claimed, loaded by one request and handed to the
    /// claims' waiters (kept, if the budget has room); each a copy of its own when the
    /// request brought several, so a kept block pins no other's memory after it is evicted.
    async fn load_run(&self, start: u64, claims: Vec<Claim<'_>>) -> io::Result<(u64, Vec<Bytes>)> {
        let bs = self.block_size;
        let len = claims.len() as u64 * bs;
        let bytes = match self.inner.read_at(start * bs, len as usize).await {
            Ok(bytes) => bytes,
            Err(e) => {
                let kind = e.kind();
                let shared = Arc::new(LoadError::Source(e));
                for claim in claims {
                    let _ = claim.insert(Slot::Passed(Arc::clone(&shared)));
                }
                // The source's own error, unless a waiter holds it too.
                return Err(match Arc::try_unwrap(shared) {
                    Ok(LoadError::Source(e)) => e,
                    Ok(other) => io::Error::new(kind, SharedError(Arc::new(other))),
                    Err(shared) => io::Error::new(kind, SharedError(shared)),
                });
            }
        };
        let several = claims.len() > 1;
        let mut run = Vec::with_capacity(claims.len());
        for (j, claim) in claims.into_iter().enumerate() {
            let at = (j as u64 * bs).min(bytes.len() as u64) as usize;
            let stop = (at + bs as usize).min(bytes.len());
            let block = match several {
                true => Bytes::copy_from_slice(&bytes[at..stop]),
                false => bytes.slice(at..stop),
            };
            let slot = if block.is_empty() {
                Slot::Passed(Arc::new(LoadError::PastEnd))
            } else {
                self.saw_block(start + j as u64, &block);
                match self.keep(block.clone()) {
                    Ok(kept) => Slot::Kept(kept),
                    Err(e) => Slot::Passed(Arc::new(e)),
                }
            };
            let _ = claim.insert(slot);
            run.push(block);
        }
        Ok((start, run))
    }
}
