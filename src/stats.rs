//! Counters of the work an input did.

/// Counters of what an [`AsyncBufferedInput`](crate::AsyncBufferedInput) asked of its source
/// and how it served its callers, for logs and benchmarks.
///
/// Read them with [`AsyncBufferedInput::stats`](crate::AsyncBufferedInput::stats); subtract two
/// snapshots to measure a stretch of work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stats {
    /// Completed read calls on the source, including zero-length reads that found the end.
    pub underlying_reads: u64,
    /// Seeks started on the source (including the one that asks for the length).
    pub underlying_seeks: u64,
    /// Bytes the source returned, into the window or straight into callers' buffers.
    pub bytes_from_source: u64,
    /// Bytes handed to callers out of the window.
    pub bytes_from_window: u64,
    /// Bytes the source read straight into callers' buffers, bypassing the window.
    pub bytes_direct: u64,
}
