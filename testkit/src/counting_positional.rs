//! A positional source wrapper counting the requests, bytes and reads at hand that reach it.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_buffered_input::source::PositionalSource;

#[cfg(doc)]
use crate::Counting;

/// Wraps a [`PositionalSource`] and counts what reaches it, the positional counterpart of
/// [`Counting`]:
///
/// - [`requests`](Self::requests): `read_at` requests, counted when the request starts (its
///   future is first polled), whatever their outcome, plus the `try_read_at` calls that read
///   something (a page cache read is a read of the file);
/// - [`immediate`](Self::immediate): of those, the `try_read_at` calls that read something;
/// - [`live`](Self::live): `read_at` requests started and neither completed nor dropped (in
///   flight);
/// - [`jumps`](Self::jumps): of those, the requests that did not start where the previous one
///   ended (the first is expected at 0): how far from sequential the reads are;
/// - [`bytes`](Self::bytes): bytes the source returned;
/// - [`streams`](Self::streams): `read_stream` streams opened (first polled), each also a
///   request (not a jump), their bytes counted as they come;
/// - [`length_requests`](Self::length_requests): `len` calls.
///
/// # Examples
///
/// ```
/// use abi_testkit::CountingPositional;
/// use async_buffered_input::source::{MemorySource, PositionalSource};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let source = CountingPositional::new(MemorySource::new(vec![1u8; 100]));
/// source.read_at(0, 10).await?;
/// source.read_at(10, 10).await?; // continues the previous request
/// source.read_at(0, 5).await?; // a jump back
/// source.read_at(95, 10).await?; // a jump; 5 bytes left
/// assert_eq!(source.requests(), 4);
/// assert_eq!(source.jumps(), 2);
/// assert_eq!(source.bytes(), 30);
/// assert_eq!(source.live(), 0);
/// # Ok(())
/// # }
/// ```
pub struct CountingPositional<S> {
    inner: S,
    requests: AtomicU64,
    immediate: AtomicU64,
    live: AtomicU64,
    jumps: AtomicU64,
    bytes: AtomicU64,
    length_requests: AtomicU64,
    /// Streams opened and their bytes (shared with the streams, which outlive a borrow).
    streamed: Arc<[AtomicU64; 2]>,
    /// Where a request continuing the last one would start: the end of the last range asked
    /// for (0 before the first request).
    next: AtomicU64,
}

impl<S> CountingPositional<S> {
    /// Wraps `inner`, with every count at 0.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            requests: AtomicU64::new(0),
            immediate: AtomicU64::new(0),
            live: AtomicU64::new(0),
            jumps: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            length_requests: AtomicU64::new(0),
            streamed: Arc::default(),
            next: AtomicU64::new(0),
        }
    }

    /// `read_at` requests started and streams opened, plus the `try_read_at` calls that read
    /// something.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst) + self.streams()
    }

    /// Streams opened (`read_stream`, counted when first polled).
    pub fn streams(&self) -> u64 {
        self.streamed[0].load(Ordering::SeqCst)
    }

    /// The `try_read_at` calls that read something (reads of bytes at hand).
    pub fn immediate(&self) -> u64 {
        self.immediate.load(Ordering::SeqCst)
    }

    /// `read_at` requests started and neither completed nor dropped (in flight).
    pub fn live(&self) -> u64 {
        self.live.load(Ordering::SeqCst)
    }

    /// Requests that did not start where the previous request's range ended (the first is
    /// expected at 0).
    pub fn jumps(&self) -> u64 {
        self.jumps.load(Ordering::SeqCst)
    }

    /// Bytes the source returned, by `read_at`, `try_read_at` and streams.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::SeqCst) + self.streamed[1].load(Ordering::SeqCst)
    }

    /// `len` calls.
    pub fn length_requests(&self) -> u64 {
        self.length_requests.load(Ordering::SeqCst)
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The wrapped source, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Books a request for `[offset, offset + len)`.
    fn count_request(&self, offset: u64, len: usize) {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let expected = self
            .next
            .swap(offset.saturating_add(len as u64), Ordering::SeqCst);
        if expected != offset {
            self.jumps.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Books a request as alive until dropped (completed or abandoned).
struct LiveRequest<'a>(&'a AtomicU64);

impl<'a> LiveRequest<'a> {
    fn new(live: &'a AtomicU64) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Self(live)
    }
}

impl Drop for LiveRequest<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl<S: PositionalSource> PositionalSource for CountingPositional<S> {
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<bytes::Bytes> {
        self.count_request(offset, len);
        let _live = LiveRequest::new(&self.live);
        let read = self.inner.read_at(offset, len).await;
        if let Ok(bytes) = &read {
            self.bytes.fetch_add(bytes.len() as u64, Ordering::SeqCst);
        }
        read
    }

    async fn len(&self) -> io::Result<u64> {
        self.length_requests.fetch_add(1, Ordering::SeqCst);
        self.inner.len().await
    }

    /// The inner source's stream, counted when first polled (its bytes as they come).
    fn read_stream(
        &self,
        offset: u64,
    ) -> Option<futures_core::stream::BoxStream<'static, io::Result<bytes::Bytes>>> {
        use futures_util::StreamExt;
        let stream = self.inner.read_stream(offset)?;
        let (opened, counts) = (Arc::clone(&self.streamed), Arc::clone(&self.streamed));
        let open = futures_util::stream::once(async move {
            opened[0].fetch_add(1, Ordering::SeqCst);
        })
        .filter_map(|()| std::future::ready(None));
        let counted = stream.inspect(move |piece| {
            if let Ok(piece) = piece {
                counts[1].fetch_add(piece.len() as u64, Ordering::SeqCst);
            }
        });
        Some(open.chain(counted).boxed())
    }

    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        let n = self.inner.try_read_at(offset, buf);
        if n > 0 {
            self.count_request(offset, n);
            self.immediate.fetch_add(1, Ordering::SeqCst);
            self.bytes.fetch_add(n as u64, Ordering::SeqCst);
        }
        n
    }
}

impl<S> std::fmt::Debug for CountingPositional<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountingPositional")
            .field("requests", &self.requests())
            .field("immediate", &self.immediate())
            .field("live", &self.live())
            .field("jumps", &self.jumps())
            .field("bytes", &self.bytes())
            .field("length_requests", &self.length_requests())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_buffered_input::source::MemorySource;

    #[tokio::test(flavor = "current_thread")]
    async fn it_counts_requests_jumps_bytes_and_lengths() {
        let source = CountingPositional::new(MemorySource::new(vec![7u8; 50]));
        // A jump (the first request is expected at 0); 10 bytes left.
        assert_eq!(source.read_at(40, 20).await.unwrap().len(), 10);
        // Continues the range asked for, not the bytes returned; past the end.
        assert_eq!(source.read_at(60, 5).await.unwrap().len(), 0);
        assert_eq!(source.len().await.unwrap(), 50);
        assert_eq!(
            (source.requests(), source.jumps(), source.bytes()),
            (2, 1, 10)
        );
        assert_eq!((source.length_requests(), source.live()), (1, 0));
        assert_eq!(
            format!("{source:?}"),
            "CountingPositional { requests: 2, immediate: 0, live: 0, jumps: 1, bytes: 10, \
             length_requests: 1, .. }"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_future_never_polled_is_not_a_request() {
        let source = CountingPositional::new(MemorySource::new(vec![7u8; 50]));
        drop(source.read_at(0, 10));
        assert_eq!(
            (source.requests(), source.jumps(), source.live()),
            (0, 0, 0)
        );
    }
}
