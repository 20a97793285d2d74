//! The readers a cell compares, as the harness drives them: one request at a time, each at an
//! offset (the next one for sequential patterns, elsewhere for random ones), over a counted
//! source ([`Readers::open`] opens one per task). The cached reader's tasks share one block
//! cache, and each counts the requests that reach the source under it.

use std::future::Future;
use std::io::{self, SeekFrom};

use abi_testkit::CountingPositional;
#[cfg(unix)]
use async_buffered_input::cache::DiskTier;
use async_buffered_input::cache::{BlockCache, Cached};
use async_buffered_input::source::PositionalSource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, StreamFetch};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncSeek, AsyncSeekExt, BufReader};

use crate::boxed::{BoxPositionalSource, BoxSource};
use crate::counting::{CountingSource, StreamCounts};
use crate::error::context;
use crate::plan::{Cell, DiskCacheSpec, ReaderKind};
use crate::sources::Source;

type Counted = CountingSource<BoxSource>;
type CountedPositional = PositionalFetch<CountingPositional<BoxPositionalSource>>;
type CachedCounted = PositionalFetch<Cached<CountingPositional<BoxPositionalSource>>>;

/// The key the cached reader's tasks keep their blocks under: one cache per cell, holding one
/// source, so any name will do as long as the tasks share it.
const CACHE_KEY: &str = "cell";

/// What the source under a reader saw (see [`CellReport`](crate::CellReport)'s `underlying_*`
/// fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) reads: u64,
    pub(crate) seeks: u64,
    pub(crate) bytes: u64,
    /// Blocks the cached reader's disk tier served (counted by the cell's first task only, as
    /// the tasks share the cache).
    pub(crate) disk_hits: u64,
}

impl Counts {
    fn of_stream<R>(counted: &CountingSource<R>) -> Self {
        Self {
            reads: counted.counts().reads,
            seeks: counted.counts().seeks,
            bytes: counted.counts().bytes,
            disk_hits: 0,
        }
    }

    /// Requests to a positional source, the requests that did not continue the previous one
    /// (a positional source has no seeks), and the bytes it returned.
    fn of_positional<S>(counted: &CountingPositional<S>) -> Self {
        Self {
            reads: counted.requests(),
            seeks: counted.jumps(),
            bytes: counted.bytes(),
            disk_hits: 0,
        }
    }

    /// The sum of two tasks' counts.
    pub(crate) fn add(self, other: Counts) -> Counts {
        Counts {
            reads: self.reads + other.reads,
            seeks: self.seeks + other.seeks,
            bytes: self.bytes + other.bytes,
            disk_hits: self.disk_hits + other.disk_hits,
        }
    }
}

/// A block cache of `capacity` bytes over the disk tier of `spec` for blocks of `block_size`
/// bytes, in its subfolder. The tier is opened once per process (its folder is locked while
/// open) and shared by every cell that uses it.
#[cfg(unix)]
fn cache_over_disk(
    spec: &DiskCacheSpec,
    capacity: u64,
    block_size: usize,
) -> io::Result<BlockCache> {
    use std::sync::Mutex;
    static OPENED: Mutex<Vec<((DiskCacheSpec, usize), DiskTier)>> = Mutex::new(Vec::new());
    let key = (spec.clone(), block_size);
    // Opened under the lock (a header scan, once per process, before any clock starts), so
    // that two cells never both open it.
    let mut opened = OPENED.lock().unwrap_or_else(|e| e.into_inner());
    let tier = match opened.iter().find(|(k, _)| *k == key) {
        Some((_, tier)) => tier.clone(),
        None => {
            let dir = spec.dir.join(format!("block-{block_size}"));
            let tier = DiskTier::open(dir, spec.capacity, block_size)?;
            opened.push((key, tier.clone()));
            tier
        }
    };
    Ok(BlockCache::with_disk_tier(capacity, tier))
}

#[cfg(not(unix))]
fn cache_over_disk(
    _spec: &DiskCacheSpec,
    _capacity: u64,
    _block_size: usize,
) -> io::Result<BlockCache> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "--disk-cache needs Unix",
    ))
}

/// A reader as the harness drives it.
pub(crate) trait RequestReader: Send + 'static {
    /// Fills `buf` with the bytes at `offset`: where the previous request ended (no seek) or
    /// anywhere else (a seek first, as the reader's user would make).
    fn read_at(
        &mut self,
        offset: u64,
        buf: &mut [u8],
    ) -> impl Future<Output = io::Result<()>> + Send;

    /// What the counted source under the reader saw.
    fn counts(&self) -> Counts;
}

/// Runs `$body` with `$readers` bound to the vector of [`Readers`], whatever their kind.
macro_rules! each_reader {
    ($readers:expr, |$r:ident| $body:expr) => {
        match $readers {
            $crate::readers::Readers::Buffered($r) => $body,
            $crate::readers::Readers::BufferedReadAhead($r) => $body,
            $crate::readers::Readers::Cached($r) => $body,
            $crate::readers::Readers::BufReader($r) => $body,
            $crate::readers::Readers::Unbuffered($r) => $body,
            $crate::readers::Readers::ByteLoop($r) => $body,
            #[cfg(feature = "opendal")]
            $crate::readers::Readers::Opendal($r) => $body,
            #[cfg(feature = "object-store")]
            $crate::readers::Readers::ObjectStore($r) => $body,
        }
    };
}
pub(crate) use each_reader;

/// One reader per task of a cell, all of the cell's kind.
pub(crate) enum Readers {
    Buffered(Vec<Buffered>),
    BufferedReadAhead(Vec<BufferedReadAhead>),
    Cached(Vec<CachedReader>),
    BufReader(Vec<TokioBufReader>),
    Unbuffered(Vec<Unbuffered>),
    ByteLoop(Vec<ByteLoop>),
    #[cfg(feature = "opendal")]
    Opendal(Vec<OpendalReader>),
    #[cfg(feature = "object-store")]
    ObjectStore(Vec<ObjectStoreBufReader>),
}

impl Readers {
    /// Opens `cell`'s reader for each task, over `source`, positioned at `starts[task]`
    /// (outside the counts for the stream readers). The read-ahead and cached readers share one
    /// positional source, opened once, and learn its length now, before any clock starts; the
    /// cached readers also share a new [`BlockCache`] of `cache_capacity` bytes in blocks of
    /// the window's capacity.
    pub(crate) async fn open(
        cell: Cell,
        source: &Source,
        cache_capacity: u64,
        disk_cache: Option<&DiskCacheSpec>,
        starts: &[u64],
    ) -> io::Result<Readers> {
        let capacity = || {
            cell.capacity.ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{cell}: no window capacity"),
                )
            })
        };
        let stream = |start: u64| async move {
            let stream = source.open_at(start).await?;
            Ok::<_, io::Error>(CountingSource::with_counts(stream, StreamCounts::default()))
        };
        Ok(match cell.reader {
            ReaderKind::Buffered => Readers::Buffered(
                per_start(starts, |start| async move {
                    let mut input =
                        AsyncBufferedInput::try_with_capacity(capacity()?, stream(start).await?)?;
                    input.seek_to(start);
                    Ok(Buffered { input, disk: None })
                })
                .await?,
            ),
            ReaderKind::BufferedReadAhead => {
                let shared = &source.open_positional().await?;
                Readers::BufferedReadAhead(
                    per_start(starts, |start| async move {
                        let fetch = PositionalFetch::new(CountingPositional::new(shared.clone()))
                            .with_read_ahead(cell.read_ahead.unwrap_or_default());
                        let input = positional_input(cell, capacity()?, fetch, start).await?;
                        Ok(BufferedReadAhead { input, disk: None })
                    })
                    .await?,
                )
            }
            ReaderKind::Cached => {
                let shared = source.open_positional().await?;
                let (cache, key) = match disk_cache {
                    None => (
                        BlockCache::with_block_size(cache_capacity, capacity()?),
                        CACHE_KEY.to_owned(),
                    ),
                    // Kept across cells and runs: the blocks go under the source's name.
                    Some(spec) => (
                        cache_over_disk(spec, cache_capacity, capacity()?)?,
                        shared.resource().unwrap_or_else(|| shared.description()),
                    ),
                };
                // The disk tier's counters go on across cells: the first task reports this
                // cell's share.
                let mut disk_baseline =
                    disk_cache.map(|_| (cache.clone(), cache.stats().disk_hits));
                let mut readers = Vec::with_capacity(starts.len());
                for &start in starts {
                    // Counted under the cache, one count per task, all with the same key: a
                    // task's count is the block loads it made, and the sum what reached the
                    // source.
                    let counted = CountingPositional::new(shared.clone());
                    let cached = Cached::with_key(counted, cache.clone(), key.as_str());
                    let fetch = PositionalFetch::new(cached);
                    let input = positional_input(cell, capacity()?, fetch, start).await?;
                    readers.push(CachedReader {
                        input,
                        disk: disk_baseline.take(),
                    });
                }
                Readers::Cached(readers)
            }
            ReaderKind::BufReader => Readers::BufReader(
                per_start(starts, |start| async move {
                    let reader = BufReader::with_capacity(capacity()?, stream(start).await?);
                    Ok(TokioBufReader { reader, pos: start })
                })
                .await?,
            ),
            ReaderKind::Unbuffered => Readers::Unbuffered(
                per_start(starts, |start| async move {
                    let source = stream(start).await?;
                    Ok(Unbuffered { source, pos: start })
                })
                .await?,
            ),
            ReaderKind::ByteLoop => Readers::ByteLoop(
                per_start(starts, |start| async move {
                    let reader = BufReader::with_capacity(capacity()?, stream(start).await?);
                    Ok(ByteLoop { reader, pos: start })
                })
                .await?,
            ),
            #[cfg(feature = "opendal")]
            ReaderKind::OpendalReader | ReaderKind::OpendalReaderTuned => {
                let tuned = cell.reader == ReaderKind::OpendalReaderTuned;
                Readers::Opendal(open_opendal_readers(source, tuned, starts).await?)
            }
            #[cfg(not(feature = "opendal"))]
            ReaderKind::OpendalReader | ReaderKind::OpendalReaderTuned => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!(
                        "{cell}: the OpenDAL readers need the harness's cargo feature `opendal`"
                    ),
                ))
            }
            #[cfg(feature = "object-store")]
            ReaderKind::ObjectStoreBufReader => {
                Readers::ObjectStore(open_object_store_readers(source, capacity()?, starts).await?)
            }
            #[cfg(not(feature = "object-store"))]
            ReaderKind::ObjectStoreBufReader => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!(
                        "{cell}: the object_store BufReader needs the harness's cargo feature \
                         `object-store`"
                    ),
                ))
            }
        })
    }
}

/// What reached the source under a reader's fetch.
trait SourceCounts {
    fn source_counts(&self) -> Counts;
}

impl<R: AsyncRead + AsyncSeek + Unpin> SourceCounts for StreamFetch<CountingSource<R>> {
    fn source_counts(&self) -> Counts {
        Counts::of_stream(self.get_ref())
    }
}

impl<S: PositionalSource> SourceCounts for PositionalFetch<CountingPositional<S>> {
    /// What reached the positional source (see [`Counts::of_positional`]).
    fn source_counts(&self) -> Counts {
        Counts::of_positional(self.get_ref())
    }
}

impl<S: PositionalSource> SourceCounts for PositionalFetch<Cached<CountingPositional<S>>> {
    /// The block loads this task made of the positional source, under the cache (see
    /// [`Counts::of_positional`]): the blocks it found cached, or loading for another task,
    /// cost nothing.
    fn source_counts(&self) -> Counts {
        Counts::of_positional(self.get_ref().get_ref())
    }
}

/// Declares a reader built on [`AsyncBufferedInput`] over the fetch `$fetch`, and its
/// [`RequestReader`]: each request is a `seek_to` (no I/O) where it does not continue the last,
/// then `read_bytes`; the counts are the fetch's [`SourceCounts`]. A non-generic struct per
/// reader, not one generic struct: rustc cannot prove the harness's run future `Send` through
/// a generic reader's `read_at` future (the higher-ranked auto trait bug,
/// rust-lang/rust#64552).
macro_rules! windowed_reader {
    ($(#[$doc:meta])* $reader:ident($fetch:ty)) => {
        $(#[$doc])*
        pub(crate) struct $reader {
            input: AsyncBufferedInput<$fetch>,
            // The cached reader's first task's: the cell's cache, and its disk tier's hits
            // when the cell began.
            disk: Option<(BlockCache, u64)>,
        }

        impl RequestReader for $reader {
            #[inline]
            fn read_at(
                &mut self,
                offset: u64,
                buf: &mut [u8],
            ) -> impl Future<Output = io::Result<()>> + Send {
                if self.input.position() != offset {
                    self.input.seek_to(offset);
                }
                self.input.read_bytes(buf)
            }

            /// The fetch's [`SourceCounts`]; the cached reader's first task adds the blocks
            /// the disk tier served the cell.
            fn counts(&self) -> Counts {
                let mut counts = self.input.fetch().source_counts();
                if let Some((cache, baseline)) = &self.disk {
                    counts.disk_hits = cache.stats().disk_hits - baseline;
                }
                counts
            }
        }
    };
}

windowed_reader!(
    /// [`AsyncBufferedInput`] over the counted stream.
    Buffered(StreamFetch<Counted>)
);
windowed_reader!(
    /// [`AsyncBufferedInput`] over a [`PositionalFetch`] with read-ahead over the counted
    /// positional source.
    BufferedReadAhead(CountedPositional)
);
windowed_reader!(
    /// [`AsyncBufferedInput`] over a [`PositionalFetch`] without read-ahead over the counted
    /// positional source read through the cell's [`BlockCache`].
    CachedReader(CachedCounted)
);

/// One reader per task, opened in task order by `open(start)`; the first error ends it.
async fn per_start<T, F, Fut>(starts: &[u64], mut open: F) -> io::Result<Vec<T>>
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = io::Result<T>>,
{
    let mut readers = Vec::with_capacity(starts.len());
    for &start in starts {
        readers.push(open(start).await?);
    }
    Ok(readers)
}

/// `cell`'s input with a window of `capacity` over `fetch`, positioned at `start`. It learns the
/// source's length now, before the clock starts (one `len`, not a read), as the stream readers'
/// sources are opened and positioned before it: read-ahead then stops at the end instead of
/// asking past it.
async fn positional_input<S: PositionalSource>(
    cell: Cell,
    capacity: usize,
    fetch: PositionalFetch<S>,
    start: u64,
) -> io::Result<AsyncBufferedInput<PositionalFetch<S>>> {
    let mut input = AsyncBufferedInput::try_with_capacity(capacity, fetch)?;
    input
        .length()
        .await
        .map_err(|e| context(e, format!("{cell}: cannot find the length")))?;
    input.seek_to(start);
    Ok(input)
}

/// A request to a stream at `pos`: a seek where it does not continue the last (`pos` is where
/// the last ended), then `read_exact`; `pos` then ends after it.
async fn seek_and_read_exact<R: AsyncRead + AsyncSeek + Unpin>(
    reader: &mut R,
    pos: &mut u64,
    offset: u64,
    buf: &mut [u8],
) -> io::Result<()> {
    if *pos != offset {
        reader.seek(SeekFrom::Start(offset)).await?;
    }
    reader.read_exact(buf).await?;
    *pos = offset + buf.len() as u64;
    Ok(())
}

/// tokio's `BufReader`: a seek where a request does not continue the last (which drops its
/// buffer), then `read_exact`.
pub(crate) struct TokioBufReader {
    reader: BufReader<Counted>,
    pos: u64,
}

impl RequestReader for TokioBufReader {
    async fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        seek_and_read_exact(&mut self.reader, &mut self.pos, offset, buf).await
    }

    fn counts(&self) -> Counts {
        Counts::of_stream(self.reader.get_ref())
    }
}

/// The counted source itself: a seek where a request does not continue the last, then
/// `read_exact`.
pub(crate) struct Unbuffered {
    source: Counted,
    pos: u64,
}

impl RequestReader for Unbuffered {
    async fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        seek_and_read_exact(&mut self.source, &mut self.pos, offset, buf).await
    }

    fn counts(&self) -> Counts {
        Counts::of_stream(&self.source)
    }
}

/// tokio's `BufReader` read one `read_u8` per byte, as Lucene did before LUCENE-695.
pub(crate) struct ByteLoop {
    reader: BufReader<Counted>,
    pos: u64,
}

impl RequestReader for ByteLoop {
    async fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if self.pos != offset {
            self.reader.seek(SeekFrom::Start(offset)).await?;
        }
        for b in buf.iter_mut() {
            *b = self.reader.read_u8().await?;
        }
        self.pos = offset + buf.len() as u64;
        Ok(())
    }

    fn counts(&self) -> Counts {
        Counts::of_stream(self.reader.get_ref())
    }
}

// ----- OpenDAL's reader (cargo feature `opendal`) -----

/// OpenDAL's reader over a fresh operator, one per task, each at its start.
#[cfg(feature = "opendal")]
async fn open_opendal_readers(
    source: &Source,
    tuned: bool,
    starts: &[u64],
) -> io::Result<Vec<OpendalReader>> {
    let location = source.opendal.as_ref().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "the OpenDAL readers read OpenDAL locations (ftp://, webdav://), not {}",
                source.label()
            ),
        )
    })?;
    let file = crate::opendal::open(&location.uri).await?;
    let mut readers = Vec::with_capacity(starts.len());
    for &start in starts {
        let mut builder = file.operator().reader_with(file.path());
        if tuned {
            builder = builder
                .concurrent(location.tuning.concurrent)
                .chunk(location.tuning.chunk);
        }
        let what = || format!("OpenDAL reader of {}", file.name());
        let reader = builder
            .await
            .map_err(|e| context(io::Error::other(e), what()))?;
        let mut reader = reader
            .into_futures_async_read(0..file.length())
            .await
            .map_err(|e| context(io::Error::other(e), what()))?;
        if start != 0 {
            futures_util::io::AsyncSeekExt::seek(&mut reader, SeekFrom::Start(start)).await?;
        }
        readers.push(OpendalReader { reader, pos: start });
    }
    Ok(readers)
}

/// OpenDAL's own reader (see `opendal.rs`): its `FuturesAsyncReader`, a seek where a request
/// does not continue the last, then `read_exact`.
#[cfg(feature = "opendal")]
pub(crate) struct OpendalReader {
    reader: opendal::FuturesAsyncReader,
    pos: u64,
}

#[cfg(feature = "opendal")]
impl RequestReader for OpendalReader {
    async fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if self.pos != offset {
            futures_util::io::AsyncSeekExt::seek(&mut self.reader, SeekFrom::Start(offset)).await?;
        }
        futures_util::io::AsyncReadExt::read_exact(&mut self.reader, buf).await?;
        self.pos = offset + buf.len() as u64;
        Ok(())
    }

    /// Unknown: OpenDAL's reader makes its requests inside the operator.
    fn counts(&self) -> Counts {
        Counts::default()
    }
}

// ----- object_store's BufReader (cargo feature `object-store`) -----

/// object_store's `BufReader` of `capacity` bytes over the source's object, one per task,
/// each at its start; the object's metadata is asked once, before any clock starts.
#[cfg(feature = "object-store")]
async fn open_object_store_readers(
    source: &Source,
    capacity: usize,
    starts: &[u64],
) -> io::Result<Vec<ObjectStoreBufReader>> {
    use object_store::ObjectStoreExt;

    let url = source.object_store_url().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "the object_store BufReader reads object-store URLs (http://, https://, \
                 s3://), not {}",
                source.label()
            ),
        )
    })?;
    let object = crate::sources::open_object(url).await?;
    let meta = object
        .store()
        .head(object.location())
        .await
        .map_err(|e| context(io::Error::other(e), format!("HEAD {url}")))?;
    let mut readers = Vec::with_capacity(starts.len());
    for &start in starts {
        let mut reader = object_store::buffered::BufReader::with_capacity(
            object.store().clone(),
            &meta,
            capacity,
        );
        if start != 0 {
            reader.seek(SeekFrom::Start(start)).await?;
        }
        readers.push(ObjectStoreBufReader { reader, pos: start });
    }
    Ok(readers)
}

/// object_store's own `BufReader`: a seek where a request does not continue the last, then
/// `read_exact`.
#[cfg(feature = "object-store")]
pub(crate) struct ObjectStoreBufReader {
    reader: object_store::buffered::BufReader,
    pos: u64,
}

#[cfg(feature = "object-store")]
impl RequestReader for ObjectStoreBufReader {
    async fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        seek_and_read_exact(&mut self.reader, &mut self.pos, offset, buf).await
    }

    /// Unknown: the `BufReader` makes its requests to the store itself.
    fn counts(&self) -> Counts {
        Counts::default()
    }
}
