//! Sequential reads of an [`OpendalSource`](crate::source::OpendalSource) served from one open stream.

use std::fmt;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use bytes::{Buf, Bytes, BytesMut};
use futures_core::Stream;
use opendal::{Buffer, Operator};

use crate::source::remote::spare_buffers::SpareBuffers;

/// One streaming request from where the reads have got to, to the end of the file, serving the
/// reads that continue it; every other read goes ranged.
///
/// A read *continues* when it starts where the last read ended (whatever served it), or where
/// the last read that claimed the stream ends. It claims the stream then, and waits its turn
/// for it: reads in flight at once (a read-ahead's chunks) queue in the order they claimed it,
/// which is their offset order, so each finds the stream where it starts. The stream is opened
/// by the first continuing read, from that read's offset to the end of the file: so a
/// sequential pass is one ranged request (its first read) and one stream, and reads at random
/// offsets never open one.
///
/// # Cancel safety
///
/// A read takes the stream out of its slot while it reads and puts it back only once it has
/// read all its bytes: a read dropped midway (or failing) drops the stream with it, and the
/// next continuing read opens a new one where it starts. A read that finds the stream behind
/// its start (an earlier read in the queue was dropped, or failed over to a ranged read) does
/// the same; one that finds it past its start goes ranged and leaves it to the reads after.
/// So the stream never serves a read from the wrong offset.
///
/// # Memory
///
/// Besides the read's own bytes, at most one chunk of the service's answer (what one poll of
/// the stream gave: up to 1 MiB for FTP) is held between reads, plus what the transport
/// buffers. Reads are collected into buffers reused once their bytes are dropped (at most four
/// kept per process, see `SpareBuffers`).
pub(crate) struct SequentialStream {
    claims: Mutex<Claims>,
    // The open stream, if any. Locked (fairly: first come, first served) by the reads that
    // claimed it, for as long as each reads.
    slot: tokio::sync::Mutex<Option<OpenStream>>,
    // Streams opened, for tests and `Debug`.
    opened: AtomicU64,
}

/// Where a read continues the reads before it.
#[derive(Clone, Copy, Debug, Default)]
struct Claims {
    // Where the last read ended (`None` before the first).
    last_end: Option<u64>,
    // Where the stream will be once every read that claimed it has read: the end of the last
    // claim (`None` before the first).
    stream_end: Option<u64>,
}

/// A stream from `at` on: `held` is its next bytes, `[at, at + held.len())`; then the stream.
struct OpenStream {
    at: u64,
    held: Buffer,
    // OpenDAL's `BufferStream`; boxed, so that tests can give chunks of their choosing.
    stream: ServiceStream,
}

/// The chunks of a service's answer, as OpenDAL's `BufferStream` gives them.
type ServiceStream = Pin<Box<dyn Stream<Item = opendal::Result<Buffer>> + Send>>;

/// Why a streamed read did not happen: the caller reads the range with a ranged read instead.
#[derive(Debug)]
pub(crate) enum StreamFailed {
    /// OpenDAL failed to open or continue the stream.
    Service(opendal::Error),
    /// The stream ended before the read's end (the file is shorter than its length said).
    Ended { at: u64 },
    /// The stream is already past the read's start (a read that claimed it later got its turn
    /// first): it stays where it is, for the reads after.
    Passed { at: u64 },
}

impl fmt::Display for StreamFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Service(e) => write!(f, "{e}"),
            Self::Ended { at } => write!(f, "the stream ended at offset {at}"),
            Self::Passed { at } => write!(f, "the stream is already at offset {at}"),
        }
    }
}

impl OpenStream {
    fn new(at: u64, stream: ServiceStream) -> Self {
        Self {
            at,
            held: Buffer::new(),
            stream,
        }
    }

    /// The stream's next `len` bytes, copied from its chunks into a reused buffer.
    ///
    /// A read is not answered with a slice of the service's chunk even where one chunk holds
    /// it all: a slice kept in a read-ahead queue keeps the service's receive buffer shared,
    /// and OpenDAL's FTP service (like hyper under WebDAV) then allocates and fills a new one
    /// for its next socket read; measured, that cost more than the copy it saves (see
    /// BENCHMARKS.md, "OpenDAL backends", third pass).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropped midway, the bytes taken so far are lost, so the caller drops
    /// the stream with the future (see [`SequentialStream`]).
    async fn take(&mut self, len: usize) -> Result<Bytes, StreamFailed> {
        debug_assert!(len > 0);
        // A reused buffer: a fresh large one would take a page fault every 4 KiB of the copy.
        let mut bytes: BytesMut = SPARE_BUFFERS.take(len);
        // Invariant: `at` is the offset of `held`'s first byte, and `bytes` holds what this
        // read has taken so far: the bytes up to `at`.
        while bytes.len() < len {
            self.fill().await?;
            let chunk = self.held.chunk();
            let n = chunk.len().min(len - bytes.len());
            bytes.extend_from_slice(&chunk[..n]);
            self.held.advance(n);
            self.at += n as u64;
        }
        Ok(SPARE_BUFFERS.keep(bytes))
    }

    /// Polls the stream until `held` has a byte (the service may send empty chunks).
    async fn fill(&mut self) -> Result<(), StreamFailed> {
        while self.held.is_empty() {
            match poll_fn(|cx| self.stream.as_mut().poll_next(cx)).await {
                Some(Ok(next)) => self.held = next,
                Some(Err(e)) => return Err(StreamFailed::Service(e)),
                None => return Err(StreamFailed::Ended { at: self.at }),
            }
        }
        Ok(())
    }
}

impl SequentialStream {
    /// No stream yet, no read seen.
    pub(crate) fn new() -> Self {
        Self {
            claims: Mutex::new(Claims::default()),
            slot: tokio::sync::Mutex::new(None),
            opened: AtomicU64::new(0),
        }
    }

    /// Streams opened so far.
    pub(crate) fn opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }

    /// Records a read of `[start, end)`; whether it continues the reads before it (and has
    /// claimed the stream: it must then call [`read`](Self::read) at once, or the reads that
    /// claim it after it find it elsewhere and open a new one).
    pub(crate) fn claim(&self, start: u64, end: u64) -> bool {
        debug_assert!(start < end);
        let mut claims = self.claims();
        let continues = claims.last_end == Some(start) || claims.stream_end == Some(start);
        claims.last_end = Some(end);
        if continues {
            claims.stream_end = Some(end);
        }
        continues
    }

    /// The bytes `[start, end)` from the stream, after the reads that claimed it before this
    /// one; the stream is opened (to `length`) if there is none at `start`.
    ///
    /// # Errors
    ///
    /// [`StreamFailed`]: the stream is dropped, and the caller reads the range ranged.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the stream if it was reading from it (see the type's docs).
    pub(crate) async fn read(
        &self,
        operator: &Operator,
        path: &str,
        start: u64,
        end: u64,
        length: u64,
    ) -> Result<Bytes, StreamFailed> {
        debug_assert!(start < end && end <= length);
        let mut slot = self.slot.lock().await;
        // Out of the slot while reading: a read that does not finish drops it.
        let mut open = match slot.take() {
            Some(open) if open.at == start => open,
            Some(open) if open.at > start => {
                let at = open.at;
                *slot = Some(open);
                return Err(StreamFailed::Passed { at });
            }
            // None, or behind `start`: an earlier read in the queue did not finish.
            _ => {
                let stream = operator
                    .reader_with(path)
                    .await
                    .map_err(StreamFailed::Service)?
                    .into_stream(start..length)
                    .await
                    .map_err(StreamFailed::Service)?;
                self.opened.fetch_add(1, Ordering::Relaxed);
                tracing::trace!(start, length, "OpenDAL stream opened");
                OpenStream::new(start, Box::pin(stream))
            }
        };
        // At most the file's length, which is in memory already as a `u64` range of it.
        let len = usize::try_from(end - start).unwrap_or(usize::MAX);
        let bytes = open.take(len).await?;
        debug_assert_eq!(open.at, end);
        debug_assert_eq!(bytes.len(), len);
        if end < length {
            *slot = Some(open);
        }
        Ok(bytes)
    }

    /// `buffer` as one `Bytes`: its only chunk as it is, or its chunks copied into a reused
    /// buffer (for the ranged reads).
    pub(crate) fn contiguous(buffer: Buffer) -> Bytes {
        if buffer.chunk().len() == buffer.len() {
            return buffer.to_bytes(); // one chunk: no copy
        }
        let mut bytes = SPARE_BUFFERS.take(buffer.len());
        for chunk in buffer {
            bytes.extend_from_slice(&chunk);
        }
        SPARE_BUFFERS.keep(bytes)
    }

    /// Drops the buffers kept for reuse.
    pub(crate) fn release_buffers() {
        SPARE_BUFFERS.clear();
    }

    fn claims(&self) -> MutexGuard<'_, Claims> {
        // The claims are two numbers, consistent after any panic.
        self.claims.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The buffers reads are collected into, reused once their bytes are dropped: one set per
/// process, so that what they keep idle is bounded however many sources there are (at most
/// four, as many as a default read-ahead has chunks).
static SPARE_BUFFERS: SpareBuffers = SpareBuffers::new();

impl fmt::Debug for SequentialStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let claims = *self.claims();
        let mut s = f.debug_struct("SequentialStream");
        s.field("last_end", &claims.last_end)
            .field("stream_end", &claims.stream_end);
        match self.slot.try_lock() {
            Ok(slot) => s.field("stream_at", &slot.as_ref().map(|open| open.at)),
            Err(_) => s.field("stream_at", &"(reading)"),
        };
        s.field("opened", &self.opened()).finish()
    }
}

#[cfg(test)]
mod tests {
    use abi_testkit::pattern_vec;

    use super::*;

    /// A stream at 0 whose service sends `data` in chunks of the given lengths.
    fn stream_of(data: &[u8], lengths: &[usize]) -> OpenStream {
        let mut chunks = Vec::new();
        let mut at = 0;
        for &n in lengths {
            chunks.push(Ok(Buffer::from(Bytes::copy_from_slice(&data[at..at + n]))));
            at += n;
        }
        assert_eq!(at, data.len());
        OpenStream::new(0, Box::pin(futures::stream::iter(chunks)))
    }

    /// Chunks of 1, 0 (an empty one), 7, 64, 3 and 1000 bytes.
    const CHUNKS: [usize; 6] = [1, 0, 7, 64, 3, 1000];

    #[tokio::test]
    async fn every_read_gets_its_bytes_within_and_across_the_chunks() {
        let data = pattern_vec(CHUNKS.iter().sum());
        // Reads of every length from 1 to 80, one after the other, each from a fresh stream
        // read to its end: within a chunk, ending on its end, across several.
        for len in 1..=80 {
            let mut open = stream_of(&data, &CHUNKS);
            let mut at = 0;
            while at < data.len() {
                let n = len.min(data.len() - at);
                let bytes = open.take(n).await.unwrap();
                assert!(bytes[..] == data[at..at + n], "read of {n} at {at}");
                at += n;
                assert_eq!(open.at, at as u64);
            }
            assert!(matches!(
                open.take(1).await,
                Err(StreamFailed::Ended { at: 1075 })
            ));
        }
    }

    #[tokio::test]
    async fn reads_keep_their_bytes_while_their_buffers_are_reused() {
        // Reads of at least `SpareBuffers::MIN_LEN` go to buffers kept for reuse.
        const K: usize = 1 << 10;
        let chunks = CHUNKS.map(|n| n * K);
        let data = pattern_vec(1075 * K);
        let mut open = stream_of(&data, &chunks);
        // Across the first four chunks (75 KiB), then inside the 1000 KiB one, to its end.
        let reads = [200 * K, 150 * K, 300 * K, 425 * K];
        let mut kept = Vec::new();
        let mut at = 0;
        for (i, n) in reads.into_iter().enumerate() {
            let bytes = open.take(n).await.unwrap();
            assert!(bytes[..] == data[at..at + n], "read of {n} at {at}");
            // Every other read is dropped at once: its buffer is reused by the next one.
            if i % 2 == 1 {
                kept.push((at, bytes));
            }
            at += n;
        }
        assert_eq!(open.at, 1075 * K as u64);
        // The reads kept stayed right while the others' buffers were reused.
        for (at, bytes) in kept {
            assert!(bytes[..] == data[at..at + bytes.len()], "read at {at}");
        }
    }

    #[tokio::test]
    async fn a_service_error_mid_read_is_reported_where_the_stream_got_to() {
        let data = pattern_vec(10);
        let chunks = vec![
            Ok(Buffer::from(Bytes::copy_from_slice(&data[..4]))),
            Err(opendal::Error::new(opendal::ErrorKind::Unexpected, "reset")),
        ];
        let mut open = OpenStream::new(0, Box::pin(futures::stream::iter(chunks)));
        assert!(matches!(
            open.take(6).await,
            Err(StreamFailed::Service(e)) if e.kind() == opendal::ErrorKind::Unexpected
        ));
        // The caller drops such a stream; its position says what it consumed.
        assert_eq!(open.at, 4);
    }
}
