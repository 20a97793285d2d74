//! Hedging: [`Hedged`] with its policy (`hedge_policy`) and [`HedgeStats`], and the latency
//! window that learns when a request is late.

mod hedge_policy;
mod hedge_stats;
mod hedged;
mod latency_window;

pub use hedge_stats::HedgeStats;
pub use hedged::Hedged;
