//! Counters of the work an input did.

/// Counters of what an [`AsyncBufferedInput`](crate::AsyncBufferedInput) asked of its source
/// and how it served its callers, for logs and benchmarks.
///
/// Read them with [`AsyncBufferedInput::stats`](crate::AsyncBufferedInput::stats); subtract two
/// snapshots to measure a stretch of work. New counters may be added, so build one with
/// `Stats::default()` rather than a struct literal.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stats {
    /// Completed fetches: reads the window asked of its [fetcher](crate::fetch), including
    /// zero-length ones that found the end. Over a stream, each is one read call on it; over a
    /// positional source, each is served by bytes at hand, a read-ahead chunk, or a request.
    pub underlying_reads: u64,
    /// Seeks started on an underlying stream (including the one that asks for the length); 0
    /// over a positional source, which has no cursor.
    pub underlying_seeks: u64,
    /// Bytes fetches returned, into the window or straight into callers' buffers.
    pub bytes_from_source: u64,
    /// Bytes handed to callers out of the window.
    pub bytes_from_window: u64,
    /// Bytes handed to callers bypassing the window: read by the source straight into their
    /// buffers, or kept for its retry by a read that failed (see
    /// [`MAX_KEPT_FOR_RETRY`](crate::AsyncBufferedInput::MAX_KEPT_FOR_RETRY)).
    pub bytes_direct: u64,
}
