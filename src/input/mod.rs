//! The input: a window over a fetcher, and the typed reads built on it.
//!
//! - `buffered_input`: [`AsyncBufferedInput`], its reads, seeks and tokio I/O traits;
//! - `window`: the bytes held and where they sit;
//! - `window_read`: the future behind the hot reads (window hit inline, slow path out of line);
//! - `decode`: Lucene's fixed-width integers, varints and strings;
//! - `utf8`: short-string UTF-8 validation;
//! - `positional_input`: opening a local file in one call, clones and slices;
//! - `kept`: the bytes a failed read fetched, kept for its retry;
//! - `checksum`: the CRC32 of what the input consumes (checksummed reading);
//! - `chunks`: passes over a range in large steps (whole-file verification);
//! - `window_view`: synchronous decoding over the window.

mod buffered_input;
mod checksum;
mod chunks;
mod decode;
mod kept;
mod positional_input;
mod utf8;
mod window;
mod window_read;
mod window_view;

pub use buffered_input::AsyncBufferedInput;
pub use window_view::WindowView;
