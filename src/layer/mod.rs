//! Layers: positional sources that wrap another source and change how its requests go.
//!
//! - [`Retrying`]: failed requests retried, with jittered backoff; [`is_transient`] says which
//!   errors are; optionally each attempt abandoned at a deadline growing with its size;
//! - [`Hedged`]: slow requests get a second, identical request (a hedge), after a delay
//!   learned or fixed, within a budget;
//! - [`Limited`]: requests wait for a turn from a [`RequestLimiter`] shared by every source on
//!   one store; near reads waiting for a turn share one request.
//!
//! For a remote store, compose them as `Cached<Retrying<Hedged<Limited<S>>>>` (why:
//! see [`Hedged`]); [`Cached`](crate::cache::Cached) is in [`cache`](crate::cache).

mod hedge;
mod limit;
mod retrying;
// A simulated network link, for this crate's tests and benchmarks: through the test kit
// (`abi_testkit::SlowLink`), not part of the API.
#[cfg(any(test, feature = "test-util"))]
mod slow_link;

pub use crate::error::is_transient;
pub use hedge::Hedged;
pub use limit::{Limited, RequestLimiter};
pub use retrying::Retrying;
#[cfg(any(test, feature = "test-util"))]
#[doc(hidden)]
pub use slow_link::SlowLink;
