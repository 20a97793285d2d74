//! What a scripted source counted.

/// What a [`Scripted`](crate::Scripted) source counted so far, taken at once by
/// [`Scripted::counts`](crate::Scripted::counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScriptedCounts {
    /// Requests made (`read_at`; `len` too if it
    /// [is a request](crate::Scripted::length_is_a_request)).
    pub requests: u64,
    /// Requests failed.
    pub failures: u64,
    /// Requests in flight: made, and neither answered nor dropped.
    pub live: u64,
    /// The most requests in flight at once.
    pub max_live: u64,
    /// `len` calls.
    pub length_requests: u64,
    /// Answers handed out by [`counted_buffers`](crate::Scripted::counted_buffers) and freed.
    pub buffers_freed: u64,
}
