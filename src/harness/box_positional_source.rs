use std::fmt;
use std::future::Future;
use std::io;

use bytes::Bytes;
use futures::future::BoxFuture;

use crate::source::PositionalSource;

/// A type-erased [`PositionalSource`]: what a [`Source`](super::Source) opens for the
/// [read-ahead reader](super::ReaderKind::BufferedReadAhead), whatever its concrete source
/// ([`FileSource`](crate::source::FileSource), [`SlowLink`](crate::source::SlowLink),
/// `ObjectStoreSource`, ...).
///
/// [`PositionalSource`]'s methods return `impl Future`, so the trait cannot be a `dyn` object
/// itself; this box forwards to it with one boxed future per request, which is nothing next to
/// the requests the read-ahead reader makes (whole chunks).
///
/// # Examples
///
/// ```
/// use async_buffered_input::harness::BoxPositionalSource;
/// use async_buffered_input::source::{MemorySource, PositionalSource};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let source = BoxPositionalSource::new(MemorySource::new(&b"0123456789"[..]));
/// assert_eq!(&source.read_at(3, 4).await?[..], b"3456");
/// assert_eq!(source.len().await?, 10);
/// # Ok(())
/// # }
/// ```
pub struct BoxPositionalSource {
    inner: Box<dyn DynPositional>,
    type_name: &'static str,
}

impl BoxPositionalSource {
    /// Boxes `source`.
    pub fn new<S: PositionalSource>(source: S) -> Self {
        Self {
            inner: Box::new(source),
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
    fn dyn_read_at(&self, offset: u64, len: usize) -> BoxFuture<'_, io::Result<Bytes>>;
    fn dyn_len(&self) -> BoxFuture<'_, io::Result<u64>>;
    fn dyn_try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize;
}

impl<S: PositionalSource> DynPositional for S {
    fn dyn_read_at(&self, offset: u64, len: usize) -> BoxFuture<'_, io::Result<Bytes>> {
        Box::pin(self.read_at(offset, len))
    }

    fn dyn_len(&self) -> BoxFuture<'_, io::Result<u64>> {
        Box::pin(self.len())
    }

    fn dyn_try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        self.try_read_at(offset, buf)
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
}

impl fmt::Debug for BoxPositionalSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoxPositionalSource")
            .field("type", &self.type_name)
            .finish_non_exhaustive()
    }
}
