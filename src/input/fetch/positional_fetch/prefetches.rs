//! The prefetched ranges a fetcher holds (see `prefetch` for how they are asked and served).

use std::task::{Context, Poll, Waker};

use bytes::Bytes;

use super::request::Request;
use crate::memory_budget::Reservation;

/// The most bytes of prefetched ranges a fetcher holds, received or in flight: a longer hint is
/// cut to this, and one that would take the total past it is ignored.
pub(crate) const PREFETCH_MAX_BYTES: u64 = 8 << 20;

/// The most prefetched ranges a fetcher holds at once; further hints are ignored.
pub(crate) const PREFETCH_MAX_RANGES: usize = 16;

/// The prefetched ranges of a fetcher, in the order they were hinted. Invariants
/// (`debug_assert_invariants`): at most [`PREFETCH_MAX_RANGES`] of them, of at most
/// [`PREFETCH_MAX_BYTES`] in all, none empty; each holds at least its length of the budget if
/// the fetcher has one (the length it was asked for; its answer can be shorter).
#[derive(Default)]
pub(super) struct Prefetches {
    pub(super) ranges: Vec<Prefetch>,
}

/// One prefetched range of the view, `[at, at + len)`: asked, or answered.
pub(super) struct Prefetch {
    pub(super) at: u64,
    pub(super) len: u64,
    pub(super) state: State,
    // Its bytes' share of the fetcher's budget, given back when the range is dropped.
    pub(super) _budget: Option<Reservation>,
}

pub(super) enum State {
    Asked(Request<Bytes>),
    Got(Bytes),
}

impl Prefetches {
    /// Drops every range (aborting those in flight) and gives back their budget.
    pub(super) fn clear(&mut self) {
        self.ranges.clear();
    }

    /// Takes the answers that came back: a range the source ended in is cut to what it got
    /// (and forgotten if it got nothing), one whose request failed is forgotten (its range is
    /// asked again, by a read or a hint). Without waiting.
    pub(super) fn settle(&mut self) {
        self.ranges.retain_mut(|p| {
            if let State::Asked(request) = &mut p.state {
                if request.answer().is_none() {
                    return true; // in flight
                }
                match request.poll(&mut Context::from_waker(Waker::noop())) {
                    Poll::Ready(Ok(bytes)) => {
                        p.len = p.len.min(bytes.len() as u64);
                        p.state = State::Got(bytes);
                    }
                    Poll::Ready(Err(_)) => return false,
                    Poll::Pending => return true,
                }
            }
            p.len > 0
        });
    }

    pub(super) fn bytes(&self) -> u64 {
        self.ranges.iter().map(|p| p.len).sum()
    }

    pub(super) fn debug_assert_invariants(&self) {
        debug_assert!(self.ranges.len() <= PREFETCH_MAX_RANGES);
        debug_assert!(self.bytes() <= PREFETCH_MAX_BYTES);
        debug_assert!(self.ranges.iter().all(|p| p.len > 0));
    }
}
