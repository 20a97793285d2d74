//! The buffered input: a window over a seekable source, and the typed reads built on it.

mod buffered_input;
mod decode;
mod utf8;
mod window;
mod window_read;

pub use buffered_input::AsyncBufferedInput;
