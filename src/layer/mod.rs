//! Layers: positional sources that wrap another source and change how its requests go.
//!
//! - [`Retrying`]: failed requests retried, as a [`RetryPolicy`] says (jittered backoff);
//! - [`Hedged`]: slow requests get a second, identical request (a hedge), as a [`HedgePolicy`]
//!   says;
//! - [`Limited`]: requests wait for a turn from a [`RequestLimiter`] shared by every source on
//!   one store; near reads waiting for a turn share one request;
//! - [`Deadline`]: requests fail with `TimedOut` when they take longer than a deadline growing
//!   with their size;
//! - [`SlowLink`]: a simulated network link (latency and bandwidth), for tests and benchmarks.
//!
//! For a remote store, compose them as `Cached<Retrying<Hedged<Limited<Deadline<S>>>>>` (why:
//! see [`Hedged`]); [`Cached`](crate::cache::Cached) is in [`cache`](crate::cache).

mod deadline;
mod deadline_stats;
mod hedge;
mod limit;
mod retrying;
mod slow_link;

pub use deadline::Deadline;
pub use deadline_stats::DeadlineStats;
pub use hedge::{HedgePolicy, HedgeStats, Hedged};
pub use limit::{Limited, LimiterStats, RequestLimiter};
pub use retrying::{RetryPolicy, Retrying};
pub use slow_link::SlowLink;
