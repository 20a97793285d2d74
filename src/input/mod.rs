//! The input: a window over a fetcher, and the typed reads built on it.
//!
//! The input and its public API:
//! - `buffered_input`: [`AsyncBufferedInput`], its position, seeks and accessors;
//! - `reads`: the byte reads (`read_byte`, `read_bytes`, `read_bytes_owned`);
//! - `decode`: Lucene's fixed-width integers, varints and strings;
//! - `checksummed`: checksummed reading (`start_checksum`, `checksum`);
//! - `chunks`: passes over a range in large steps (whole-file verification);
//! - `corrupt`: corruption errors for formats read from the input (`corrupt_at`, `corrupt`);
//! - `window_view`: [`WindowView`], synchronous decoding over the window;
//! - `tokio_io`: tokio's `AsyncRead`, `AsyncBufRead` and `AsyncSeek`;
//! - `stats_group`: counting an input's work with its clones' and slices' in a
//!   [`StatsGroup`](crate::StatsGroup);
//! - `stream_input`, `positional_input`: what inputs over streams and over positional sources
//!   add (the stream; opening a local file in one call, clones and slices).
//!
//! The machinery under it:
//! - `window_read`: the future behind the hot reads (window hit inline, slow path out of line);
//! - `refill`: the read engine, which refills the window and reads past it;
//! - `cursor`: the position, and the counts of the bytes handed out;
//! - `fetcher`: the fetcher with the counters and where the last fetch ended;
//! - `stats_member`: what a cursor or a fetcher adds to its stats group;
//! - `window`: the bytes held and where they sit;
//! - `kept`: the bytes a failed read fetched, kept for its retry;
//! - `checksum`: the CRC32 of what the input consumes, folded lazily;
//! - `varint`: Lucene's varints, decoded from a slice;
//! - `utf8`: short-string UTF-8 validation.

mod buffered_input;
mod checksum;
mod checksummed;
mod chunks;
mod corrupt;
mod cursor;
mod decode;
mod fetcher;
mod kept;
mod positional_input;
mod reads;
mod refill;
mod stats_group;
mod stats_member;
mod stream_input;
mod tokio_io;
mod utf8;
mod varint;
mod window;
mod window_read;
mod window_view;

pub use buffered_input::AsyncBufferedInput;
pub use window_view::WindowView;
