use std::future::Future;
use std::io;
use std::pin::{pin, Pin};
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use futures_core::stream::{FusedStream, Stream};

use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

/// An input read as a [`Stream`] of [`Bytes`] chunks, from its position to its end: made by
/// [`AsyncBufferedInput::into_stream`].
///
/// Each chunk is what the window holds at the position, at most `max_chunk` bytes, handed out
/// as [`read_bytes_owned`](AsyncBufferedInput::read_bytes_owned) does: the window's own buffer,
/// not a copy, when the chunk is at least a quarter of the window (the window then fetches into
/// a new buffer); smaller chunks (a small `max_chunk`, or the window's tail after reads through
/// the input itself) are copied, so that a kept chunk never holds a buffer more than 4x its
/// length. When the window holds nothing at the position, the next chunk costs one fetch (which
/// read-ahead may have started already): chunks are at most the window's capacity, and over a
/// stream source what one read of it returned.
///
/// After an error the stream ends, having consumed nothing of the failed chunk: the input,
/// from [`into_inner`](Self::into_inner), is at the position the chunk would have started at,
/// and a new stream (or any read) from there asks the source again.
#[must_use = "streams do nothing unless polled"]
#[derive(Debug)]
pub struct BytesStream<F> {
    input: AsyncBufferedInput<F>,
    // At least 1.
    max_chunk: usize,
    // The end or an error was returned: only `None` from now on.
    done: bool,
}

impl<F: Fetch> AsyncBufferedInput<F> {
    /// This input as a [`Stream`] of its bytes from the position to the end, in chunks of at
    /// most `max_chunk` bytes (at least 1; `usize::MAX` for whatever the window holds): see
    /// [`BytesStream`]. Chunks are the window's buffer, not copies of it.
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
    pub fn into_stream(self, max_chunk: usize) -> BytesStream<F> {
        BytesStream {
            input: self,
            max_chunk: max_chunk.max(1),
            done: false,
        }
    }
}

impl<F> BytesStream<F> {
    /// The input; its position is where the next chunk starts.
    pub fn get_ref(&self) -> &AsyncBufferedInput<F> {
        &self.input
    }

    /// The input, mutably: reads and seeks through it move where the next chunk starts.
    pub fn get_mut(&mut self) -> &mut AsyncBufferedInput<F> {
        &mut self.input
    }

    /// The input back, at the position where the next chunk would have started.
    pub fn into_inner(self) -> AsyncBufferedInput<F> {
        self.input
    }

    /// The most bytes a chunk holds.
    pub fn max_chunk(&self) -> usize {
        self.max_chunk
    }
}

impl<F: Fetch> Stream for BytesStream<F> {
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
        let polled = pin!(me.input.read_bytes_owned(len)).poll(cx);
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
        let chunk = Bytes::copy_from_slice(&me.input.buffer()[..len]);
        me.input.engine_mut().consume_window(len);
        Poll::Ready(Some(Ok(chunk)))
    }
}

impl<F: Fetch> BytesStream<F> {
    /// How many bytes the next chunk takes (at least 1), filling the window if it holds none
    /// at the position; `None` at the end or once done. An error or the end marks it done.
    fn poll_held(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<usize>>> {
        if self.done {
            return Poll::Ready(None);
        }
        match ready!(self.input.poll_window(cx)) {
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

impl<F: Fetch> FusedStream for BytesStream<F> {
    /// True once the stream returned its end or an error.
    fn is_terminated(&self) -> bool {
        self.done
    }
}
