//! Prefetched ranges: requests started on a hint ([`Seam::prefetch`]) before anything reads
//! them, kept apart from the read-ahead so that reads elsewhere leave them be, and serving the
//! fetches that land in them.
//!
//! [`Seam::prefetch`]: crate::input::fetch::seam::Seam::prefetch

use std::task::{ready, Context, Poll, Waker};

use tokio::io::ReadBuf;

use super::fetcher::PositionalFetch;
use super::prefetches::{Prefetch, State, PREFETCH_MAX_BYTES, PREFETCH_MAX_RANGES};
use crate::source::PositionalSource;

/// Prefetching.
impl<S: PositionalSource> PositionalFetch<S> {
    /// Starts a request for the view's `[at, at + len)` without waiting, cut at the view's end
    /// (if known) and at [`PREFETCH_MAX_BYTES`]. Ignored when it is empty, held already, past
    /// the bounds, or when the budget has no room for it.
    pub(super) fn start_prefetch(&mut self, at: u64, len: u64) {
        let mut len = len.min(PREFETCH_MAX_BYTES);
        if let Some(length) = self.length() {
            len = len.min(length.saturating_sub(at));
        }
        let Some(end) = at.checked_add(len).filter(|_| len > 0) else {
            return;
        };
        self.prefetches.settle();
        let ranges = &self.prefetches.ranges;
        if ranges.iter().any(|p| p.at <= at && end <= p.at + p.len) {
            return; // held already
        }
        if ranges.len() >= PREFETCH_MAX_RANGES || self.prefetches.bytes() + len > PREFETCH_MAX_BYTES
        {
            tracing::debug!(
                at,
                len,
                "prefetch ignored: the fetcher holds its most already"
            );
            return;
        }
        let budget = match &self.budget {
            Some(budget) => match budget.try_reserve(len as usize) {
                Some(reservation) => Some(reservation),
                None => {
                    tracing::debug!(at, len, "prefetch ignored: no room in the budget");
                    return;
                }
            },
            None => None,
        };
        // Polled once here (a source that answers at once is done), else spawned: nobody waits
        // on it yet, so no waker.
        let request = self.request(&mut Context::from_waker(Waker::noop()), at, len as usize);
        self.prefetches.ranges.push(Prefetch {
            at,
            len,
            state: State::Asked(request),
            _budget: budget,
        });
        self.prefetches.debug_assert_invariants();
    }

    /// Serves a fetch at `at` from a prefetched range that holds `at`, waiting for its request
    /// if need be: whether it did. A range is dropped once a fetch reads to its end, and when
    /// its request failed (the fetch then goes on as if there were none, and asks again).
    pub(super) fn poll_prefetched(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<bool> {
        let ranges = &mut self.prefetches.ranges;
        let Some(k) = ranges.iter().position(|p| p.at <= at && at < p.at + p.len) else {
            return Poll::Ready(false);
        };
        let range = &mut ranges[k];
        if let State::Asked(request) = &mut range.state {
            match ready!(request.poll(cx)) {
                Ok(bytes) => range.state = State::Got(bytes),
                Err(e) => {
                    tracing::debug!(at = range.at, len = range.len, error = %e, "a prefetch failed: read again");
                    ranges.remove(k);
                    return Poll::Ready(false);
                }
            }
        }
        let State::Got(bytes) = &range.state else {
            return Poll::Ready(false);
        };
        let skip = (at - range.at) as usize;
        if skip >= bytes.len() {
            // The source ended before the range did: the fetch finds out as usual.
            ranges.remove(k);
            return Poll::Ready(false);
        }
        let n = (bytes.len() - skip).min(buf.remaining());
        buf.put_slice(&bytes[skip..skip + n]);
        if skip + n == bytes.len() {
            ranges.remove(k);
        }
        self.next_sequential = Some(at + n as u64);
        self.prefetches.debug_assert_invariants();
        Poll::Ready(true)
    }
}
