//! Layers: hedging, the request limiter, retries, stragglers and network faults.

mod hedged;
mod network_faults;
mod request_limiter;
mod retries;
mod stragglers;
