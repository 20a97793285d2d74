//! A stream wrapper counting the reads, bytes and seeks that reach the stream.

use std::fmt;
use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};

use crate::{CountSink, Counts, ReadOutcome};

/// Wraps an `AsyncRead + AsyncSeek` and counts the calls made on it in its counters `C`
/// (see [`CountSink`]).
///
/// By default the counters are an `Arc<Counts>` returned by [`Counting::new`], so the test
/// keeps a handle after moving the reader into the input. A caller that owns the reader and
/// wants no atomics in its loop gives its own counters to [`Counting::with_counts`] (the
/// throughput harness counts in plain integers) and reads them through
/// [`counts`](Counting::counts).
///
/// Its `Debug` shows the counters alone (never the wrapped stream and its bytes).
pub struct Counting<R, C = Arc<Counts>> {
    inner: R,
    counts: C,
}

impl<R> Counting<R> {
    /// Wraps `inner`; returns the wrapper and the counters it adds to.
    pub fn new(inner: R) -> (Self, Arc<Counts>) {
        let counts = Arc::new(Counts::default());
        (Counting::with_counts(inner, counts.clone()), counts)
    }
}

impl<R, C> Counting<R, C> {
    /// Wraps `inner`, counting in `counts`.
    pub fn with_counts(inner: R, counts: C) -> Self {
        Counting { inner, counts }
    }

    /// The counters.
    pub fn counts(&self) -> &C {
        &self.counts
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

impl<R: AsyncRead + Unpin, C: CountSink + Unpin> AsyncRead for Counting<R, C> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let res = Pin::new(&mut this.inner).poll_read(cx, buf);
        this.counts.read(match &res {
            Poll::Ready(Ok(())) => ReadOutcome::Bytes((buf.filled().len() - before) as u64),
            Poll::Ready(Err(_)) => ReadOutcome::Failed,
            Poll::Pending => ReadOutcome::Pending,
        });
        res
    }
}

impl<R: AsyncSeek + Unpin, C: CountSink + Unpin> AsyncSeek for Counting<R, C> {
    fn start_seek(mut self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let this = &mut *self;
        this.counts.seek(position);
        Pin::new(&mut this.inner).start_seek(position)
    }

    fn poll_complete(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        Pin::new(&mut self.inner).poll_complete(cx)
    }
}

impl<R, C: fmt::Debug> fmt::Debug for Counting<R, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.counts.fmt(f)
    }
}
