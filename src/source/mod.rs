//! Positional sources: byte ranges served independently, and the adapter that makes them a
//! seekable stream for [`AsyncBufferedInput`](crate::AsyncBufferedInput).
//!
//! A [`PositionalSource`] reads `len` bytes at an offset, with no cursor of its own, so many
//! inputs can share one source and several requests can be in flight at once. Sources:
//!
//! - [`FileSource`]: a local file, read with positional reads on tokio's blocking pool;
//! - [`MemorySource`]: bytes in memory, handed out without copying;
//! - [`SlowLink`]: any source behind a simulated network link (latency and bandwidth);
//! - `ObjectStoreSource` (feature `object-store`): S3, GCS, Azure and HTTP servers.
//!
//! [`PositionalReader`] turns a source into [`AsyncRead`](tokio::io::AsyncRead) +
//! [`AsyncSeek`](tokio::io::AsyncSeek), optionally with [`ReadAhead`]: chunks requested ahead of
//! sequential reads, so the consumer rarely waits for the source. Over a `PositionalReader`, an
//! `AsyncBufferedInput` can be cloned and sliced like Lucene's `IndexInput`.
//!
//! ```
//! use async_buffered_input::source::{MemorySource, PositionalReader, ReadAhead};
//! use async_buffered_input::AsyncBufferedInput;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let data: Vec<u8> = (0..=255).collect();
//! let reader = PositionalReader::new(MemorySource::new(data))
//!     .with_read_ahead(ReadAhead::new(64, 2));
//! let mut input = AsyncBufferedInput::with_capacity(16, reader);
//! input.seek_to(100);
//! assert_eq!(input.read_byte().await?, 100);
//!
//! let mut slice = input.slice(200, 10).await?; // reads source bytes 200..210 as 0..10
//! assert_eq!(slice.read_byte().await?, 200);
//! assert_eq!(slice.length().await?, 10);
//! # Ok(())
//! # }
//! ```

mod clone_slice;
mod file_source;
mod memory_source;
#[cfg(feature = "object-store")]
mod object_store_source;
mod positional_reader;
mod positional_source;
mod read_ahead;
mod slow_link;
mod source_error;

pub use file_source::FileSource;
pub use memory_source::MemorySource;
#[cfg(feature = "object-store")]
#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
pub use object_store_source::ObjectStoreSource;
pub use positional_reader::PositionalReader;
pub use positional_source::PositionalSource;
pub use read_ahead::ReadAhead;
pub use slow_link::SlowLink;
