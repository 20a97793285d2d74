use std::time::Duration;

/// When [`Hedged`](crate::layer::Hedged) sends a second request, and how many it may send.
///
/// - **Delay**: a request not answered within the delay gets a hedge. [`learned`](Self::learned)
///   (the default) uses a quantile (p95) of the latencies of the last requests (a window of 1000),
///   never less than a floor (2 ms). Until 20 answers were seen there is no delay yet: a read
///   sent before then (the first wave of concurrent reads on a new source) is hedged once there
///   is one, if it is still unanswered and has waited longer than it;
///   [`fixed`](Self::fixed) uses one delay.
/// - **Budget**: each request credits `budget` (default 0.05) hedges, at most
///   10 saved; a hedge spends one. A read slower than the delay is
///   hedged while more than 2 hedges are saved; one still unanswered
///   at twice the delay may spend those too. So when the store's usual tail alone takes the
///   whole budget (a p95 delay asks a hedge for 5% of reads), the stragglers, far slower than
///   the rest, still get theirs. The budget starts with the reserve, so hedges never exceed
///   `budget × requests + RESERVE`, however slow the store gets: hedging cannot double the
///   load of a store that is slow because it is overloaded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HedgePolicy {
    delay: HedgeDelay,
    // In 0..=1.
    budget: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum HedgeDelay {
    Fixed(Duration),
    Learned {
        quantile: f64,
        floor: Duration,
        window: usize,
    },
}

impl HedgePolicy {
    /// Hedges saved up at most: after a calm stretch, this many slow requests in a row can be
    /// hedged at once.
    pub(crate) const MAX_BURST: f64 = 10.0;

    /// Hedges kept for reads still unanswered at twice the delay (and given at the start).
    pub(crate) const RESERVE: u32 = 2;

    /// Hedge a request not answered after `delay`.
    pub fn fixed(delay: Duration) -> Self {
        Self {
            delay: HedgeDelay::Fixed(delay),
            ..Self::default()
        }
    }

    /// Hedge a request not answered after the `quantile` (0..=1, e.g. 0.95) of the latencies
    /// of the last `window` requests, but never before `floor`.
    pub fn learned(quantile: f64, floor: Duration, window: usize) -> Self {
        Self {
            delay: HedgeDelay::Learned {
                quantile: quantile.clamp(0.0, 1.0),
                floor,
                window,
            },
            ..Self::default()
        }
    }

    /// At most `share` (clamped to 0..=1) hedges per request (builder style). 0 turns hedging
    /// off.
    #[must_use]
    pub fn with_budget(mut self, share: f64) -> Self {
        self.budget = if share.is_nan() {
            0.0
        } else {
            share.clamp(0.0, 1.0)
        };
        self
    }

    /// The share of requests that may be hedged.
    pub fn budget(&self) -> f64 {
        self.budget
    }

    pub(crate) fn delay(&self) -> HedgeDelay {
        self.delay
    }
}

impl Default for HedgePolicy {
    /// Learned: p95 of the last 1000 requests, at least 2 ms; budget 5%.
    fn default() -> Self {
        Self {
            delay: HedgeDelay::Learned {
                quantile: 0.95,
                floor: Duration::from_millis(2),
                window: 1000,
            },
            budget: 0.05,
        }
    }
}
