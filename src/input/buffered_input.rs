use std::fmt;
use std::future::poll_fn;
use std::io;
use std::ops::Range;
use std::sync::Arc;

use crate::error::{Amount, Error};
use crate::input::engine::fetcher::Fetcher;
use crate::input::engine::read_engine::ReadEngine;
use crate::input::fetch::into_fetch::IntoFetch;
use crate::input::fetch::Fetch;
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
///   through the window), and so is one of at least 4 KiB that read-ahead bytes already
///   arrived for (copied once from them, not twice through the window);
/// - a smaller remainder refills the window once, fetching as much as the window holds, and is
///   copied from there.
///
/// So small requests never turn into one source read each, and large ones never pay for a
/// second copy. Short fetches are continued, not treated as errors.
///
/// The source is reached through a [fetcher](crate::Fetch) (`F`): a [`StreamFetch`](crate::StreamFetch) over
/// any
/// `AsyncRead + AsyncSeek` (what [`new`](Self::new) makes of a `tokio::fs::File` or a
/// `Cursor`), or a [`PositionalFetch`](crate::PositionalFetch) over a
/// [`PositionalSource`](crate::source::PositionalSource), with optional read-ahead; inputs over
/// a positional source can also be [cloned](Clone) and [sliced](Self::slice).
///
/// # Seeking
///
/// [`seek_to`](Self::seek_to) (and [`AsyncSeek`](tokio::io::AsyncSeek) on its
/// [`TokioIo`](crate::interop::TokioIo), with `Start` or
/// `Current`) never does I/O: it only moves the position. A target inside the window is served from it, backward or forward;
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
/// A read that fails part-way with an error a retry can get past loses nothing it fetched: the
/// window keeps what its refills fetched, the fetcher the read-ahead chunks that arrived, and
/// the input the bytes the read had from its start on (see "Memory"). So the same read,
/// retried at the same position, fetches only what is missing, and over a source that fails
/// now and then it completes after as many attempts as failures strike the requests it still
/// needs, never starting over.
///
/// # Memory
///
/// What an open input keeps, reading or idle (this is the one place the bound is stated):
///
/// - its window: at most [`capacity`](Self::capacity) bytes, allocated at the first read;
/// - over a [`PositionalFetch`](crate::PositionalFetch) with
///   [`ReadAhead`](crate::ReadAhead), its read-ahead chunks, received or in flight: at most
///   `depth` of them, each of `chunk_size` bytes, so at most
///   [`memory_bound`](crate::ReadAhead::memory_bound) (`chunk_size * depth`) bytes. That is
///   also the most it takes of a [`MemoryBudget`](crate::MemoryBudget), which bounds the
///   chunks across inputs (clones and slices count as inputs of their own). One exception:
///   a chunk of less than 4 KiB asked for while a read still lacks more than a chunk asks
///   for all that read lacks, up to 4 KiB, so that tiny chunks never split a read into many
///   requests. Its bytes past the first `chunk_size` are that read's, as a request without
///   read-ahead is: they are outside the budget, and with chunks under 4 KiB the chunks hold
///   at most `depth * 4 KiB` bytes. Before a stream serves a run (see below), a chunk asked
///   while none is held may ask the whole way to it (256 KiB less what the run has handed
///   out) in one request, in the budget too, when that is within `memory_bound`: it is then
///   the only chunk until it is handed out. An input left idle in mid-file keeps its chunks,
///   for the reads that follow: nothing times out;
/// - while one stream serves a long sequential run instead of chunks (see
///   [`PositionalFetch`](crate::PositionalFetch)): the pieces of the transport's answer it
///   has taken ahead of the consumer, up to one chunk of the largest shape (`chunk_size`;
///   one piece, the transport's choice of a few KiB to 1 MiB, may pass it), for which it takes
///   that chunk of the budget, and no chunks;
/// - while a read waits for a request of its own (without read-ahead, or not sequential):
///   that request, at most the bytes the read asked for (its window's room, or the caller's
///   buffer) and at most 16 MiB; a read dropped while it waits leaves it in flight for its
///   retry, until a read elsewhere. Outside the budget;
/// - no chunks once a read reached the end: when its length is known (asked, or from
///   [`open`](Self::open)) or found on the way (a request that came back short, or empty
///   where the last read ended), and after any fetch at or past the end;
/// - after a read that failed with an error a retry can get past (one of the kinds
///   [`layer::is_transient`](crate::layer::is_transient) names, except
///   `UnexpectedEof`) having got part of its bytes (from the window, straight from the
///   source, or a varint's or a string's length prefix): those bytes, at most
///   16 MiB from the position, so that its retry
///   fetches only the rest. They are dropped by the next seek, by the next read that completes
///   beyond the window (reads served from the window alone leave them), when a read fails with
///   any other error (a read past the end keeps nothing), and by [`release`](Self::release). A
///   further failure adds only the bytes past those kept, so a read that fails again and again
///   never copies its prefix again;
/// - after a [`read_ranges`](AsyncBufferedInput::read_ranges) that failed the same way: the answers that
///   came back, at most 16 MiB, until the next one completes or [`release`](Self::release);
/// - over a [`PositionalFetch`](crate::PositionalFetch), the ranges
///   [prefetched](Self::prefetch) and not read to their end yet, received or in flight: at
///   most 16 of them and 8 MiB in all, each taking its bytes from the fetcher's
///   [`MemoryBudget`](crate::MemoryBudget), if it has one (a hint it has no room for is
///   ignored);
/// - nothing at all (no window, no chunks, no kept bytes) after [`release`](Self::release),
///   which an input kept open but idle should call; the next read allocates and fetches again.
///
/// In all, at most `capacity + memory_bound()` (with chunks under 4 KiB, `capacity + depth *
/// 4 KiB`), plus the request a read waits for, plus 16 MiB kept for a retry of a read and
/// 16 MiB for one of a `read_ranges`, plus 8 MiB of prefetched ranges; and at most
/// `memory_bound()` of a budget, plus the prefetched ranges.
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
    // The read engine: the position, the window, the fetcher, the bytes kept for a retry, the
    // checksum. Every read goes through it.
    engine: ReadEngine<F>,
    // A `SeekFrom::End` started through `AsyncSeek` before the length was known.
    end_seek: Option<EndSeek>,
    // What the input reads, for errors: a path, a URL, "slice NAME [a..b) of PATH".
    resource: Arc<str>,
}

/// A `SeekFrom::End(offset)` waiting for the length, started when the position was `from`.
#[derive(Clone, Copy, Debug)]
struct EndSeek {
    offset: i64,
    from: u64,
}

impl<F> AsyncBufferedInput<F> {
    /// The window size [`new`](Self::new) uses: 8 KiB.
    pub(crate) const DEFAULT_CAPACITY: usize = 8192;
}

impl<F: Fetch> AsyncBufferedInput<F> {
    /// An input over `source` with a window of 8 KiB.
    ///
    /// `source` is any `AsyncRead + AsyncSeek + Unpin` stream (read from offset 0, whatever its
    /// cursor is now: the first read seeks it there), or a fetcher such as a
    /// [`PositionalFetch`](crate::PositionalFetch).
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
            end_seek: None,
            resource: fetch.resource(),
            engine: ReadEngine::new(capacity, Fetcher::new(fetch)),
        })
    }

    /// Moves the position to `pos`, without I/O.
    ///
    /// A target inside the window is served from it by the next read; any other target is
    /// fetched by the next read. Seeking past the end is allowed; the next read then fails with
    /// `UnexpectedEof`.
    ///
    /// While [checksumming](Self::start_checksum), a seek forward includes the bytes it skips in
    /// the checksum (they are read when the checksum is next folded). A seek back cannot fail
    /// here: it voids the checksum, and the next [`checksum`](Self::checksum) or
    /// [`check_footer`](crate::lucene::codec::check_footer) fails. To have the seek itself refused, as
    /// Lucene's `BufferedChecksumIndexInput.seek` does, use [`try_seek_to`](Self::try_seek_to)
    /// (or [`AsyncSeek`](tokio::io::AsyncSeek) on its [`TokioIo`](crate::interop::TokioIo), which
    /// refuses it too).
    #[inline]
    pub fn seek_to(&mut self, pos: u64) {
        self.end_seek = None;
        self.engine.seek_to(pos);
    }

    /// [`seek_to`](Self::seek_to), refusing a seek back while
    /// [checksumming](Self::start_checksum), as Lucene's `BufferedChecksumIndexInput.seek`
    /// does: a checksum describes one forward pass.
    ///
    /// # Errors
    ///
    /// `InvalidInput` while checksumming if `pos` is before the position (the error names the
    /// resource, the position and the target); nothing changes, the checksum goes on.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(vec![0u8; 100]))
    ///     .with_resource("_0.si");
    /// input.start_checksum();
    /// input.try_seek_to(40)?; // forward: the skipped bytes are checksummed
    /// let e = input.try_seek_to(10).unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    /// assert_eq!(
    ///     e.to_string(),
    ///     "_0.si: seek at position 40: a seek back to 10 while checksumming from 0: a checksum \
    ///      covers one forward pass"
    /// );
    /// assert_eq!(input.position(), 40);
    /// assert_eq!(input.checksum().await?, crc32fast::hash(&[0u8; 40]));
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_seek_to(&mut self, pos: u64) -> io::Result<()> {
        self.check_seek(pos)?;
        self.seek_to(pos);
        Ok(())
    }

    /// Moves the position forward by `n` bytes, without I/O (see [`seek_to`](Self::seek_to)).
    ///
    /// # Errors
    ///
    /// `InvalidInput` if the new position would overflow a `u64`; the position is unchanged.
    pub fn skip_bytes(&mut self, n: u64) -> io::Result<()> {
        let Some(pos) = self.engine.position().checked_add(n) else {
            return Err(self.error(
                Error::InvalidInput(format!("skipping {n} bytes overflows the position")),
                "skip_bytes",
                self.engine.position(),
                Amount::None,
            ));
        };
        self.seek_to(pos);
        Ok(())
    }

    /// The position of the next byte to read. Never does I/O.
    #[inline]
    pub fn position(&self) -> u64 {
        self.engine.position()
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
        let at = self.engine.position();
        poll_fn(|cx| self.engine.fetcher_mut().poll_length(cx))
            .await
            .map_err(|e| self.error(e, "length", at, Amount::None))
    }

    /// The length, if it is known without I/O: asked before, or known from the start (a slice).
    pub fn known_length(&self) -> Option<u64> {
        self.fetcher().known_length()
    }

    /// The window's size in bytes.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.engine.capacity()
    }

    /// The unread part of the window: the bytes from [`position`](Self::position) that are
    /// already buffered (empty if the position is outside the window).
    #[inline]
    pub fn buffer(&self) -> &[u8] {
        self.engine.window().bytes_from(self.engine.position())
    }

    /// The range of offsets the window holds. A seek inside it (ends included) costs no I/O.
    pub(crate) fn window_range(&self) -> Range<u64> {
        let window = self.engine.window();
        window.start()..window.end()
    }

    /// [`window_range`](Self::window_range), for this crate's tests.
    #[cfg(feature = "test-util")]
    #[doc(hidden)] // a hook for this crate's tests, not part of the API
    pub fn window(&self) -> Range<u64> {
        self.window_range()
    }

    /// A snapshot of the counters of work done so far.
    #[inline]
    pub fn stats(&self) -> Stats {
        self.engine.stats()
    }

    /// What the input reads, as its errors name it: a path for a file opened with
    /// [`open`](Self::open) or a [`FileSource`](crate::source::FileSource), a URL for an object,
    /// "slice NAME [a..b) of PARENT" for a [slice](Self::slice_named), "memory (N bytes)" for a
    /// [`MemorySource`](crate::source::MemorySource), and "stream" for a stream; another
    /// [`PositionalSource`](crate::source::PositionalSource) gives its
    /// [`description`](crate::source::PositionalSource::description). Every input has one;
    /// name it yourself with [`with_resource`](Self::with_resource).
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Names what the input reads, for its errors (builder style).
    #[must_use]
    pub fn with_resource(mut self, resource: impl Into<Arc<str>>) -> Self {
        self.resource = resource.into();
        self
    }

    /// Gives back the window's buffer and what the fetcher holds (read-ahead chunks, received
    /// or in flight, and their [budget](crate::MemoryBudget)), keeping the position and
    /// the checksum: the next read allocates and fetches again. For inputs kept open but idle
    /// (see [Memory](Self#memory)): an idle input does not release its chunks by itself.
    pub fn release(&mut self) {
        self.engine.release();
    }

    /// The fetcher: for a [`PositionalFetch`](crate::PositionalFetch), the source and
    /// the read-ahead.
    pub(crate) fn fetcher(&self) -> &F {
        self.engine.fetcher().get_ref()
    }

    /// The fetcher, mutably (for example to change a
    /// [`PositionalFetch`](crate::PositionalFetch)'s read-ahead). The window is kept.
    pub(crate) fn fetcher_mut(&mut self) -> &mut F {
        self.engine.fetcher_mut().get_mut()
    }

    /// [`fetcher`](Self::fetcher), for this crate's tests.
    #[cfg(feature = "test-util")]
    #[doc(hidden)] // a hook for this crate's tests, not part of the API
    pub fn fetch(&self) -> &F {
        self.fetcher()
    }

    /// [`fetcher_mut`](Self::fetcher_mut), for this crate's tests.
    #[cfg(feature = "test-util")]
    #[doc(hidden)] // a hook for this crate's tests, not part of the API
    pub fn fetch_mut(&mut self) -> &mut F {
        self.fetcher_mut()
    }

    // ----- for the other files of `input` -----

    /// The public error of `op` at `at`, naming this input's resource.
    pub(super) fn error(&self, e: Error, op: &'static str, at: u64, amount: Amount) -> io::Error {
        e.into_io(Some(&self.resource), op, at, amount)
    }

    /// An `InvalidInput` error of `op` at `at`, for a call the input's state does not allow,
    /// naming this input's resource.
    pub(crate) fn invalid_input(&self, op: &'static str, at: u64, message: String) -> io::Error {
        self.error(Error::InvalidInput(message), op, at, Amount::None)
    }

    /// What the input reads, shared (for a clone of the input).
    pub(super) fn shared_resource(&self) -> Arc<str> {
        Arc::clone(&self.resource)
    }

    /// The read engine: the position, the window and the way to the source.
    #[inline(always)]
    pub(super) fn engine(&self) -> &ReadEngine<F> {
        &self.engine
    }

    /// The read engine, mutably.
    #[inline(always)]
    pub(super) fn engine_mut(&mut self) -> &mut ReadEngine<F> {
        &mut self.engine
    }

    /// The window's bytes from the position, the position itself (for a
    /// [`WindowView`](crate::input::WindowView) to move past what it consumes, as a window hit
    /// does) and the resource.
    pub(super) fn window_and_position(&mut self) -> (&[u8], &mut u64, &Arc<str>) {
        let (bytes, position) = self.engine.window_and_position();
        (bytes, position, &self.resource)
    }

    /// The fetcher, dropping the window.
    pub(super) fn into_fetch(self) -> F {
        self.engine.into_fetcher().into_inner()
    }

    /// Leaves a `SeekFrom::End(offset)` pending until the length is known (`AsyncSeek`).
    pub(super) fn pend_end_seek(&mut self, offset: i64) {
        self.end_seek = Some(EndSeek {
            offset,
            from: self.engine.position(),
        });
    }

    /// The offset of the pending `SeekFrom::End`, unless the position moved since it was
    /// started: then it is abandoned, and forgotten.
    pub(super) fn pending_end_seek(&mut self) -> Option<i64> {
        let end_seek = self.end_seek?;
        if end_seek.from != self.engine.position() {
            self.end_seek = None;
            return None;
        }
        Some(end_seek.offset)
    }

    /// Forgets the pending `SeekFrom::End` (done, or failed).
    pub(super) fn clear_end_seek(&mut self) {
        self.end_seek = None;
    }

    /// Refuses a seek to `to` if it goes back while checksumming (the fallible seeks).
    #[inline]
    pub(super) fn check_seek(&self, to: u64) -> io::Result<()> {
        self.engine
            .check_seek(to)
            .map_err(|e| self.error(e, "seek", self.engine.position(), Amount::None))
    }
}

impl<F: fmt::Debug> fmt::Debug for AsyncBufferedInput<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncBufferedInput")
            .field("resource", &self.resource)
            .field("fetch", self.engine.fetcher().get_ref())
            .field("position", &self.engine.position())
            .field(
                "window",
                &(self.engine.window().start()..self.engine.window().end()),
            )
            .field(
                "filled",
                &format_args!("{}/{}", self.engine.window().len(), self.engine.capacity()),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests;
