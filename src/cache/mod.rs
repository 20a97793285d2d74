//! The block cache: source blocks kept in memory and shared by inputs ([`BlockCache`]), and
//! the wrapper that reads any positional source through it ([`Cached`]).
//!
//! - `block_cache.rs`: [`BlockCache`], the memory tier (quick_cache), its capacity and budget;
//! - `cached/`: [`Cached`], block arithmetic, single-flight loads, `try_read_at`, and the
//!   reads of a sequential scan, around the memory tier;
//! - `sequential_runs.rs`: which reads continue a sequential run (a scan's);
//! - `stats.rs`: [`BlockCacheStats`] and the counters behind it;
//! - `disk/`: [`DiskTier`] (feature `disk-cache`), the local-disk tier under the memory;
//! - `slot.rs`, `key.rs`, `load_error.rs`: what the memory tier holds, under which key, and
//!   what a failed load hands its waiters.

mod block_cache;
mod cached;
#[cfg(feature = "disk-cache")]
mod disk;
mod key;
mod load_error;
mod sequential_runs;
mod slot;
mod stats;

pub use block_cache::BlockCache;
pub use cached::Cached;
#[cfg(feature = "disk-cache")]
#[cfg_attr(docsrs, doc(cfg(feature = "disk-cache")))]
pub use disk::DiskTier;
pub use stats::BlockCacheStats;
