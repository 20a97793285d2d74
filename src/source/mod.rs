//! Positional sources: byte ranges served independently, with no cursor.
//!
//! A [`PositionalSource`] reads `len` bytes at an offset, so many inputs can share one source and
//! several requests can be in flight at once. An
//! [`AsyncBufferedInput`](crate::AsyncBufferedInput) reads one through a
//! [`PositionalFetch`](crate::fetch::PositionalFetch), optionally with
//! [`ReadAhead`](crate::fetch::ReadAhead), and can then be cloned and sliced like Lucene's
//! `IndexInput`. Sources:
//!
//! - [`FileSource`]: a local file, read with positional reads on tokio's blocking pool, and
//!   what the page cache holds at once on the calling thread (Linux);
//! - [`MemorySource`]: bytes in memory, handed out without copying;
//! - [`SlowLink`]: any source behind a simulated network link (latency and bandwidth);
//! - [`Retrying`]: any source whose failed requests are retried, as a [`RetryPolicy`] says;
//! - `Cached` (feature `cache`): any source read through a `BlockCache` of its blocks, shared by
//!   inputs, with a `DiskTier` under it (feature `disk-cache`) that keeps blocks on local disk
//!   across restarts;
//! - `ObjectStoreSource` (feature `object-store`): S3, GCS, Azure and HTTP servers;
//! - `OpendalSource` (feature `opendal`): a file of any OpenDAL `Operator` (FTP, SFTP,
//!   WebDAV, HDFS and the other services OpenDAL has);
//! - [`Limited`]: any source whose requests wait for a turn from a [`RequestLimiter`] shared by
//!   every source on one store;
//! - [`Hedged`]: any source whose slow requests get a second, identical request (a hedge), as a
//!   [`HedgePolicy`] says;
//! - [`Deadline`]: any source whose requests fail with `TimedOut` when they take longer than a
//!   deadline growing with their size;
//! - [`DynSource`]: any of these behind one type, chosen at run time. `Arc<S>` and `Box<S>`
//!   are sources too.
//!
//! For a remote store, compose them as `Cached<Retrying<Hedged<Limited<Deadline<S>>>>>` (why:
//! see [`Hedged`]).
//!
//! ```
//! use async_buffered_input::fetch::{PositionalFetch, ReadAhead};
//! use async_buffered_input::source::MemorySource;
//! use async_buffered_input::AsyncBufferedInput;
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

#[cfg(feature = "cache")]
mod block_cache;
mod deadline;
mod deadline_stats;
mod dyn_source;
mod file_source;
mod forward;
mod hedge_policy;
mod hedge_stats;
mod hedged;
mod latency_window;
mod limited;
mod limiter_stats;
mod memory_source;
#[cfg(feature = "object-store")]
mod object_store_error;
#[cfg(feature = "object-store")]
mod object_store_source;
#[cfg(feature = "opendal")]
mod opendal_source;
#[cfg(feature = "opendal")]
mod opendal_stream;
mod positional_source;
#[cfg(any(feature = "object-store", feature = "opendal"))]
mod remote_common;
mod request_limiter;
mod retrying;
mod slow_link;
pub(crate) mod source_error;
#[cfg(any(feature = "object-store", feature = "opendal"))]
mod spare_buffers;
mod waiting_reads;

#[cfg(feature = "disk-cache")]
#[cfg_attr(docsrs, doc(cfg(feature = "disk-cache")))]
pub use block_cache::DiskTier;
#[cfg(feature = "cache")]
#[cfg_attr(docsrs, doc(cfg(feature = "cache")))]
pub use block_cache::{BlockCache, BlockCacheStats, Cached};
pub use deadline::Deadline;
pub use deadline_stats::DeadlineStats;
pub use dyn_source::DynSource;
pub use file_source::FileSource;
pub use hedge_policy::HedgePolicy;
pub use hedge_stats::HedgeStats;
pub use hedged::Hedged;
pub use limited::Limited;
pub use limiter_stats::LimiterStats;
pub use memory_source::MemorySource;
#[cfg(feature = "object-store")]
#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
pub use object_store_source::ObjectStoreSource;
#[cfg(feature = "opendal")]
#[cfg_attr(docsrs, doc(cfg(feature = "opendal")))]
pub use opendal_source::OpendalSource;
pub use positional_source::PositionalSource;
pub use request_limiter::RequestLimiter;
pub use retrying::{RetryPolicy, Retrying};
pub use slow_link::SlowLink;
pub use source_error::SourceError;
