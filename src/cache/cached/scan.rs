//! Reads that are part of a sequential scan: served from the blocks memory holds, the rest read
//! around the memory tier and not kept (see `Cached`'s "Scans").

use std::io;

use bytes::{Bytes, BytesMut};

use super::load::Admit;
use super::Cached;
use crate::cache::slot::{Block, Slot};
use crate::cache::stats::bump;
use crate::source::PositionalSource;
use crate::stats::metrics::{self, Tier};

impl<S: PositionalSource> Cached<S> {
    /// The bytes `[offset, end)` for a scan: the blocks memory holds at the start and at the
    /// end of the range from memory, and what lies between them in one request to the inner
    /// source (with a disk tier: block by block through it), nothing of it kept in memory. So
    /// a scan makes at most one request per read, as it would without the cache, and leaves
    /// the blocks lookups use in place. `end` is past `offset`, and within the source's
    /// length if that is known.
    pub(super) async fn read_around(&self, offset: u64, end: u64) -> io::Result<Bytes> {
        bump(&self.cache.counters().scan_reads);
        let bs = self.block_size;
        // The blocks memory holds from `offset` on.
        let mut head: Vec<Bytes> = Vec::new();
        let mut at = offset;
        while at < end {
            let index = at / bs;
            let Some(block) = self.held(index) else {
                break;
            };
            let within = (at - index * bs) as usize;
            let stop = ((end - index * bs) as usize).min(block.len());
            if within >= stop {
                return Ok(concat(head)); // the end of the source
            }
            head.push(block.slice(within..stop));
            at = index * bs + stop as u64;
            if (block.len() as u64) < bs {
                return Ok(concat(head)); // a short block: the end of the source
            }
        }
        if at >= end {
            return Ok(concat(head));
        }
        // The blocks memory holds before `end`, back to `at` (whole blocks after `at`'s).
        let mut tail: Vec<Bytes> = Vec::new();
        let mut until = end;
        while until > at {
            let index = (until - 1) / bs;
            let start = index * bs;
            if start <= at {
                break; // `at`'s block: memory does not hold it
            }
            let Some(block) = self.held(index) else {
                break;
            };
            let stop = ((until - start) as usize).min(block.len());
            tail.push(block.slice(..stop));
            until = start;
        }
        tail.reverse();
        let middle = if self.has_disk_tier() {
            let (first, last) = (at / bs, (until - 1) / bs);
            let blocks = self.blocks(first, last, Admit::No).await?;
            let within = (at - first * bs) as usize;
            let parts = blocks.iter().enumerate().map(|(k, block)| {
                let start = (first + k as u64) * bs;
                let from = if k == 0 { within } else { 0 };
                let to = ((until - start) as usize).min(block.len());
                block.slice(from.min(to)..to)
            });
            concat(parts.collect())
        } else {
            metrics::cache_misses(Tier::Memory, 1);
            self.inner.read_at(at, (until - at) as usize).await?
        };
        let short = (middle.len() as u64) < until - at;
        if short {
            // The source ends inside the middle: nothing after it is there.
            let _ = self.length.set(at + middle.len() as u64);
            tail.clear();
        }
        head.push(middle);
        head.extend(tail);
        Ok(concat(head))
    }

    /// Block `index` if memory holds it (counted as a hit), without waiting or loading.
    fn held(&self, index: u64) -> Option<Bytes> {
        let Some(Slot::Kept(Block { bytes, .. })) = self.cache.blocks().get(&self.block_key(index))
        else {
            return None;
        };
        bump(&self.cache.counters().hits);
        metrics::cache_hits(Tier::Memory, 1);
        self.saw_block(index, &bytes);
        Some(bytes)
    }
}

/// The parts one after the other: the one part itself (no copy), or one copy of them all.
pub(super) fn concat(mut parts: Vec<Bytes>) -> Bytes {
    parts.retain(|part| !part.is_empty());
    match parts.len() {
        0 => Bytes::new(),
        1 => parts.pop().unwrap_or_default(),
        _ => {
            let total = parts.iter().map(Bytes::len).sum();
            let mut out = BytesMut::with_capacity(total);
            for part in &parts {
                out.extend_from_slice(part);
            }
            out.freeze()
        }
    }
}
