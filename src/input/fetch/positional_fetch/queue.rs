//! The chunks: bytes received and not handed out yet, the requests in flight after them (in
//! offset order, contiguous), and the read-ahead that keeps them coming, with its shape.

use std::sync::Arc;
use std::task::Context;
use std::time::Duration;

use bytes::{Buf, Bytes};

use super::fetcher::PositionalFetch;
use super::request::Request;
use crate::input::fetch::ReadAhead;
use crate::memory_budget::Reservation;
use crate::source::PositionalSource;

/// Up to how much of the fetch being served a read-ahead request asks for when its chunks are
/// smaller: a request for fewer bytes than a page is not worth its round trip (nor a chance
/// to fail) when the read wants more. Chunks of this size or more are left as they are, so
/// long reads stay pipelined in chunks.
const COVERED: usize = 4 << 10;

/// Held bytes, requests in flight and the read-ahead.
impl<S: PositionalSource> PositionalFetch<S> {
    /// Drops every chunk and request, and the spare chunk buffer.
    pub(super) fn release_held(&mut self) {
        self.discard_requests();
        self.drop_spare();
    }

    /// Drops the received bytes not handed out yet, and gives back their budget.
    pub(super) fn drop_ready(&mut self) {
        self.ready = Bytes::new();
        self.ready_budget = None;
        self.ready_to_stream = false;
    }

    /// The read-ahead's initial shape: for a new sequential run.
    pub(super) fn reset_shape(&mut self, at: u64) {
        self.shape = self.read_ahead.map_or((0, 0), |ra| ra.initial_shape());
        self.waits = (0, 0);
        self.pace.new_run(at);
    }

    /// A read-ahead chunk came back `took` after it was asked: if the consumer waited for it
    /// (`waited`; otherwise it came back sometime before, which says little), it counts as
    /// slow or fast, and an adaptive read-ahead grows its shape (`ReadAhead::grown`: the growth
    /// rule) and requests what that allows now.
    pub(super) fn chunk_came(&mut self, cx: &mut Context<'_>, took: Duration, waited: bool) {
        let Some(read_ahead) = self.read_ahead else {
            return;
        };
        if !waited {
            return;
        }
        let (slow, fast) = &mut self.waits;
        if took > ReadAhead::SLOW_REQUEST {
            *slow = slow.saturating_add(1);
        } else {
            *fast = fast.saturating_add(1);
        }
        let slow = *slow >= ReadAhead::SLOW_WAITS && *slow > *fast;
        let before = self.shape;
        self.shape = read_ahead.grown(before, slow);
        if self.shape != before {
            tracing::trace!(
                chunk = self.shape.0,
                depth = self.shape.1,
                slow,
                "read-ahead grows"
            );
            self.top_up(cx);
        }
    }

    /// The held bytes from `at` on, if `ready` holds any there.
    pub(super) fn ready_from(&self, at: u64) -> Option<&[u8]> {
        let skip = at.checked_sub(self.ready_at)?;
        if skip < self.ready.len() as u64 {
            Some(&self.ready[skip as usize..])
        } else {
            None
        }
    }

    /// Drops the held bytes up to `at + n` (`at` is inside them).
    pub(super) fn consume_ready(&mut self, at: u64, n: usize) {
        let used = (at - self.ready_at) as usize + n;
        if used >= self.ready.len() {
            self.drop_ready(); // release the chunk
        } else {
            self.ready.advance(used);
        }
        self.ready_at = at + n as u64;
    }

    pub(super) fn discard_requests(&mut self) {
        self.end_stream();
        self.requests.clear(); // aborts spawned requests, gives back their budget
        self.ahead_at = None;
        self.drop_ready();
    }

    /// Keeps only the requests that serve `at` and what follows it; if none does, discards all.
    ///
    /// Reading ahead, a gap of at most a chunk (or [`COVERED`] bytes) before the first
    /// request (left by a request that failed, or a fetch a little before the chunks) is
    /// requested on its own instead, so the requests after it are kept: a retry asks only for
    /// what is missing.
    pub(super) fn retarget(&mut self, cx: &mut Context<'_>, at: u64) {
        self.drop_ready();
        while self.requests.front().is_some_and(|r| r.end() <= at) {
            self.requests.pop_front();
        }
        if let Some(front) = self.requests.front() {
            let gap = front.at.saturating_sub(at);
            // A request covers a chunk, or what the fetch lacks (`top_up`): so may a gap.
            let lacks = self.want_end.saturating_sub(at).min(COVERED as u64);
            let largest = (self.shape.0 as u64).max(lacks);
            // Not before the way to a stream asked at once: it must be the only chunk.
            if gap > 0
                && gap <= largest
                && !front.to_stream
                && self.ahead_at.is_some()
                && self.requests.len() < self.shape.1
            {
                // Its bytes are held ahead of need like a chunk's: reserved the same way (no
                // budget for them: the requests after the gap are dropped below).
                let reserve = Self::read_ahead_bytes(gap as usize, self.shape.0);
                let budget = match &self.budget {
                    Some(budget) => budget.try_reserve(reserve).map(Some),
                    None => Some(None),
                };
                if let Some(budget) = budget {
                    let mut request = self.request(cx, at, gap as usize);
                    request.budget = budget;
                    self.requests.push_front(request);
                }
            }
        }
        if self.requests.front().is_some_and(|r| r.at > at) {
            self.requests.clear();
        }
        if self.requests.is_empty() {
            self.ahead_at = None;
        }
    }

    /// Requests read-ahead chunks until `depth` are requested or held, or the view's end.
    ///
    /// A request that starts before the end of the fetch being served (`want_end`) asks for
    /// everything up to that end, at most [`COVERED`] bytes, if that is more than a chunk:
    /// chunks of a few bytes never split a read into many requests, each of which could fail.
    /// It reserves a chunk of the budget all the same (`read_ahead_bytes`).
    ///
    /// Before a stream (`streams_from`), a chunk asked while nothing is held or in flight asks
    /// for the whole way to it in one request if that is within the read-ahead's memory bound,
    /// and reserves all of it; nothing more is asked until it is handed out (`ready_to_stream`).
    /// Without the budget for it, a chunk as usual.
    pub(super) fn top_up(&mut self, cx: &mut Context<'_>) {
        let (Some(_), Some(mut next)) = (self.read_ahead, self.ahead_at) else {
            return;
        };
        if self.streaming_next() {
            return; // the chunks in flight drain, then a stream serves the run (`stream`)
        }
        if self.ready_to_stream {
            return; // the way to the stream is held: it is handed out first
        }
        if self.pace.ranges_at_full_shape() {
            // Where a stream would serve the run, ranges do, at the shape that was measured
            // against the stream (or is being measured): what more connections get.
            // A chunk less beside a stream on standby (it holds a chunk of the budget).
            let (chunk, depth) = self.read_ahead.map_or(self.shape, |ra| ra.full_shape());
            self.shape = (chunk, depth - usize::from(self.stream.is_some()));
        }
        let (chunk, depth) = self.shape;
        let held = usize::from(!self.ready.is_empty());
        let streams_from = self.streams_from(next);
        while self.requests.len() + held < depth {
            let lacks = self.want_end.saturating_sub(next).min(COVERED as u64) as usize;
            let mut len = chunk.max(lacks);
            // Whether this request asks the whole way to the stream at once (past a chunk).
            let mut head = false;
            if let Some(from) = streams_from {
                let outstanding = held > 0 || !self.requests.is_empty();
                if next >= from && outstanding {
                    break; // the stream opens here once these are handed out
                }
                if next < from {
                    // A chunk asked while nothing is held asks the whole way if the memory bound
                    // allows it: a ranged request may cost the server far more than its
                    // bytes, and a second round would wait on the first.
                    let to_stream = usize::try_from(from - next).unwrap_or(usize::MAX);
                    let bound = self.read_ahead.map_or(0, |ra| ra.memory_bound());
                    head = !outstanding && to_stream > len && to_stream <= bound;
                    len = if head { to_stream } else { len.min(to_stream) };
                }
            }
            if let Some(length) = self.length() {
                let left = length.saturating_sub(next);
                if left == 0 {
                    break;
                }
                len = len.min(usize::try_from(left).unwrap_or(usize::MAX));
            }
            head &= len > chunk.max(lacks); // not if the view ends before a chunk's end
            if next.checked_add(len as u64).is_none() {
                break;
            }
            let budget = match &self.budget {
                Some(budget) => {
                    // The way to the stream is all read ahead of need: all of it is reserved,
                    // or without the budget for it, a chunk of it is asked as usual.
                    let mut reservation = None;
                    if head {
                        reservation = budget.try_reserve(len);
                        if reservation.is_none() {
                            head = false;
                            len = len.min(chunk.max(lacks));
                        }
                    }
                    match reservation
                        .or_else(|| budget.try_reserve(Self::read_ahead_bytes(len, chunk)))
                    {
                        Some(reservation) => Some(reservation),
                        None => break, // no budget for more now
                    }
                }
                None => None,
            };
            let end = next + len as u64;
            let mut request = self.request(cx, next, len);
            request.budget = budget;
            request.to_stream = head;
            tracing::trace!(at = next, len, "read-ahead request");
            self.requests.push_back(request);
            next = end;
        }
        self.ahead_at = Some(next);
    }

    /// Where the run will stream (see `Pace::streams_from`), if the source has a stream, the
    /// next chunk being asked at `next`: no chunk is asked past it (unless none is held or in
    /// flight, which the consumer is then past), so the stream opens there, as soon as the
    /// chunks before it are handed out. A ranged request may cost a server far more than its
    /// bytes (rclone's WebDAV reads 16 MiB ahead for each, and a full read after one is
    /// slower), and chunks asked past that point would only delay the stream.
    fn streams_from(&mut self, next: u64) -> Option<u64> {
        let at = self.next_sequential.unwrap_or(next);
        let from = self.pace.streams_from(at)?;
        self.source_streams().then_some(from)
    }

    /// What a read-ahead request for `len` bytes, chunks being `chunk` bytes, takes of the
    /// budget: one chunk at most. A request longer than a chunk (what the fetch being served
    /// lacks, up to [`COVERED`] bytes) asks, past its chunk, for bytes that read wants: those
    /// are the read's, as a request without read-ahead is, and outside the budget. So a
    /// fetcher never reserves more than `chunk * depth` (`debug_assert_invariants`), except
    /// for the way to a stream asked at once (`top_up`: alone, within the memory bound).
    fn read_ahead_bytes(len: usize, chunk: usize) -> usize {
        len.min(chunk)
    }

    /// The budget this fetcher holds: its chunks received or in flight, and the buffer of
    /// bytes read at hand.
    fn reserved(&self) -> usize {
        let requests = self.requests.iter().filter_map(|r| r.budget.as_ref());
        let chunks: usize = [&self.ready_budget, &self.spare_budget]
            .into_iter()
            .flatten()
            .chain(requests)
            .map(Reservation::bytes)
            .sum();
        chunks + self.stream_reserved()
    }

    /// How many requests are in flight or completed and not yet consumed.
    #[cfg(test)]
    pub(crate) fn requests_in_flight(&self) -> usize {
        self.requests.len()
    }

    pub(super) fn debug_assert_invariants(&self) {
        // The budget bound: at most a chunk per chunk held or in flight (`read_ahead_bytes`),
        // or the one buffer of bytes read at hand, or a stream's chunk of the largest shape,
        // or the way to the stream asked at once (alone: `top_up`); nothing without read-ahead.
        let asked_to_stream = self.requests.iter().any(|r| r.to_stream);
        debug_assert!(
            !asked_to_stream || (self.requests.len() == 1 && self.ready.is_empty()),
            "the way to the stream asked beside other chunks"
        );
        debug_assert!(
            !self.ready_to_stream || !self.ready.is_empty(),
            "the way to the stream marked held, and nothing held"
        );
        let way_to_stream = asked_to_stream || self.ready_to_stream;
        debug_assert!(
            self.reserved()
                <= self.read_ahead.map_or(0, |ra| {
                    let (chunk, depth) = self.shape;
                    if self.stream.is_some() || way_to_stream {
                        ra.memory_bound()
                    } else {
                        chunk.saturating_mul(depth)
                    }
                }),
            "{} bytes of budget reserved, shape {:?}",
            self.reserved(),
            self.shape
        );
        debug_assert!(
            self.stream.as_ref().is_none_or(|open| open.standby)
                || (self.requests.is_empty() && self.ready.is_empty()),
            "a stream serving beside chunks"
        );
        let mut expected = self.requests.front().map(|r| r.at);
        for r in &self.requests {
            debug_assert_eq!(Some(r.at), expected, "requests are not contiguous");
            expected = r.at.checked_add(r.len as u64);
        }
        match (self.ahead_at, self.read_ahead) {
            (Some(ahead_at), Some(read_ahead)) => {
                debug_assert!(
                    self.budget.is_none() || self.requests.iter().all(|r| r.budget.is_some()),
                    "a read-ahead request without its budget"
                );
                debug_assert!(
                    self.spare.is_empty(),
                    "a spare chunk buffer while reading ahead"
                );
                let held = usize::from(!self.ready.is_empty());
                debug_assert!(
                    self.requests.len() + held <= self.shape.1,
                    "{} chunks in flight + {held} held > depth {}",
                    self.requests.len(),
                    self.shape.1
                );
                debug_assert!(self.shape.1 <= read_ahead.depth());
                if let Some(back) = self.requests.back() {
                    debug_assert_eq!(back.at + back.len as u64, ahead_at);
                }
            }
            (Some(_), None) => debug_assert!(false, "reading ahead with read-ahead off"),
            (None, read_ahead) => {
                debug_assert!(self.requests.len() <= 1, "more than one plain request");
                debug_assert!(
                    read_ahead.is_some() || self.spare.is_empty(),
                    "a chunk buffer without read-ahead"
                );
            }
        }
    }
}

/// Starting requests.
impl<S: PositionalSource> PositionalFetch<S> {
    /// Starts a request for the view's `[at, at + len)`.
    pub(super) fn request(&self, cx: &mut Context<'_>, at: u64, len: usize) -> Request<Bytes> {
        let source = Arc::clone(&self.source);
        let offset = self.base.saturating_add(at);
        let mut request = Request::start(
            cx,
            at,
            len,
            async move { source.read_at(offset, len).await },
        );
        request.asked_after = self.errors;
        request
    }
}
