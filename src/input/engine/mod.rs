//! The read engine: the position, the window, and how reads refill it and go past it.
//!
//! - `read_engine`: the engine, every read's way from the window to the source;
//! - `read_exact`: the progress of a read of an exact length, across `Pending`;
//! - `cursor`: the position, and the counts of the bytes handed out;
//! - `window`: the bytes held and where they sit;
//! - `kept`: the bytes a failed read fetched, kept for its retry;
//! - `fetcher`: the fetcher with the counters and where the last fetch ended.

mod cursor;
pub(crate) mod fetcher;
pub(crate) mod kept;
pub(crate) mod read_engine;
pub(crate) mod read_exact;
pub(crate) mod window;
