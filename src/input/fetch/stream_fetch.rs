use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};

use super::seam::Seam;

/// The fetcher over a seekable stream: any `AsyncRead + AsyncSeek + Unpin`, such as a
/// `tokio::fs::File` or a `Cursor`.
///
/// A stream has one cursor, and this is the only place that tracks it. A fetch that continues
/// the last one reads at once; any other seeks first (`SeekFrom::Start`). The length is asked
/// with one seek to the end, then cached. After an error, or after [`get_mut`](Self::get_mut),
/// the cursor is taken as unknown and the next fetch seeks. A seek whose future was dropped
/// before it completed is completed before anything else is asked of the stream (tokio's
/// `File` refuses a new operation until then), and if it was a seek to the end, it books the
/// length only if nobody has touched the stream since.
///
/// Reads far past the end of the stream give the end, not an error, even where the operating
/// system refuses the seek (`EINVAL` past a file system's largest file): the length is then
/// asked, and a target at or past it reads nothing.
///
/// Its errors name it "stream" unless the input is named with
/// [`with_resource`](crate::AsyncBufferedInput::with_resource).
///
/// Made by [`AsyncBufferedInput::new`](crate::AsyncBufferedInput::new) from any stream; reach
/// the stream with [`AsyncBufferedInput::get_ref`](crate::AsyncBufferedInput::get_ref) and
/// friends.
#[derive(Debug)]
pub struct StreamFetch<R> {
    inner: R,
    // Where the stream's cursor is, as far as this fetcher knows.
    cursor: Cursor,
    // The stream's length, asked once.
    length: Option<u64>,
    // A seek to this offset failed with `InvalidInput`: it is answered once the length is known
    // (past the end: nothing to read; otherwise the error).
    refused: Option<(u64, io::Error)>,
    reads: u64,
    seeks: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cursor {
    /// The stream's cursor is here.
    At(u64),
    /// Unknown: before the first seek, after an error, after `get_mut`.
    Unknown,
    /// A seek was started and its `poll_complete` has not returned (its future may have been
    /// dropped).
    Seeking(Seek),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seek {
    To(u64),
    /// To the end, to learn the length.
    End,
    /// Started before `get_mut` gave the stream away: completed, but its result is not trusted.
    Abandoned,
}

impl<R: AsyncRead + AsyncSeek + Unpin> StreamFetch<R> {
    /// A fetcher over `inner`, whose cursor may be anywhere: the first fetch seeks.
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            cursor: Cursor::Unknown,
            length: None,
            refused: None,
            reads: 0,
            seeks: 0,
        }
    }

    /// The stream.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The stream, mutably. The fetcher forgets where the cursor is (the caller may move it),
    /// so the next fetch seeks first; a seek still in flight is completed, and its result
    /// ignored. The cached length is kept: moving the cursor does not change the data.
    pub fn get_mut(&mut self) -> &mut R {
        self.cursor = match self.cursor {
            Cursor::Seeking(_) => Cursor::Seeking(Seek::Abandoned),
            _ => Cursor::Unknown,
        };
        &mut self.inner
    }

    /// The stream. Its cursor is wherever the last fetch or seek left it, and a seek started by
    /// a dropped future may still be in flight: seek it before reading from it.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Completes the seek in flight, if any, and books where it landed.
    fn poll_seek_done(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Cursor::Seeking(seek) = self.cursor else {
            return Poll::Ready(Ok(()));
        };
        let landed = ready!(Pin::new(&mut self.inner).poll_complete(cx));
        self.cursor = Cursor::Unknown;
        let landed = match landed {
            Ok(landed) => landed,
            Err(e) => match seek {
                // Refused: answered by the length, if the fetch that wanted it asks again.
                Seek::To(target)
                    if e.kind() == io::ErrorKind::InvalidInput && self.length.is_none() =>
                {
                    self.refused = Some((target, e));
                    return Poll::Ready(Ok(()));
                }
                // Started for a fetch that is gone, before the stream was handed out: its
                // outcome is not trusted, a failure no more than a success. The cursor is
                // unknown and the next fetch seeks anew.
                Seek::Abandoned => return Poll::Ready(Ok(())),
                Seek::To(_) | Seek::End => return Poll::Ready(Err(e)),
            },
        };
        match seek {
            Seek::To(_) => self.cursor = Cursor::At(landed),
            Seek::End => {
                self.length = Some(landed);
                self.cursor = Cursor::At(landed);
            }
            Seek::Abandoned => {}
        }
        Poll::Ready(Ok(()))
    }

    /// Starts a seek, after letting any operation the stream still has in flight finish
    /// (tokio's `File` refuses to start a seek while an operation is pending).
    fn poll_start_seek(&mut self, cx: &mut Context<'_>, seek: Seek) -> Poll<io::Result<()>> {
        debug_assert!(!matches!(self.cursor, Cursor::Seeking(_)));
        ready!(Pin::new(&mut self.inner).poll_complete(cx))?;
        let from = match seek {
            Seek::To(target) => SeekFrom::Start(target),
            Seek::End | Seek::Abandoned => SeekFrom::End(0),
        };
        tracing::debug!(?from, "stream seek");
        self.cursor = Cursor::Unknown;
        self.seeks += 1;
        Pin::new(&mut self.inner).start_seek(from)?;
        self.cursor = Cursor::Seeking(seek);
        Poll::Ready(Ok(()))
    }
}

impl<R: AsyncRead + AsyncSeek + Unpin> Seam for StreamFetch<R> {
    fn poll_fetch(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            if let Some((target, _)) = &self.refused {
                if *target != at {
                    self.refused = None; // a fetch elsewhere: that refusal is moot
                    continue;
                }
                let length = ready!(self.poll_length(cx))?;
                let (_, e) = self.refused.take().expect("checked above");
                return Poll::Ready(if at >= length { Ok(()) } else { Err(e) });
            }
            match self.cursor {
                Cursor::At(cursor) if cursor == at => break,
                Cursor::Seeking(_) => ready!(self.poll_seek_done(cx))?,
                _ if self.length.is_some_and(|length| at >= length) => {
                    return Poll::Ready(Ok(())); // the end, known: no I/O
                }
                _ => ready!(self.poll_start_seek(cx, Seek::To(at)))?,
            }
        }
        let before = buf.filled().len();
        let read = ready!(Pin::new(&mut self.inner).poll_read(cx, buf));
        self.reads += 1;
        self.cursor = match read {
            Ok(()) => Cursor::At(at + (buf.filled().len() - before) as u64),
            // The stream may or may not have moved: find out by seeking next time.
            Err(_) => Cursor::Unknown,
        };
        Poll::Ready(read)
    }

    fn poll_length(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        loop {
            if let Some(length) = self.length {
                return Poll::Ready(Ok(length));
            }
            match self.cursor {
                Cursor::Seeking(_) => ready!(self.poll_seek_done(cx))?,
                _ => ready!(self.poll_start_seek(cx, Seek::End))?,
            }
        }
    }

    fn known_length(&self) -> Option<u64> {
        self.length
    }

    fn reads(&self) -> u64 {
        self.reads
    }

    fn seeks(&self) -> u64 {
        self.seeks
    }

    /// "stream": a stream does not know what it reads; name it with
    /// [`AsyncBufferedInput::with_resource`](crate::AsyncBufferedInput::with_resource).
    fn resource(&self) -> std::sync::Arc<str> {
        std::sync::Arc::from("stream")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use std::io::Cursor as IoCursor;

    async fn fetch<R: AsyncRead + AsyncSeek + Unpin>(
        f: &mut StreamFetch<R>,
        at: u64,
        n: usize,
    ) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; n];
        let mut read_buf = ReadBuf::new(&mut buf);
        poll_fn(|cx| f.poll_fetch(cx, at, &mut read_buf)).await?;
        let got = read_buf.filled().len();
        buf.truncate(got);
        Ok(buf)
    }

    #[tokio::test]
    async fn sequential_fetches_seek_once() {
        let mut f = StreamFetch::new(IoCursor::new((0..100u8).collect::<Vec<_>>()));
        assert_eq!(fetch(&mut f, 10, 5).await.unwrap(), [10, 11, 12, 13, 14]);
        assert_eq!(fetch(&mut f, 15, 2).await.unwrap(), [15, 16]);
        assert_eq!(f.seeks(), 1);
        assert_eq!(fetch(&mut f, 0, 1).await.unwrap(), [0]);
        assert_eq!(f.seeks(), 2);
    }

    #[tokio::test]
    async fn a_known_end_costs_no_io_and_get_mut_forgets_the_cursor() {
        let mut f = StreamFetch::new(IoCursor::new(vec![7u8; 10]));
        assert_eq!(poll_fn(|cx| f.poll_length(cx)).await.unwrap(), 10);
        let seeks = f.seeks();
        assert!(fetch(&mut f, u64::MAX, 4).await.unwrap().is_empty());
        assert_eq!(f.seeks(), seeks);
        assert_eq!(fetch(&mut f, 9, 4).await.unwrap(), [7]);
        f.get_mut().set_position(3);
        assert_eq!(fetch(&mut f, 10, 4).await.unwrap(), [] as [u8; 0]);
        assert_eq!(f.cursor, Cursor::Unknown, "the end, known, asks nothing");
    }
}
