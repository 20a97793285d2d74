use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{ready, Context, Poll, Waker};

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::ReadBuf;
use tokio_util::task::AbortOnDropHandle;

use super::seam::Seam;
use super::ReadAhead;
use crate::memory_budget::Reservation;
use crate::source::PositionalSource;
use crate::MemoryBudget;

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
///   resumes when fetches are sequential again.
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
/// use async_buffered_input::fetch::{PositionalFetch, ReadAhead};
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
    source: Arc<S>,
    // The view: source bytes `[base, base + slice_len)` for a slice, `[base, end of source)`
    // otherwise. Every other offset in this struct is relative to the view.
    base: u64,
    slice_len: Option<u64>,
    // The view's length once known: always for a slice; for a whole source once asked (by this
    // fetcher, a clone, or a `slice` of an input over either, which takes `&self`) or once a
    // request came back short. Shared with the clones, which read the same view, so that the
    // length is asked of the source once however the fetchers are shared.
    length: Arc<OnceLock<u64>>,
    read_ahead: Option<ReadAhead>,
    // The read-ahead's shape now, (chunk size, depth): its initial one, grown (if adaptive)
    // each time the consumer waits for a chunk in flight, and set back by a read elsewhere.
    shape: (usize, usize),
    // Bounds what the read-ahead holds, across the fetchers that share it; and what `ready`
    // and `spare` hold of it (given back with them).
    budget: Option<MemoryBudget>,
    ready_budget: Option<Reservation>,
    spare_budget: Option<Reservation>,
    // Where a fetch continuing the last one would start (`None` before the first fetch).
    next_sequential: Option<u64>,
    // Bytes received and not handed out yet: the view's `[ready_at, ready_at + ready.len())`.
    // Empty (and holding no allocation) when there are none.
    ready: Bytes,
    ready_at: u64,
    // The buffer of the last chunk read at hand (see `poll_read_now`), kept whole to be reused
    // once `ready` no longer shares it. At most one chunk; empty without read-ahead and while
    // requests are in flight.
    spare: Bytes,
    // Where the last read of bytes at hand ended: when nothing more is at hand there, that may
    // be the end of the source, so one plain request finds out before read-ahead starts.
    read_now_end: Option<u64>,
    // Bytes read at hand since this fetcher last returned `Pending` (see `poll_read_now`).
    read_now_streak: usize,
    // Requests in flight, in offset order and contiguous (each starts where the previous one
    // ends), and after `ready`. Invariants (`debug_assert_invariants`):
    // - reading ahead (`ahead_at` is `Some`): `requests.len() + (ready held) <= shape.1`, and
    //   `ahead_at` is where the last request ends;
    // - otherwise at most one (plain) request.
    requests: VecDeque<Request<Bytes>>,
    ahead_at: Option<u64>,
    // The source's length, asked and not answered yet.
    length_request: Option<Request<u64>>,
    // Fetches answered.
    reads: u64,
}

/// Ranges of `read_ranges` less than this far apart are fetched by one request (as
/// `object_store`'s `get_ranges` does): one request is cheaper than two round trips.
pub(crate) const COALESCE: u64 = 1 << 20;

/// The most a plain request asks for, whatever the caller's buffer.
const MAX_PLAIN_REQUEST: usize = 16 << 20;

/// The most one `try_read_at` asks for: it runs on the async thread, so no single read of bytes
/// at hand holds the thread for long (1 MiB is some tens of microseconds of copying).
const MAX_READ_NOW: usize = 1 << 20;

/// The most a fetcher reads at hand before it yields to the runtime once (returns `Pending`
/// after waking itself): tokio's budget counts calls, not bytes, and 128 calls of 1 MiB would
/// hold the thread for several milliseconds.
const READ_NOW_PER_YIELD: usize = 4 << 20;

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
        self.reset_shape();
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
    pub fn source_offset(&self) -> u64 {
        self.base
    }

    /// The view's length if it is a slice, `None` if it reads to the end of the source.
    pub fn slice_len(&self) -> Option<u64> {
        self.slice_len
    }

    // ----- crate helpers: clones and slices -----

    fn view(source: Arc<S>, base: u64, slice_len: Option<u64>, length: Arc<OnceLock<u64>>) -> Self {
        if let Some(len) = slice_len {
            let _ = length.set(len);
        }
        Self {
            source,
            base,
            slice_len,
            length,
            read_ahead: None,
            shape: (0, 0),
            budget: None,
            ready_budget: None,
            spare_budget: None,
            next_sequential: None,
            ready: Bytes::new(),
            ready_at: 0,
            spare: Bytes::new(),
            read_now_end: None,
            read_now_streak: 0,
            requests: VecDeque::new(),
            ahead_at: None,
            length_request: None,
            reads: 0,
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
    fn length(&self) -> Option<u64> {
        self.length.get().copied()
    }

    /// Drops every chunk and request, and the spare chunk buffer.
    fn release_held(&mut self) {
        self.discard_requests();
        self.drop_spare();
    }

    /// Drops the received bytes not handed out yet, and gives back their budget.
    fn drop_ready(&mut self) {
        self.ready = Bytes::new();
        self.ready_budget = None;
    }

    /// Drops the buffer of the last chunk read at hand, and gives back its budget.
    fn drop_spare(&mut self) {
        self.spare = Bytes::new();
        self.spare_budget = None;
    }

    /// The read-ahead's initial shape: for a new sequential run.
    fn reset_shape(&mut self) {
        self.shape = self
            .read_ahead
            .map_or((0, 0), |ra| (ra.initial_chunk_size(), ra.initial_depth()));
    }

    /// The consumer waited for a chunk in flight: an adaptive read-ahead grows its chunk size,
    /// or once at its largest, its depth, and requests what that allows now. As the Linux
    /// kernel grows its readahead window, it grows by 4x while what it keeps in flight is under
    /// a sixteenth of its largest, by 2x after that: a slow link reaches the full shape in a
    /// few waits, and a reader that never waits stays at the first shape.
    fn grow(&mut self, cx: &mut Context<'_>) {
        let Some(read_ahead) = self.read_ahead else {
            return;
        };
        let (chunk, depth) = self.shape;
        let factor = if chunk.saturating_mul(depth) < read_ahead.memory_bound() / 16 {
            4
        } else {
            2
        };
        self.shape = if chunk < read_ahead.chunk_size() {
            (
                chunk.saturating_mul(factor).min(read_ahead.chunk_size()),
                depth,
            )
        } else {
            (chunk, depth.saturating_mul(factor).min(read_ahead.depth()))
        };
        debug_assert!(
            self.shape.0 <= read_ahead.chunk_size() && self.shape.1 <= read_ahead.depth()
        );
        if self.shape != (chunk, depth) {
            tracing::trace!(
                chunk = self.shape.0,
                depth = self.shape.1,
                "read-ahead grows"
            );
            self.top_up(cx);
        }
    }

    /// The bytes of each range of the view, in the order asked: near ranges (less than
    /// [`COALESCE`] apart) are fetched by one request, and the requests run at once, each as a
    /// task (aborted if this future is dropped). Each answer is a slice of its request's
    /// bytes, without a copy. A range past the view's end gives `UnexpectedEof` with what was
    /// there (checked against the length first, so no request asks past it).
    pub(crate) async fn read_ranges(
        &self,
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Vec<Bytes>, (usize, crate::error::Error)> {
        use crate::error::Error;
        let length = self
            .view_length()
            .await
            .map_err(|e| (0, Error::Source(e)))?;
        for (i, r) in ranges.iter().enumerate() {
            if r.start > r.end {
                return Err((
                    i,
                    Error::InvalidInput(format!("the range {r:?} ends before it starts")),
                ));
            }
            if r.end > length {
                return Err((i, Error::eof(length.saturating_sub(r.start))));
            }
        }
        // Merge near ranges, in offset order, into the requests to make.
        let mut order: Vec<usize> = (0..ranges.len())
            .filter(|&i| !ranges[i].is_empty())
            .collect();
        order.sort_by_key(|&i| ranges[i].start);
        let mut merged: Vec<std::ops::Range<u64>> = Vec::new();
        for &i in &order {
            let r = &ranges[i];
            match merged.last_mut() {
                Some(last) if r.start <= last.end.saturating_add(COALESCE) => {
                    last.end = last.end.max(r.end);
                }
                _ => merged.push(r.clone()),
            }
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            (
                0,
                Error::Source(io::Error::other("read_ranges needs a tokio runtime")),
            )
        })?;
        let tasks: Vec<_> = merged
            .iter()
            .map(|m| {
                let source = Arc::clone(&self.source);
                let (offset, len) = (
                    self.base.saturating_add(m.start),
                    (m.end - m.start) as usize,
                );
                AbortOnDropHandle::new(
                    runtime.spawn(async move { source.read_at(offset, len).await }),
                )
            })
            .collect();
        let mut answers = Vec::with_capacity(tasks.len());
        for (m, task) in merged.iter().zip(tasks) {
            let first = order
                .iter()
                .position(|&i| ranges[i].start >= m.start)
                .unwrap_or(0);
            let bytes = match task.await {
                Ok(Ok(bytes)) => bytes,
                Ok(Err(e)) => return Err((order[first], Error::Source(e))),
                Err(join) => {
                    let e = io::Error::other(format!("the request for {m:?} failed: {join}"));
                    return Err((order[first], Error::Source(e)));
                }
            };
            if (bytes.len() as u64) < m.end - m.start {
                // The source ended before the length said.
                return Err((order[first], Error::eof(bytes.len() as u64)));
            }
            answers.push((m.start, bytes));
        }
        Ok(ranges
            .iter()
            .map(|r| {
                if r.is_empty() {
                    return Bytes::new();
                }
                let k = answers.partition_point(|(start, _)| *start <= r.start) - 1;
                let (start, bytes) = &answers[k];
                bytes.slice((r.start - start) as usize..(r.end - start) as usize)
            })
            .collect())
    }

    /// How many requests are in flight or completed and not yet consumed.
    #[cfg(test)]
    pub(crate) fn requests_in_flight(&self) -> usize {
        self.requests.len()
    }

    // ----- private helpers -----

    fn debug_assert_invariants(&self) {
        let mut expected = self.requests.front().map(|r| r.at);
        for r in &self.requests {
            debug_assert_eq!(Some(r.at), expected, "requests are not contiguous");
            expected = r.at.checked_add(r.len as u64);
        }
        match (self.ahead_at, self.read_ahead) {
            (Some(ahead_at), Some(read_ahead)) => {
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

    /// The held bytes from `at` on, if `ready` holds any there.
    fn ready_from(&self, at: u64) -> Option<&[u8]> {
        let skip = at.checked_sub(self.ready_at)?;
        if skip < self.ready.len() as u64 {
            Some(&self.ready[skip as usize..])
        } else {
            None
        }
    }

    /// Drops the held bytes up to `at + n` (`at` is inside them).
    fn consume_ready(&mut self, at: u64, n: usize) {
        let used = (at - self.ready_at) as usize + n;
        if used >= self.ready.len() {
            self.drop_ready(); // release the chunk
        } else {
            self.ready.advance(used);
        }
        self.ready_at = at + n as u64;
    }

    fn discard_requests(&mut self) {
        self.requests.clear(); // aborts spawned requests, gives back their budget
        self.ahead_at = None;
        self.drop_ready();
    }

    /// Keeps only the requests that serve `at` and what follows it; if none does, discards all.
    ///
    /// Reading ahead, a gap of at most a chunk before the first request (left by a request
    /// that failed, or a fetch a little before the chunks) is requested on its own instead,
    /// so the requests after it are kept: a retry asks only for what is missing.
    fn retarget(&mut self, cx: &mut Context<'_>, at: u64) {
        self.drop_ready();
        while self.requests.front().is_some_and(|r| r.end() <= at) {
            self.requests.pop_front();
        }
        if let Some(front) = self.requests.front() {
            let gap = front.at.saturating_sub(at);
            if gap > 0
                && gap <= self.shape.0 as u64
                && self.ahead_at.is_some()
                && self.requests.len() < self.shape.1
            {
                let request = self.request(cx, at, gap as usize);
                self.requests.push_front(request);
            }
        }
        if self.requests.front().is_some_and(|r| r.at > at) {
            self.requests.clear();
        }
        if self.requests.is_empty() {
            self.ahead_at = None;
        }
    }

    /// A fetch ended at `end`, the length not known: if the request there has already come
    /// back empty, `end` is the view's end.
    fn learn_end(&mut self, end: u64) {
        if self.ready_from(end).is_some() {
            return; // bytes there
        }
        if let Some(front) = self.requests.front_mut() {
            if front.at == end && matches!(front.answer(), Some(Ok(bytes)) if bytes.is_empty()) {
                let _ = self.length.set(end);
            }
        }
    }

    /// Starts a request for the view's `[at, at + len)`.
    fn request(&self, cx: &mut Context<'_>, at: u64, len: usize) -> Request<Bytes> {
        let source = Arc::clone(&self.source);
        let offset = self.base.saturating_add(at);
        Request::start(
            cx,
            at,
            len,
            async move { source.read_at(offset, len).await },
        )
    }

    /// Requests read-ahead chunks until `depth` are requested or held, or the view's end.
    fn top_up(&mut self, cx: &mut Context<'_>) {
        let (Some(_), Some(mut next)) = (self.read_ahead, self.ahead_at) else {
            return;
        };
        let (chunk, depth) = self.shape;
        let held = usize::from(!self.ready.is_empty());
        while self.requests.len() + held < depth {
            let mut len = chunk;
            if let Some(length) = self.length() {
                let left = length.saturating_sub(next);
                if left == 0 {
                    break;
                }
                len = len.min(usize::try_from(left).unwrap_or(usize::MAX));
            }
            let Some(end) = next.checked_add(len as u64) else {
                break;
            };
            let budget = match &self.budget {
                Some(budget) => match budget.try_reserve(len) {
                    Some(reservation) => Some(reservation),
                    None => break, // no budget for more now
                },
                None => None,
            };
            let mut request = self.request(cx, next, len);
            request.budget = budget;
            tracing::trace!(at = next, len, "read-ahead request");
            self.requests.push_back(request);
            next = end;
        }
        self.ahead_at = Some(next);
    }

    /// Reads at `at` from what the source has at hand ([`PositionalSource::try_read_at`]);
    /// returns whether it read any. Spends the task's tokio budget like any I/O resource, and
    /// yields once every [`READ_NOW_PER_YIELD`] bytes, so a reader whose reads never wait still
    /// lets other tasks run.
    ///
    /// The bytes go straight into `buf`, except for a sequential read with read-ahead on and a
    /// `buf` smaller than a chunk: then a whole chunk is read into `ready` (in a reused buffer)
    /// and `buf` is served from it, so that small reads cost one call to the source per chunk,
    /// not one each.
    fn poll_read_now(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<bool> {
        if self.read_now_streak >= READ_NOW_PER_YIELD {
            self.read_now_streak = 0;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let coop = ready!(tokio::task::coop::poll_proceed(cx));
        // The most this read may take: what is left of the view, at most `MAX_READ_NOW`.
        let most = self
            .length()
            .map_or(MAX_READ_NOW, |length| {
                usize::try_from(length - at).unwrap_or(usize::MAX)
            })
            .min(MAX_READ_NOW);
        let offset = self.base.saturating_add(at);
        let mut chunk = match self.read_ahead {
            Some(_) if self.next_sequential == Some(at) && buf.remaining() < self.shape.0 => {
                self.shape.0.min(most)
            }
            _ => 0,
        };
        // The chunk's buffer: the last one if it is free and large enough, otherwise a new one,
        // if the budget allows (otherwise the bytes go straight into `buf`).
        let mut block = None;
        if chunk > buf.remaining() {
            match std::mem::take(&mut self.spare).try_into_mut() {
                Ok(reused) if reused.len() >= chunk => block = Some(reused),
                _ => {
                    self.spare_budget = None;
                    match &self.budget {
                        Some(budget) => match budget.try_reserve(chunk) {
                            Some(reservation) => {
                                self.spare_budget = Some(reservation);
                                block = Some(BytesMut::zeroed(chunk));
                            }
                            None => chunk = 0,
                        },
                        None => block = Some(BytesMut::zeroed(chunk)),
                    }
                }
            }
        }
        let copied = if let Some(mut block) = block {
            debug_assert!(self.ready.is_empty(), "reading a chunk over held bytes");
            let got = self
                .source
                .try_read_at(offset, &mut block[..chunk])
                .min(chunk);
            let block = block.freeze();
            let copied = got.min(buf.remaining());
            if got > 0 {
                buf.put_slice(&block[..copied]);
                self.ready = block.slice(..got);
                self.ready_at = at;
                self.consume_ready(at, copied);
            }
            self.spare = block;
            copied
        } else {
            let room = buf.remaining().min(most);
            let n = self
                .source
                .try_read_at(offset, buf.initialize_unfilled_to(room))
                .min(room);
            buf.advance(n);
            n
        };
        if copied == 0 {
            return Poll::Ready(false); // `coop` gives the budget back
        }
        coop.made_progress();
        let end = at + copied as u64;
        self.next_sequential = Some(end);
        self.read_now_end = Some(end);
        self.read_now_streak += copied;
        Poll::Ready(true)
    }
}

impl<S: PositionalSource> Seam for PositionalFetch<S> {
    /// Fetches at `at`: from held read-ahead bytes if there are some, otherwise from what the
    /// source has at hand, otherwise from the request serving `at`, started if needed. Fewer
    /// bytes than `buf` has room for when a chunk or request ends first; none at the view's end.
    ///
    /// Dropping the call leaves requests in flight, and the next fetch at the same offset picks
    /// them up.
    fn poll_fetch(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let (before, room) = (buf.filled().len(), buf.remaining());
        let fetched = ready!(self.poll_fetch_uncounted(cx, at, buf));
        self.reads += 1;
        let n = buf.filled().len() - before;
        let end = at.saturating_add(n as u64);
        if fetched.is_ok() {
            if n > 0 && self.length().is_none() {
                self.learn_end(end);
            }
            // The end, known or just found (nothing came): nothing ahead is worth keeping.
            if (room > 0 && n == 0) || self.length().is_some_and(|length| end >= length) {
                self.release_held();
            }
        }
        Poll::Ready(fetched)
    }

    fn poll_length(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        if let Some(length) = self.length() {
            return Poll::Ready(Ok(length));
        }
        let request = match &mut self.length_request {
            Some(request) => request,
            None => {
                let source = Arc::clone(&self.source);
                let request = Request::start(cx, 0, 0, async move { source.len().await });
                self.length_request.insert(request)
            }
        };
        let result = ready!(request.poll(cx));
        self.length_request = None;
        let length = result?.saturating_sub(self.base);
        Poll::Ready(Ok(*self.length.get_or_init(|| length)))
    }

    fn known_length(&self) -> Option<u64> {
        self.length()
    }

    fn reads(&self) -> u64 {
        self.reads
    }

    fn resource(&self) -> Arc<str> {
        Arc::from(self.source.description())
    }

    fn release(&mut self) {
        self.release_held();
        self.source.release_buffers();
    }
}

impl<S: PositionalSource> PositionalFetch<S> {
    /// [`Seam::poll_fetch`], before it is counted.
    fn poll_fetch_uncounted(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            if self.length().is_some_and(|length| at >= length) {
                return Poll::Ready(Ok(())); // the end: read nothing
            }
            if let Some(held) = self.ready_from(at) {
                let n = held.len().min(buf.remaining());
                buf.put_slice(&held[..n]);
                self.consume_ready(at, n);
                self.next_sequential = Some(at + n as u64);
                self.top_up(cx);
                self.debug_assert_invariants();
                return Poll::Ready(Ok(()));
            }
            self.retarget(cx, at);
            if self.requests.is_empty() {
                if ready!(self.poll_read_now(cx, at, buf)) {
                    self.debug_assert_invariants();
                    return Poll::Ready(Ok(()));
                }
                // Requests bring their own buffers: keep memory within the read-ahead's bound.
                self.drop_spare();
                let sequential = self.next_sequential == Some(at);
                if !sequential {
                    self.reset_shape(); // a read elsewhere: read-ahead starts small again
                }
                if self.read_ahead.is_some() && sequential && self.read_now_end != Some(at) {
                    self.ahead_at = Some(at);
                    self.top_up(cx);
                    if self.requests.is_empty() {
                        self.ahead_at = None; // no budget: on without read-ahead
                    }
                }
                if self.ahead_at.is_none() {
                    let mut len = buf.remaining().min(MAX_PLAIN_REQUEST);
                    if let Some(length) = self.length() {
                        len = len.min(usize::try_from(length - at).unwrap_or(usize::MAX));
                    }
                    let request = self.request(cx, at, len);
                    self.requests.push_back(request);
                }
            }
            self.debug_assert_invariants();
            let Some(front) = self.requests.front_mut() else {
                return Poll::Ready(Ok(())); // nothing left to request: the end
            };
            let Poll::Ready(result) = front.poll(cx) else {
                let first_wait = !std::mem::replace(&mut front.waited, true);
                self.read_now_streak = 0; // the task yields anyway
                if first_wait && self.ahead_at.is_some() {
                    self.grow(cx);
                }
                return Poll::Pending;
            };
            let Some(mut done) = self.requests.pop_front() else {
                return Poll::Ready(Ok(()));
            };
            match result {
                Ok(bytes) => {
                    let end = done.at + bytes.len() as u64;
                    if bytes.len() < done.len {
                        // The source ends inside this request: later ones are past the end.
                        // An empty answer only says the end is at or before `done.at`; it is
                        // there if the last fetch ended there, having found bytes before it.
                        if !bytes.is_empty() || self.next_sequential == Some(done.at) {
                            let _ = self.length.set(end);
                        }
                        self.requests.clear();
                        self.ahead_at = None;
                    }
                    if end <= at {
                        return Poll::Ready(Ok(())); // the end: read nothing
                    }
                    self.ready = bytes;
                    self.ready_at = done.at;
                    self.ready_budget = done.budget.take();
                }
                Err(e) => {
                    // Keep the chunks after this one that already arrived intact, for the
                    // retry, which requests the gap this one leaves (`retarget`). Those that
                    // failed too, or are still in flight, were asked during the same trouble:
                    // dropped, to be asked again. A spawned request whose task has finished
                    // has arrived too: its answer is taken first.
                    let mut intact = 0;
                    for request in self.requests.iter_mut() {
                        if !request.settle() {
                            break;
                        }
                        intact += 1;
                    }
                    self.requests.truncate(intact);
                    match self.requests.back() {
                        Some(last) if self.ahead_at.is_some() => self.ahead_at = Some(last.end()),
                        _ => self.discard_requests(),
                    }
                    return Poll::Ready(Err(e));
                }
            }
        }
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

/// One request to the source for the view's `[at, at + len)`: already answered, or running as
/// a task that is aborted when the request is dropped.
struct Request<T> {
    at: u64,
    len: usize,
    fetch: Answer<T>,
    // Whether a fetch has waited for it (the read-ahead grows once per request).
    waited: bool,
    // The budget its bytes take, if one bounds the read-ahead: passed on to `ready`.
    budget: Option<Reservation>,
}

enum Answer<T> {
    Done(Option<io::Result<T>>),
    Running(AbortOnDropHandle<io::Result<T>>),
}

impl<T: Send + 'static> Request<T> {
    /// Polls `future` once; if it is not done, spawns it on the current runtime so it
    /// progresses on its own.
    fn start<F>(cx: &mut Context<'_>, at: u64, len: usize, future: F) -> Self
    where
        F: Future<Output = io::Result<T>> + Send + 'static,
    {
        let mut future = Box::pin(future);
        let fetch = match future.as_mut().poll(cx) {
            Poll::Ready(result) => Answer::Done(Some(result)),
            Poll::Pending => match tokio::runtime::Handle::try_current() {
                Ok(runtime) => Answer::Running(AbortOnDropHandle::new(runtime.spawn(future))),
                Err(_) => Answer::Done(Some(Err(io::Error::other(format!(
                    "the request for {len} bytes at offset {at} is pending and needs a tokio \
                     runtime to run on"
                ))))),
            },
        };
        Self {
            at,
            len,
            fetch,
            waited: false,
            budget: None,
        }
    }

    fn end(&self) -> u64 {
        self.at.saturating_add(self.len as u64)
    }

    /// Its answer, if it is here, without waiting for it: a task that finished is polled (with
    /// a waker that does nothing: nobody waits on it here) and its answer kept.
    fn answer(&mut self) -> Option<&io::Result<T>> {
        if let Answer::Running(handle) = &mut self.fetch {
            if !handle.is_finished() {
                return None;
            }
            let Poll::Ready(result) =
                Pin::new(handle).poll(&mut Context::from_waker(Waker::noop()))
            else {
                return None; // out of the task's budget: taken later
            };
            self.fetch = Answer::Done(Some(result.unwrap_or_else(|join| {
                Err(io::Error::other(format!(
                    "the request for {} bytes at offset {} failed: {join}",
                    self.len, self.at
                )))
            })));
        }
        match &self.fetch {
            Answer::Done(Some(result)) => Some(result),
            _ => None,
        }
    }

    /// Whether its answer is here and is not an error. The answer of a spawned request whose
    /// task has finished is taken first (without waiting: the task is done).
    fn settle(&mut self) -> bool {
        matches!(self.answer(), Some(Ok(_)))
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        match &mut self.fetch {
            Answer::Done(result) => Poll::Ready(
                result
                    .take()
                    .unwrap_or_else(|| Err(io::Error::other("request polled after it completed"))),
            ),
            Answer::Running(handle) => Poll::Ready(match ready!(Pin::new(handle).poll(cx)) {
                Ok(result) => result,
                Err(join) => Err(io::Error::other(format!(
                    "the request for {} bytes at offset {} failed: {join}",
                    self.len, self.at
                ))),
            }),
        }
    }
}

#[cfg(test)]
mod tests;
