//! A positional source only part of which is at hand, like a file partly in the page cache.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use async_buffered_input::source::{MemorySource, PositionalSource};

/// A [`MemorySource`] of which only some 64-byte
/// blocks are "at hand" to `try_read_at`, like a file partly in the page cache. Which blocks are
/// is a hash of the block number and `seed` (about two thirds of them). `try_read_at` copies from
/// `offset` to the end of the run of at-hand blocks (so its answers are often short) and returns
/// 0 in a gap and at the end; `read_at` serves every byte. Counts both.
#[derive(Debug)]
pub struct PartlyAtHand {
    inner: MemorySource,
    seed: u64,
    /// `try_read_at` calls.
    pub immediate_calls: AtomicU64,
    /// Bytes `try_read_at` copied.
    pub immediate_bytes: AtomicU64,
    /// `read_at` requests.
    pub requests: AtomicU64,
}

impl PartlyAtHand {
    /// The size of the blocks that are at hand or not.
    pub const BLOCK: u64 = 64;

    /// A source over `data` whose at-hand blocks are chosen by `seed`.
    pub fn new(data: Vec<u8>, seed: u64) -> Self {
        Self {
            inner: MemorySource::new(data),
            seed,
            immediate_calls: AtomicU64::new(0),
            immediate_bytes: AtomicU64::new(0),
            requests: AtomicU64::new(0),
        }
    }

    /// Whether the block holding `offset` is at hand to `try_read_at`.
    pub fn at_hand(&self, offset: u64) -> bool {
        let block = offset / Self::BLOCK;
        let mut x = (block ^ self.seed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        x ^= x >> 29;
        x % 3 != 0
    }
}

impl PositionalSource for PartlyAtHand {
    fn read_at(
        &self,
        offset: u64,
        len: usize,
    ) -> impl std::future::Future<Output = io::Result<bytes::Bytes>> + Send {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.inner.read_at(offset, len)
    }

    fn len(&self) -> impl std::future::Future<Output = io::Result<u64>> + Send {
        self.inner.len()
    }

    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        self.immediate_calls.fetch_add(1, Ordering::Relaxed);
        let data = self.inner.bytes();
        let mut end = offset;
        while end < offset.saturating_add(buf.len() as u64)
            && end < data.len() as u64
            && self.at_hand(end)
        {
            end = (end / Self::BLOCK + 1) * Self::BLOCK;
        }
        let end = end
            .min(offset.saturating_add(buf.len() as u64))
            .min(data.len() as u64);
        let n = end.saturating_sub(offset) as usize;
        if n == 0 {
            return 0; // a gap, or at or past the end
        }
        buf[..n].copy_from_slice(&data[offset as usize..end as usize]);
        self.immediate_bytes.fetch_add(n as u64, Ordering::Relaxed);
        n
    }
}
