//! The counting wrappers the harness puts under every reader, so that "source reads" mean the
//! same for all of them: [`CountingSource`] under a stream; under a positional source the test
//! kit's [`CountingPositional`](abi_testkit::CountingPositional), whose requests are the
//! reader's "source reads" and whose jumps (requests that do not continue the previous one) are
//! its "seeks".
//!
//! The stream wrapper is the kit's [`Counting`] with the harness's own counters,
//! [`StreamCounts`], rather than the kit's shared ones: the unbuffered reader calls it once per
//! request in its timed loop (and every stream reader at each refill), where the kit's `Counts`
//! add up to four sequentially consistent atomic updates per read and log every seek in a `Vec`
//! behind a mutex (the unbuffered reader of a random-pattern cell seeks once per request, so
//! that log would grow with the run). Plain integers in a wrapper the reader owns cost nothing
//! there.

use std::fmt;
use std::io::SeekFrom;

use abi_testkit::{CountSink, Counting, ReadOutcome};

/// A source wrapper that counts the operations made on the source: completed reads, seeks
/// started, and bytes returned (in its [`StreamCounts`]).
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
/// use throughput_harness::{CountingSource, StreamCounts};
/// use std::io::Cursor;
/// use tokio::io::{AsyncReadExt, AsyncSeekExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let data = Cursor::new(vec![1u8; 100]);
/// let mut source = CountingSource::with_counts(data, StreamCounts::default());
/// let mut buf = [0u8; 10];
/// source.read_exact(&mut buf).await?;
/// source.seek(std::io::SeekFrom::Start(0)).await?;
/// let counts = source.counts();
/// assert_eq!((counts.reads, counts.seeks, counts.bytes), (1, 1, 10));
/// # Ok(())
/// # }
/// ```
pub type CountingSource<R> = Counting<R, StreamCounts>;

/// The counts of a [`CountingSource`], in plain integers. Its `Debug` is the
/// `CountingSource`'s (which shows its counts alone), so it names the wrapper.
#[derive(Clone, Copy, Default)]
pub struct StreamCounts {
    /// Completed `poll_read` calls on the source (`Ready`, whatever the outcome).
    pub reads: u64,
    /// Seeks started on the source (`start_seek` calls, whether or not the source accepts them).
    pub seeks: u64,
    /// Bytes the source returned.
    pub bytes: u64,
}

impl CountSink for StreamCounts {
    fn read(&mut self, outcome: ReadOutcome) {
        match outcome {
            ReadOutcome::Bytes(n) => {
                self.reads += 1;
                self.bytes += n;
            }
            ReadOutcome::Failed => self.reads += 1,
            ReadOutcome::Pending => {}
        }
    }

    fn seek(&mut self, _position: SeekFrom) {
        self.seeks += 1;
    }
}

impl fmt::Debug for StreamCounts {
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
    use async_buffered_input::source::MemorySource;
    use async_buffered_input::AsyncBufferedInput;
    use async_buffered_input::{PositionalFetch, ReadAhead};
    use std::io::{Cursor, SeekFrom};
    use tokio::io::{AsyncReadExt, AsyncSeekExt};

    #[tokio::test]
    async fn a_stream_counts_reads_eof_reads_seeks_and_bytes() {
        let mut source =
            CountingSource::with_counts(Cursor::new(vec![7u8; 5]), StreamCounts::default());
        let mut buf = [0u8; 3];
        assert_eq!(source.read(&mut buf).await.unwrap(), 3);
        assert_eq!(source.read(&mut buf).await.unwrap(), 2);
        assert_eq!(source.read(&mut buf).await.unwrap(), 0);
        assert_eq!(source.seek(SeekFrom::End(-1)).await.unwrap(), 4);
        let counts = *source.counts();
        assert_eq!((counts.reads, counts.seeks, counts.bytes), (3, 1, 5));
        source.get_mut().set_position(0);
        assert_eq!(source.counts().seeks, 1);
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
        let mut source = CountingSource::with_counts(mock, StreamCounts::default());
        let mut buf = [0u8; 2];
        source.read_exact(&mut buf).await.unwrap();
        assert_eq!((source.counts().reads, source.counts().bytes), (1, 2));
    }

    #[tokio::test]
    async fn under_read_ahead_it_sees_chunks_not_reads() {
        let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        let counted = CountingPositional::new(MemorySource::new(data.clone()));
        // A 1-byte window: every 10-byte read is a fetch of its own.
        let fetch = PositionalFetch::new(counted).with_read_ahead(ReadAhead::new(1000, 2));
        let mut input = AsyncBufferedInput::with_capacity(1, fetch).into_tokio_io();
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
        let counted = input.get_ref().fetch().get_ref();
        // One plain 10-byte request, then 1000-byte chunks from offset 10 to the end (the last
        // one short), and whatever was in flight past the end.
        assert!((11..=13).contains(&counted.requests()), "{counted:?}");
        assert_eq!(counted.jumps(), 0, "{counted:?}");
        assert_eq!(counted.bytes(), 10_000, "{counted:?}");
        input.seek(SeekFrom::Start(0)).await.unwrap();
        input.read_exact(&mut buf).await.unwrap();
        assert_eq!(input.get_ref().fetch().get_ref().jumps(), 1);
    }
}
