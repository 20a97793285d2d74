//! The names of the metrics this crate records through the [`metrics`](https://docs.rs/metrics)
//! facade (cargo feature `metrics`).
//!
//! Without the feature nothing is recorded and nothing is linked; with it, the values go to
//! whatever recorder the application installed (none: they are dropped). Every name starts with
//! `async_buffered_input_`. No metric carries a per-source label (a URL per label would grow
//! without bound); the cache tiers carry `tier = "memory" | "disk"`.
//!
//! | Name | Kind | Recorded by |
//! |---|---|---|
//! | [`REQUESTS`] | counter | [`Limited`](crate::layer::Limited): each request to the store |
//! | [`REQUEST_BYTES`] | counter | `Limited`: bytes the store answered |
//! | [`REQUEST_ERRORS`] | counter | `Limited`: requests that failed |
//! | [`REQUEST_DURATION`] | histogram (seconds) | `Limited`: from sending a request to its whole answer (a positional request's time to first byte is its time to last) |
//! | [`RETRIES`] | counter | [`Retrying`](crate::layer::Retrying): each retry |
//! | [`HEDGES_FIRED`] | counter | [`Hedged`](crate::layer::Hedged): each second request sent |
//! | [`HEDGES_WON`] | counter | `Hedged`: hedges that answered first |
//! | [`DEADLINES_HIT`] | counter | `Retrying`: attempts abandoned at their deadline |
//! | [`LIMITER_WAIT`] | histogram (seconds) | [`RequestLimiter`](crate::layer::RequestLimiter): each wait for a turn |
//! | [`LIMITER_IN_FLIGHT`] | gauge | `RequestLimiter`: requests holding a turn |
//! | [`CACHE_HITS`] | counter, `tier` | block cache tiers: blocks served from the tier |
//! | [`CACHE_MISSES`] | counter, `tier` | block cache tiers: blocks the tier did not hold |
//! | [`DISK_TIER_BYTES`] | gauge | disk tier: bytes held |
//! | [`DISK_TIER_EVICTIONS`] | counter | disk tier: blocks evicted |
//! | [`DISK_TIER_CORRUPT_BLOCKS`] | counter | disk tier: blocks whose checksum did not match |
//!
//! # Examples
//!
//! Exporting them to Prometheus with `metrics-exporter-prometheus` (a dependency of the
//! application, not of this crate):
//!
//! ```ignore
//! let handle = metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder()?;
//! // ... read through Limited / Hedged / Retrying sources ...
//! println!("{}", handle.render()); // async_buffered_input_requests_total 42 ...
//! ```

// Without the feature the recording functions take their arguments and do nothing.
#![cfg_attr(not(feature = "metrics"), allow(unused_variables))]

use std::time::Duration;

/// Requests sent to a store (counter).
pub const REQUESTS: &str = "async_buffered_input_requests_total";
/// Bytes the store answered (counter).
pub const REQUEST_BYTES: &str = "async_buffered_input_request_bytes_total";
/// Requests that failed (counter).
pub const REQUEST_ERRORS: &str = "async_buffered_input_request_errors_total";
/// Time from sending a request to having its answer, in seconds (histogram).
pub const REQUEST_DURATION: &str = "async_buffered_input_request_duration_seconds";
/// Retries of failed requests (counter).
pub const RETRIES: &str = "async_buffered_input_retries_total";
/// Hedges sent: second requests for a first that was slow to answer (counter).
pub const HEDGES_FIRED: &str = "async_buffered_input_hedges_fired_total";
/// Hedges that answered before the request they hedged (counter).
pub const HEDGES_WON: &str = "async_buffered_input_hedges_won_total";
/// Attempts abandoned at their deadline, as `TimedOut` failures (counter).
pub const DEADLINES_HIT: &str = "async_buffered_input_deadlines_hit_total";
/// Time a request waited for a turn from a request limiter, in seconds (histogram; requests
/// that found a turn free are not recorded).
pub const LIMITER_WAIT: &str = "async_buffered_input_limiter_wait_seconds";
/// Requests holding a turn from a request limiter (gauge).
pub const LIMITER_IN_FLIGHT: &str = "async_buffered_input_limiter_in_flight";
/// Blocks served from a cache tier (counter, label `tier`).
pub const CACHE_HITS: &str = "async_buffered_input_cache_hits_total";
/// Blocks a cache tier did not hold (counter, label `tier`).
pub const CACHE_MISSES: &str = "async_buffered_input_cache_misses_total";
/// Bytes held by the disk tier (gauge).
pub const DISK_TIER_BYTES: &str = "async_buffered_input_disk_tier_bytes";
/// Blocks evicted from the disk tier (counter).
pub const DISK_TIER_EVICTIONS: &str = "async_buffered_input_disk_tier_evictions_total";
/// Blocks read from the disk tier whose checksum did not match (counter).
pub const DISK_TIER_CORRUPT_BLOCKS: &str = "async_buffered_input_disk_tier_corrupt_blocks_total";

/// A block cache tier, the `tier` label of [`CACHE_HITS`] and [`CACHE_MISSES`].
#[cfg(feature = "cache")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tier {
    /// The memory block cache.
    Memory,
    /// The local disk tier.
    #[cfg(feature = "disk-cache")]
    Disk,
}

#[cfg(feature = "cache")]
impl Tier {
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    fn label(self) -> &'static str {
        match self {
            Tier::Memory => "memory",
            #[cfg(feature = "disk-cache")]
            Tier::Disk => "disk",
        }
    }
}

/// A request answered with `bytes` bytes after `took`.
pub(crate) fn request(bytes: usize, took: Duration) {
    #[cfg(feature = "metrics")]
    {
        ::metrics::counter!(REQUESTS).increment(1);
        ::metrics::counter!(REQUEST_BYTES).increment(bytes as u64);
        ::metrics::histogram!(REQUEST_DURATION).record(took.as_secs_f64());
    }
}

/// A request that failed after `took`.
pub(crate) fn request_failed(took: Duration) {
    #[cfg(feature = "metrics")]
    {
        ::metrics::counter!(REQUESTS).increment(1);
        ::metrics::counter!(REQUEST_ERRORS).increment(1);
        ::metrics::histogram!(REQUEST_DURATION).record(took.as_secs_f64());
    }
}

/// Functions that count one event each: `name() => COUNTER`, each with its doc.
macro_rules! one_event {
    ($($(#[$doc:meta])* $name:ident => $counter:ident;)*) => {$(
        $(#[$doc])*
        pub(crate) fn $name() {
            #[cfg(feature = "metrics")]
            ::metrics::counter!($counter).increment(1);
        }
    )*};
}

one_event! {
    /// A retry of a failed request.
    retry => RETRIES;
    /// A hedge sent.
    hedge_fired => HEDGES_FIRED;
    /// A hedge that answered first.
    hedge_won => HEDGES_WON;
    /// An attempt abandoned at its deadline.
    deadline_hit => DEADLINES_HIT;
}

/// A wait of `waited` for a limiter's turn.
pub(crate) fn limiter_wait(waited: Duration) {
    #[cfg(feature = "metrics")]
    ::metrics::histogram!(LIMITER_WAIT).record(waited.as_secs_f64());
}

/// `now` requests hold a limiter's turn.
pub(crate) fn limiter_in_flight(now: usize) {
    #[cfg(feature = "metrics")]
    ::metrics::gauge!(LIMITER_IN_FLIGHT).set(now as f64);
}

/// `blocks` blocks served from `tier`.
#[cfg(feature = "cache")]
pub(crate) fn cache_hits(tier: Tier, blocks: u64) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!(CACHE_HITS, "tier" => tier.label()).increment(blocks);
}

/// `blocks` blocks `tier` did not hold.
#[cfg(feature = "cache")]
pub(crate) fn cache_misses(tier: Tier, blocks: u64) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!(CACHE_MISSES, "tier" => tier.label()).increment(blocks);
}

/// The disk tier holds `bytes` bytes.
#[cfg(feature = "disk-cache")]
pub(crate) fn disk_tier_bytes(bytes: u64) {
    #[cfg(feature = "metrics")]
    ::metrics::gauge!(DISK_TIER_BYTES).set(bytes as f64);
}

/// `blocks` blocks evicted from the disk tier.
#[cfg(feature = "disk-cache")]
pub(crate) fn disk_tier_evictions(blocks: u64) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!(DISK_TIER_EVICTIONS).increment(blocks);
}

/// A block read from the disk tier whose checksum did not match.
#[cfg(feature = "disk-cache")]
pub(crate) fn disk_tier_corrupt_block() {
    #[cfg(feature = "metrics")]
    ::metrics::counter!(DISK_TIER_CORRUPT_BLOCKS).increment(1);
}
