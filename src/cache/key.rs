use std::sync::Arc;

/// A block of a source: the source's key and the block's number.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct BlockKey {
    pub(super) source: SourceKey,
    pub(super) index: u64,
}

/// What a [`Cached`](crate::cache::Cached) source's blocks are kept under: its name, or a number of
/// its own (which only this process knows, so such blocks never go to a disk tier).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum SourceKey {
    Named(Arc<str>),
    Unique(u64),
}
