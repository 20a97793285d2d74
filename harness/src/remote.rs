//! [`Remote`]: how a source's positional form is read as a remote store's: hedged reads
//! (`--hedge`) and one request limiter (`--max-requests`), with counters for the report.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_buffered_input::layer::{Hedged, RequestLimiter};
use async_buffered_input::source::PositionalSource;
use bytes::Bytes;

use crate::boxed::BoxPositionalSource;

/// Hedged reads and a request limiter for a `Source`'s positional form (the
/// read-ahead and cached readers), as `Hedged<Limited<S>>`.
///
/// Every positional source a cell opens is wrapped; the counts of all of them add up in
/// [`counts`](Self::counts), so a cell's share is the difference of two readings.
#[derive(Clone, Debug, Default)]
pub(crate) struct Remote {
    hedge: bool,
    limiter: Option<RequestLimiter>,
    totals: Arc<Totals>,
}

#[derive(Debug, Default)]
struct Totals {
    reads: AtomicU64,
    hedges_fired: AtomicU64,
    hedges_won: AtomicU64,
    hedges_denied: AtomicU64,
}

/// What the positional sources of a [`Remote`] sent to the store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) struct RemoteCounts {
    /// Reads asked of the hedged source (each one request, plus its hedge if it had one).
    pub(crate) reads: u64,
    /// Hedges sent.
    pub(crate) hedges_fired: u64,
    /// Hedges that answered first.
    pub(crate) hedges_won: u64,
    /// Reads slow enough to hedge that the budget left unhedged.
    pub(crate) hedges_denied: u64,
    /// Reads that waited for the request limiter and were answered by another waiting read's
    /// request (`RequestLimiter::coalesced`), with `--max-requests`.
    pub(crate) coalesced: u64,
}

impl RemoteCounts {
    /// Requests that reached the store: reads and their hedges, less the reads another
    /// read's request answered.
    pub(crate) fn store_requests(&self) -> u64 {
        (self.reads + self.hedges_fired).saturating_sub(self.coalesced)
    }

    /// The counts since `earlier`.
    pub(crate) fn since(self, earlier: RemoteCounts) -> RemoteCounts {
        RemoteCounts {
            reads: self.reads.saturating_sub(earlier.reads),
            hedges_fired: self.hedges_fired.saturating_sub(earlier.hedges_fired),
            hedges_won: self.hedges_won.saturating_sub(earlier.hedges_won),
            hedges_denied: self.hedges_denied.saturating_sub(earlier.hedges_denied),
            coalesced: self.coalesced.saturating_sub(earlier.coalesced),
        }
    }
}

impl Remote {
    /// Hedged reads with the default policy (p95 delay, at least 2 ms, at most 5%
    /// hedges) if `hedge`; at most `max_requests` requests in flight over all the cells' sources
    /// (`None`: no limit).
    ///
    /// # Panics
    ///
    /// If `max_requests` is `Some(0)`.
    pub(crate) fn new(hedge: bool, max_requests: Option<usize>) -> Self {
        Self {
            hedge,
            limiter: max_requests.map(RequestLimiter::new),
            totals: Arc::default(),
        }
    }

    /// The counts of every source wrapped so far and since dropped (the limiter's, of every
    /// source on it until now).
    pub(crate) fn counts(&self) -> RemoteCounts {
        RemoteCounts {
            reads: self.totals.reads.load(Ordering::Relaxed),
            hedges_fired: self.totals.hedges_fired.load(Ordering::Relaxed),
            hedges_won: self.totals.hedges_won.load(Ordering::Relaxed),
            hedges_denied: self.totals.hedges_denied.load(Ordering::Relaxed),
            coalesced: self
                .limiter
                .as_ref()
                .map_or(0, |limiter| limiter.coalesced()),
        }
    }

    /// `source` hedged and limited as this says.
    pub(crate) fn wrap(&self, source: BoxPositionalSource) -> BoxPositionalSource {
        let limited = match &self.limiter {
            Some(limiter) => BoxPositionalSource::new(limiter.wrap(source)),
            None => source,
        };
        // A budget of 0 turns hedging off.
        let budget = if self.hedge { 0.05 } else { 0.0 };
        BoxPositionalSource::new(Reporting {
            inner: Hedged::new(limited).with_budget(budget),
            totals: Arc::clone(&self.totals),
        })
    }
}

/// A hedged source that adds its counts to the totals when dropped.
struct Reporting {
    inner: Hedged<BoxPositionalSource>,
    totals: Arc<Totals>,
}

impl Drop for Reporting {
    fn drop(&mut self) {
        let (hedged, t) = (&self.inner, &self.totals);
        t.reads.fetch_add(hedged.requests(), Ordering::Relaxed);
        t.hedges_fired
            .fetch_add(hedged.hedges_fired(), Ordering::Relaxed);
        t.hedges_won
            .fetch_add(hedged.hedges_won(), Ordering::Relaxed);
        t.hedges_denied
            .fetch_add(hedged.hedges_denied(), Ordering::Relaxed);
    }
}

impl PositionalSource for Reporting {
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        self.inner.read_at(offset, len).await
    }

    async fn len(&self) -> io::Result<u64> {
        self.inner.len().await
    }

    fn read_stream(
        &self,
        offset: u64,
    ) -> Option<futures_core::stream::BoxStream<'static, io::Result<Bytes>>> {
        self.inner.read_stream(offset)
    }

    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        self.inner.try_read_at(offset, buf)
    }

    fn resource(&self) -> Option<String> {
        self.inner.resource()
    }

    fn description(&self) -> String {
        self.inner.description()
    }

    fn release_buffers(&self) {
        self.inner.release_buffers();
    }
}
