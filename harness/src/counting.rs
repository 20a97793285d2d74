//! The counting wrappers the harness puts under every reader, so that "source reads" mean the
//! same for all of them: [`CountingSource`] under a stream; under a positional source the test
//! kit's [`CountingPositional`](abi_testkit::CountingPositional), whose requests are the
//! reader's "source reads" and whose jumps (requests that do not continue the previous one) are
//! its "seeks".
//!
//! The stream wrapper is the harness's own rather than the kit's
//! [`Counting`](abi_testkit::Counting): the unbuffered reader calls it once per request in its
//! timed loop (and every stream reader at each refill), where the kit's wrapper adds up to four
//! sequentially consistent atomic updates per read and logs every seek in a `Vec` behind a
//! mutex (the unbuffered reader of a random-pattern cell seeks once per request, so that log
//! would grow with the run). Plain integers in a wrapper the reader owns cost nothing there.

use std::fmt;
use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

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

    /// The source, mutably. Operations made through it are not counted.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
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

#[cfg(test)]
mod tests {
    use super::*;
    use abi_testkit::CountingPositional;
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
    async fn under_read_ahead_it_sees_chunks_not_reads() {
        let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        let counted = CountingPositional::new(MemorySource::new(data.clone()));
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
