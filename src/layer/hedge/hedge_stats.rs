use std::time::Duration;

/// What a [`Hedged`](crate::layer::Hedged) source has done.
///
/// New counters may be added, so build one with `HedgeStats::default()` rather than a struct
/// literal.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HedgeStats {
    /// Reads asked of the hedged source (each is one request, plus one more if hedged).
    pub requests: u64,
    /// Hedges sent: second requests for reads not answered within the delay.
    pub hedges_fired: u64,
    /// Hedges that answered first (their first request was dropped).
    pub hedges_won: u64,
    /// Reads still unanswered at twice the delay that were not hedged because the budget was
    /// spent, the reserve too (many of them say the budget, or the delay, is too small for the
    /// store's tail).
    pub hedges_denied: u64,
    /// The delay after which a request is hedged now (`None`: still learning).
    pub delay: Option<Duration>,
}
