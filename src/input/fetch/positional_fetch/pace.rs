//! How a long sequential run is read, one stream or ranged read-ahead, and the rates that
//! choose (see `stream` for the stream itself).
//!
//! A run starts with ranged read-ahead (`queue`): a lookup's few reads never open a stream.
//! Once it reads ahead, the way to where it will have gone [`STREAM_AFTER`] bytes is asked
//! (in one request if the memory bound allows: `top_up`), no further (`Pace::streams_from`),
//! and one stream opens there. After a scan, the next run streams sooner (see `Pace::new_run`).
//! While the stream keeps the consumer waiting most of the time (the stream, not the consumer,
//! sets the pace), it measures the stream's rate over
//! [`MEASURE`] bytes (after [`WARM_UP`] bytes), then, if enough of the view is left for a win
//! to pay for the trial, tries ranged read-ahead in its place, at its largest shape less a
//! chunk, and measures that over as many bytes; the stream stays open on standby beside them
//! (`OpenStream::standby`) until they win or pass what it holds. Ranges stay if they moved
//! bytes [`BETTER`] times as fast (a link that caps each connection, or one with a long round
//! trip); otherwise the stream comes back, as soon as the ranges are too late to be better.
//! The fetcher keeps what it chose for its later runs, and measures again after
//! [`CHOICE_HOLDS`] bytes.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::Context;
use std::time::Duration;

use bytes::Bytes;
use futures_core::stream::BoxStream;
use tokio::time::{Instant, Sleep};

use crate::memory_budget::Reservation;

/// How far a sequential run goes on ranged read-ahead before a stream may serve it: further
/// than a lookup's reads, which must open no stream (four of the read-ahead's first chunks).
pub(super) const STREAM_AFTER: u64 = 256 << 10;
/// Over how many bytes a way of reading is measured before it is judged: [`MEASURE`] bytes,
/// or [`MEASURE_TIME`] and at least [`MEASURE_LEAST`] bytes, whichever comes first (a slow
/// link is judged in a tenth of a second, not in the seconds 8 MiB take there).
const MEASURE: u64 = 8 << 20;
const MEASURE_TIME: Duration = Duration::from_millis(100);
const MEASURE_LEAST: u64 = 1 << 20;
/// How long a stream moves bytes before it is timed (see `Pace::served`): [`WARM_UP`] bytes
/// or [`WARM_UP_TIME`], whichever comes first. A new stream ramps up: on rclone's WebDAV its
/// first 15 MB came at 0.3-0.5 GB/s where it then moves 1.5 GB/s, and timed from 2 or 8 MiB
/// it looked slow enough to try ranges (and so each pass of a 64 MiB file tried them).
const WARM_UP: u64 = 32 << 20;
const WARM_UP_TIME: Duration = Duration::from_millis(100);
/// After how many bytes read the chosen way a choice is measured again: a busy moment of the
/// machine or the link may have made it, and the link may have changed.
const CHOICE_HOLDS: u64 = 1 << 30;
/// How long the rest of the view must take the stream, at the rate measured, for ranges to be
/// tried: a trial lost on a fast link costs about 10-30 ms (a request's latency and the ranges'
/// first chunks), a lot against a 64 MiB file's 40 ms but little against a quarter second,
/// while a capped link (20 MB/s a connection) gains a win's 3x on a 16 MiB file.
const TRIAL_ROOM_SECS: f64 = 0.25;
/// How many times the stream's rate ranges must reach to take its place: more connections
/// cost more requests, so a tie goes to the stream.
const BETTER: f64 = 1.25;

/// One open stream: its next bytes are the view's `[at, at + held.len())`, then the queued
/// pieces', then the stream's.
pub(super) struct OpenStream {
    pub(super) at: u64,
    pub(super) held: Bytes,
    // Pieces taken from the stream ahead of the consumer, `queued` bytes in all: polling the
    // stream for its next piece while the consumer reads this one lets the transport read on
    // (an HTTP body is read off the connection only when asked for), as a plain loop over the
    // stream does. Up to `limit` bytes are held (`held` and `queue`; a single piece may pass
    // it), and one piece ahead of `held` (`PIECES_AHEAD`; more on standby).
    pub(super) queue: VecDeque<Bytes>,
    pub(super) queued: usize,
    pub(super) limit: usize,
    // When it was opened, until its first bytes came (its latency, see `Pace`).
    pub(super) opened: Option<Instant>,
    // In a mutex only to be `Sync` (as the fetcher is): reached through `get_mut`, never
    // locked.
    pub(super) stream: Mutex<BoxStream<'static, io::Result<Bytes>>>,
    // A chunk of the memory budget (`limit` bytes), for `held` and `queue`.
    pub(super) budget: Option<Reservation>,
    // Kept beside ranges on trial (see `Pace::begin_trial`): it serves nothing, takes its
    // next pieces up to `limit`, and serves the run again from where it is if the ranges lose
    // before they have gone past what it holds (no new request, no new connection's ramp).
    pub(super) standby: bool,
    // How the stream ended, once it has: `Ok` at the end of the source, `Err` with why if it
    // failed or ended before it. Its held bytes are still handed out first.
    pub(super) done: Option<Result<(), String>>,
}

/// How sequential runs are read, and what was measured of each way.
#[derive(Debug, Default)]
pub(super) struct Pace {
    // Bytes handed out in this sequential run.
    run: u64,
    // Whether the source has a stream (`None` until asked), and whether this run's failed.
    pub(super) streams: Option<bool>,
    pub(super) stream_failed: bool,
    way: Way,
    // The way being measured now: when its first bytes came, since when it is timed (once
    // steady), how many bytes (before: while warming up), how long the consumer waited for it.
    began: Option<Instant>,
    since: Option<Instant>,
    bytes: u64,
    waited: Duration,
    waiting_since: Option<Instant>,
    // Bytes read since the way was chosen (across runs).
    chosen_for: u64,
    // How long the last stream took to bring its first bytes: a request's latency.
    stream_latency: Duration,
    // While ranges are tried: since when, by when they must have moved [`MEASURE`] bytes, the
    // bytes they moved, and the timer that ends a trial they lost while the consumer waits.
    trial_began: Option<Instant>,
    trial_deadline: Option<Instant>,
    trial_bytes: u64,
    trial_timer: Option<Pin<Box<Sleep>>>,
    // Whether the last run was a scan that streamed, and where it started (see `new_run`).
    after_scan: bool,
    scan_at: Option<u64>,
    // Where this run started.
    run_at: u64,
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
    /// A read elsewhere: a new run, starting at `at`.
    pub(super) fn new_run(&mut self, at: u64) {
        // A run that streamed past [`MEASURE`] bytes was a scan: the fetcher's next run (a scan
        // again, as a verification's or a merge's next pass) streams from its second fetch,
        // without ranged chunks first; and from its first if it starts where the scan started
        // (the same bytes scanned again: a lookup there costs one stream, once).
        self.after_scan = self.run >= MEASURE && self.wants_stream();
        self.scan_at = self.after_scan.then_some(self.run_at);
        self.run_at = at;
        self.run = 0;
        self.stream_failed = false;
        self.restart_meter();
    }

    /// Whether the run should be served by a stream now (the source's having one aside).
    pub(super) fn wants_stream(&self) -> bool {
        let long = self.run >= STREAM_AFTER || (self.after_scan && self.run > 0) || self.rescan();
        self.may_stream() && long
    }

    /// Whether long runs may stream: the way chosen or measured is the stream, the source is
    /// not known to have none, and this run's has not failed.
    fn may_stream(&self) -> bool {
        let stream = match self.way {
            Way::Stream => true,
            Way::TryingRanges { .. } => false,
            Way::Chosen { stream } => stream,
        };
        stream && self.streams != Some(false) && !self.stream_failed
    }

    /// Where this run will stream if it goes on sequentially from `at` (the consumer's
    /// position) and the source has a stream: where it will have handed out [`STREAM_AFTER`]
    /// bytes (bytes passed without being handed out, such as skipped or read at hand, do not
    /// count). `None` if ranges serve long runs, or the stream failed, or the source has none,
    /// or the run has gone that far already (`wants_stream` decides from there).
    pub(super) fn streams_from(&self, at: u64) -> Option<u64> {
        let to_go = STREAM_AFTER.checked_sub(self.run).filter(|&n| n > 0)?;
        self.may_stream().then(|| at.saturating_add(to_go))
    }

    /// Whether this run scans again what the last run scanned, from the same start, and has
    /// not gone anywhere else yet.
    pub(super) fn rescan(&self) -> bool {
        self.after_scan && self.scan_at == Some(self.run_at)
    }

    /// Whether ranges are on trial in place of the stream.
    pub(super) fn trying_ranges(&self) -> bool {
        matches!(self.way, Way::TryingRanges { .. })
    }

    /// Whether the stream was chosen (by the last trial) to serve long runs.
    pub(super) fn stream_chosen(&self) -> bool {
        self.way == Way::Chosen { stream: true }
    }

    /// Whether the stream's rate is being measured (not chosen yet).
    pub(super) fn measuring_stream(&self) -> bool {
        self.way == Way::Stream
    }

    /// Whether ranged read-ahead serves long runs now, at its largest shape: tried in place of
    /// a stream, or chosen over it, and the run has gone as far as a stream would wait.
    pub(super) fn ranges_at_full_shape(&self) -> bool {
        let ranges = matches!(
            self.way,
            Way::TryingRanges { .. } | Way::Chosen { stream: false }
        );
        ranges && self.run >= STREAM_AFTER
    }

    pub(super) fn restart_meter(&mut self) {
        self.began = None;
        self.since = None;
        self.bytes = 0;
        self.waited = Duration::ZERO;
        self.waiting_since = None;
    }

    /// `n` bytes were handed out in the run, from the stream or not, `left` bytes of the view
    /// after them (`u64::MAX` if not known). Returns whether the stream is to give way (ranges
    /// are to be tried): only if what is left would take the stream [`TRIAL_ROOM_SECS`] seconds or more.
    ///
    /// A way of reading is timed in its steady state: the stream from the first time the
    /// consumer waits for it after [`WARM_UP`] bytes (its first bytes come after a request's
    /// latency, and bytes already received would count as if they came at once), over
    /// [`MEASURE`] bytes (or [`MEASURE_TIME`]) and up to the end of a wait; ranges on trial are
    /// judged by their bytes over the whole trial, less one request's latency (see
    /// `trial_steady_rate`), once they have moved as much.
    pub(super) fn served(&mut self, n: usize, from_stream: bool, left: u64) -> bool {
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
        if let Way::TryingRanges { stream_rate } = self.way {
            self.trial_bytes = self.trial_bytes.saturating_add(n as u64);
            if self.trial_lost(now) {
                return self.choose(stream_rate, self.trial_rate(now));
            }
        }
        let began = *self.began.get_or_insert(now);
        // Ranges are tried at their largest shape: only their first request's latency is
        // left out.
        let warm = match self.way {
            Way::TryingRanges { .. } => true,
            _ => self.bytes >= WARM_UP || now - began >= WARM_UP_TIME,
        };
        let Some(since) = self.since else {
            if warm && waited.is_some() {
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
        let elapsed = now - since;
        let enough =
            self.bytes >= MEASURE || (elapsed >= MEASURE_TIME && self.bytes >= MEASURE_LEAST);
        if !enough || (waited.is_none() && self.bytes < 4 * MEASURE) {
            return false;
        }
        let rate = self.bytes as f64 / elapsed.as_secs_f64().max(1e-9);
        match self.way {
            Way::Stream if self.waited * 2 > elapsed && left as f64 / rate >= TRIAL_ROOM_SECS => {
                tracing::debug!(rate, "the stream keeps the consumer waiting: trying ranges");
                self.way = Way::TryingRanges { stream_rate: rate };
                self.restart_meter();
                true
            }
            // Not `rate`: chunks that came together at the end of the first wait were asked
            // long before it, and counted from it they made ranges look 2-3x as fast as they
            // are on a link the stream already fills (S3 on SeaweedFS chose ranges and read at
            // 0.64x the stream). Ranges are timed over the whole trial, less the one request
            // latency steady read-ahead hides.
            Way::TryingRanges { stream_rate } => {
                self.choose(stream_rate, self.trial_steady_rate(now))
            }
            _ => {
                // The consumer sets the pace, or too little is left to try ranges: measure
                // again later.
                self.since = None;
                self.bytes = WARM_UP;
                false
            }
        }
    }

    /// Ranges are tried in place of the stream from now, `in_flight` bytes at a time (their
    /// largest shape, less the chunk a stream on standby holds). They have lost the trial if
    /// they have not moved [`MEASURE`] bytes by the time the stream would have moved as many
    /// bytes [`BETTER`] times over (or their first `in_flight` bytes, if more), after the
    /// stream's request latency: a link where ranges are much slower (FTP's connection per
    /// request on a busy server, a WebDAV server slow to answer a range) then costs little to
    /// try, the stream on standby serving again at once.
    pub(super) fn begin_trial(&mut self, in_flight: usize) {
        let Way::TryingRanges { stream_rate } = self.way else {
            return;
        };
        let bytes = MEASURE.max(in_flight as u64) as f64;
        let moving = Duration::from_secs_f64(bytes / (stream_rate * BETTER).max(1.0));
        let moving = moving.min(Duration::from_secs(10));
        let now = Instant::now();
        self.trial_began = Some(now);
        self.trial_deadline = Some(now + self.stream_latency + moving);
        self.trial_bytes = 0;
        self.trial_timer = None;
    }

    /// Whether the trial of ranges is lost by `now` (see [`begin_trial`](Self::begin_trial)).
    fn trial_lost(&self, now: Instant) -> bool {
        matches!(self.way, Way::TryingRanges { .. })
            && self.trial_bytes < MEASURE
            && self.trial_deadline.is_some_and(|deadline| now >= deadline)
    }

    /// While the consumer waits for ranges on trial: whether the trial is lost (the stream
    /// is then chosen), or else a timer wakes the consumer when it would be.
    pub(super) fn poll_trial_lost(&mut self, cx: &mut Context<'_>) -> bool {
        let (Way::TryingRanges { stream_rate }, Some(deadline)) = (self.way, self.trial_deadline)
        else {
            self.trial_timer = None;
            return false;
        };
        if self.trial_bytes >= MEASURE {
            self.trial_timer = None;
            return false;
        }
        let timer = self
            .trial_timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.as_mut().poll(cx).is_pending() && !self.trial_lost(Instant::now()) {
            return false;
        }
        tracing::debug!(
            trial_bytes = self.trial_bytes,
            "ranges too late: the stream again"
        );
        self.choose(stream_rate, self.trial_rate(Instant::now()));
        true
    }

    /// The bytes a second ranges moved in their trial, up to `now`.
    fn trial_rate(&self, now: Instant) -> f64 {
        let elapsed = self.trial_began.map_or(Duration::ZERO, |began| now - began);
        self.trial_bytes as f64 / elapsed.as_secs_f64().max(1e-9)
    }

    /// The bytes a second ranges moved in their trial, up to `now`, leaving out one request's
    /// latency (the stream's), at most half the trial's time.
    fn trial_steady_rate(&self, now: Instant) -> f64 {
        let elapsed = self.trial_began.map_or(Duration::ZERO, |began| now - began);
        let steady = elapsed.saturating_sub(self.stream_latency).max(elapsed / 2);
        self.trial_bytes as f64 / steady.as_secs_f64().max(1e-9)
    }

    /// A stream opened at `opened` brought its first bytes now.
    pub(super) fn stream_answered(&mut self, opened: Instant) {
        self.stream_latency = opened.elapsed();
    }

    /// Ends a trial of ranges that moved `ranges_rate` bytes a second against the stream's
    /// `stream_rate`: the stream unless ranges were [`BETTER`]. Returns `false` (no stream to
    /// end: the trial reads ranged).
    fn choose(&mut self, stream_rate: f64, ranges_rate: f64) -> bool {
        let stream = ranges_rate < stream_rate * BETTER;
        tracing::debug!(stream_rate, ranges_rate, stream, "chosen");
        self.way = Way::Chosen { stream };
        self.trial_began = None;
        self.trial_deadline = None;
        self.trial_timer = None;
        self.chosen_for = 0;
        self.restart_meter();
        false
    }

    /// The consumer waits for the way being measured from now (if not already).
    pub(super) fn waiting(&mut self) {
        self.waiting_since.get_or_insert_with(Instant::now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranges on trial whose first chunks come together, the next one alone soon after (a
    /// server the stream already fills, sharing it among the chunks in flight): timed from the
    /// end of the first wait they would look 2.4x as fast as the stream; timed over the trial
    /// (less a request's latency) they are not 1.25x as fast, and the stream is chosen.
    #[tokio::test(start_paused = true)]
    async fn chunks_that_come_together_do_not_make_ranges_look_faster() {
        const CHUNK: usize = 4 << 20;
        let stream_rate = 90e6;
        let mut pace = Pace {
            stream_latency: Duration::from_millis(10),
            way: Way::TryingRanges { stream_rate },
            run: STREAM_AFTER,
            ..Pace::default()
        };
        pace.begin_trial(3 * CHUNK);
        // Three chunks, 12.6 MB, come together after 120 ms (before the trial's deadline, at
        // 10 ms + 12.6 MB / 112.5 MB/s = 121.8 ms).
        pace.waiting();
        tokio::time::advance(Duration::from_millis(120)).await;
        for _ in 0..3 {
            assert!(!pace.served(CHUNK, false, u64::MAX));
            assert!(pace.trying_ranges(), "{:?}", pace.way);
        }
        // The next, asked once the first was read, comes 50 ms later: 16.8 MB in 160 ms of
        // steady trial, 105 MB/s, under 1.25x the stream's 90 MB/s.
        pace.waiting();
        tokio::time::advance(Duration::from_millis(50)).await;
        assert!(!pace.served(CHUNK, false, u64::MAX));
        assert!(pace.stream_chosen(), "{:?}", pace.way);
    }
}
