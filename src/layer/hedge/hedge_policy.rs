use std::time::Duration;

/// When [`Hedged`](crate::layer::Hedged) sends a second request, and how many it may send
/// (the contract is on `Hedged`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct HedgePolicy {
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
    pub(crate) fn fixed(self, delay: Duration) -> Self {
        Self {
            delay: HedgeDelay::Fixed(delay),
            ..self
        }
    }

    /// Hedge a request not answered after the `quantile` (0..=1, e.g. 0.95) of the latencies
    /// of the last `window` requests, but never before `floor`.
    pub(crate) fn learned(self, quantile: f64, floor: Duration, window: usize) -> Self {
        Self {
            delay: HedgeDelay::Learned {
                quantile: quantile.clamp(0.0, 1.0),
                floor,
                window,
            },
            ..self
        }
    }

    /// At most `share` (clamped to 0..=1) hedges per request (builder style). 0 turns hedging
    /// off.
    pub(crate) fn with_budget(mut self, share: f64) -> Self {
        self.budget = if share.is_nan() {
            0.0
        } else {
            share.clamp(0.0, 1.0)
        };
        self
    }

    /// The share of requests that may be hedged.
    pub(crate) fn budget(&self) -> f64 {
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
