use std::fmt;
use std::future::{poll_fn, Future};
use std::io::{self, SeekFrom};
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncBufRead, AsyncRead, AsyncSeek, ReadBuf};

use super::checksum::Checksum;
use super::kept::Kept;
use super::window::Window;
use super::window_read::{ReadFuture, WindowRead};
use crate::error::{Amount, Error};
use crate::fetch::{Fetch, IntoFetch, StreamFetch};
use crate::stats::Stats;

/// A buffered, seekable async input over a slow source, in the manner of Lucene's
/// `BufferedIndexInput`.
///
/// The input keeps a window (a [`BytesMut`](bytes::BytesMut) of at most
/// [`capacity`](Self::capacity) bytes) over its source and a [`position`](Self::position).
/// Reads are served from the window when it holds the bytes; otherwise:
///
/// - a request is first served from what the window holds, in one copy;
/// - a remainder of at least the capacity is fetched straight into the caller's buffer (no copy
///   through the window);
/// - a smaller remainder refills the window once, fetching as much as the window holds, and is
///   copied from there.
///
/// So small requests never turn into one source read each, and large ones never pay for a
/// second copy. Short fetches are continued, not treated as errors.
///
/// The source is reached through a [fetcher](crate::fetch) (`F`): a [`StreamFetch`] over any
/// `AsyncRead + AsyncSeek` (what [`new`](Self::new) makes of a `tokio::fs::File` or a
/// `Cursor`), or a [`PositionalFetch`](crate::fetch::PositionalFetch) over a
/// [`PositionalSource`](crate::source::PositionalSource), with optional read-ahead; inputs over
/// a positional source can also be [cloned](Clone) and [sliced](Self::slice).
///
/// # Seeking
///
/// [`seek_to`](Self::seek_to) (and [`AsyncSeek`] with `Start` or `Current`) never does I/O: it
/// only moves the position. A target inside the window is served from it, backward or forward;
/// any other target is fetched by the next read. `SeekFrom::End` needs the source's length,
/// which is asked once and then known.
///
/// # Errors and cancellation
///
/// A read either completes or leaves [`position`](Self::position) where it was: a read past the
/// end, a source error or a dropped future consumes nothing, and the input stays usable. Every
/// error names the input's [`resource`](Self::resource), the operation, the position it started
/// at and the lengths involved ([`InputError`](crate::InputError)).
///
/// # Memory
///
/// An input holds its window, at most [`capacity`](Self::capacity) bytes, allocated at the
/// first read. Over a [`PositionalFetch`](crate::fetch::PositionalFetch) with
/// [`ReadAhead`](crate::fetch::ReadAhead), it also holds at most
/// [`memory_bound`](crate::fetch::ReadAhead::memory_bound) bytes of chunks, received or in
/// flight, and none once a read reached the end.
///
/// A read that fails with an error a retry can get past (one of the kinds
/// [`RetryPolicy::is_transient`](crate::source::RetryPolicy::is_transient) names, except
/// `UnexpectedEof`) after fetching part of its bytes keeps them, at most
/// [`MAX_KEPT_FOR_RETRY`](Self::MAX_KEPT_FOR_RETRY) bytes from the position, so that its retry
/// fetches only the rest. They are dropped by the next seek, by the next read that completes
/// beyond the window (reads served from the window alone leave them), when a read fails with
/// any other error (a read past the end keeps nothing), and by [`release`](Self::release). A
/// further failure adds only the bytes past those kept, so a read that fails again and again
/// never copies its prefix again.
///
/// [`release`](Self::release) gives all of it back at any time; the next read allocates again.
///
/// # Examples
///
/// ```
/// use async_buffered_input::AsyncBufferedInput;
/// use std::io::Cursor;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let data: Vec<u8> = (0..=255).collect();
/// let mut input = AsyncBufferedInput::with_capacity(64, Cursor::new(data));
///
/// let mut header = [0u8; 4];
/// input.read_bytes(&mut header).await?;
/// assert_eq!(header, [0, 1, 2, 3]);
///
/// input.seek_to(200);
/// assert_eq!(input.read_byte().await?, 200);
/// assert_eq!(input.position(), 201);
/// # Ok(())
/// # }
/// ```
pub struct AsyncBufferedInput<F> {
    // The source's bytes at hand, at most `capacity` of them (`debug_assert_invariants`). `pos`
    // is independent of the window: when the window holds the bytes at `pos` they are served
    // from it, otherwise the next read fetches them. Keeping `pos` apart from the window is what
    // makes every read all-or-nothing: a read works on offsets and only moves `pos` once it has
    // all its bytes. `pos` is the input's only position: fetchers are asked for bytes at an
    // offset and keep no position of their own in step with it.
    pub(super) window: Window,
    pub(super) pos: u64,
    capacity: usize,
    // `stats.bytes_from_window` leaves out the window reads since the position was last *set*
    // (by `move_to`): window hits only advance `pos`, and `stats()` adds `pos - window_mark`.
    // Invariant: `window_mark <= pos`, and between two `move_to`s `pos` only moves forward by
    // bytes handed out of the window.
    pub(super) stats: Stats,
    window_mark: u64,
    // Where the last fetch ended: a refill there continues a sequential read (after a read
    // straight into a caller's buffer, too), so it is not aligned to a block.
    pub(super) fetched_to: u64,
    // A `SeekFrom::End` started through `AsyncSeek` before the length was known.
    end_seek: Option<EndSeek>,
    // The CRC32 of the bytes consumed since `start_checksum`, folded in the slow paths only
    // (`checksum.rs`); boxed, so that an input that does not checksum stays small.
    pub(super) checksum: Option<Box<Checksum>>,
    // What the input reads, for errors: a path, a URL, "slice NAME [a..b) of PATH".
    pub(super) resource: Option<Arc<str>>,
    // The bytes reads at the position fetched before they failed, kept for their retry, which
    // starts at the same position and fetches only the rest (`keep_for_retry`). At most
    // `MAX_KEPT_FOR_RETRY` bytes; dropped when the position is set (`move_to`: seeks, reads
    // that went past the window) and on `release`. Window hits only advance `pos`, past bytes
    // that stay correct for their offsets: they leave them.
    kept: Kept,
    pub(super) fetch: F,
}

/// `read_bytes_owned` shares the window's buffer with results of at least `capacity /
/// SHARE_FRACTION` bytes, and copies smaller ones: a result keeps alive at most this many times
/// its length.
const SHARE_FRACTION: usize = 4;

/// A `SeekFrom::End(offset)` waiting for the length, started when the position was `from`.
#[derive(Clone, Copy, Debug)]
struct EndSeek {
    offset: i64,
    from: u64,
}

impl<F> AsyncBufferedInput<F> {
    /// The window size [`new`](Self::new) uses: 8 KiB.
    pub const DEFAULT_CAPACITY: usize = 8192;

    /// The most bytes a failed read keeps for its retry: 16 MiB (see "Memory" above). A longer
    /// read over a source that fails now and then keeps its first 16 MiB; each retry must then
    /// fetch the rest without a failure.
    pub const MAX_KEPT_FOR_RETRY: usize = 16 << 20;
}

impl<F: Fetch> AsyncBufferedInput<F> {
    /// An input over `source` with a window of [`DEFAULT_CAPACITY`](Self::DEFAULT_CAPACITY)
    /// bytes.
    ///
    /// `source` is any `AsyncRead + AsyncSeek + Unpin` stream (read from offset 0, whatever its
    /// cursor is now: the first read seeks it there), or a fetcher such as a
    /// [`PositionalFetch`](crate::fetch::PositionalFetch).
    pub fn new(source: impl IntoFetch<Fetch = F>) -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY, source)
    }

    /// An input over `source` with a window of `capacity` bytes.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0. Use [`try_with_capacity`](Self::try_with_capacity) to get an error
    /// instead.
    pub fn with_capacity(capacity: usize, source: impl IntoFetch<Fetch = F>) -> Self {
        match Self::try_with_capacity(capacity, source) {
            Ok(input) => input,
            Err(_) => panic!("AsyncBufferedInput capacity must be at least 1 byte, got 0"),
        }
    }

    /// An input over `source` with a window of `capacity` bytes, or an error if `capacity` is 0.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `capacity` is 0.
    pub fn try_with_capacity(
        capacity: usize,
        source: impl IntoFetch<Fetch = F>,
    ) -> io::Result<Self> {
        if capacity == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "AsyncBufferedInput capacity must be at least 1 byte, got 0",
            ));
        }
        let fetch = source.into_fetch();
        Ok(Self {
            window: Window::new(),
            pos: 0,
            capacity,
            stats: Stats::default(),
            window_mark: 0,
            fetched_to: 0,
            end_seek: None,
            checksum: None,
            resource: fetch.resource(),
            kept: Kept::default(),
            fetch,
        })
    }

    /// Reads one byte.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` at the end of the source; the source's own error kind if it fails. The
    /// position is unchanged after an error.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, no byte is consumed.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(vec![7u8, 8]));
    /// assert_eq!(input.read_byte().await?, 7);
    /// assert_eq!(input.read_byte().await?, 8);
    /// assert!(input.read_byte().await.is_err());
    /// assert_eq!(input.position(), 2);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn read_byte(&mut self) -> impl Future<Output = io::Result<u8>> + use<'_, F> {
        ReadFuture::new(self, ReadByte)
    }

    /// Fills `dst` with the next `dst.len()` bytes, or fails without consuming anything.
    ///
    /// What the window holds is copied in one step; a remainder of at least the capacity is
    /// fetched straight into `dst`, a smaller one refills the window once.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` if fewer than `dst.len()` bytes remain (the error names the position,
    /// the length requested and the length available); the source's own error kind if it fails.
    /// The position is unchanged after an error, and the contents of `dst` are unspecified.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, no byte is consumed, and the
    /// next read returns the bytes this one would have.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let data: Vec<u8> = (0..100).collect();
    /// let mut input = AsyncBufferedInput::with_capacity(16, std::io::Cursor::new(data));
    /// let mut buf = [0u8; 40]; // larger than the window: read straight into `buf`
    /// input.read_bytes(&mut buf).await?;
    /// assert_eq!(buf[39], 39);
    ///
    /// let mut rest = [0u8; 61];
    /// let err = input.read_bytes(&mut rest).await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
    /// assert_eq!(input.position(), 40);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn read_bytes<'s, 'd>(
        &'s mut self,
        dst: &'d mut [u8],
    ) -> impl Future<Output = io::Result<()>> + use<'s, 'd, F> {
        ReadFuture::new(self, ReadBytes { dst })
    }

    /// Reads the next `len` bytes as [`Bytes`].
    ///
    /// A request of at most the capacity is served from the window (refilled if needed): when
    /// it is at least a quarter of the capacity, as a shared slice of the window, without
    /// copying; a smaller one is copied out, so that a result never keeps alive more than four
    /// times its length of window buffer, however long it is kept. A request larger than the
    /// capacity is read into a new buffer, after checking it against the source's
    /// [`length`](Self::length), so a corrupt length never allocates more than the data holds.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` if fewer than `len` bytes remain; the source's own error kind if it
    /// fails. The position is unchanged after an error.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, no byte is consumed.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(b"hello world".to_vec()));
    /// let hello = input.read_bytes_owned(5).await?;
    /// assert_eq!(&hello[..], b"hello");
    /// assert_eq!(input.position(), 5);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn read_bytes_owned(&mut self, len: usize) -> io::Result<Bytes> {
        const OP: &str = "read_bytes_owned";
        let at = self.pos;
        let amount = Amount::Exact(len as u64);
        if len == 0 {
            return Ok(Bytes::new());
        }
        if len <= self.capacity {
            poll_fn(|cx| self.poll_fill_at(cx, at, len))
                .await
                .map_err(|e| self.error(e, OP, at, amount))?;
            let available = self.window_at(at).len();
            if available < len {
                return Err(self.error(Error::eof(available as u64), OP, at, amount));
            }
            if len < self.capacity / SHARE_FRACTION {
                let copy = Bytes::copy_from_slice(&self.window_at(at)[..len]);
                self.consume_window(len);
                return Ok(copy);
            }
            // Hand out the window's prefix up to the end of the request; the window keeps the
            // bytes after it (and allocates a new buffer at its next refill). What it hands out
            // leaves the window: checksum it first (the window holds it: no I/O).
            if self.checksum.is_some() {
                poll_fn(|cx| self.poll_fold_until(cx, at + len as u64))
                    .await
                    .map_err(|e| self.error(e, OP, at, amount))?;
            }
            let end = (at - self.window.start()) as usize + len;
            let head = self.window.split_to(end);
            self.finish_read(at, len, 0);
            self.debug_assert_invariants();
            return Ok(head.slice(end - len..));
        }
        let length = poll_fn(|cx| self.poll_length(cx))
            .await
            .map_err(|e| self.error(e, OP, at, amount))?;
        let available = length.saturating_sub(at);
        if available < len as u64 {
            return Err(self.error(Error::eof(available), OP, at, amount));
        }
        let mut out = vec![0u8; len];
        let mut exact = ReadExact::default();
        poll_fn(|cx| self.poll_read_exact_at(cx, at, &mut out, &mut exact))
            .await
            .map_err(|e| self.error(e, OP, at, amount))?;
        self.finish_read(at, len, exact.direct());
        Ok(Bytes::from(out))
    }

    /// Moves the position to `pos`, without I/O.
    ///
    /// A target inside the window is served from it by the next read; any other target is
    /// fetched by the next read. Seeking past the end is allowed; the next read then fails with
    /// `UnexpectedEof`.
    ///
    /// While [checksumming](Self::start_checksum), a seek forward includes the bytes it skips in
    /// the checksum (they are read when the checksum is next folded), and a seek back makes the
    /// next [`checksum`](Self::checksum) fail, as in Lucene.
    #[inline]
    pub fn seek_to(&mut self, pos: u64) {
        self.end_seek = None;
        self.note_seek(pos);
        self.move_to(pos);
    }

    /// Moves the position forward by `n` bytes, without I/O (see [`seek_to`](Self::seek_to)).
    ///
    /// # Errors
    ///
    /// `InvalidInput` if the new position would overflow a `u64`; the position is unchanged.
    pub fn skip_bytes(&mut self, n: u64) -> io::Result<()> {
        let Some(pos) = self.pos.checked_add(n) else {
            return Err(self.error(
                Error::InvalidInput(format!("skipping {n} bytes overflows the position")),
                "skip_bytes",
                self.pos,
                Amount::None,
            ));
        };
        self.seek_to(pos);
        Ok(())
    }

    /// The position of the next byte to read. Never does I/O.
    #[inline]
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The source's length in bytes: asked once (for a stream, with a seek to its end), then
    /// known.
    ///
    /// # Errors
    ///
    /// The source's own error kind if asking fails; the next call asks again.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is consumed, and a request the dropped future started is picked up
    /// (or, for a stream, completed) by the next operation.
    pub async fn length(&mut self) -> io::Result<u64> {
        let at = self.pos;
        poll_fn(|cx| self.poll_length(cx))
            .await
            .map_err(|e| self.error(e, "length", at, Amount::None))
    }

    /// The length, if it is known without I/O: asked before, or known from the start (a slice).
    pub fn known_length(&self) -> Option<u64> {
        self.fetch.known_length()
    }

    /// The window's size in bytes.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The unread part of the window: the bytes from [`position`](Self::position) that are
    /// already buffered (empty if the position is outside the window).
    #[inline]
    pub fn buffer(&self) -> &[u8] {
        self.window_at(self.pos)
    }

    /// The range of offsets the window holds. A seek inside it (ends included) costs no I/O.
    pub fn window(&self) -> Range<u64> {
        self.window.start()..self.window.end()
    }

    /// A snapshot of the counters of work done so far.
    #[inline]
    pub fn stats(&self) -> Stats {
        debug_assert!(
            self.window_mark <= self.pos,
            "window_mark past the position"
        );
        let mut stats = self.stats;
        stats.bytes_from_window += self.pos - self.window_mark;
        stats.underlying_reads = self.fetch.reads();
        stats.underlying_seeks = self.fetch.seeks();
        stats
    }

    /// What the input reads, as errors name it: a path for a file opened with
    /// [`open`](Self::open) or a [`FileSource`](crate::source::FileSource), a URL for an object,
    /// "slice NAME [a..b) of PARENT" for a [slice](Self::slice_named); `None` for a stream unless
    /// set with [`with_resource`](Self::with_resource).
    pub fn resource(&self) -> Option<&str> {
        self.resource.as_deref()
    }

    /// Names what the input reads, for its errors (builder style).
    #[must_use]
    pub fn with_resource(mut self, resource: impl Into<Arc<str>>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// A corruption error for a format read from this input: at `position` of this input's
    /// resource, `expected` was required and `found` is there. An `InvalidData`
    /// [`io::Error`] carrying a [`CorruptError`](crate::CorruptError).
    pub fn corrupt_at(
        &self,
        position: u64,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> io::Error {
        crate::CorruptError::new(
            self.resource.as_deref().map(str::to_owned),
            position,
            expected,
            found,
        )
        .into()
    }

    /// [`corrupt_at`](Self::corrupt_at) the position.
    pub fn corrupt(&self, expected: impl Into<String>, found: impl Into<String>) -> io::Error {
        self.corrupt_at(self.pos, expected, found)
    }

    /// Gives back the window's buffer and what the fetcher holds (read-ahead chunks), keeping
    /// the position: the next read allocates and fetches again. For inputs kept open but idle.
    pub fn release(&mut self) {
        self.kept.clear();
        self.fold_window();
        self.window.release();
        self.fetch.release();
    }

    /// The fetcher: for a [`PositionalFetch`](crate::fetch::PositionalFetch), the source and
    /// the read-ahead.
    pub fn fetch(&self) -> &F {
        &self.fetch
    }

    /// The fetcher, mutably (for example to change a
    /// [`PositionalFetch`](crate::fetch::PositionalFetch)'s read-ahead). The window is kept.
    pub fn fetch_mut(&mut self) -> &mut F {
        &mut self.fetch
    }

    // ----- crate helpers -----

    /// The public error of `op` at `at`, naming this input's resource.
    pub(super) fn error(&self, e: Error, op: &'static str, at: u64, amount: Amount) -> io::Error {
        e.into_io(self.resource.as_ref(), op, at, amount)
    }

    /// The window's bytes from offset `at` on; empty when `at` is outside the window.
    #[inline]
    pub(super) fn window_at(&self, at: u64) -> &[u8] {
        self.window.bytes_from(at)
    }

    /// Consumes `n` bytes of the window at the position; the caller has checked they are there.
    #[inline]
    pub(super) fn consume_window(&mut self, n: usize) {
        debug_assert!(
            n <= self.buffer().len(),
            "consume_window({n}) past the window"
        );
        self.pos += n as u64; // counted by `stats()`
    }

    /// Completes a read of `total` bytes that started at `at` (the position) and went through
    /// a slow path: moves the position past them and counts them, `direct` of them read straight
    /// into the caller's buffer and the rest through the window.
    pub(super) fn finish_read(&mut self, at: u64, total: usize, direct: usize) {
        debug_assert_eq!(at, self.pos, "a read finishing away from the position");
        debug_assert!(direct <= total);
        self.move_to(at + total as u64);
        self.stats.bytes_from_window += (total - direct) as u64;
        self.stats.bytes_direct += direct as u64;
    }

    /// Makes the window hold the bytes `[at, at + need)`, or everything from `at` to the end if
    /// that is shorter (the caller tells the two apart). `need` is capped at the capacity.
    ///
    /// If the window does not hold them, it keeps only its bytes from the refill's start on and
    /// fetches as much as it can hold after them, continuing short fetches until `need` bytes
    /// are there or the source ends. A refill that continues the window (`at` inside it or at
    /// its end) starts at `at`; one that does not (a seek elsewhere) starts at the block of
    /// `capacity` bytes, aligned to the capacity, that holds `at` (moved back only as far as
    /// `need` requires), so later reads anywhere in that block, before `at` too, are served
    /// without another refill.
    pub(super) fn poll_fill_at(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        need: usize,
    ) -> Poll<Result<(), Error>> {
        let need = need.min(self.capacity);
        loop {
            if self.window_at(at).len() >= need {
                return Poll::Ready(Ok(()));
            }
            // What leaves the window is checksummed first.
            if self.checksum.is_some() {
                ready!(self.poll_fold_until(cx, at))?;
            }
            let continues = self.window.start() <= at && at <= self.window.end();
            let start = if continues || at == self.fetched_to {
                at
            } else {
                let block = at - at % self.capacity as u64;
                block.max(
                    at.saturating_add(need as u64)
                        .saturating_sub(self.capacity as u64),
                )
            };
            debug_assert!(start <= at);
            self.window.keep(start);
            self.debug_assert_invariants();
            let end = self.window.end();
            let mut spare = ReadBuf::new(self.window.spare(self.capacity));
            let room = spare.remaining();
            let n = ready!(fetch_counted(
                &mut self.fetch,
                &mut self.stats,
                &mut self.fetched_to,
                cx,
                end,
                &mut spare
            ))?;
            self.window.commit(n);
            tracing::trace!(at = end, requested = room, read = n, "window refill");
            if n == 0 {
                return Poll::Ready(Ok(()));
            }
        }
    }

    /// Fills `dst` with the bytes `[at, at + dst.len())`, without moving the position: one copy
    /// of what the window holds and of what a failed attempt kept (`kept`), then one fetch for
    /// the remainder (continued if it comes back short), straight into `dst` if the remainder is
    /// at least the capacity, through a refilled window otherwise. `state` starts as
    /// `ReadExact::default()` (or `ReadExact::step()`) and carries the progress across
    /// `Pending`; a past-the-end error counts the bytes available from `at`.
    ///
    /// When it fails after fetching bytes straight into `dst`, it keeps them for its retry
    /// (`keep_for_retry`), unless `state` is a step of a longer read, which keeps its own; when
    /// no retry can get past its error, it drops what is kept.
    pub(super) fn poll_read_exact_at(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        dst: &mut [u8],
        state: &mut ReadExact,
    ) -> Poll<Result<(), Error>> {
        let have = match state.have {
            Some(have) => have,
            None => {
                let held = self.window_at(at);
                let window = held.len().min(dst.len());
                dst[..window].copy_from_slice(&held[..window]);
                state.kept = self.kept.copy_from(at + window as u64, &mut dst[window..]);
                state.window = window;
                state.have = Some(window + state.kept);
                window + state.kept
            }
        };
        if state.kept > 0 && self.checksum.is_some() {
            // Kept bytes are not in the window: fold them here, after what comes before them
            // (folding is by offset, so doing it again after `Pending` changes nothing).
            let kept_at = at + state.window as u64;
            ready!(self.poll_fold_until(cx, kept_at)).map_err(|e| e.after(state.window as u64))?;
            if let Some(checksum) = self.checksum.as_deref_mut() {
                checksum.fold(kept_at, &dst[state.window..have], self.pos);
            }
        }
        let from = at + have as u64;
        let rest = &mut dst[have..];
        if rest.is_empty() {
            return Poll::Ready(Ok(()));
        }
        let read = if rest.len() < self.capacity {
            ready!(self.poll_fill_at(cx, from, rest.len()))
                .map_err(|e| e.after(have as u64))
                .and_then(|()| {
                    let held = self.window_at(from);
                    if held.len() < rest.len() {
                        return Err(Error::eof((have + held.len()) as u64));
                    }
                    rest.copy_from_slice(&held[..rest.len()]);
                    Ok(())
                })
        } else {
            if self.checksum.is_some() {
                ready!(self.poll_fold_until(cx, from)).map_err(|e| e.after(have as u64))?;
            }
            ready!(self.poll_read_direct(cx, from, rest, &mut state.direct))
                .map_err(|e| e.after(have as u64))
        };
        if let Err(e) = &read {
            // Keep what was fetched straight into `dst` (the window keeps what it fetched), or
            // drop what is kept if no retry can get past `e`.
            if state.keep && (state.direct > 0 || !e.can_succeed_on_retry()) {
                let fetched = &dst[..have + state.direct];
                self.keep_for_retry(at, fetched.len(), e, |offset, out| {
                    out.copy_from_slice(&fetched[offset..offset + out.len()]);
                });
            }
        }
        Poll::Ready(read)
    }

    /// After a read at the position failed with `e`: keeps the bytes `[at, at + len)` it had,
    /// for its retry, if `e` is an error a retry can get past, at most
    /// [`MAX_KEPT_FOR_RETRY`](Self::MAX_KEPT_FOR_RETRY) from where the kept bytes start;
    /// otherwise drops what is kept. `fill(offset, out)` writes the bytes at `at + offset`, and is
    /// asked only for those not kept yet.
    pub(super) fn keep_for_retry(
        &mut self,
        at: u64,
        len: usize,
        e: &Error,
        fill: impl FnOnce(usize, &mut [u8]),
    ) {
        debug_assert!(at >= self.pos, "keeping bytes before the position");
        if e.can_succeed_on_retry() {
            self.kept.keep(at, len, Self::MAX_KEPT_FOR_RETRY, fill);
        } else {
            self.kept.clear();
        }
    }

    /// The length, asked of the fetcher once, as an internal error.
    pub(super) fn poll_length(&mut self, cx: &mut Context<'_>) -> Poll<Result<u64, Error>> {
        self.fetch.poll_length(cx).map_err(Error::Source)
    }

    // ----- private helpers -----

    fn debug_assert_invariants(&self) {
        debug_assert!(
            self.window.len() <= self.capacity,
            "window holds {} bytes, capacity {}",
            self.window.len(),
            self.capacity
        );
        debug_assert!(
            self.window_mark <= self.pos,
            "window_mark past the position"
        );
    }

    /// Sets the position to `pos` for anything but a window read (those only advance `pos`):
    /// books the window reads since the last move first.
    #[inline]
    fn move_to(&mut self, pos: u64) {
        debug_assert!(
            self.window_mark <= self.pos,
            "window_mark past the position"
        );
        self.stats.bytes_from_window += self.pos - self.window_mark;
        self.pos = pos;
        self.window_mark = pos;
        self.kept.clear();
    }

    /// Fetches the bytes at `from + *done..` straight into `dst[*done..]` until `dst` is full.
    /// `*done` survives `Pending`, so short fetches are continued; a past-the-end error counts
    /// the bytes available from `from`.
    fn poll_read_direct(
        &mut self,
        cx: &mut Context<'_>,
        from: u64,
        dst: &mut [u8],
        done: &mut usize,
    ) -> Poll<Result<(), Error>> {
        while *done < dst.len() {
            let at = from + *done as u64;
            let mut buf = ReadBuf::new(&mut dst[*done..]);
            let n = ready!(fetch_counted(
                &mut self.fetch,
                &mut self.stats,
                &mut self.fetched_to,
                cx,
                at,
                &mut buf
            ))?;
            tracing::trace!(at, requested = dst.len() - *done, read = n, "direct read");
            if let Some(checksum) = self.checksum.as_deref_mut() {
                checksum.fold(at, &dst[*done..*done + n], self.pos);
            }
            if n == 0 {
                return Poll::Ready(Err(Error::eof(*done as u64)));
            }
            *done += n;
        }
        Poll::Ready(Ok(()))
    }
}

/// One fetch of the bytes at `at` into `buf`, counted, and where it ended kept in `fetched_to`:
/// how many came. At or past a known end, none, and nothing is asked.
#[inline]
pub(super) fn fetch_counted<F: Fetch>(
    fetch: &mut F,
    stats: &mut Stats,
    fetched_to: &mut u64,
    cx: &mut Context<'_>,
    at: u64,
    buf: &mut ReadBuf<'_>,
) -> Poll<Result<usize, Error>> {
    if fetch.known_length().is_some_and(|length| at >= length) {
        return Poll::Ready(Ok(0));
    }
    let before = buf.filled().len();
    ready!(fetch.poll_fetch(cx, at, buf))?;
    let n = buf.filled().len() - before;
    stats.bytes_from_source += n as u64;
    *fetched_to = at + n as u64;
    Poll::Ready(Ok(n))
}

/// Reaching the stream of an input made by [`AsyncBufferedInput::new`] from a stream.
impl<R: AsyncRead + AsyncSeek + Unpin> AsyncBufferedInput<StreamFetch<R>> {
    /// The stream.
    pub fn get_ref(&self) -> &R {
        self.fetch.get_ref()
    }

    /// The stream, mutably.
    ///
    /// Since the caller may move the stream's cursor, the input forgets where it is, and its
    /// next fetch seeks first. The window is kept: the caller must not change the bytes it
    /// covers.
    pub fn get_mut(&mut self) -> &mut R {
        self.fetch.get_mut()
    }

    /// The stream, dropping the window. Its cursor is wherever the input's last fetch or seek
    /// left it (usually the end of the window, ahead of [`position`](Self::position)); seek it
    /// before reading from it.
    pub fn into_inner(self) -> R {
        self.fetch.into_inner()
    }
}

/// The progress of a [`poll_read_exact_at`](AsyncBufferedInput::poll_read_exact_at).
#[derive(Debug)]
pub(super) struct ReadExact {
    /// The bytes of the destination's start that are there (copied from the window, then from
    /// the bytes kept by a failed attempt) at the first poll; `None` before it.
    have: Option<usize>,
    /// Of `have`: those copied from the window, and those kept by a failed attempt.
    window: usize,
    kept: usize,
    /// The bytes fetched straight into the destination so far, after `have`.
    direct: usize,
    /// Whether a failure keeps what was fetched (`false` for a step of a longer read).
    keep: bool,
}

impl Default for ReadExact {
    fn default() -> Self {
        Self {
            have: None,
            window: 0,
            kept: 0,
            direct: 0,
            keep: true,
        }
    }
}

impl ReadExact {
    /// The progress of a step of a longer read, which keeps its bytes itself when it fails.
    pub(super) fn step() -> Self {
        Self {
            keep: false,
            ..Self::default()
        }
    }

    /// The bytes that did not come from the window: fetched straight into the destination, or
    /// kept from a failed attempt (for `stats`).
    pub(super) fn direct(&self) -> usize {
        self.kept + self.direct
    }

    /// How many bytes at the destination's start are there.
    pub(super) fn done(&self) -> usize {
        self.have.unwrap_or(0) + self.direct
    }
}

/// [`AsyncBufferedInput::read_byte`].
struct ReadByte;

impl<F: Fetch> WindowRead<F> for ReadByte {
    type Output = u8;
    type Slow = ();

    fn op(&self) -> (&'static str, Amount) {
        ("read_byte", Amount::Exact(1))
    }

    #[inline(always)]
    fn fast(&mut self, input: &mut AsyncBufferedInput<F>) -> Option<u8> {
        let b = *input.window_at(input.pos).first()?;
        input.pos += 1; // counted by `stats()`
        Some(b)
    }

    fn poll_slow(
        &mut self,
        _: &mut (),
        input: &mut AsyncBufferedInput<F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<u8, Error>> {
        let at = input.pos;
        ready!(input.poll_fill_at(cx, at, 1))?;
        let Some(&b) = input.window_at(at).first() else {
            return Poll::Ready(Err(Error::eof(0)));
        };
        input.consume_window(1);
        Poll::Ready(Ok(b))
    }
}

/// [`AsyncBufferedInput::read_bytes`].
struct ReadBytes<'d> {
    dst: &'d mut [u8],
}

impl<F: Fetch> WindowRead<F> for ReadBytes<'_> {
    type Output = ();
    type Slow = ReadExact;

    fn op(&self) -> (&'static str, Amount) {
        ("read_bytes", Amount::Exact(self.dst.len() as u64))
    }

    #[inline(always)]
    fn fast(&mut self, input: &mut AsyncBufferedInput<F>) -> Option<()> {
        self.dst
            .copy_from_slice(input.window.get(input.pos, self.dst.len())?);
        input.pos += self.dst.len() as u64; // counted by `stats()`
        Some(())
    }

    fn poll_slow(
        &mut self,
        exact: &mut ReadExact,
        input: &mut AsyncBufferedInput<F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>> {
        let at = input.pos;
        ready!(input.poll_read_exact_at(cx, at, self.dst, exact))?;
        input.finish_read(at, self.dst.len(), exact.direct());
        Poll::Ready(Ok(()))
    }
}

impl<F: Fetch> AsyncRead for AsyncBufferedInput<F> {
    /// Reads what the window holds at the position; if it holds nothing there, either fetches
    /// straight into `buf` (when `buf` has room for at least the capacity) or refills the window
    /// once. May return fewer bytes than `buf` has room for; 0 only at the end of the source.
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let at = me.pos;
        let amount = Amount::UpTo(buf.remaining() as u64);
        if me.window_at(at).is_empty() {
            if buf.remaining() >= me.capacity {
                if me.checksum.is_some() {
                    ready!(me.poll_fold_until(cx, at))
                        .map_err(|e| me.error(e, "poll_read", at, amount))?;
                }
                let before = buf.filled().len();
                let n = ready!(fetch_counted(
                    &mut me.fetch,
                    &mut me.stats,
                    &mut me.fetched_to,
                    cx,
                    at,
                    buf
                ))
                .map_err(|e| me.error(e, "poll_read", at, amount))?;
                tracing::trace!(at, read = n, "direct read");
                if let Some(checksum) = me.checksum.as_deref_mut() {
                    checksum.fold(at, &buf.filled()[before..], me.pos);
                }
                me.finish_read(at, n, n);
                return Poll::Ready(Ok(()));
            }
            ready!(me.poll_fill_at(cx, at, 1)).map_err(|e| me.error(e, "poll_read", at, amount))?;
        }
        let held = me.window_at(at);
        let n = held.len().min(buf.remaining());
        buf.put_slice(&held[..n]);
        me.pos += n as u64; // counted by `stats()`
        Poll::Ready(Ok(()))
    }
}

impl<F: Fetch> AsyncBufRead for AsyncBufferedInput<F> {
    /// Returns the window's bytes at the position, refilling it first if it holds none there.
    /// Empty only at the end of the source.
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let me = self.get_mut();
        let at = me.pos;
        if me.window_at(at).is_empty() {
            ready!(me.poll_fill_at(cx, at, 1))
                .map_err(|e| me.error(e, "poll_fill_buf", at, Amount::None))?;
        }
        Poll::Ready(Ok(me.window_at(at)))
    }

    /// Consumes `amt` bytes of what `poll_fill_buf` returned.
    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.get_mut().consume_window(amt);
    }
}

impl<F: Fetch> AsyncSeek for AsyncBufferedInput<F> {
    /// Moves the position. `Start` and `Current` (including `Current(0)`) take effect at once,
    /// without I/O, and keep the window: a target inside it is served from it. `End` needs the
    /// source's length; if it is not known yet, `poll_complete` asks for it.
    ///
    /// A target before 0 or past `u64::MAX` is an `InvalidInput` error and changes nothing.
    ///
    /// An `End` seek whose future was dropped before it completed is completed by the next
    /// `poll_complete` (the next seek through `AsyncSeekExt`), as with tokio's `File`, unless
    /// the position changed in between (a read that returned bytes,
    /// [`seek_to`](AsyncBufferedInput::seek_to), [`skip_bytes`](AsyncBufferedInput::skip_bytes)):
    /// then it is abandoned. One that failed is forgotten.
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let me = self.get_mut();
        me.end_seek = None;
        let base = match position {
            SeekFrom::Start(target) => {
                me.note_seek(target);
                me.move_to(target);
                return Ok(());
            }
            SeekFrom::Current(offset) => (me.pos, offset),
            SeekFrom::End(offset) => match me.fetch.known_length() {
                Some(length) => (length, offset),
                None => {
                    me.end_seek = Some(EndSeek {
                        offset,
                        from: me.pos,
                    });
                    return Ok(());
                }
            },
        };
        let target = seek_target(me.resource.as_ref(), me.pos, base.0, base.1)?;
        me.note_seek(target);
        me.move_to(target);
        Ok(())
    }

    /// Returns the position once the last `start_seek` took effect.
    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let me = self.get_mut();
        if let Some(EndSeek { offset, from }) = me.end_seek {
            if from == me.pos {
                // Whatever the outcome, this seek is done: a failed one is not applied later.
                let length = ready!(me.fetch.poll_length(cx));
                me.end_seek = None;
                let length =
                    length.map_err(|e| me.error(Error::Source(e), "seek", me.pos, Amount::None))?;
                let target = seek_target(me.resource.as_ref(), me.pos, length, offset)?;
                me.note_seek(target);
                me.move_to(target);
            } else {
                me.end_seek = None; // abandoned: the position moved since
            }
        }
        Poll::Ready(Ok(me.pos))
    }
}

/// `base + offset`, or `InvalidInput` (naming the position `pos` the seek started from) if that
/// is before 0 or past `u64::MAX`.
fn seek_target(resource: Option<&Arc<str>>, pos: u64, base: u64, offset: i64) -> io::Result<u64> {
    base.checked_add_signed(offset).ok_or_else(|| {
        Error::InvalidInput(format!(
            "offset {offset} from {base} is outside 0..=u64::MAX"
        ))
        .into_io(resource, "seek", pos, Amount::None)
    })
}

impl<F: fmt::Debug> fmt::Debug for AsyncBufferedInput<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncBufferedInput")
            .field("resource", &self.resource)
            .field("fetch", &self.fetch)
            .field("position", &self.pos)
            .field("window", &(self.window.start()..self.window.end()))
            .field(
                "filled",
                &format_args!("{}/{}", self.window.len(), self.capacity),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[tokio::test]
    async fn refill_keeps_no_bytes_before_the_request() {
        let mut input = AsyncBufferedInput::with_capacity(8, Cursor::new(data(100)));
        let mut buf = [0u8; 5];
        input.read_bytes(&mut buf).await.unwrap();
        assert_eq!(input.window(), 0..8);
        input.read_bytes(&mut buf).await.unwrap();
        // 3 bytes came from the old window, then the window was refilled from 8.
        assert_eq!(input.window(), 8..16);
        assert_eq!(buf, data(100)[5..10]);
    }

    #[tokio::test]
    async fn seek_outside_then_back_keeps_window() {
        let mut input = AsyncBufferedInput::with_capacity(16, Cursor::new(data(100)));
        input.read_byte().await.unwrap();
        let reads = input.stats().underlying_reads;
        input.seek_to(90);
        input.seek_to(3);
        assert_eq!(input.read_byte().await.unwrap(), data(100)[3]);
        assert_eq!(input.stats().underlying_reads, reads);
    }

    #[test]
    fn zero_capacity_is_rejected() {
        let err = AsyncBufferedInput::try_with_capacity(0, Cursor::new(Vec::new())).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("at least 1 byte"));
    }

    #[test]
    fn debug_shows_state_not_bytes() {
        let input = AsyncBufferedInput::with_capacity(16, Cursor::new(vec![0xAB; 4]));
        let shown = format!("{input:?}");
        assert!(shown.contains("position: 0"), "{shown}");
        assert!(shown.contains("0/16"), "{shown}");
    }
}
