/// What a [`Deadline`](crate::layer::Deadline) source has seen.
///
/// New counters may be added, so build one with `DeadlineStats::default()` rather than a struct
/// literal.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DeadlineStats {
    /// Requests sent through it.
    pub requests: u64,
    /// Requests cut at their deadline (each became a `TimedOut` error).
    pub deadlines_hit: u64,
}
