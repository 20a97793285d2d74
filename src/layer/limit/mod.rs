//! A request limit shared by the sources of one store: [`RequestLimiter`], the [`Limited`]
//! layer, and the waiting reads that share one request.

mod limited;
mod request_limiter;
mod waiting_reads;

pub use limited::Limited;
pub use request_limiter::RequestLimiter;
