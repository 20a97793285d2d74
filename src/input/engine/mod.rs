//! The read engine: how the window is refilled and how reads go past it.
//!
//! - `read_engine`: the engine, which refills the window and reads past it;
//! - `window`: the bytes held and where they sit;
//! - `kept`: the bytes a failed read fetched, kept for its retry;
//! - `fetcher`: the fetcher with the counters and where the last fetch ended.

pub(crate) mod fetcher;
pub(crate) mod kept;
pub(crate) mod read_engine;
pub(crate) mod window;
