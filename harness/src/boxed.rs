//! The boxed forms of a source that a run hands to its readers: a stream ([`BoxSource`], any
//! [`ReadSeek`]) and a positional source ([`BoxPositionalSource`]).

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;

use async_buffered_input::fetch::PositionalFetch;
use async_buffered_input::source::PositionalSource;
use async_buffered_input::AsyncBufferedInput;
use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncSeek};

/// A source the harness can time: readable, seekable, movable between tasks.
///
/// Implemented for every `AsyncRead + AsyncSeek + Unpin + Send` type: tokio's `File`, a
/// `std::io::Cursor`, an [`AsyncBufferedInput`], and so on.
pub trait ReadSeek: AsyncRead + AsyncSeek + Unpin + Send {}

impl<T: AsyncRead + AsyncSeek + Unpin + Send + ?Sized> ReadSeek for T {}

/// A boxed [`ReadSeek`]: what a [`Source`](crate::Source) opens for each cell of a run.
pub type BoxSource = Box<dyn ReadSeek>;

/// `source` as a stream with no window of its own, so that each read of the stream is one
/// request to `source`, as a stream reader of a network file would see: an input whose window
/// is 1 byte reads every request of at least that straight into the caller's buffer.
pub(crate) fn stream_of<S: PositionalSource>(source: Arc<S>) -> BoxSource {
    Box::new(AsyncBufferedInput::with_capacity(
        1,
        PositionalFetch::from_arc(source),
    ))
}

/// A type-erased [`PositionalSource`]: what a [`Source`](crate::Source) opens for the
/// [read-ahead reader](crate::ReaderKind::BufferedReadAhead), whatever its concrete source
/// (`FileSource`, `SlowLink`, `ObjectStoreSource`, ...). Clones share the source, as the
/// tasks of a cell do.
///
/// [`PositionalSource`]'s methods return `impl Future`, so the trait cannot be a `dyn` object
/// itself; this box forwards to it with one boxed future per request, which is nothing next to
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
#[derive(Clone)]
pub struct BoxPositionalSource {
    inner: Arc<dyn DynPositional>,
    type_name: &'static str,
}

impl BoxPositionalSource {
    /// Boxes `source`.
    pub fn new<S: PositionalSource>(source: S) -> Self {
        Self {
            inner: Arc::new(source),
            type_name: std::any::type_name::<S>(),
        }
    }

    /// The name of the boxed source's type, for messages.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

/// [`PositionalSource`] with boxed futures, so that it can be a `dyn` object.
trait DynPositional: Send + Sync + 'static {
    fn dyn_read_at(
        &self,
        offset: u64,
        len: usize,
    ) -> Pin<Box<dyn Future<Output = io::Result<Bytes>> + Send + '_>>;
    fn dyn_len(&self) -> Pin<Box<dyn Future<Output = io::Result<u64>> + Send + '_>>;
    fn dyn_try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize;
    fn dyn_resource(&self) -> Option<String>;
    fn dyn_description(&self) -> String;
    fn dyn_release_buffers(&self);
}

impl<S: PositionalSource> DynPositional for S {
    fn dyn_read_at(
        &self,
        offset: u64,
        len: usize,
    ) -> Pin<Box<dyn Future<Output = io::Result<Bytes>> + Send + '_>> {
        Box::pin(self.read_at(offset, len))
    }

    fn dyn_len(&self) -> Pin<Box<dyn Future<Output = io::Result<u64>> + Send + '_>> {
        Box::pin(self.len())
    }

    fn dyn_try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        self.try_read_at(offset, buf)
    }

    fn dyn_resource(&self) -> Option<String> {
        self.resource()
    }

    fn dyn_description(&self) -> String {
        self.description()
    }

    fn dyn_release_buffers(&self) {
        self.release_buffers();
    }
}

impl PositionalSource for BoxPositionalSource {
    /// The boxed source's `read_at`.
    fn read_at(&self, offset: u64, len: usize) -> impl Future<Output = io::Result<Bytes>> + Send {
        self.inner.dyn_read_at(offset, len)
    }

    /// The boxed source's `len`.
    fn len(&self) -> impl Future<Output = io::Result<u64>> + Send {
        self.inner.dyn_len()
    }

    /// The boxed source's `try_read_at`.
    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        self.inner.dyn_try_read_at(offset, buf)
    }

    /// The boxed source's `resource`.
    fn resource(&self) -> Option<String> {
        self.inner.dyn_resource()
    }

    /// The boxed source's `description`.
    fn description(&self) -> String {
        self.inner.dyn_description()
    }

    /// The boxed source's `release_buffers`.
    fn release_buffers(&self) {
        self.inner.dyn_release_buffers();
    }
}

impl fmt::Debug for BoxPositionalSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoxPositionalSource")
            .field("type", &self.type_name)
            .finish_non_exhaustive()
    }
}
