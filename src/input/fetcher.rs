//! The input's one way to its source: a fetch at an offset, counted.

use std::task::{ready, Context, Poll};

use tokio::io::ReadBuf;

use crate::error::Error;
use crate::fetch::Fetch;
use crate::stats::Stats;

/// A [fetcher](crate::fetch) with what the input keeps about its fetches: the counters, and
/// where the last fetch ended. Every byte an input reads from its source comes through
/// [`poll_fetch_at`](Self::poll_fetch_at).
///
/// `stats` holds the counters the input adds to as it serves its callers
/// (`bytes_from_window`, `bytes_direct`) and the one counted here (`bytes_from_source`);
/// `underlying_reads` and `underlying_seeks` are the fetcher's own, added by
/// [`stats`](Self::stats).
#[derive(Debug)]
pub(super) struct Fetcher<F> {
    fetch: F,
    stats: Stats,
    // Where the last fetch ended: a refill there continues a sequential read (after a read
    // straight into a caller's buffer, too), so it is not aligned to a block.
    fetched_to: u64,
}

impl<F: Fetch> Fetcher<F> {
    pub(super) fn new(fetch: F) -> Self {
        Self {
            fetch,
            stats: Stats::default(),
            fetched_to: 0,
        }
    }

    /// One fetch of the bytes at `at` into `buf`, counted, and where it ended kept: how many
    /// came. At or past a known end, none, and nothing is asked.
    #[inline]
    pub(super) fn poll_fetch_at(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<Result<usize, Error>> {
        if self.fetch.known_length().is_some_and(|length| at >= length) {
            return Poll::Ready(Ok(0));
        }
        let before = buf.filled().len();
        ready!(self.fetch.poll_fetch(cx, at, buf))?;
        let n = buf.filled().len() - before;
        self.stats.bytes_from_source += n as u64;
        self.fetched_to = at + n as u64;
        Poll::Ready(Ok(n))
    }

    /// The length, asked of the fetcher once, as an internal error.
    pub(super) fn poll_length(&mut self, cx: &mut Context<'_>) -> Poll<Result<u64, Error>> {
        self.fetch.poll_length(cx).map_err(Error::Source)
    }

    /// The counters, with the fetcher's reads and seeks.
    #[inline]
    pub(super) fn stats(&self) -> Stats {
        let mut stats = self.stats;
        stats.underlying_reads = self.fetch.reads();
        stats.underlying_seeks = self.fetch.seeks();
        stats
    }
}

impl<F> Fetcher<F> {
    /// Where the last fetch ended (0 before the first).
    #[inline]
    pub(super) fn fetched_to(&self) -> u64 {
        self.fetched_to
    }

    /// The counters the input adds to as it serves its callers.
    #[inline]
    pub(super) fn stats_mut(&mut self) -> &mut Stats {
        &mut self.stats
    }

    pub(super) fn get_ref(&self) -> &F {
        &self.fetch
    }

    pub(super) fn get_mut(&mut self) -> &mut F {
        &mut self.fetch
    }

    pub(super) fn into_inner(self) -> F {
        self.fetch
    }
}
