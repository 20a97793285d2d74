//! The boxed forms of a source that a run hands to its readers: a stream ([`BoxSource`], any
//! [`ReadSeek`]) and a positional source ([`BoxPositionalSource`]).

use std::sync::Arc;

use async_buffered_input::source::{DynSource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::PositionalFetch;
use tokio::io::{AsyncRead, AsyncSeek};

/// A source the harness can time: readable, seekable, movable between tasks.
///
/// Implemented for every `AsyncRead + AsyncSeek + Unpin + Send` type: tokio's `File`, a
/// `std::io::Cursor`, an [`AsyncBufferedInput`] as tokio's I/O (`into_tokio_io()`), and so on.
pub trait ReadSeek: AsyncRead + AsyncSeek + Unpin + Send {}

impl<T: AsyncRead + AsyncSeek + Unpin + Send + ?Sized> ReadSeek for T {}

/// A boxed [`ReadSeek`]: what a [`Source`](crate::Source) opens for each cell of a run.
pub type BoxSource = Box<dyn ReadSeek>;

/// `source` as a stream with no window of its own, so that each read of the stream is one
/// request to `source`, as a stream reader of a network file would see: an input whose window
/// is 1 byte reads every request of at least that straight into the caller's buffer.
pub(crate) fn stream_of<S: PositionalSource>(source: Arc<S>) -> BoxSource {
    Box::new(
        AsyncBufferedInput::with_capacity(1, PositionalFetch::from_arc(source)).into_tokio_io(),
    )
}

/// A type-erased [`PositionalSource`]: what a [`Source`](crate::Source) opens for the
/// [read-ahead reader](crate::ReaderKind::BufferedReadAhead), whatever its concrete source
/// (`FileSource`, `SlowLink`, `ObjectStoreSource`, ...). Clones share the source, as the
/// tasks of a cell do.
///
/// It is the library's [`DynSource`]: one boxed future per request, which is nothing next to
/// the requests the read-ahead reader makes (whole chunks).
///
/// # Examples
///
/// ```
/// use async_buffered_input::source::{MemorySource, PositionalSource};
/// use throughput_harness::BoxPositionalSource;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let source = BoxPositionalSource::new(MemorySource::new(&b"0123456789"[..]));
/// let shared = source.clone();
/// assert_eq!(&shared.read_at(3, 4).await?[..], b"3456");
/// assert_eq!(source.len().await?, 10);
/// # Ok(())
/// # }
/// ```
pub type BoxPositionalSource = DynSource;
