//! The input: a window over a fetcher, and the typed reads built on it.
//!
//! - `buffered_input`: [`AsyncBufferedInput`], its reads, seeks and tokio I/O traits;
//! - `window`: the bytes held and where they sit;
//! - `window_read`: the future behind the hot reads (window hit inline, slow path out of line);
//! - `decode`: Lucene's fixed-width integers, varints and strings;
//! - `utf8`: short-string UTF-8 validation;
//! - `clone_slice`: clones and slices of inputs over positional sources.

mod buffered_input;
mod clone_slice;
mod decode;
mod utf8;
mod window;
mod window_read;

pub use buffered_input::AsyncBufferedInput;
