//! A request limit shared by the sources of one store: [`RequestLimiter`], the [`Limited`]
//! layer, [`LimiterStats`], and the waiting reads that share one request.

mod limited;
mod limiter_stats;
mod request_limiter;
mod waiting_reads;

pub use limited::Limited;
pub use limiter_stats::LimiterStats;
pub use request_limiter::RequestLimiter;
