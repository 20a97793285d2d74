//! Long sequential runs served from one streaming request ([`PositionalSource::read_stream`]),
//! and the choice between that stream and ranged read-ahead, made from the rates each moves.
//!
//! A run starts with ranged read-ahead (`queue`): a lookup's few reads never open a stream.
//! Once a run has gone [`STREAM_AFTER`] bytes, the fetcher asks no more chunks, lets those in
//! flight drain, and opens one stream where they end. While the stream keeps the consumer
//! waiting most of the time (the stream, not the consumer, sets the pace), it measures the
//! stream's rate over [`MEASURE`] bytes, then tries ranged read-ahead in its place and measures
//! that over as many bytes (after [`WARM_UP`] bytes in which its shape grows). Ranges stay if
//! they moved bytes [`BETTER`] times as fast (a link that caps each connection, or one with a
//! long round trip); otherwise the stream comes back. The fetcher keeps what it chose for its
//! later runs, and measures again after [`CHOICE_HOLDS`] bytes.

use std::io;
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use futures_core::stream::BoxStream;
use tokio::io::ReadBuf;
use tokio::time::Instant;

use super::fetcher::PositionalFetch;
use crate::memory_budget::Reservation;
use crate::source::PositionalSource;

/// How far a sequential run goes on ranged read-ahead before a stream may serve it: further
/// than a lookup's reads, which must open no stream (four of the read-ahead's first chunks).
pub(super) const STREAM_AFTER: u64 = 256 << 10;
/// Over how many bytes a way of reading is measured before it is judged.
const MEASURE: u64 = 8 << 20;
/// How many bytes a way of reading moves before it is timed (see `Pace::served`).
const WARM_UP: u64 = 2 << 20;
/// After how many bytes read the chosen way a choice is measured again: a busy moment of the
/// machine or the link may have made it, and the link may have changed.
const CHOICE_HOLDS: u64 = 256 << 20;
/// How many times the stream's rate ranges must reach to take its place: more connections
/// cost more requests, so a tie goes to the stream.
const BETTER: f64 = 1.25;

/// One open stream: its next bytes are the view's `[at, at + held.len())`, then the stream's.
pub(super) struct OpenStream {
    at: u64,
    held: Bytes,
    // In a mutex only to be `Sync` (as the fetcher is): reached through `get_mut`, never
    // locked.
    stream: Mutex<BoxStream<'static, io::Result<Bytes>>>,
    // A chunk of the memory budget, for `held` (one piece of the transport's answer).
    budget: Option<Reservation>,
    // Set when the stream ended or failed after handing out bytes: the next fetch that needs
    // more goes ranged.
    done: bool,
}

/// How sequential runs are read, and what was measured of each way.
#[derive(Debug, Default)]
pub(super) struct Pace {
    // Bytes handed out in this sequential run.
    run: u64,
    // Whether the source has a stream (`None` until asked), and whether this run's failed.
    streams: Option<bool>,
    stream_failed: bool,
    way: Way,
    // The way being measured now: since when (once steady), how many bytes (before: while
    // warming up), how long the consumer waited for it.
    since: Option<Instant>,
    bytes: u64,
    waited: Duration,
    waiting_since: Option<Instant>,
    // Bytes read since the way was chosen (across runs).
    chosen_for: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum Way {
    /// A stream, to be measured if it keeps the consumer waiting.
    #[default]
    Stream,
    /// Ranged read-ahead, tried in place of a stream that moved `stream_rate` bytes a second.
    TryingRanges { stream_rate: f64 },
    /// Chosen by measurement, until [`CHOICE_HOLDS`] bytes were read that way.
    Chosen { stream: bool },
}

impl Pace {
    /// A read elsewhere: a new run.
    pub(super) fn new_run(&mut self) {
        self.run = 0;
        self.stream_failed = false;
        self.restart_meter();
    }

    /// Whether the run should be served by a stream now (the source's having one aside).
    pub(super) fn wants_stream(&self) -> bool {
        let stream = match self.way {
            Way::Stream => true,
            Way::TryingRanges { .. } => false,
            Way::Chosen { stream } => stream,
        };
        stream && self.streams != Some(false) && !self.stream_failed && self.run >= STREAM_AFTER
    }

    /// Whether the stream's rate is being measured (not chosen yet).
    fn measuring_stream(&self) -> bool {
        self.way == Way::Stream
    }

    fn restart_meter(&mut self) {
        self.since = None;
        self.bytes = 0;
        self.waited = Duration::ZERO;
        self.waiting_since = None;
    }

    /// `n` bytes were handed out in the run, from the stream or not. Returns whether the
    /// stream, if open, is to end (ranges are to be tried).
    ///
    /// A way of reading is timed in its steady state: from the first time the consumer waits
    /// for it after [`WARM_UP`] bytes (the first bytes of a stream come after a request's
    /// latency; ranges grow their shape, and chunks already received would count as if they
    /// came at once), over [`MEASURE`] bytes and up to the end of a wait.
    pub(super) fn served(&mut self, n: usize, from_stream: bool) -> bool {
        self.run = self.run.saturating_add(n as u64);
        let waited = self.waiting_since.take();
        let measured = match self.way {
            Way::Stream => from_stream,
            Way::TryingRanges { .. } => !from_stream,
            Way::Chosen { .. } => {
                self.chosen_for = self.chosen_for.saturating_add(n as u64);
                if self.chosen_for >= CHOICE_HOLDS {
                    self.way = Way::Stream; // measured again from the next stream
                    self.restart_meter();
                }
                false
            }
        };
        if !measured {
            return false;
        }
        let now = Instant::now();
        self.bytes = self.bytes.saturating_add(n as u64);
        let Some(since) = self.since else {
            if self.bytes >= WARM_UP && waited.is_some() {
                // Steady: timed from here on.
                self.since = Some(now);
                self.bytes = 0;
                self.waited = Duration::ZERO;
            }
            return false;
        };
        if let Some(waited) = waited {
            self.waited += now - waited;
        }
        // Timed from the end of one wait to the end of another, so that bytes that came at
        // once (chunks in flight together) count over the time they took; a consumer that
        // stops waiting is slower than the way it reads, which is then fast enough.
        if self.bytes < MEASURE || (waited.is_none() && self.bytes < 4 * MEASURE) {
            return false;
        }
        let elapsed = now - since;
        let rate = self.bytes as f64 / elapsed.as_secs_f64().max(1e-9);
        match self.way {
            Way::Stream if self.waited * 2 > elapsed => {
                tracing::debug!(rate, "the stream keeps the consumer waiting: trying ranges");
                self.way = Way::TryingRanges { stream_rate: rate };
                self.restart_meter();
                true
            }
            Way::TryingRanges { stream_rate } => {
                let stream = rate < stream_rate * BETTER;
                tracing::debug!(stream_rate, ranges_rate = rate, stream, "chosen");
                self.way = Way::Chosen { stream };
                self.chosen_for = 0;
                self.restart_meter();
                false
            }
            _ => {
                // The consumer sets the pace: measure again later.
                self.since = None;
                self.bytes = WARM_UP;
                false
            }
        }
    }

    /// The consumer waits for the way being measured from now (if not already).
    pub(super) fn waiting(&mut self) {
        self.waiting_since.get_or_insert_with(Instant::now);
    }
}

/// The stream.
impl<S: PositionalSource> PositionalFetch<S> {
    /// Opens a stream at `at` if the run wants one and the source has one; whether it did.
    pub(super) fn open_stream(&mut self, at: u64) -> bool {
        if self.read_ahead.is_none() || !self.pace.wants_stream() {
            return false;
        }
        debug_assert!(self.requests.is_empty() && self.ready.is_empty() && self.stream.is_none());
        let budget = match &self.budget {
            Some(budget) => match budget.try_reserve(self.shape.0) {
                Some(reservation) => Some(reservation),
                None => return false, // no budget now: ranged reads, as without read-ahead
            },
            None => None,
        };
        let Some(stream) = self.source.read_stream(self.base.saturating_add(at)) else {
            self.pace.streams = Some(false);
            return false;
        };
        tracing::trace!(at, "stream opened");
        if self.pace.measuring_stream() {
            self.pace.restart_meter(); // the stream's rate, not the chunks' before it
        }
        self.stream = Some(OpenStream {
            at,
            held: Bytes::new(),
            stream: Mutex::new(stream),
            budget,
            done: false,
        });
        true
    }

    /// Whether the run should stream now and the source has a stream: then the read-ahead asks
    /// no more chunks. Whether the source has one is asked once, with a stream that is
    /// dropped unpolled (so no request).
    pub(super) fn streaming_next(&mut self) -> bool {
        if !self.pace.wants_stream() {
            return false;
        }
        *self
            .pace
            .streams
            .get_or_insert_with(|| self.source.read_stream(self.base).is_some())
    }

    /// The budget the stream holds, if one is open.
    pub(super) fn stream_reserved(&self) -> usize {
        self.stream
            .as_ref()
            .and_then(|open| open.budget.as_ref())
            .map_or(0, Reservation::bytes)
    }

    /// The bytes the stream holds at `at`, without waiting.
    pub(super) fn stream_held(&self, at: u64) -> usize {
        match &self.stream {
            Some(open) if open.at == at => open.held.len(),
            _ => 0,
        }
    }

    /// Ends the stream, if one is open.
    pub(super) fn end_stream(&mut self) {
        if self.stream.take().is_some() {
            tracing::trace!("stream ended");
        }
    }

    /// Serves the fetch at `at` from the stream, if one is open there; `None` if none serves
    /// it (one open elsewhere is ended), or if it failed or ended early (the fetch goes on
    /// ranged; the run opens no other stream).
    ///
    /// Fills `buf` with what the stream has without waiting, and waits only when it has
    /// nothing: the bytes then go to the consumer as they arrive.
    pub(super) fn poll_stream(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Option<Poll<io::Result<()>>> {
        let length = self.length();
        let open = self.stream.as_mut()?;
        let skip = at
            .checked_sub(open.at)
            .filter(|&skip| skip <= open.held.len() as u64);
        let Some(skip) = skip else {
            self.end_stream(); // a read elsewhere
            return None;
        };
        open.held.advance(skip as usize);
        open.at = at;
        let room = match length {
            Some(length) => (length.saturating_sub(at)).min(buf.remaining() as u64) as usize,
            None => buf.remaining(),
        };
        let mut n = 0;
        let mut trouble = None;
        while n < room {
            if !open.held.is_empty() {
                let k = open.held.len().min(room - n);
                buf.put_slice(&open.held[..k]);
                open.held.advance(k);
                n += k;
                continue;
            }
            if open.done {
                break;
            }
            let stream = open
                .stream
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner);
            match stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(bytes))) => open.held = bytes,
                Poll::Ready(Some(Err(e))) => {
                    open.done = true;
                    trouble = Some(e.to_string());
                }
                Poll::Ready(None) => {
                    open.done = true;
                    if length.is_some_and(|length| open.at + (n as u64) < length) {
                        trouble = Some("it ended before the end of the source".to_owned());
                    }
                }
                Poll::Pending if n == 0 => {
                    self.pace.waiting();
                    return Some(Poll::Pending);
                }
                Poll::Pending => break,
            }
        }
        open.at += n as u64;
        let end = open.at;
        if n > 0 {
            self.next_sequential = Some(end);
            if self.pace.served(n, true) {
                self.end_stream(); // ranges are tried in its place
            }
            return Some(Poll::Ready(Ok(())));
        }
        self.end_stream();
        if let Some(trouble) = trouble {
            tracing::debug!(at, %trouble, "the stream failed: ranged reads");
            self.pace.stream_failed = true;
            return None;
        }
        // It ended where the source ends.
        let _ = self.length.set(end);
        Some(Poll::Ready(Ok(())))
    }
}
