use std::sync::Arc;

use bytes::Bytes;
use quick_cache::{DefaultHashBuilder, Lifecycle, OptionsBuilder, Weighter};

use crate::cache::key::BlockKey;
use crate::cache::load_error::LoadError;
use crate::cache::stats::{bump, Counters};
use crate::memory_budget::Reservation;

/// The memory tier's blocks, by key, with their weights and evictions counted.
pub(super) type Blocks =
    quick_cache::sync::Cache<BlockKey, Slot, BlockWeight, DefaultHashBuilder, Evictions>;

/// A block as the cache keeps it: its bytes, and the share of the cache's budget they hold
/// (given back when the cache drops the block and no lookup holds a copy of this handle).
#[derive(Clone)]
pub(super) struct Block {
    pub(super) bytes: Bytes,
    pub(super) _held: Option<Arc<Reservation>>,
}

/// What the cache holds under a block's key: a kept block, or the outcome of a load that
/// produced nothing to keep (an error, the end of the source, a block the budget had no room
/// for). The second is handed to the readers that waited for the load and never kept: it
/// weighs more than any shard can hold, so the cache turns it away.
#[derive(Clone)]
pub(super) enum Slot {
    Kept(Block),
    Passed(Arc<LoadError>),
}

/// Weighs a kept block by its length (at least 1: an empty block is never kept) and anything
/// else as too heavy to keep.
#[derive(Clone)]
pub(super) struct BlockWeight;

/// Counts the kept blocks the cache evicts or turns away.
#[derive(Clone)]
pub(super) struct Evictions(pub(super) Arc<Counters>);

/// The cache's options: `capacity` split evenly over shards that each hold at least 32
/// blocks (or one shard), so that a block is a small part of its shard and the shards together
/// hold at most `capacity`.
pub(super) fn cache_options(capacity: u64, block_size: usize) -> quick_cache::Options {
    let blocks = (capacity / block_size as u64).max(1);
    let parallelism = std::thread::available_parallelism().map_or(1, usize::from) as u64;
    let mut shards = (4 * parallelism).next_power_of_two();
    while shards > 1 && blocks / shards < 32 {
        shards /= 2;
    }
    OptionsBuilder::new()
        .shards(shards as usize)
        .estimated_items_capacity(blocks as usize)
        // Rounded down to whole shards: quick_cache gives each shard an equal part, rounded up.
        .weight_capacity(capacity - capacity % shards)
        .build()
        .expect("BlockCache: valid cache options")
}

impl Weighter<BlockKey, Slot> for BlockWeight {
    fn weight(&self, _key: &BlockKey, slot: &Slot) -> u64 {
        match slot {
            Slot::Kept(block) => block.bytes.len() as u64,
            Slot::Passed(_) => u64::MAX,
        }
    }
}

impl Lifecycle<BlockKey, Slot> for Evictions {
    type RequestState = ();

    fn begin_request(&self) -> Self::RequestState {}

    fn on_evict(&self, _state: &mut (), _key: BlockKey, slot: Slot) {
        // Dropping the slot gives its bytes back to the budget (unless a reader still holds
        // a copy of the block's handle).
        if let Slot::Kept(_) = slot {
            bump(&self.0.evictions);
        }
    }
}
