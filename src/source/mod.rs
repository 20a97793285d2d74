//! Positional sources: byte ranges served independently, with no cursor.
//!
//! A [`PositionalSource`] reads `len` bytes at an offset, so many inputs can share one source and
//! several requests can be in flight at once. An
//! [`AsyncBufferedInput`](crate::AsyncBufferedInput) reads one through a
//! [`PositionalFetch`](crate::PositionalFetch), optionally with
//! [`ReadAhead`](crate::ReadAhead), and can then be cloned and sliced like Lucene's
//! `IndexInput`. Sources:
//!
//! - [`FileSource`]: a local file, read with positional reads on tokio's blocking pool, and
//!   what the page cache holds at once on the calling thread (Linux);
//! - [`MemorySource`]: bytes in memory, handed out without copying;
//! - `ObjectStoreSource` (feature `object-store`): S3, GCS, Azure and HTTP servers;
//! - `OpendalSource` (feature `opendal`): a file of any OpenDAL `Operator` (FTP, SFTP,
//!   WebDAV, HDFS and the other services OpenDAL has);
//! - `NfsSource` (feature `nfs`): a file on an NFSv3 server, read from user space;
//! - [`DynSource`]: any source behind one type, chosen at run time. `Arc<S>` and `Box<S>`
//!   are sources too.
//!
//! Layers that wrap a source (retries, hedging, a request limit, deadlines, a simulated link)
//! are in [`layer`](crate::layer); the block cache is in [`cache`](crate::cache).
//!
//! ```
//! use async_buffered_input::source::MemorySource;
//! use async_buffered_input::{AsyncBufferedInput, PositionalFetch, ReadAhead};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let data: Vec<u8> = (0..=255).collect();
//! let fetch = PositionalFetch::new(MemorySource::new(data)).with_read_ahead(ReadAhead::new(64, 2));
//! let mut input = AsyncBufferedInput::with_capacity(16, fetch);
//! input.seek_to(100);
//! assert_eq!(input.read_byte().await?, 100);
//!
//! let mut slice = input.slice(200, 10).await?; // reads source bytes 200..210 as 0..10
//! assert_eq!(slice.read_byte().await?, 200);
//! assert_eq!(slice.length().await?, 10);
//! # Ok(())
//! # }
//! ```

mod dyn_source;
mod file_source;
pub(crate) mod forward;
mod memory_source;
mod positional_source;
#[cfg(any(feature = "object-store", feature = "opendal", feature = "nfs"))]
pub(crate) mod remote;

pub use dyn_source::DynSource;
pub use file_source::FileSource;
pub use memory_source::MemorySource;
pub use positional_source::PositionalSource;
#[cfg(feature = "nfs")]
#[cfg_attr(docsrs, doc(cfg(feature = "nfs")))]
pub use remote::NfsSource;
#[cfg(feature = "object-store")]
#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
pub use remote::ObjectStoreSource;
#[cfg(feature = "opendal")]
#[cfg_attr(docsrs, doc(cfg(feature = "opendal")))]
pub use remote::OpendalSource;
