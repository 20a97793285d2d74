use std::time::Duration;

/// What a [`RequestLimiter`](crate::layer::RequestLimiter) has seen: requests in flight, the
/// most seen at once, and how long requests waited for their turn.
///
/// Read them with [`RequestLimiter::stats`](crate::layer::RequestLimiter::stats). New counters
/// may be added, so build one with `LimiterStats::default()` rather than a struct literal.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LimiterStats {
    /// The bound on requests in flight (`None`: unlimited).
    pub limit: Option<usize>,
    /// Requests that hold a permit now.
    pub in_flight: usize,
    /// The most requests that held a permit at once.
    pub max_in_flight: usize,
    /// Requests that were given a permit.
    pub requests: u64,
    /// Requests that had to wait for a permit (none was free when they asked).
    pub waited: u64,
    /// The time requests spent waiting for a permit, summed.
    pub total_wait: Duration,
    /// Reads that waited for a permit and were answered by another waiting read's request
    /// instead, a near range taken along (see [`Limited`](crate::layer::Limited)): they made
    /// no request of their own and are not in `requests`.
    pub coalesced: u64,
}
