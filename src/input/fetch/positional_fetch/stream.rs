//! Long sequential runs served from one streaming request ([`PositionalSource::read_stream`]):
//! opened, read into the fetch's buffer as its bytes arrive, ended (see `pace` for when).

use std::collections::VecDeque;
use std::io;
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use tokio::io::ReadBuf;

use super::fetcher::PositionalFetch;
use super::pace::OpenStream;
use crate::memory_budget::Reservation;
use crate::source::PositionalSource;

/// How many pieces a stream takes ahead of the consumer (see `OpenStream::read_on`): one is
/// enough for the transport to read on while the consumer reads, and a piece may keep alive a
/// buffer far larger than its bytes. OpenDAL's FTP stream reads each piece (about 170 KB on
/// loopback) into a fresh 1 MiB buffer: with 4 MiB of pieces held, 24 MiB of buffers were,
/// and their page faults cost about 5% of the client's CPU where it is the bottleneck.
const PIECES_AHEAD: usize = 1;

/// The stream.
impl<S: PositionalSource> PositionalFetch<S> {
    /// Opens a stream at `at` if the run wants one and the source has one; whether it did.
    pub(super) fn open_stream(&mut self, at: u64) -> bool {
        if self.read_ahead.is_none() || !self.pace.wants_stream() {
            return false;
        }
        debug_assert!(self.requests.is_empty() && self.ready.is_empty() && self.stream.is_none());
        // A chunk of the largest shape, or at least of the current one.
        let chunk = self.read_ahead.map_or(self.shape.0, |ra| ra.full_shape().0);
        let budget = match &self.budget {
            Some(budget) => match budget
                .try_reserve(chunk)
                .or_else(|| budget.try_reserve(self.shape.0))
            {
                Some(reservation) => Some(reservation),
                None => return false, // no budget now: ranged reads, as without read-ahead
            },
            None => None,
        };
        let limit = budget.as_ref().map_or(chunk, Reservation::bytes);
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
            queue: VecDeque::new(),
            queued: 0,
            limit,
            opened: Some(tokio::time::Instant::now()),
            stream: Mutex::new(stream),
            budget,
            standby: false,
            done: None,
        });
        true
    }

    /// Whether the run should stream now and the source has a stream: then the read-ahead asks
    /// no more chunks.
    pub(super) fn streaming_next(&mut self) -> bool {
        self.pace.wants_stream() && self.source_streams()
    }

    /// Whether the source has a stream: asked once, with a stream that is dropped unpolled (so
    /// no request).
    pub(super) fn source_streams(&mut self) -> bool {
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
            Some(open) if open.at == at => open.held.len() + open.queued,
            _ => 0,
        }
    }

    /// A stream on standby beside ranges on trial (see [`OpenStream::standby`]), for a fetch at
    /// `at`: whether it is still on standby (the fetch is the ranges'). Once the trial has
    /// chosen, the stream serves again from where it is if it holds `at` and has not failed
    /// (the ranges dropped), or is ended (the ranges drain, then a new stream serves the run if
    /// it is chosen). It is ended too by a fetch past what it holds or elsewhere (a new run:
    /// its read-ahead would not leave the stream's chunk of the budget). While on standby it
    /// takes its next pieces, up to its limit.
    fn poll_standby(&mut self, cx: &mut Context<'_>, at: u64, length: Option<u64>) -> bool {
        let Some(open) = self.stream.as_mut().filter(|open| open.standby) else {
            return false;
        };
        let holds = open.at + (open.held.len() + open.queued) as u64;
        let serves_at = open.at <= at && at <= holds && self.next_sequential == Some(at);
        if !serves_at {
            self.end_stream(); // the ranges went past it, or the fetch is elsewhere
            return false;
        }
        if self.pace.trying_ranges() {
            open.read_on(cx, length);
            return true;
        }
        if self.pace.stream_chosen() && !matches!(open.done, Some(Err(_))) {
            open.standby = false;
            let stream = self.stream.take();
            self.discard_requests(); // the ranges lost: the stream serves again
            self.stream = stream;
        } else {
            self.end_stream(); // the ranges won, or the stream failed meanwhile
        }
        false
    }

    /// Ends the stream, if one is open.
    pub(super) fn end_stream(&mut self) {
        if self.stream.take().is_some() {
            tracing::trace!("stream ended");
        }
    }

    /// Serves the fetch at `at` from the stream, if one is open there; `None` if none serves
    /// it (one open elsewhere is ended; one on standby serves nothing), or once it has ended:
    /// failed, or ended where the length is not known (the fetch goes on ranged, which finds
    /// out; the run opens no other stream).
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
        if self.poll_standby(cx, at, length) {
            return None; // ranges on trial serve the run
        }
        let open = self.stream.as_mut()?;
        let skip = at
            .checked_sub(open.at)
            .filter(|&skip| skip <= (open.held.len() + open.queued) as u64);
        let Some(mut skip) = skip else {
            self.end_stream(); // a read elsewhere
            return None;
        };
        while skip > 0 {
            if open.held.is_empty() {
                open.held = open.next_queued();
            }
            let k = open.held.len().min(skip as usize);
            open.held.advance(k);
            skip -= k as u64;
        }
        open.at = at;
        let room = match length {
            Some(length) => (length.saturating_sub(at)).min(buf.remaining() as u64) as usize,
            None => buf.remaining(),
        };
        let mut n = 0;
        while n < room {
            if !open.held.is_empty() {
                let k = open.held.len().min(room - n);
                buf.put_slice(&open.held[..k]);
                open.held.advance(k);
                n += k;
                continue;
            }
            if open.queued > 0 {
                open.held = open.next_queued();
                continue;
            }
            if open.done.is_some() {
                break;
            }
            let stream = open
                .stream
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner);
            match stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(bytes))) => {
                    if let Some(opened) = open.opened.take() {
                        self.pace.stream_answered(opened);
                    }
                    open.held = bytes;
                }
                Poll::Ready(Some(Err(e))) => open.done = Some(Err(e.to_string())),
                Poll::Ready(None) => {
                    let end = open.at + n as u64;
                    open.done = Some(match length {
                        Some(length) if end < length => Err(ended_early(end, length)),
                        _ => Ok(()),
                    });
                }
                Poll::Pending if n == 0 => {
                    self.pace.waiting();
                    return Some(Poll::Pending);
                }
                Poll::Pending => break,
            }
        }
        open.at += n as u64;
        if n > 0 {
            open.read_on(cx, length);
            let end = open.at;
            self.next_sequential = Some(end);
            // The length, or the source's hint of it (asked of nobody).
            let length = length.or_else(|| {
                let known = self.source.known_len()?;
                Some(known.saturating_sub(self.base))
            });
            let left = length.map_or(u64::MAX, |length| length.saturating_sub(end));
            if self.pace.served(n, true, left) {
                // Ranges are tried in its place, the stream beside them (if the budget has
                // room for both, and ranges still pipelined: a depth of 3 or more).
                let (chunk, depth) = self.read_ahead.map_or((0, 0), |ra| ra.full_shape());
                match self.stream.as_mut() {
                    Some(open) if depth > 2 => open.standby = true,
                    _ => self.end_stream(),
                }
                let largest = self.read_ahead.map_or(0, |ra| ra.memory_bound());
                let in_flight = largest - if self.stream.is_some() { chunk } else { 0 };
                self.pace.begin_trial(in_flight);
            }
            return Some(Poll::Ready(Ok(())));
        }
        let (done, end) = (open.done.take(), open.at);
        self.end_stream();
        // Failed, or ended where the length is not known: the end of the source, or a
        // connection closed early? A ranged request finds out (and learns the end, or reports
        // the trouble). The run opens no other stream.
        let trouble = match done {
            Some(Err(trouble)) => trouble,
            _ => format!("it ended at {end}"),
        };
        tracing::debug!(at, %trouble, "the stream ended: ranged reads");
        self.pace.stream_failed = true;
        None
    }
}

impl OpenStream {
    /// The next queued piece (empty if none).
    fn next_queued(&mut self) -> Bytes {
        let piece = self.queue.pop_front().unwrap_or_default();
        self.queued -= piece.len();
        piece
    }

    /// Takes the stream's next pieces while it has them at once and fewer than `limit` bytes
    /// are held: [`PIECES_AHEAD`] at most, unless on standby (there they are what the stream
    /// serves if the ranges lose, and a trial is short). The last poll, if pending, asks the
    /// transport for more (and wakes the consumer's task when it has it). How the stream
    /// ended is kept for when the pieces before it have been read (an end before `length` is
    /// an error).
    fn read_on(&mut self, cx: &mut Context<'_>, length: Option<u64>) {
        let stream = self
            .stream
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        while self.done.is_none()
            && (self.standby || self.queue.len() < PIECES_AHEAD)
            && self.held.len() + self.queued < self.limit
        {
            match stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(piece))) if piece.is_empty() => {} // holds nothing
                Poll::Ready(Some(Ok(piece))) => {
                    self.queued += piece.len();
                    self.queue.push_back(piece);
                }
                Poll::Ready(Some(Err(e))) => self.done = Some(Err(e.to_string())),
                Poll::Ready(None) => {
                    let end = self.at + (self.held.len() + self.queued) as u64;
                    self.done = Some(match length {
                        Some(length) if end < length => Err(ended_early(end, length)),
                        _ => Ok(()),
                    });
                }
                Poll::Pending => break,
            }
        }
    }
}

/// Why a stream that ended at `end` failed, the source being `length` bytes long.
fn ended_early(end: u64, length: u64) -> String {
    format!("it ended at {end}, before the end of the source at {length}")
}
