//! tokio's I/O traits for an input: [`TokioIo`], its `AsyncRead`, `AsyncBufRead` and
//! `AsyncSeek`.

use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncBufRead, AsyncRead, AsyncSeek, ReadBuf};

use crate::error::{Amount, Error};
use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

/// An input as tokio's `AsyncRead`, `AsyncBufRead` and `AsyncSeek`, from
/// [`AsyncBufferedInput::into_tokio_io`] (as `tokio_util`'s `compat()` makes a `futures-io`
/// reader): reads served from the window, seeks that keep it, everything tokio's
/// `AsyncReadExt`, `AsyncBufReadExt` and `AsyncSeekExt` add, and `tokio::io::copy`. The input
/// keeps its own typed reads (Lucene's byte order and varints); tokio's `read_u32` and friends
/// here are big-endian, as everywhere in tokio.
///
/// # Examples
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
/// `I` is the input ([`into_tokio_io`](AsyncBufferedInput::into_tokio_io)) or a `&mut` to it
/// ([`tokio_io`](AsyncBufferedInput::tokio_io), for a few tokio calls between the input's
/// own).
#[derive(Debug)]
pub struct TokioIo<I> {
    input: I,
}

impl<I> TokioIo<I> {
    /// The input (or the `&mut` to it).
    pub fn get_ref(&self) -> &I {
        &self.input
    }

    /// The input, mutably: its own reads and the tokio traits share the position and window.
    pub fn get_mut(&mut self) -> &mut I {
        &mut self.input
    }

    /// The input back.
    pub fn into_inner(self) -> I {
        self.input
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
    /// only at the end of the source (`poll_fill_buf`, and a `BytesStream`'s chunks).
    pub(super) fn poll_window(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let at = self.position();
        if self.engine().window().bytes_from(at).is_empty() {
            ready!(self.engine_mut().poll_fill_at(cx, at, 1))
                .map_err(|e| self.error(e, "poll_fill_buf", at, Amount::None))?;
        }
        Poll::Ready(Ok(self.engine().window().bytes_from(at)))
    }

    /// The input as tokio's `AsyncRead`, `AsyncBufRead` and `AsyncSeek` ([`TokioIo`]); get it
    /// back with [`TokioIo::into_inner`].
    pub fn into_tokio_io(self) -> TokioIo<Self> {
        TokioIo { input: self }
    }

    /// A `&mut` to the input as tokio's `AsyncRead`, `AsyncBufRead` and `AsyncSeek`
    /// ([`TokioIo`]), for tokio calls between the input's own.
    pub fn tokio_io(&mut self) -> TokioIo<&mut Self> {
        TokioIo { input: self }
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
