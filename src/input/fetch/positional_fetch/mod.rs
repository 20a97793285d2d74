//! [`PositionalFetch`], the fetcher over a positional source, by concept:
//!
//! - `fetcher`: the type, its fields and their invariants, its public API, and the part of
//!   the source it reads (a slice's range) and the view's length;
//! - `fetching`: the seam, a fetch served from held bytes, bytes at hand, or a request;
//! - `at_hand`: reads of the bytes the source has at hand, before any request;
//! - `queue`: the chunks held and in flight, and the read-ahead that requests them (its growth
//!   rule is [`ReadAhead`](crate::ReadAhead)'s);
//! - `ranges`: vectored reads, near ranges coalesced into one request;
//! - `stream`: long sequential runs served from one streaming request;
//! - `pace`: the choice between that stream and ranged read-ahead, by measured rates;
//! - `prefetch`, `prefetches`: ranges requested on a hint before they are read, kept apart
//!   from the chunks, and the type that holds them;
//! - `request`: one request to the source, running as a task of its own (started in `queue`).

mod at_hand;
mod fetcher;
mod fetching;
mod pace;
mod prefetch;
mod prefetches;
mod queue;
mod ranges;
mod request;
mod stream;

pub use self::fetcher::PositionalFetch;

#[cfg(test)]
mod tests;
