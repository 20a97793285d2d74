//! Hedging: [`Hedged`] with its policy (`hedge_policy`), and the latency window that learns
//! when a request is late.

mod hedge_policy;
mod hedged;
mod latency_window;

pub use hedged::Hedged;
