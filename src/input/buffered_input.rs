use std::fmt;
use std::future::Future;
use std::io::{self, SeekFrom};
use std::ops::Range;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use futures::future::poll_fn;
use tokio::io::{AsyncBufRead, AsyncRead, AsyncSeek, ReadBuf};

use super::window::Window;
use super::window_read::{ReadFuture, WindowRead};
use crate::error::InputError;
use crate::seek_from::{self, SeekStart};
use crate::stats::Stats;

/// A buffered, seekable async input over a slow source, in the manner of Lucene's
/// `BufferedIndexInput`.
///
/// The input keeps a window (a [`BytesMut`](bytes::BytesMut) of at most [`capacity`](Self::capacity) bytes)
/// over the source and a logical [`position`](Self::position). Reads are served from the window
/// when it holds the bytes; otherwise:
///
/// - a request is first served from what the window holds, in one copy;
/// - a remainder of at least the capacity is read by the source straight into the caller's
///   buffer (no copy through the window);
/// - a smaller remainder refills the window once, reading as much as the window holds, and is
///   copied from there.
///
/// So small requests never turn into one source read each, and large ones never pay for a
/// second copy. Short reads from the source are continued, not treated as errors.
///
/// # Seeking
///
/// [`seek_to`](Self::seek_to) (and [`AsyncSeek`] with `Start` or `Current`) never does I/O: it
/// only moves the position. A target inside the window is served from it, backward or forward;
/// any other target is fetched by the next read. `SeekFrom::End` needs the source's length,
/// which is asked once and then cached.
///
/// # Errors and cancellation
///
/// A read either completes or leaves [`position`](Self::position) where it was: a read past the
/// end, a source error or a dropped future consumes nothing, and the input stays usable. Where
/// the source's own cursor is does not matter: the input tracks it and seeks the source before
/// reading when it has to.
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
// Layout: `repr(C)` puts the fields a window hit reads first (`window`: the buffer's pointer and
// length, `filled`, `start`; then `pos`: 56 bytes) and `align(64)` keeps them in one cache line
// wherever the input lives. Without it, 100-byte reads ran 15-30% slower in 6 of 20 runs of one bench
// binary, depending only on where the stack put the caller's future; with it, 0 of 20 (see
// BENCHMARKS.md, "Layout").
#[repr(C, align(64))]
pub struct AsyncBufferedInput<R> {
    // The source's bytes at hand, at most `capacity` of them (checked by
    // `debug_assert_invariants`). `pos` is independent of the window: when the window holds the
    // bytes at `pos` they are served from it, otherwise the next read fetches them. Keeping `pos`
    // apart from the window is what makes every read all-or-nothing: a read works on offsets and
    // only moves `pos` once it has all its bytes.
    window: Window,
    pos: u64,
    capacity: usize,
    // The source's cursor, where known. `None` after an error, after `get_mut`, and before the
    // first seek; then the next source read seeks first.
    inner_pos: Option<u64>,
    // A seek started on the source whose `poll_complete` has not returned yet (its future may
    // have been dropped). It is completed before any other source operation.
    seek_in_flight: Option<SeekFrom>,
    // The source's length, asked once.
    length: Option<u64>,
    // A `SeekFrom::End` asked through `AsyncSeek::start_seek` before the length was known.
    pending_end_seek: Option<i64>,
    // `stats.bytes_from_window` leaves out the window reads since the position was last *set*
    // (by `move_to`): the hot paths only advance `pos`, and `stats()` adds `pos - window_mark`.
    // Invariant: `window_mark <= pos`, and between two `move_to`s `pos` only moves forward by
    // bytes handed out of the window.
    stats: Stats,
    window_mark: u64,
    inner: R,
}

impl<R> AsyncBufferedInput<R> {
    /// The window size [`new`](Self::new) uses: 8 KiB.
    pub const DEFAULT_CAPACITY: usize = 8192;
}

impl<R: AsyncRead + AsyncSeek + Unpin> AsyncBufferedInput<R> {
    /// Wraps `inner` with a window of [`DEFAULT_CAPACITY`](Self::DEFAULT_CAPACITY) bytes.
    ///
    /// The input reads the source from offset 0, whatever the source's cursor is now: its first
    /// read seeks the source there.
    pub fn new(inner: R) -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY, inner)
    }

    /// Wraps `inner` with a window of `capacity` bytes.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0. Use [`try_with_capacity`](Self::try_with_capacity) to get an error
    /// instead.
    pub fn with_capacity(capacity: usize, inner: R) -> Self {
        match Self::try_with_capacity(capacity, inner) {
            Ok(input) => input,
            Err(_) => panic!("AsyncBufferedInput capacity must be at least 1 byte, got 0"),
        }
    }

    /// Wraps `inner` with a window of `capacity` bytes, or fails if `capacity` is 0.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `capacity` is 0.
    pub fn try_with_capacity(capacity: usize, inner: R) -> io::Result<Self> {
        if capacity == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "AsyncBufferedInput capacity must be at least 1 byte, got 0",
            ));
        }
        Ok(Self {
            inner,
            window: Window::new(),
            pos: 0,
            capacity,
            inner_pos: None,
            seek_in_flight: None,
            length: None,
            pending_end_seek: None,
            stats: Stats::default(),
            window_mark: 0,
        })
    }

    /// Reads one byte.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` at the end of the source; the source's own error if it fails. The
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
    pub fn read_byte(&mut self) -> impl Future<Output = io::Result<u8>> + use<'_, R> {
        ReadFuture::new(self, ReadByte)
    }

    /// Fills `dst` with the next `dst.len()` bytes, or fails without consuming anything.
    ///
    /// What the window holds is copied in one step; a remainder of at least the capacity is read
    /// straight into `dst`, a smaller one refills the window once.
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
    ) -> impl Future<Output = io::Result<()>> + use<'s, 'd, R> {
        ReadFuture::new(self, ReadBytes { dst })
    }

    /// Reads the next `len` bytes as [`Bytes`], without copying them when they fit in the window.
    ///
    /// A request of at most the capacity is served from the window (refilled if needed) as a
    /// shared slice of it. A larger one is read into a new buffer, after checking it against the
    /// source's [`length`](Self::length), so a corrupt length never allocates more than the data
    /// holds.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` if fewer than `len` bytes remain; the source's own error if it fails.
    /// The position is unchanged after an error.
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
        let at = self.pos;
        if len == 0 {
            return Ok(Bytes::new());
        }
        if len <= self.capacity {
            poll_fn(|cx| self.poll_fill_for(cx, "read_bytes_owned", at, len)).await?;
            let available = self.window_at(at).len();
            if available < len {
                return Err(InputError::eof(
                    "read_bytes_owned",
                    at,
                    len as u64,
                    available as u64,
                ));
            }
            // Hand out the window's prefix up to the end of the request; the window keeps the
            // bytes after it.
            let end = (at - self.window.start()) as usize + len;
            let head = self.window.split_to(end);
            self.move_to(at + len as u64);
            self.stats.bytes_from_window += len as u64;
            self.debug_assert_invariants();
            return Ok(head.slice(end - len..));
        }
        let length = self.length().await?;
        let available = length.saturating_sub(at);
        if available < len as u64 {
            return Err(InputError::eof(
                "read_bytes_owned",
                at,
                len as u64,
                available,
            ));
        }
        let mut out = vec![0u8; len];
        self.read_exact_at("read_bytes_owned", at, &mut out).await?;
        self.move_to(at + len as u64);
        Ok(Bytes::from(out))
    }

    /// Moves the position to `pos`, without I/O.
    ///
    /// A target inside the window is served from it by the next read; any other target is
    /// fetched from the source by the next read. Seeking past the end is allowed; the next read
    /// then fails with `UnexpectedEof`.
    #[inline]
    pub fn seek_to(&mut self, pos: u64) {
        self.pending_end_seek = None;
        self.move_to(pos);
    }

    /// Moves the position forward by `n` bytes, without I/O (see [`seek_to`](Self::seek_to)).
    ///
    /// # Errors
    ///
    /// `InvalidInput` if the new position would overflow a `u64`; the position is unchanged.
    pub fn skip_bytes(&mut self, n: u64) -> io::Result<()> {
        match self.pos.checked_add(n) {
            Some(pos) => {
                self.move_to(pos);
                Ok(())
            }
            None => Err(InputError::invalid_input(
                "skip_bytes",
                self.pos,
                format!("skipping {n} bytes overflows the position"),
            )),
        }
    }

    /// The position of the next byte to read, as an offset in the source. Never does I/O.
    #[inline]
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The source's length in bytes: asked of the source once (a seek to its end), then cached.
    ///
    /// # Errors
    ///
    /// The source's own error if the seek fails; the next call asks again.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a seek the dropped future started is completed by the next operation, and
    /// nothing is consumed.
    pub async fn length(&mut self) -> io::Result<u64> {
        match self.length {
            Some(length) => Ok(length),
            None => poll_fn(|cx| self.poll_length(cx)).await,
        }
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

    /// The range of source offsets the window holds. A seek inside it (ends included) costs no
    /// I/O.
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
        stats
    }

    /// The source.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The source, mutably.
    ///
    /// Since the caller may move the source's cursor, the input forgets where it is, and its
    /// next source read seeks first. The window is kept: the caller must not change the bytes
    /// it covers.
    pub fn get_mut(&mut self) -> &mut R {
        self.inner_pos = None;
        &mut self.inner
    }

    /// Unwraps the source, dropping the window.
    ///
    /// The source's cursor is wherever the input's last source read or seek left it (usually the
    /// end of the window, ahead of [`position`](Self::position)); a seek started by a dropped
    /// future may still be in flight. Seek the source before reading from it.
    pub fn into_inner(self) -> R {
        self.inner
    }

    // ----- private helpers -----

    /// The window's bytes from source offset `at` on; empty when `at` is outside the window.
    #[inline]
    pub(super) fn window_at(&self, at: u64) -> &[u8] {
        self.window.bytes_from(at)
    }

    fn debug_assert_invariants(&self) {
        debug_assert!(
            self.window.len() <= self.capacity,
            "window holds {} bytes, capacity {}",
            self.window.len(),
            self.capacity
        );
    }

    /// Sets the position to `pos` for anything but a window read (those only advance `pos`):
    /// books the window reads since the last move first.
    #[inline]
    pub(super) fn move_to(&mut self, pos: u64) {
        debug_assert!(
            self.window_mark <= self.pos,
            "window_mark past the position"
        );
        self.stats.bytes_from_window += self.pos - self.window_mark;
        self.pos = pos;
        self.window_mark = pos;
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

    /// Makes the window hold `[at, at + need)` as [`poll_fill_at`](Self::poll_fill_at) does, for
    /// a request `op`: `need` is capped at the capacity, and an error names the request.
    pub(super) fn poll_fill_for(
        &mut self,
        cx: &mut Context<'_>,
        op: &'static str,
        at: u64,
        need: usize,
    ) -> Poll<io::Result<()>> {
        let need = need.min(self.capacity);
        match ready!(self.poll_fill_at(cx, at, need)) {
            Ok(()) => Poll::Ready(Ok(())),
            Err(e) => Poll::Ready(Err(self.contextualize(e, op, at, need, 0))),
        }
    }

    /// Fills `dst` with the source's bytes at `[at, at + dst.len())`, without moving the
    /// position: one copy of what the window holds, then ONE underlying read for the remainder
    /// (continued if the source reads short), straight into `dst` if the remainder is at least
    /// the capacity, through a refilled window otherwise.
    pub(super) async fn read_exact_at(
        &mut self,
        op: &'static str,
        at: u64,
        dst: &mut [u8],
    ) -> io::Result<()> {
        let mut state = ReadExact::default();
        poll_fn(|cx| self.poll_read_exact_at(cx, op, at, dst, &mut state)).await
    }

    /// The poll form of [`read_exact_at`](Self::read_exact_at): `state` starts as
    /// `ReadExact::default()` and carries the progress across `Pending`.
    pub(super) fn poll_read_exact_at(
        &mut self,
        cx: &mut Context<'_>,
        op: &'static str,
        at: u64,
        dst: &mut [u8],
        state: &mut ReadExact,
    ) -> Poll<io::Result<()>> {
        let have = match state.have {
            Some(have) => have,
            None => {
                let held = self.window_at(at);
                let have = held.len().min(dst.len());
                dst[..have].copy_from_slice(&held[..have]);
                if have == dst.len() {
                    self.stats.bytes_from_window += have as u64;
                    return Poll::Ready(Ok(()));
                }
                state.have = Some(have);
                have
            }
        };
        let from = at + have as u64;
        let rest = &mut dst[have..];
        if rest.len() >= self.capacity {
            let read = ready!(self.poll_read_direct(cx, from, rest, &mut state.done));
            if let Err(e) = read {
                let available = have + state.done;
                return Poll::Ready(Err(self.contextualize(e, op, at, dst.len(), available)));
            }
            self.stats.bytes_from_window += have as u64;
            self.stats.bytes_direct += state.done as u64;
            return Poll::Ready(Ok(()));
        }
        let need = rest.len();
        if let Err(e) = ready!(self.poll_fill_at(cx, from, need)) {
            return Poll::Ready(Err(self.contextualize(e, op, at, dst.len(), have)));
        }
        let held = self.window_at(from);
        if held.len() < need {
            let available = (have + held.len()) as u64;
            return Poll::Ready(Err(InputError::eof(op, at, dst.len() as u64, available)));
        }
        rest.copy_from_slice(&held[..need]);
        self.stats.bytes_from_window += dst.len() as u64;
        Poll::Ready(Ok(()))
    }

    /// Turns an error from a source operation into one naming the request; a read past the end
    /// found by the source (a zero-length read) becomes `UnexpectedEof` with the lengths.
    fn contextualize(
        &self,
        e: io::Error,
        op: &'static str,
        at: u64,
        requested: usize,
        available: usize,
    ) -> io::Error {
        if is_end_of_source(&e) {
            InputError::eof(op, at, requested as u64, available as u64)
        } else {
            InputError::source(op, at, requested as u64, e)
        }
    }

    /// Makes the window hold the source's bytes `[at, at + need)`, or everything from `at` to the
    /// end of the source if that is shorter. `need` is at most the capacity.
    ///
    /// If the window does not hold them, it keeps only its bytes from `at` on (all of them if
    /// `at` is outside it) and reads as much as it can hold after them, continuing short reads
    /// until `need` bytes are there or the source ends.
    fn poll_fill_at(&mut self, cx: &mut Context<'_>, at: u64, need: usize) -> Poll<io::Result<()>> {
        debug_assert!(need <= self.capacity, "fill of {need} bytes > capacity");
        loop {
            let have = self.window_at(at).len();
            if have >= need {
                return Poll::Ready(Ok(()));
            }
            self.window.keep(at);
            self.debug_assert_invariants();

            let end = self.window.end();
            ready!(self.poll_source_at(cx, end))?;
            let spare = self.window.spare(self.capacity);
            let room = spare.len();
            let mut read_buf = ReadBuf::new(spare);
            let read = ready!(Pin::new(&mut self.inner).poll_read(cx, &mut read_buf))
                .map(|()| read_buf.filled().len());
            let n = self.after_source_read(end, read)?;
            self.window.commit(n);
            tracing::trace!(at = end, requested = room, read = n, "window refill");
            if n == 0 {
                return Poll::Ready(Ok(()));
            }
        }
    }

    /// Reads the source's bytes at `from + *done..` into `dst[*done..]` until `dst` is full.
    /// `*done` survives `Pending`, so short reads are continued.
    fn poll_read_direct(
        &mut self,
        cx: &mut Context<'_>,
        from: u64,
        dst: &mut [u8],
        done: &mut usize,
    ) -> Poll<io::Result<()>> {
        while *done < dst.len() {
            let at = from + *done as u64;
            ready!(self.poll_source_at(cx, at))?;
            let mut read_buf = ReadBuf::new(&mut dst[*done..]);
            let read = ready!(Pin::new(&mut self.inner).poll_read(cx, &mut read_buf))
                .map(|()| read_buf.filled().len());
            let n = self.after_source_read(at, read)?;
            tracing::trace!(at, requested = dst.len() - *done, read = n, "direct read");
            if n == 0 {
                return Poll::Ready(Err(end_of_source()));
            }
            *done += n;
        }
        Poll::Ready(Ok(()))
    }

    /// Books a completed source read that started at `at`.
    fn after_source_read(&mut self, at: u64, read: io::Result<usize>) -> io::Result<usize> {
        self.stats.underlying_reads += 1;
        match read {
            Ok(n) => {
                self.inner_pos = Some(at + n as u64);
                self.stats.bytes_from_source += n as u64;
                Ok(n)
            }
            Err(e) => {
                // The source may or may not have moved: find out by seeking next time.
                self.inner_pos = None;
                Err(e)
            }
        }
    }

    /// Puts the source's cursor at `target`, seeking only if it is not there already.
    #[inline]
    fn poll_source_at(&mut self, cx: &mut Context<'_>, target: u64) -> Poll<io::Result<()>> {
        if self.seek_in_flight.is_none() && self.inner_pos == Some(target) {
            return Poll::Ready(Ok(())); // sequential reading: the cursor is already there
        }
        self.poll_seek_source_to(cx, target)
    }

    fn poll_seek_source_to(&mut self, cx: &mut Context<'_>, target: u64) -> Poll<io::Result<()>> {
        loop {
            ready!(self.poll_seek_in_flight(cx))?;
            if self.inner_pos == Some(target) {
                return Poll::Ready(Ok(()));
            }
            ready!(self.poll_start_seek(cx, SeekFrom::Start(target)))?;
        }
    }

    pub(super) fn poll_length(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        loop {
            if let Err(e) = ready!(self.poll_seek_in_flight(cx)) {
                return Poll::Ready(Err(InputError::source("length", self.pos, 0, e)));
            }
            if let Some(length) = self.length {
                return Poll::Ready(Ok(length));
            }
            if let Err(e) = ready!(self.poll_start_seek(cx, SeekFrom::End(0))) {
                return Poll::Ready(Err(InputError::source("length", self.pos, 0, e)));
            }
        }
    }

    /// Completes the source seek in flight, if any, and books where it landed.
    fn poll_seek_in_flight(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(seek) = self.seek_in_flight else {
            return Poll::Ready(Ok(()));
        };
        let landed = ready!(Pin::new(&mut self.inner).poll_complete(cx));
        self.seek_in_flight = None;
        match landed {
            Ok(at) => {
                self.inner_pos = Some(at);
                if seek == SeekFrom::End(0) {
                    self.length = Some(at);
                }
                Poll::Ready(Ok(()))
            }
            Err(e) => {
                self.inner_pos = None;
                Poll::Ready(Err(e))
            }
        }
    }

    /// Starts a source seek, after letting any operation the source still has in flight finish
    /// (tokio's `File` refuses to start a seek while a read it was asked for is pending).
    fn poll_start_seek(&mut self, cx: &mut Context<'_>, seek: SeekFrom) -> Poll<io::Result<()>> {
        debug_assert!(self.seek_in_flight.is_none());
        ready!(Pin::new(&mut self.inner).poll_complete(cx))?;
        tracing::debug!(?seek, "source seek");
        self.inner_pos = None;
        self.stats.underlying_seeks += 1;
        Pin::new(&mut self.inner).start_seek(seek)?;
        self.seek_in_flight = Some(seek);
        Poll::Ready(Ok(()))
    }
}

/// The progress of a [`poll_read_exact_at`](AsyncBufferedInput::poll_read_exact_at).
#[derive(Debug, Default)]
pub(super) struct ReadExact {
    /// The bytes copied from the window at the first poll; `None` before it.
    have: Option<usize>,
    /// The bytes the source has read straight into the destination so far.
    done: usize,
}

/// [`AsyncBufferedInput::read_byte`].
struct ReadByte;

impl<R: AsyncRead + AsyncSeek + Unpin> WindowRead<R> for ReadByte {
    type Output = u8;
    type Slow = ();

    #[inline(always)]
    fn fast(&mut self, input: &mut AsyncBufferedInput<R>) -> Option<u8> {
        let b = *input.window_at(input.pos).first()?;
        input.pos += 1; // counted by `stats()`
        Some(b)
    }

    fn poll_slow(
        &mut self,
        _: &mut (),
        input: &mut AsyncBufferedInput<R>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<u8>> {
        let at = input.pos;
        ready!(input.poll_fill_for(cx, "read_byte", at, 1))?;
        match input.window_at(at).first() {
            Some(&b) => {
                input.consume_window(1);
                Poll::Ready(Ok(b))
            }
            None => Poll::Ready(Err(InputError::eof("read_byte", at, 1, 0))),
        }
    }
}

/// [`AsyncBufferedInput::read_bytes`].
struct ReadBytes<'d> {
    dst: &'d mut [u8],
}

impl<R: AsyncRead + AsyncSeek + Unpin> WindowRead<R> for ReadBytes<'_> {
    type Output = ();
    type Slow = ReadExact;

    #[inline(always)]
    fn fast(&mut self, input: &mut AsyncBufferedInput<R>) -> Option<()> {
        self.dst
            .copy_from_slice(input.window.get(input.pos, self.dst.len())?);
        input.pos += self.dst.len() as u64; // counted by `stats()`
        Some(())
    }

    fn poll_slow(
        &mut self,
        exact: &mut ReadExact,
        input: &mut AsyncBufferedInput<R>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        let at = input.pos;
        ready!(input.poll_read_exact_at(cx, "read_bytes", at, self.dst, exact))?;
        input.move_to(at + self.dst.len() as u64);
        Poll::Ready(Ok(()))
    }
}

/// The marker error for "the source ended", turned into a full `UnexpectedEof` by the caller
/// who knows the request.
fn end_of_source() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, EndOfSource)
}

fn is_end_of_source(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<EndOfSource>())
}

#[derive(Debug)]
struct EndOfSource;

impl fmt::Display for EndOfSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the source ended")
    }
}

impl std::error::Error for EndOfSource {}

impl<R: AsyncRead + AsyncSeek + Unpin> AsyncRead for AsyncBufferedInput<R> {
    /// Reads what the window holds at the position; if it holds nothing there, either reads
    /// straight into `buf` (when `buf` has room for at least the capacity) or refills the window
    /// once. May return fewer bytes than `buf` has room for; 0 only at the end of the source.
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let at = me.pos;
        if me.window_at(at).is_empty() {
            if buf.remaining() >= me.capacity {
                ready!(me.poll_source_at(cx, at))
                    .map_err(|e| InputError::source("poll_read", at, buf.remaining() as u64, e))?;
                let before = buf.filled().len();
                let read = ready!(Pin::new(&mut me.inner).poll_read(cx, buf))
                    .map(|()| buf.filled().len() - before);
                let n = me
                    .after_source_read(at, read)
                    .map_err(|e| InputError::source("poll_read", at, buf.remaining() as u64, e))?;
                me.move_to(at + n as u64);
                me.stats.bytes_direct += n as u64;
                return Poll::Ready(Ok(()));
            }
            ready!(me.poll_fill_at(cx, at, 1))
                .map_err(|e| InputError::source("poll_read", at, buf.remaining() as u64, e))?;
        }
        let held = me.window_at(at);
        let n = held.len().min(buf.remaining());
        buf.put_slice(&held[..n]);
        me.move_to(at + n as u64);
        me.stats.bytes_from_window += n as u64;
        Poll::Ready(Ok(()))
    }
}

impl<R: AsyncRead + AsyncSeek + Unpin> AsyncBufRead for AsyncBufferedInput<R> {
    /// Returns the window's bytes at the position, refilling it first if it holds none there.
    /// Empty only at the end of the source.
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let me = self.get_mut();
        let at = me.pos;
        if me.window_at(at).is_empty() {
            ready!(me.poll_fill_at(cx, at, 1))
                .map_err(|e| InputError::source("poll_fill_buf", at, 1, e))?;
        }
        Poll::Ready(Ok(me.window_at(at)))
    }

    /// Consumes `amt` bytes of what `poll_fill_buf` returned.
    fn consume(self: Pin<&mut Self>, amt: usize) {
        let me = self.get_mut();
        debug_assert!(amt <= me.buffer().len(), "consume({amt}) past the window");
        me.pos += amt as u64; // counted by `stats()`
    }
}

impl<R: AsyncRead + AsyncSeek + Unpin> AsyncSeek for AsyncBufferedInput<R> {
    /// Moves the position. `Start` and `Current` (including `Current(0)`) take effect at once,
    /// without I/O, and keep the window: a target inside it is served from it. `End` needs the
    /// source's length; if it is not cached yet, `poll_complete` asks the source for it.
    ///
    /// A target before 0 or past `u64::MAX` is an `InvalidInput` error and changes nothing.
    ///
    /// As with tokio's `File`, an `End` seek whose future was dropped before it completed is
    /// completed by the next `poll_complete` (the next seek through `AsyncSeekExt`), unless
    /// [`seek_to`](AsyncBufferedInput::seek_to) was called in between. One that failed is
    /// forgotten.
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let me = self.get_mut();
        me.pending_end_seek = None;
        match seek_from::start(me.pos, me.length, position)? {
            SeekStart::To(target) => me.move_to(target),
            SeekStart::FromEnd(offset) => me.pending_end_seek = Some(offset),
        }
        Ok(())
    }

    /// Returns the position once the last `start_seek` took effect.
    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let me = self.get_mut();
        if let Some(offset) = me.pending_end_seek {
            // Whatever the outcome, this `End` seek is done: a failed one must not be applied
            // by a later `poll_complete`.
            let length = ready!(me.poll_length(cx));
            me.pending_end_seek = None;
            let target = seek_from::target(me.pos, length?, offset)?;
            me.move_to(target);
        }
        Poll::Ready(Ok(me.pos))
    }
}

impl<R: fmt::Debug> fmt::Debug for AsyncBufferedInput<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncBufferedInput")
            .field("inner", &self.inner)
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
