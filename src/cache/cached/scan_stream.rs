//! [`ScanStream`]: the inner source's stream, served to a long sequential run (a scan) around
//! the cache (see `Cached`'s "Scans").

use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use futures_core::stream::{BoxStream, Stream};

use crate::cache::block_cache::BlockCache;
use crate::cache::sequential_runs::SequentialRuns;
use crate::cache::stats::bump;
use crate::stats::metrics::{self, Tier};

/// The inner source's stream from `at` on, with what the cache should know of it: once polled
/// (when its request starts) it counts as one of the cache's `scan_reads`, and each piece it
/// hands out continues the sequential run at `at`, so that ranged reads going on from where
/// its reader stopped (anywhere in the last piece) are still a scan's.
pub(super) struct ScanStream {
    inner: BoxStream<'static, io::Result<Bytes>>,
    // Where its next piece starts in the source.
    at: u64,
    runs: Arc<SequentialRuns>,
    cache: BlockCache,
    // Whether it was polled (and counted) yet: a stream dropped unpolled made no request.
    counted: bool,
}

impl ScanStream {
    /// Wraps `inner`, the inner source's stream from `at`.
    pub(super) fn new(
        inner: BoxStream<'static, io::Result<Bytes>>,
        at: u64,
        runs: Arc<SequentialRuns>,
        cache: BlockCache,
    ) -> Self {
        Self {
            inner,
            at,
            runs,
            cache,
            counted: false,
        }
    }
}

impl Stream for ScanStream {
    type Item = io::Result<Bytes>;

    /// The inner stream's next piece, noted as part of the run.
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if !this.counted {
            this.counted = true;
            bump(&this.cache.counters().scan_reads);
            metrics::cache_misses(Tier::Memory, 1);
        }
        let item = ready!(this.inner.as_mut().poll_next(cx));
        if let Some(Ok(piece)) = &item {
            this.runs.note_piece(this.at, piece.len() as u64);
            this.at = this.at.saturating_add(piece.len() as u64);
        }
        Poll::Ready(item)
    }
}

impl fmt::Debug for ScanStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (at, counted) = (self.at, self.counted);
        write!(f, "ScanStream {{ at: {at}, counted: {counted}, .. }}")
    }
}
