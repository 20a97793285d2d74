//! The disk tier under the memory block cache (feature `disk-cache`, Unix).
//!
//! - `disk_tier.rs`: [`DiskTier`], what the cache calls (get a block, put a block);
//! - `record.rs`: a block's bytes on disk, with its header and checksums;
//! - `index.rs`: which slot holds which block, CLOCK eviction, reads pinned against reuse;
//! - `files.rs`: the folder: region files cut into slots, the layout, the lock.

#[cfg(not(unix))]
compile_error!("the `disk-cache` feature needs Unix (positional file reads and writes)");

mod disk_tier;
mod files;
mod index;
mod record;

pub use disk_tier::DiskTier;
pub(crate) use record::DiskKey;
