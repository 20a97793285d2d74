//! A stream wrapper counting the reads, bytes and seeks that reach the stream.

use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};

use crate::Counts;

/// Wraps an `AsyncRead + AsyncSeek` and counts the calls made on it. The counters live in an
/// `Arc<Counts>` returned by [`Counting::new`], so the test keeps a handle after moving the
/// reader into the input.
#[derive(Debug)]
pub struct Counting<R> {
    inner: R,
    counts: Arc<Counts>,
}

impl<R> Counting<R> {
    /// Wraps `inner`; returns the wrapper and the counters it adds to.
    pub fn new(inner: R) -> (Self, Arc<Counts>) {
        let counts = Arc::new(Counts::default());
        (
            Counting {
                inner,
                counts: counts.clone(),
            },
            counts,
        )
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The wrapped source; operations on it are not counted.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The wrapped source, unwrapped.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Counting<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let res = Pin::new(&mut this.inner).poll_read(cx, buf);
        let c = &this.counts;
        match &res {
            Poll::Ready(Ok(())) => {
                let n = (buf.filled().len() - before) as u64;
                c.reads.fetch_add(1, Ordering::SeqCst);
                c.bytes.fetch_add(n, Ordering::SeqCst);
                if n == 0 {
                    c.zero_reads.fetch_add(1, Ordering::SeqCst);
                }
            }
            Poll::Ready(Err(_)) => {
                c.reads.fetch_add(1, Ordering::SeqCst);
                c.read_errors.fetch_add(1, Ordering::SeqCst);
            }
            Poll::Pending => {
                c.pending_reads.fetch_add(1, Ordering::SeqCst);
            }
        }
        res
    }
}

impl<R: AsyncSeek + Unpin> AsyncSeek for Counting<R> {
    fn start_seek(mut self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        self.counts.seeks.fetch_add(1, Ordering::SeqCst);
        self.counts.seek_log.lock().unwrap().push(position);
        Pin::new(&mut self.inner).start_seek(position)
    }

    fn poll_complete(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        Pin::new(&mut self.inner).poll_complete(cx)
    }
}
