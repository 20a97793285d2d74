//! The input: a window over a fetcher, and the typed reads built on it.
//!
//! The input and its public API:
//! - `buffered_input`: [`AsyncBufferedInput`], its position, seeks and accessors;
//! - `reads`: the byte reads (`read_byte`, `read_bytes`, `read_bytes_owned`);
//! - `prefetch`: the hint that a range will be read soon;
//! - `decode`: Lucene's fixed-width integers, varints and strings, and [`WindowView`];
//! - `checksum`: checksummed reading and passes over a range in large steps;
//! - `stats_group`: counting an input's work with its clones' and slices';
//! - `stream_input`, `positional_input`: what inputs over streams and over positional sources
//!   add (the stream; opening a local file in one call, clones and slices);
//! - `interop`: tokio's and futures' I/O traits, and a `Stream` of chunks.
//!
//! The machinery under it, top to bottom:
//! - `window_read`: the future behind the hot reads (window hit inline, slow path out of line);
//! - `engine`: the read engine, the position and the window, which refills the window and
//!   reads past it, with what a failed read fetched (`kept`) and its fetcher (`fetcher`);
//! - `fetch`: the seam to the source: [`StreamFetch`](fetch::StreamFetch),
//!   [`PositionalFetch`](fetch::PositionalFetch) and its [`ReadAhead`](fetch::ReadAhead).

mod buffered_input;
mod checksum;
mod decode;
mod engine;
pub(crate) mod fetch;
pub mod interop;
mod positional_input;
mod prefetch;
mod reads;
mod stats_group;
mod stream_input;
mod window_read;

pub use buffered_input::AsyncBufferedInput;
pub use decode::WindowView;
