//! Layers: hedging, the request limiter, retries and their attempt deadline, stragglers and
//! network faults.

mod attempt_deadline;
mod hedged;
mod network_faults;
mod request_limiter;
mod retries;
mod stragglers;
