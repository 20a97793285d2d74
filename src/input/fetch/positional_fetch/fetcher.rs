//! The type, its fields and their invariants, its public API, and its view: the part of the
//! source it reads (all of it, or a slice's range) and its length, learned once and shared
//! with the clones.

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

use super::pace::{OpenStream, Pace};
use super::request::Request;
use crate::input::fetch::ReadAhead;
use crate::memory_budget::MemoryBudget;
use crate::memory_budget::Reservation;
use crate::source::PositionalSource;

/// The fetcher over a [`PositionalSource`]: every fetch names its offset, so there is no cursor,
/// and one source can serve any number of inputs (clones and slices of an input share it).
///
/// - **Without read-ahead** a fetch is one request for as many bytes as the window (or the
///   caller's buffer, for a read straight into it) has room for, at most 16 MiB, and at most
///   one request is in flight. If the read that started it is dropped and the same fetch comes
///   again, the request in flight is reused.
/// - **Bytes at hand first**: before starting a request, the fetcher asks the source's
///   [`try_read_at`](PositionalSource::try_read_at) to copy bytes straight into the buffer (for
///   [`FileSource`](crate::source::FileSource), what the page cache holds). This runs on the
///   calling thread, so it copies at most 1 MiB per call and yields to the runtime once every
///   4 MiB. Only when it gives nothing does a request start: so a cached local file costs one
///   copy per fetch and no task, and read-ahead starts only for data that is not at hand. Where
///   the bytes at hand run out, one plain request first checks whether that is the end.
/// - **With [`ReadAhead`]**, once a fetch starts where the previous one ended, the fetcher
///   requests the following chunks before they are asked for, keeping at most `depth` chunks
///   requested or received and unconsumed. Fetches are served from the chunks as they arrive,
///   with one copy into the window. A fetch anywhere the chunks do not cover discards them
///   (cancelling those still in flight) and starts over with a plain request; read-ahead
///   resumes when fetches are sequential again. A chunk of less than 4 KiB requested before
///   the end of the fetch being served asks for what that fetch still lacks, up to 4 KiB, so
///   chunks of a few bytes never split one read (a window refill, a read straight into a
///   caller's buffer) into many requests, each of which could fail. Such a chunk takes
///   `chunk_size` bytes of the [`MemoryBudget`] like any other: the rest are that read's.
///
/// - **One stream for a long sequential run**, where the source has one
///   ([`read_stream`](PositionalSource::read_stream): object_store, OpenDAL): once a run with
///   read-ahead has gone 256 KiB (asked up to there, no further: in one request, if within
///   the read-ahead's memory bound, as ranged requests may cost a server far more than their
///   bytes), the fetcher serves the run from one streaming request, copying its bytes into
///   the window as they arrive (one request where ranges cost one round trip each, or on FTP
///   one transfer each), and taking its next piece while the consumer reads, so the
///   transport reads on. A fetch elsewhere ends it. Lookups never open one. The stream is kept only while it is the
///   faster way: when it keeps the consumer waiting most of the time over 8 MiB or a tenth of
///   a second, and the rest of the view would take it a quarter of a second or more (a lost
///   trial costs a fast link 10-30 ms), ranged read-ahead at its largest shape is tried in
///   its place and kept if it
///   moves bytes at least 1.25x as fast (a link that caps each connection's rate, a long
///   round trip); otherwise the stream comes back, as soon as the ranges are too late to win:
///   it stays open beside them while they are tried, holding its next pieces (up to a chunk),
///   and if they lose before they have passed what it holds, it serves again from there, with
///   no new request.
///   The fetcher keeps that choice for its later runs (1 GiB, then measures again), and after
///   a run that streamed more than 8 MiB (a scan) its next run streams from its second fetch,
///   or its first if it starts where the scan did. A stream that fails or ends early leaves
///   the rest of the run to ranged requests (which report the trouble if it lasts). While it
///   streams, the fetcher holds one chunk of the [`MemoryBudget`] (of the largest shape, or
///   the current one if the budget is short) for the pieces it holds, and nothing else;
///   without budget for it, the run stays ranged.
///
/// Requests that do not complete at once are spawned on the tokio runtime, so they progress
/// while the consumer is busy elsewhere; dropping the fetcher (or discarding the chunks) aborts
/// them. Reading therefore needs a tokio runtime, unless the source answers at once (like
/// [`MemorySource`](crate::source::MemorySource)).
///
/// A fetcher can also be a *view* of part of its source (see
/// [`AsyncBufferedInput::slice`](crate::AsyncBufferedInput::slice)): its offsets then start at
/// the view's start and it ends at the view's end.
///
/// # Examples
///
/// ```
/// use async_buffered_input::{PositionalFetch, ReadAhead};
/// use async_buffered_input::source::MemorySource;
/// use async_buffered_input::AsyncBufferedInput;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let data: Vec<u8> = (0..100u8).collect();
/// let fetch = PositionalFetch::new(MemorySource::new(data)).with_read_ahead(ReadAhead::new(32, 2));
/// let mut input = AsyncBufferedInput::with_capacity(8, fetch);
/// let mut buf = [0u8; 20];
/// input.read_bytes(&mut buf).await?;
/// assert_eq!(buf[19], 19);
/// assert_eq!(input.length().await?, 100);
/// # Ok(())
/// # }
/// ```
pub struct PositionalFetch<S> {
    pub(super) source: Arc<S>,
    // The view: source bytes `[base, base + slice_len)` for a slice, `[base, end of source)`
    // otherwise. Every other offset in this struct is relative to the view.
    pub(super) base: u64,
    pub(super) slice_len: Option<u64>,
    // The view's length once known: always for a slice; for a whole source once asked (by this
    // fetcher, a clone, or a `slice` of an input over either, which takes `&self`) or once a
    // request came back short. Shared with the clones, which read the same view, so that the
    // length is asked of the source once however the fetchers are shared.
    pub(super) length: Arc<OnceLock<u64>>,
    pub(super) read_ahead: Option<ReadAhead>,
    // The read-ahead's shape now, (chunk size, depth): its initial one, grown (if adaptive)
    // each time the consumer waits for a chunk in flight, and set back by a read elsewhere.
    pub(super) shape: (usize, usize),
    // The chunks waited for in this sequential run (at every shape it went through) that took
    // more than `ReadAhead::SLOW_REQUEST`, and those that did not: `ReadAhead::grown` grows past
    // 1 MiB in flight only if most are slow. Set back with the shape.
    pub(super) waits: (u32, u32),
    // Bounds what the read-ahead holds, across the fetchers that share it; and what `ready`
    // and `spare` hold of it (given back with them). Invariant: this fetcher reserves at most
    // a chunk for `ready`, for `spare` and for each request, so at most `shape.0 * shape.1`
    // in all, or the way to a stream asked at once, alone and within the read-ahead's memory
    // bound (`top_up`; `debug_assert_invariants`).
    pub(super) budget: Option<MemoryBudget>,
    pub(super) ready_budget: Option<Reservation>,
    pub(super) spare_budget: Option<Reservation>,
    // Whether `ready` holds (the rest of) the way to a stream asked at once: nothing more is
    // asked until it is handed out (a skip inside it moves the stream's point on, past it).
    // Invariant: only while `ready` is not empty.
    pub(super) ready_to_stream: bool,
    // Where a fetch continuing the last one would start (`None` before the first fetch).
    pub(super) next_sequential: Option<u64>,
    // Bytes received and not handed out yet: the view's `[ready_at, ready_at + ready.len())`.
    // Empty (and holding no allocation) when there are none.
    pub(super) ready: Bytes,
    pub(super) ready_at: u64,
    // The buffer of the last chunk read at hand (see `poll_read_now`), kept whole to be reused
    // once `ready` no longer shares it. At most one chunk; empty without read-ahead and while
    // requests are in flight.
    pub(super) spare: Bytes,
    // Where the last read of bytes at hand ended: when nothing more is at hand there, that may
    // be the end of the source, so one plain request finds out before read-ahead starts.
    pub(super) read_now_end: Option<u64>,
    // Bytes read at hand since this fetcher last returned `Pending` (see `poll_read_now`).
    pub(super) read_now_streak: usize,
    // Requests in flight, in offset order and contiguous (each starts where the previous one
    // ends), and after `ready`. Invariants (`debug_assert_invariants`):
    // - reading ahead (`ahead_at` is `Some`): `requests.len() + (ready held) <= shape.1`, and
    //   `ahead_at` is where the last request ends;
    // - otherwise at most one (plain) request.
    pub(super) requests: VecDeque<Request<Bytes>>,
    pub(super) ahead_at: Option<u64>,
    // Where the bytes the fetch being served asks for end (its offset plus its buffer's room):
    // a read-ahead request before it asks for what it still lacks (up to 4 KiB) at once,
    // rather than a tiny chunk at a time (`top_up`).
    pub(super) want_end: u64,
    // The source's length, asked and not answered yet.
    pub(super) length_request: Option<Request<u64>>,
    // Fetches answered.
    pub(super) reads: u64,
    // Fetches that failed with a request's error. A request asked before the last of them (its
    // `asked_after` is lower) was asked during the trouble that error reported: if it fails
    // too, it is asked once more rather than fail the consumer's retry made after the trouble.
    pub(super) errors: u64,
    // The answers a failed `read_ranges` got, by view offset, for its retry (at most
    // `ranges::KEPT_RANGES_MAX` bytes): a retry asks only for the requests that did not come
    // back. Dropped by the next `read_ranges` that completes, and by `release`.
    pub(super) ranges_kept: Mutex<Vec<(u64, Bytes)>>,
    // The stream serving a long sequential run, if one does (`stream`): then no request is
    // in flight and nothing is `ready`, unless it is on standby beside ranges on trial
    // (`OpenStream::standby`; the ranges then run a chunk less). And how runs are read: by the stream or ranged, as
    // measured (kept across runs).
    pub(super) stream: Option<OpenStream>,
    pub(super) pace: Pace,
    // Ranges requested on a hint (`Seam::prefetch`), until a fetch reads them to their end:
    // reads elsewhere and the read-ahead leave them be; `release` and dropping abort them.
    pub(super) prefetches: super::prefetches::Prefetches,
}

impl<S: PositionalSource> PositionalFetch<S> {
    /// A fetcher over `source`, without read-ahead.
    pub fn new(source: S) -> Self {
        Self::from_arc(Arc::new(source))
    }

    /// A fetcher over a shared source, without read-ahead.
    pub fn from_arc(source: Arc<S>) -> Self {
        Self::view(source, 0, None, Arc::default())
    }

    /// Turns on read-ahead with `read_ahead` (builder style).
    #[must_use]
    pub fn with_read_ahead(mut self, read_ahead: ReadAhead) -> Self {
        self.set_read_ahead(Some(read_ahead));
        self
    }

    /// Changes the read-ahead (`None`: off). Chunks already requested are discarded.
    pub fn set_read_ahead(&mut self, read_ahead: Option<ReadAhead>) {
        self.discard_requests();
        self.drop_spare();
        self.read_ahead = read_ahead;
        self.reset_shape(0);
    }

    /// Bounds what this fetcher's read-ahead holds with `budget`, shared with other fetchers
    /// (builder style); clones and slices share it. Without budget for its first chunk, a
    /// sequential read goes on without read-ahead rather than wait.
    #[must_use]
    pub fn with_budget(mut self, budget: MemoryBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The budget, if one bounds this fetcher's read-ahead.
    pub fn budget(&self) -> Option<&MemoryBudget> {
        self.budget.as_ref()
    }

    /// The source.
    pub fn get_ref(&self) -> &S {
        &self.source
    }

    /// The source, shared: clone it to make more fetchers over the same source.
    pub fn source(&self) -> &Arc<S> {
        &self.source
    }

    /// The read-ahead configuration, if on.
    pub fn read_ahead(&self) -> Option<ReadAhead> {
        self.read_ahead
    }

    /// Where the view starts in the source (0 unless the fetcher is a slice's).
    #[cfg(feature = "test-util")]
    #[doc(hidden)] // a hook for this crate's tests, not part of the API
    pub fn source_offset(&self) -> u64 {
        self.base
    }

    /// The view's length if it is a slice, `None` if it reads to the end of the source.
    #[cfg(feature = "test-util")]
    #[doc(hidden)] // a hook for this crate's tests, not part of the API
    pub fn slice_len(&self) -> Option<u64> {
        self.slice_len
    }

    // ----- crate helpers: clones and slices -----
}

/// The view and its length.
impl<S: PositionalSource> PositionalFetch<S> {
    pub(super) fn view(
        source: Arc<S>,
        base: u64,
        slice_len: Option<u64>,
        length: Arc<OnceLock<u64>>,
    ) -> Self {
        // A slice's length is its own; a whole view's is the source's, if it knows it.
        if let Some(len) = slice_len.or_else(|| Some(source.known_len()?.saturating_sub(base))) {
            let _ = length.set(len);
        }
        Self {
            source,
            base,
            slice_len,
            length,
            read_ahead: None,
            shape: (0, 0),
            waits: (0, 0),
            budget: None,
            ready_budget: None,
            spare_budget: None,
            ready_to_stream: false,
            next_sequential: None,
            ready: Bytes::new(),
            ready_at: 0,
            spare: Bytes::new(),
            read_now_end: None,
            read_now_streak: 0,
            requests: VecDeque::new(),
            ahead_at: None,
            want_end: 0,
            length_request: None,
            reads: 0,
            errors: 0,
            ranges_kept: Mutex::default(),
            stream: None,
            pace: Pace::default(),
            prefetches: Default::default(),
        }
    }

    /// A fetcher of the view's `[offset, offset + len)`, with the same read-ahead. The caller
    /// has checked the range against the view's length.
    pub(crate) fn slice_unchecked(&self, offset: u64, len: u64) -> Self {
        let mut fetch = Self::view(
            Arc::clone(&self.source),
            self.base.saturating_add(offset),
            Some(len),
            Arc::default(),
        );
        fetch.set_read_ahead(self.read_ahead);
        fetch.budget = self.budget.clone();
        fetch
    }

    /// The view's length: known, or asked of the source and then kept, for this fetcher and
    /// its clones (`&self` suffices: the length is shared).
    pub(crate) async fn view_length(&self) -> io::Result<u64> {
        match self.length() {
            Some(length) => Ok(length),
            None => {
                let length = self.source.len().await?.saturating_sub(self.base);
                Ok(*self.length.get_or_init(|| length))
            }
        }
    }

    /// Sets the view's length, known from elsewhere (a file's, asked when it was opened).
    pub(crate) fn set_length(&mut self, length: u64) {
        if self.slice_len.is_none() {
            let _ = self.length.set(length.saturating_sub(self.base));
        }
    }

    /// The view's length, if known.
    #[inline]
    pub(super) fn length(&self) -> Option<u64> {
        self.length.get().copied()
    }
}

impl<S: PositionalSource> Clone for PositionalFetch<S> {
    /// A fetcher of the same view of the same source, with the same read-ahead, but none of
    /// this one's requests or held bytes. The two share the view's length: once either knows
    /// it, neither asks it again.
    fn clone(&self) -> Self {
        let mut fetch = Self::view(
            Arc::clone(&self.source),
            self.base,
            self.slice_len,
            Arc::clone(&self.length),
        );
        fetch.set_read_ahead(self.read_ahead);
        fetch.budget = self.budget.clone();
        fetch
    }
}

impl<S: fmt::Debug> fmt::Debug for PositionalFetch<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PositionalFetch")
            .field("source", &self.source)
            .field("source_offset", &self.base)
            .field("slice_len", &self.slice_len)
            .field("length", &self.length.get())
            .field("read_ahead", &self.read_ahead)
            .field(
                "held",
                &(self.ready_at..self.ready_at + self.ready.len() as u64),
            )
            .field("requests_in_flight", &self.requests.len())
            .finish()
    }
}
