//! The counting wrappers the harness puts under every reader, so that "source reads" mean the
//! same for all of them: [`CountingSource`] under a stream, [`CountingPositionalSource`] under a
//! positional source.

use std::fmt;
use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::task::{ready, Context, Poll};

use async_buffered_input::source::PositionalSource;
use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};

/// A source wrapper that counts the operations made on the source: completed reads, seeks
/// started, and bytes returned.
///
/// The harness puts every stream reader it compares on top of one of these, so "underlying
/// reads" means the same thing for
/// [`AsyncBufferedInput`](async_buffered_input::AsyncBufferedInput), tokio's `BufReader` and the
/// bare source: one `poll_read` on the source that returned `Ready`, including reads that
/// returned 0 bytes (the end of the source) or an error. A `poll_read` that returned `Pending`
/// is not counted; the read that later completes is.
///
/// # Examples
///
/// ```
/// use throughput_harness::CountingSource;
/// use std::io::Cursor;
/// use tokio::io::{AsyncReadExt, AsyncSeekExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let mut source = CountingSource::new(Cursor::new(vec![1u8; 100]));
/// let mut buf = [0u8; 10];
/// source.read_exact(&mut buf).await?;
/// source.seek(std::io::SeekFrom::Start(0)).await?;
/// assert_eq!((source.reads(), source.seeks(), source.bytes()), (1, 1, 10));
/// # Ok(())
/// # }
/// ```
pub struct CountingSource<R> {
    inner: R,
    reads: u64,
    seeks: u64,
    bytes: u64,
}

impl<R> CountingSource<R> {
    /// Wraps `inner`, with every count at 0.
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            reads: 0,
            seeks: 0,
            bytes: 0,
        }
    }

    /// Completed `poll_read` calls on the source (`Ready`, whatever the outcome).
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// Seeks started on the source (`start_seek` calls).
    pub fn seeks(&self) -> u64 {
        self.seeks
    }

    /// Bytes the source returned.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The source.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The source, mutably. Operations made through it are not counted.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Unwraps the source.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for CountingSource<R> {
    /// Reads from the source and counts the read once it is `Ready`.
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let before = buf.filled().len();
        let read = ready!(Pin::new(&mut me.inner).poll_read(cx, buf));
        me.reads += 1;
        if read.is_ok() {
            me.bytes += (buf.filled().len() - before) as u64;
        }
        Poll::Ready(read)
    }
}

impl<R: AsyncSeek + Unpin> AsyncSeek for CountingSource<R> {
    /// Starts a seek on the source and counts it (whether or not the source accepts it).
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let me = self.get_mut();
        me.seeks += 1;
        Pin::new(&mut me.inner).start_seek(position)
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        Pin::new(&mut self.get_mut().inner).poll_complete(cx)
    }
}

impl<R> fmt::Debug for CountingSource<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountingSource")
            .field("reads", &self.reads)
            .field("seeks", &self.seeks)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

/// A [`PositionalSource`] wrapper that counts the requests made to the source: the
/// positional counterpart of [`CountingSource`].
///
/// The harness puts it under the [read-ahead reader](crate::ReaderKind::BufferedReadAhead)
/// (between the
/// [`PositionalFetch`](async_buffered_input::fetch::PositionalFetch) and the source), so that
/// reader's "underlying reads" are the requests that reach the source, read-ahead chunks
/// included, just as the other readers' are the reads that reach theirs:
///
/// - [`requests`](Self::requests): `read_at` requests, counted when the request starts (its
///   future is first polled), whether it then succeeds, fails, or is abandoned in flight (a
///   read-ahead chunk discarded by a seek still cost the source a request; so did one past the
///   end, though some sources answer it without I/O), plus the
///   [`try_read_at`](PositionalSource::try_read_at) calls that read something (a page cache
///   read is a read of the file);
/// - [`immediate`](Self::immediate): of those, the `try_read_at` calls that read something.
///   Calls that read nothing (nothing at hand) are not counted: they cost no I/O;
/// - [`jumps`](Self::jumps): requests that did not start where the previous one ended (the
///   first is expected at offset 0). A positional source has no cursor to seek, so this is what
///   a seek would have been: the rewind between passes, a read elsewhere;
/// - [`bytes`](Self::bytes): bytes the source returned, from requests that completed;
/// - [`length_requests`](Self::length_requests): `len` calls.
///
/// The counts are atomics, since requests run on other tasks while the reader holds the source
/// behind an `Arc`.
///
/// # Examples
///
/// ```
/// use async_buffered_input::source::{MemorySource, PositionalSource};
/// use throughput_harness::CountingPositionalSource;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let source = CountingPositionalSource::new(MemorySource::new(vec![1u8; 100]));
/// source.read_at(0, 10).await?;
/// source.read_at(10, 10).await?; // continues the previous request
/// source.read_at(0, 5).await?; // a jump back
/// source.read_at(95, 10).await?; // a jump; 5 bytes left
/// assert_eq!(source.requests(), 4);
/// assert_eq!(source.jumps(), 2);
/// assert_eq!(source.bytes(), 30);
/// # Ok(())
/// # }
/// ```
pub struct CountingPositionalSource<S> {
    inner: S,
    requests: AtomicU64,
    immediate: AtomicU64,
    jumps: AtomicU64,
    bytes: AtomicU64,
    length_requests: AtomicU64,
    // Where a request continuing the last one would start: the end of the last range asked for
    // (0 before the first request).
    next: AtomicU64,
}

impl<S> CountingPositionalSource<S> {
    /// Wraps `inner`, with every count at 0.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            requests: AtomicU64::new(0),
            immediate: AtomicU64::new(0),
            jumps: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            length_requests: AtomicU64::new(0),
            next: AtomicU64::new(0),
        }
    }

    /// Requests started on the source (`read_at` futures polled at least once), whatever their
    /// outcome.
    pub fn requests(&self) -> u64 {
        self.requests.load(Relaxed)
    }

    /// `try_read_at` calls that read something (also counted in [`requests`](Self::requests)).
    pub fn immediate(&self) -> u64 {
        self.immediate.load(Relaxed)
    }

    /// Requests that did not start where the previous request's range ended (the first is
    /// expected at 0).
    pub fn jumps(&self) -> u64 {
        self.jumps.load(Relaxed)
    }

    /// Bytes the source returned.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Relaxed)
    }

    /// `len` requests started on the source.
    pub fn length_requests(&self) -> u64 {
        self.length_requests.load(Relaxed)
    }

    /// The source.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// Unwraps the source.
    pub fn into_inner(self) -> S {
        self.inner
    }

    // ----- private helpers -----

    /// Books a request for `[offset, offset + len)`.
    fn count_request(&self, offset: u64, len: usize) {
        self.requests.fetch_add(1, Relaxed);
        let expected = self.next.swap(offset.saturating_add(len as u64), Relaxed);
        if expected != offset {
            self.jumps.fetch_add(1, Relaxed);
        }
    }
}

impl<S: PositionalSource> PositionalSource for CountingPositionalSource<S> {
    /// The source's `read_at`, counted when first polled.
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        self.count_request(offset, len);
        let read = self.inner.read_at(offset, len).await;
        if let Ok(bytes) = &read {
            self.bytes.fetch_add(bytes.len() as u64, Relaxed);
        }
        read
    }

    /// The source's `len`, counted when first polled.
    async fn len(&self) -> io::Result<u64> {
        self.length_requests.fetch_add(1, Relaxed);
        self.inner.len().await
    }

    /// The source's `try_read_at`, counted as a request (and an immediate one) if it read
    /// something.
    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        let n = self.inner.try_read_at(offset, buf);
        if n > 0 {
            self.count_request(offset, n);
            self.immediate.fetch_add(1, Relaxed);
            self.bytes.fetch_add(n as u64, Relaxed);
        }
        n
    }
}

impl<S> fmt::Debug for CountingPositionalSource<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountingPositionalSource")
            .field("requests", &self.requests())
            .field("immediate", &self.immediate())
            .field("jumps", &self.jumps())
            .field("bytes", &self.bytes())
            .field("length_requests", &self.length_requests())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_buffered_input::fetch::{PositionalFetch, ReadAhead};
    use async_buffered_input::source::MemorySource;
    use async_buffered_input::AsyncBufferedInput;
    use std::io::Cursor;
    use tokio::io::{AsyncReadExt, AsyncSeekExt};

    #[tokio::test]
    async fn a_stream_counts_reads_eof_reads_seeks_and_bytes() {
        let mut source = CountingSource::new(Cursor::new(vec![7u8; 5]));
        let mut buf = [0u8; 3];
        assert_eq!(source.read(&mut buf).await.unwrap(), 3);
        assert_eq!(source.read(&mut buf).await.unwrap(), 2);
        assert_eq!(source.read(&mut buf).await.unwrap(), 0);
        assert_eq!(source.seek(SeekFrom::End(-1)).await.unwrap(), 4);
        assert_eq!((source.reads(), source.seeks(), source.bytes()), (3, 1, 5));
        source.get_mut().set_position(0);
        assert_eq!(source.seeks(), 1);
        assert_eq!(
            format!("{source:?}"),
            "CountingSource { reads: 3, seeks: 1, bytes: 5, .. }"
        );
    }

    #[tokio::test]
    async fn pending_stream_reads_are_not_counted() {
        let mock = tokio_test::io::Builder::new()
            .wait(std::time::Duration::from_millis(1))
            .read(b"ab")
            .build();
        let mut source = CountingSource::new(mock);
        let mut buf = [0u8; 2];
        source.read_exact(&mut buf).await.unwrap();
        assert_eq!((source.reads(), source.bytes()), (1, 2));
    }

    #[tokio::test]
    async fn a_positional_source_counts_requests_jumps_bytes_and_lengths() {
        let source = CountingPositionalSource::new(MemorySource::new(vec![7u8; 50]));
        assert_eq!(source.read_at(40, 20).await.unwrap().len(), 10);
        assert_eq!(source.read_at(60, 5).await.unwrap().len(), 0);
        assert_eq!(source.len().await.unwrap(), 50);
        assert_eq!(
            (source.requests(), source.jumps(), source.bytes()),
            (2, 1, 10)
        );
        assert_eq!(source.length_requests(), 1);
        assert_eq!(
            format!("{source:?}"),
            "CountingPositionalSource { requests: 2, immediate: 0, jumps: 1, bytes: 10, length_requests: 1, .. }"
        );
    }

    #[tokio::test]
    async fn a_future_never_polled_is_not_a_request() {
        let source = CountingPositionalSource::new(MemorySource::new(vec![7u8; 50]));
        drop(source.read_at(0, 10));
        assert_eq!((source.requests(), source.jumps()), (0, 0));
    }

    #[tokio::test]
    async fn under_read_ahead_it_sees_chunks_not_reads() {
        let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        let counted = CountingPositionalSource::new(MemorySource::new(data.clone()));
        // A 1-byte window: every 10-byte read is a fetch of its own.
        let fetch = PositionalFetch::new(counted).with_read_ahead(ReadAhead::new(1000, 2));
        let mut input = AsyncBufferedInput::with_capacity(1, fetch);
        let mut got = Vec::new();
        let mut buf = [0u8; 10];
        loop {
            let n = input.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, data);
        let counted = input.fetch().get_ref();
        // One plain 10-byte request, then 1000-byte chunks from offset 10 to the end (the last
        // one short), and whatever was in flight past the end.
        assert!((11..=13).contains(&counted.requests()), "{counted:?}");
        assert_eq!(counted.jumps(), 0, "{counted:?}");
        assert_eq!(counted.bytes(), 10_000, "{counted:?}");
        input.seek(SeekFrom::Start(0)).await.unwrap();
        input.read_exact(&mut buf).await.unwrap();
        assert_eq!(input.fetch().get_ref().jumps(), 1);
    }
}
