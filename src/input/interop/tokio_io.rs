//! An input for the async ecosystem: [`TokioIo`], its `AsyncRead`, `AsyncBufRead` and
//! `AsyncSeek`, and its `Stream` of `Bytes`.

use std::future::Future;
use std::io::{self, SeekFrom};
use std::pin::{pin, Pin};
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use futures_core::stream::{FusedStream, Stream};
use tokio::io::{AsyncBufRead, AsyncRead, AsyncSeek, ReadBuf};

use crate::error::{Amount, Error};
use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

/// The input for the async ecosystem: tokio's `AsyncRead`, `AsyncBufRead` and `AsyncSeek`,
/// and a [`Stream`] of [`Bytes`] chunks. Made by [`AsyncBufferedInput::into_tokio_io`] (as
/// `tokio_util`'s `compat()` makes a `futures-io` reader) or
/// [`into_stream`](AsyncBufferedInput::into_stream) (the same, with a bound on the chunks).
///
/// # tokio's I/O traits
///
/// Reads served from the window, seeks that keep it, everything tokio's `AsyncReadExt`,
/// `AsyncBufReadExt` and `AsyncSeekExt` add, and `tokio::io::copy`. The input keeps its own
/// typed reads (Lucene's byte order and varints); tokio's `read_u32` and friends here are
/// big-endian, as everywhere in tokio.
///
/// ```
/// use async_buffered_input::AsyncBufferedInput;
/// use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt};
/// use std::io::{Cursor, SeekFrom};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let input = AsyncBufferedInput::new(Cursor::new(b"first line\nsecond line\n".to_vec()));
/// let mut io = input.into_tokio_io();
/// let mut line = String::new();
/// io.read_line(&mut line).await?;
/// assert_eq!(line, "first line\n");
/// io.seek(SeekFrom::Start(6)).await?;
/// let mut rest = Vec::new();
/// io.read_to_end(&mut rest).await?;
/// assert_eq!(rest, b"line\nsecond line\n");
/// let input = io.into_inner(); // the input, with its window and stats
/// assert_eq!(input.position(), 23);
/// # Ok(())
/// # }
/// ```
///
/// # A stream of `Bytes`
///
/// As a [`Stream`], it yields the input's bytes from its position to its end. Each chunk is
/// what the window holds at the position, at most [`max_chunk`](Self::max_chunk) bytes
/// (`usize::MAX` from `into_tokio_io`), handed out as
/// [`read_bytes_owned`](AsyncBufferedInput::read_bytes_owned) does: the window's own buffer,
/// not a copy, when the chunk is at least a quarter of the window (the window then fetches into
/// a new buffer); smaller chunks (a small `max_chunk`, or the window's tail after reads through
/// the input itself) are copied, so that a kept chunk never holds a buffer more than 4x its
/// length. When the window holds nothing at the position, the next chunk costs one fetch (which
/// read-ahead may have started already): chunks are at most the window's capacity, and over a
/// stream source what one read of it returned.
///
/// After an error the stream ends, having consumed nothing of the failed chunk: the input,
/// from [`into_inner`](Self::into_inner), is at the position the chunk would have started at,
/// and a new stream (or any read) from there asks the source again. Once the stream has
/// returned its end or an error it stays ended ([`FusedStream`]); the I/O traits go on
/// serving.
///
/// ```
/// use async_buffered_input::AsyncBufferedInput;
/// use futures::TryStreamExt;
/// use tokio::io::AsyncBufReadExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let input = AsyncBufferedInput::new(std::io::Cursor::new(b"header\nbody".to_vec()));
/// let mut io = input.into_tokio_io();
/// let mut header = String::new();
/// io.read_line(&mut header).await?; // tokio's I/O, then the rest as a stream
/// let body: Vec<bytes::Bytes> = (&mut io).try_collect().await?;
/// assert_eq!((header.as_str(), body.concat()), ("header\n", b"body".to_vec()));
/// assert_eq!(io.into_inner().position(), 11);
/// # Ok(())
/// # }
/// ```
///
/// With both tokio's `AsyncReadExt`/`AsyncBufReadExt` and `futures`' `StreamExt` in scope,
/// `take`, `chain` and `split` are each two methods: name the trait
/// (`AsyncReadExt::take(&mut io, 100)`, `StreamExt::take(io, 3)`).
///
/// `I` is the input ([`into_tokio_io`](AsyncBufferedInput::into_tokio_io),
/// [`into_stream`](AsyncBufferedInput::into_stream)) or a `&mut` to it
/// ([`tokio_io`](AsyncBufferedInput::tokio_io), for a few tokio calls between the input's
/// own).
#[must_use = "an input's I/O does nothing unless used"]
#[derive(Debug)]
pub struct TokioIo<I> {
    input: I,
    // The most bytes a stream chunk holds; at least 1.
    max_chunk: usize,
    // The stream returned its end or an error: only `None` from it from now on.
    done: bool,
}

impl<I> TokioIo<I> {
    /// `input`, its stream in chunks of at most `max_chunk` bytes (at least 1).
    fn new(input: I, max_chunk: usize) -> Self {
        Self {
            input,
            max_chunk: max_chunk.max(1),
            done: false,
        }
    }

    /// The input (or the `&mut` to it); its position is where the next read or chunk starts.
    pub fn get_ref(&self) -> &I {
        &self.input
    }

    /// The input, mutably: its own reads, the tokio traits and the stream share the position
    /// and window.
    pub fn get_mut(&mut self) -> &mut I {
        &mut self.input
    }

    /// The input back, at the position where the next read or chunk would have started.
    pub fn into_inner(self) -> I {
        self.input
    }

    /// The most bytes a stream chunk holds.
    pub fn max_chunk(&self) -> usize {
        self.max_chunk
    }
}

/// What a [`TokioIo`] reads through: an input, or a `&mut` to one (sealed).
mod holder {
    use crate::input::fetch::Fetch;
    use crate::AsyncBufferedInput;

    #[allow(unreachable_pub)] // sealed: `pub` so that the public impls may name it
    pub trait Holder: Unpin {
        type Fetch: Fetch;
        fn input(&mut self) -> &mut AsyncBufferedInput<Self::Fetch>;
    }

    impl<F: Fetch> Holder for AsyncBufferedInput<F> {
        type Fetch = F;
        fn input(&mut self) -> &mut AsyncBufferedInput<F> {
            self
        }
    }

    impl<F: Fetch> Holder for &mut AsyncBufferedInput<F> {
        type Fetch = F;
        fn input(&mut self) -> &mut AsyncBufferedInput<F> {
            self
        }
    }
}
use holder::Holder;

impl<F: Fetch> AsyncBufferedInput<F> {
    /// The window's bytes at the position, refilling it first if it holds none there; empty
    /// only at the end of the source (`poll_fill_buf`, and the stream's chunks).
    fn poll_window(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let at = self.position();
        if self.engine().window().bytes_from(at).is_empty() {
            ready!(self.engine_mut().poll_fill_at(cx, at, 1))
                .map_err(|e| self.error(e, "poll_fill_buf", at, Amount::None))?;
        }
        Poll::Ready(Ok(self.engine().window().bytes_from(at)))
    }

    /// The input as tokio's `AsyncRead`, `AsyncBufRead` and `AsyncSeek` and a `Stream` of
    /// `Bytes` in chunks of whatever the window holds ([`TokioIo`]); get it back with
    /// [`TokioIo::into_inner`].
    pub fn into_tokio_io(self) -> TokioIo<Self> {
        TokioIo::new(self, usize::MAX)
    }

    /// A `&mut` to the input as tokio's `AsyncRead`, `AsyncBufRead` and `AsyncSeek` and a
    /// `Stream` of `Bytes` ([`TokioIo`]), for tokio calls between the input's own.
    pub fn tokio_io(&mut self) -> TokioIo<&mut Self> {
        TokioIo::new(self, usize::MAX)
    }

    /// The input as a [`Stream`] of its bytes from the position to the end, in chunks of at
    /// most `max_chunk` bytes (at least 1; `usize::MAX` for whatever the window holds): a
    /// [`TokioIo`] (which is tokio's I/O too) with that bound. Chunks are the window's buffer,
    /// not copies of it.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::AsyncBufferedInput;
    /// use futures::StreamExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(b"headerbody".to_vec()));
    /// input.seek_to(6);
    /// let mut chunks = input.into_stream(2);
    /// assert_eq!(&chunks.next().await.unwrap()?[..], b"bo");
    /// assert_eq!(&chunks.next().await.unwrap()?[..], b"dy");
    /// assert!(chunks.next().await.is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_stream(self, max_chunk: usize) -> TokioIo<Self> {
        TokioIo::new(self, max_chunk)
    }
}

impl<I: Holder> AsyncRead for TokioIo<I> {
    /// Reads what the window holds at the position; if it holds nothing there, either fetches
    /// straight into `buf` (when `buf` has room for at least the capacity) or refills the window
    /// once. May return fewer bytes than `buf` has room for; 0 only at the end of the source.
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut().input.input();
        let at = me.position();
        let amount = Amount::UpTo(buf.remaining() as u64);
        if me.engine().window().bytes_from(at).is_empty() {
            if buf.remaining() >= me.capacity() {
                let n = ready!(me.engine_mut().poll_fetch_into(cx, at, buf))
                    .map_err(|e| me.error(e, "poll_read", at, amount))?;
                me.engine_mut().finish_read(at, n, n);
                return Poll::Ready(Ok(()));
            }
            ready!(me.engine_mut().poll_fill_at(cx, at, 1))
                .map_err(|e| me.error(e, "poll_read", at, amount))?;
        }
        let held = me.engine().window().bytes_from(at);
        let n = held.len().min(buf.remaining());
        buf.put_slice(&held[..n]);
        me.engine_mut().consume_window(n);
        Poll::Ready(Ok(()))
    }
}

impl<I: Holder> AsyncBufRead for TokioIo<I> {
    /// Returns the window's bytes at the position, refilling it first if it holds none there.
    /// Empty only at the end of the source.
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.get_mut().input.input().poll_window(cx)
    }

    /// Consumes `amt` bytes of what `poll_fill_buf` returned.
    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.get_mut()
            .input
            .input()
            .engine_mut()
            .consume_window(amt);
    }
}

impl<I: Holder> AsyncSeek for TokioIo<I> {
    /// Moves the position. `Start` and `Current` (including `Current(0)`) take effect at once,
    /// without I/O, and keep the window: a target inside it is served from it. `End` needs the
    /// source's length; if it is not known yet, `poll_complete` asks for it.
    ///
    /// A target before 0 or past `u64::MAX` is an `InvalidInput` error and changes nothing.
    /// So is a target before the position while [checksumming](AsyncBufferedInput::start_checksum),
    /// as in Lucene's `BufferedChecksumIndexInput.seek`
    /// ([`try_seek_to`](AsyncBufferedInput::try_seek_to)); the checksum goes on.
    ///
    /// An `End` seek whose future was dropped before it completed is completed by the next
    /// `poll_complete` (the next seek through `AsyncSeekExt`), as with tokio's `File`, unless
    /// the position changed in between (a read that returned bytes,
    /// [`seek_to`](AsyncBufferedInput::seek_to), [`skip_bytes`](AsyncBufferedInput::skip_bytes)):
    /// then it is abandoned. One that failed is forgotten.
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let me = self.get_mut().input.input();
        me.clear_end_seek();
        let (base, offset) = match position {
            SeekFrom::Start(target) => {
                me.check_seek(target)?;
                me.seek_to(target);
                return Ok(());
            }
            SeekFrom::Current(offset) => (me.position(), offset),
            SeekFrom::End(offset) => match me.known_length() {
                Some(length) => (length, offset),
                None => {
                    me.pend_end_seek(offset);
                    return Ok(());
                }
            },
        };
        let target = seek_target(me, base, offset)?;
        me.check_seek(target)?;
        me.seek_to(target);
        Ok(())
    }

    /// Returns the position once the last `start_seek` took effect.
    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let me = self.get_mut().input.input();
        if let Some(offset) = me.pending_end_seek() {
            // Whatever the outcome, this seek is done: a failed one is not applied later.
            let length = ready!(me.engine_mut().fetcher_mut().poll_length(cx));
            me.clear_end_seek();
            let at = me.position();
            let length = length.map_err(|e| me.error(e, "seek", at, Amount::None))?;
            let target = seek_target(me, length, offset)?;
            me.check_seek(target)?;
            me.seek_to(target);
        }
        Poll::Ready(Ok(me.position()))
    }
}

impl<I: Holder> Stream for TokioIo<I> {
    type Item = io::Result<Bytes>;

    /// The next chunk: fills the window if it holds nothing at the position (one fetch), then
    /// hands out what it holds, up to `max_chunk` bytes. `None` at the end, and after an error.
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let me = self.get_mut();
        let len = match ready!(me.poll_held(cx)) {
            Some(Ok(len)) => len,
            Some(Err(e)) => return Poll::Ready(Some(Err(e))),
            None => return Poll::Ready(None),
        };
        // The window holds `len` bytes at the position, so the read completes in this poll,
        // with no I/O, handing out the window's buffer (or copying a small chunk).
        let polled = pin!(me.input.input().read_bytes_owned(len)).poll(cx);
        if let Poll::Ready(result) = polled {
            me.done = result.is_err();
            return Poll::Ready(Some(result));
        }
        // Not expected; the read was dropped having consumed nothing: copy what is held.
        let len = match ready!(me.poll_held(cx)) {
            Some(Ok(len)) => len,
            Some(Err(e)) => return Poll::Ready(Some(Err(e))),
            None => return Poll::Ready(None),
        };
        let input = me.input.input();
        let chunk = Bytes::copy_from_slice(&input.buffer()[..len]);
        input.engine_mut().consume_window(len);
        Poll::Ready(Some(Ok(chunk)))
    }
}

impl<I: Holder> FusedStream for TokioIo<I> {
    /// True once the stream returned its end or an error.
    fn is_terminated(&self) -> bool {
        self.done
    }
}

impl<I: Holder> TokioIo<I> {
    /// How many bytes the next chunk takes (at least 1), filling the window if it holds none
    /// at the position; `None` at the end or once done. An error or the end marks it done.
    fn poll_held(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<usize>>> {
        if self.done {
            return Poll::Ready(None);
        }
        match ready!(self.input.input().poll_window(cx)) {
            Ok([]) => {
                self.done = true;
                Poll::Ready(None)
            }
            Ok(held) => Poll::Ready(Some(Ok(held.len().min(self.max_chunk)))),
            Err(e) => {
                self.done = true;
                Poll::Ready(Some(Err(e)))
            }
        }
    }
}

/// `base + offset`, or `InvalidInput` (naming the position the seek started from) if that is
/// before 0 or past `u64::MAX`.
fn seek_target<F: Fetch>(input: &AsyncBufferedInput<F>, base: u64, offset: i64) -> io::Result<u64> {
    base.checked_add_signed(offset).ok_or_else(|| {
        let e = Error::InvalidInput(format!(
            "offset {offset} from {base} is outside 0..=u64::MAX"
        ));
        input.error(e, "seek", input.position(), Amount::None)
    })
}
