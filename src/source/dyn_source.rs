use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_core::stream::BoxStream;

use crate::source::PositionalSource;

/// Any [`PositionalSource`] behind one type: local files, object stores and memory in one
/// collection, or chosen at run time (a [`Directory`](crate::lucene::Directory) opens every
/// file as one).
///
/// [`PositionalSource`]'s methods return `impl Future`, so the trait cannot be a `dyn` object
/// itself; `DynSource` holds the source behind an object-safe twin of the trait whose futures
/// are boxed. That is one allocation per [`read_at`](PositionalSource::read_at), that is per
/// *fetch* (a window refill or a read-ahead chunk), never per read: reads served from an
/// input's window do not reach the source at all, and
/// [`try_read_at`](PositionalSource::try_read_at) (page cache reads) is forwarded without a
/// box. Clones share the source.
///
/// # Examples
///
/// ```
/// use async_buffered_input::PositionalFetch;
/// use async_buffered_input::source::{DynSource, MemorySource, PositionalSource};
/// use async_buffered_input::AsyncBufferedInput;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let sources = vec![
///     DynSource::new(MemorySource::new(&b"local"[..])),
///     DynSource::new(MemorySource::new(&b"remote"[..])),
/// ];
/// let mut input = AsyncBufferedInput::new(PositionalFetch::new(sources[1].clone()));
/// assert_eq!(&input.read_bytes_owned(6).await?[..], b"remote");
/// assert_eq!(sources[0].len().await?, 5);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct DynSource {
    inner: Arc<dyn ErasedSource>,
}

impl DynSource {
    /// Erases `source`'s type.
    pub fn new<S: PositionalSource>(source: S) -> Self {
        Self {
            inner: Arc::new(source),
        }
    }

    /// Erases the type of a shared source, without a second `Arc`.
    pub fn from_arc<S: PositionalSource>(source: Arc<S>) -> Self {
        Self { inner: source }
    }
}

/// A boxed future of a [`DynSource`].
type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// [`PositionalSource`] with boxed futures, so that it can be a `dyn` object.
trait ErasedSource: Send + Sync + 'static {
    fn erased_read_at(&self, offset: u64, len: usize) -> BoxFuture<'_, io::Result<Bytes>>;
    fn erased_len(&self) -> BoxFuture<'_, io::Result<u64>>;
    fn erased_known_len(&self) -> Option<u64>;
    fn erased_read_stream(&self, offset: u64) -> Option<BoxStream<'static, io::Result<Bytes>>>;
    fn erased_try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize;
    fn erased_resource(&self) -> Option<String>;
    fn erased_description(&self) -> String;
    fn erased_release_buffers(&self);
}

impl<S: PositionalSource> ErasedSource for S {
    fn erased_read_at(&self, offset: u64, len: usize) -> BoxFuture<'_, io::Result<Bytes>> {
        Box::pin(self.read_at(offset, len))
    }

    fn erased_len(&self) -> BoxFuture<'_, io::Result<u64>> {
        Box::pin(self.len())
    }

    fn erased_known_len(&self) -> Option<u64> {
        self.known_len()
    }

    fn erased_read_stream(&self, offset: u64) -> Option<BoxStream<'static, io::Result<Bytes>>> {
        self.read_stream(offset)
    }

    fn erased_try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        self.try_read_at(offset, buf)
    }

    fn erased_resource(&self) -> Option<String> {
        self.resource()
    }

    fn erased_description(&self) -> String {
        self.description()
    }

    fn erased_release_buffers(&self) {
        self.release_buffers();
    }
}

impl PositionalSource for DynSource {
    /// The source's `read_at`, as one boxed future.
    fn read_at(&self, offset: u64, len: usize) -> impl Future<Output = io::Result<Bytes>> + Send {
        self.inner.erased_read_at(offset, len)
    }

    /// The source's `len`, as one boxed future.
    fn len(&self) -> impl Future<Output = io::Result<u64>> + Send {
        self.inner.erased_len()
    }

    /// The source's `known_len` (no box).
    fn known_len(&self) -> Option<u64> {
        self.inner.erased_known_len()
    }

    /// The source's `read_stream` (its stream is boxed already).
    fn read_stream(&self, offset: u64) -> Option<BoxStream<'static, io::Result<Bytes>>> {
        self.inner.erased_read_stream(offset)
    }

    /// The source's `try_read_at` (no box).
    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        self.inner.erased_try_read_at(offset, buf)
    }

    /// The source's resource.
    fn resource(&self) -> Option<String> {
        self.inner.erased_resource()
    }

    /// The source's description.
    fn description(&self) -> String {
        self.inner.erased_description()
    }

    /// The source's `release_buffers`.
    fn release_buffers(&self) {
        self.inner.erased_release_buffers();
    }
}

impl fmt::Debug for DynSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynSource")
            .field("source", &self.inner.erased_description())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemorySource;

    #[tokio::test]
    async fn forwards_every_method() {
        let source = DynSource::new(MemorySource::new(&b"0123456789"[..]));
        assert_eq!(&source.read_at(3, 4).await.unwrap()[..], b"3456");
        assert_eq!(&source.read_at(8, 4).await.unwrap()[..], b"89");
        assert!(source.read_at(10, 4).await.unwrap().is_empty());
        assert_eq!(source.len().await.unwrap(), 10);
        let described = MemorySource::new(&b"0123456789"[..]).description();
        assert_eq!(source.description(), described);
        assert!(format!("{source:?}").contains(&described));
        let shared = DynSource::from_arc(Arc::new(MemorySource::new(vec![7u8; 3])));
        let mut buf = [0u8; 2];
        let n = shared.try_read_at(1, &mut buf);
        assert!(n <= 2);
        assert_eq!(shared.clone().len().await.unwrap(), 3);
    }

    #[tokio::test]
    async fn arc_and_box_are_sources() {
        async fn len_of<S: PositionalSource>(s: S) -> u64 {
            s.len().await.unwrap()
        }
        let arc = Arc::new(MemorySource::new(vec![1u8; 4]));
        assert_eq!(len_of(Arc::clone(&arc)).await, 4);
        assert_eq!(len_of(Box::new(MemorySource::new(vec![1u8; 5]))).await, 5);
        assert_eq!(
            arc.description(),
            MemorySource::new(vec![1u8; 4]).description()
        );
        assert_eq!(&arc.read_at(1, 2).await.unwrap()[..], &[1, 1]);
    }
}
