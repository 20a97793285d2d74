//! The block cache and its disk tier.

mod block_cache;
mod disk_cache;
mod scan;
