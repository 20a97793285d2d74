//! The input's one way to its source: a fetch at an offset, counted.

use std::task::{ready, Context, Poll};

use tokio::io::ReadBuf;

use crate::error::Error;
use crate::input::fetch::Fetch;
use crate::stats::stats_member::StatsMember;
use crate::stats::Stats;
use crate::stats::StatsGroup;

/// A [fetcher](crate::fetch) with what the input keeps about its fetches: the counters, and
/// where the last fetch ended. Every byte an input reads from its source comes through
/// [`poll_fetch_at`](Self::poll_fetch_at).
///
/// [`stats`](Self::stats) holds the counters of the fetches: `bytes_from_source`, counted
/// here, and the fetcher's own `underlying_reads` and `underlying_seeks`; they are published to
/// the input's [`StatsGroup`], if any, as each fetch completes. (The bytes handed to callers
/// are the input's [`Cursor`](crate::input::engine::cursor::Cursor)'s.)
#[derive(Debug)]
pub(crate) struct Fetcher<F> {
    fetch: F,
    bytes_from_source: u64,
    // The input's share in its stats group (boxed: most inputs have none).
    member: Option<Box<StatsMember>>,
    // Where the last fetch ended: a refill there continues a sequential read (after a read
    // straight into a caller's buffer, too), so it is not aligned to a block.
    fetched_to: u64,
}

impl<F: Fetch> Fetcher<F> {
    pub(crate) fn new(fetch: F) -> Self {
        Self {
            fetch,
            bytes_from_source: 0,
            member: None,
            fetched_to: 0,
        }
    }

    /// One fetch of the bytes at `at` into `buf`, counted, and where it ended kept: how many
    /// came. At or past a known end, none, and nothing is asked.
    #[inline]
    pub(crate) fn poll_fetch_at(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<Result<usize, Error>> {
        if self.fetch.known_length().is_some_and(|length| at >= length) {
            return Poll::Ready(Ok(0));
        }
        let before = buf.filled().len();
        if let Err(e) = ready!(self.fetch.poll_fetch(cx, at, buf)) {
            self.publish(); // its reads and seeks
            return Poll::Ready(Err(e.into()));
        }
        let n = buf.filled().len() - before;
        self.bytes_from_source += n as u64;
        self.fetched_to = at + n as u64;
        self.publish();
        Poll::Ready(Ok(n))
    }

    /// The length, asked of the fetcher once, as an internal error.
    pub(crate) fn poll_length(&mut self, cx: &mut Context<'_>) -> Poll<Result<u64, Error>> {
        let length = ready!(self.fetch.poll_length(cx));
        self.publish();
        Poll::Ready(length.map_err(Error::Source))
    }

    /// The counters of the fetches (the others 0).
    #[inline]
    pub(crate) fn stats(&self) -> Stats {
        Stats {
            bytes_from_source: self.bytes_from_source,
            underlying_reads: self.fetch.reads(),
            underlying_seeks: self.fetch.seeks(),
            ..Stats::default()
        }
    }

    /// Joins `group` (see [`StatsMember::join`]).
    pub(crate) fn join(&mut self, group: &StatsGroup) {
        let now = self.stats();
        StatsMember::join(&mut self.member, group, now);
    }

    /// Adds the counters since the last publish to the group, if any.
    #[inline]
    fn publish(&mut self) {
        if self.member.is_some() {
            let now = self.stats();
            if let Some(member) = self.member.as_deref_mut() {
                member.publish(now);
            }
        }
    }

    /// The fetcher, its counters published.
    pub(crate) fn into_inner(mut self) -> F {
        self.publish();
        self.fetch
    }
}

impl<F> Fetcher<F> {
    /// Where the last fetch ended (0 before the first).
    #[inline]
    pub(crate) fn fetched_to(&self) -> u64 {
        self.fetched_to
    }

    pub(crate) fn get_ref(&self) -> &F {
        &self.fetch
    }

    pub(crate) fn get_mut(&mut self) -> &mut F {
        &mut self.fetch
    }
}
