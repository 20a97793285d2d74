//! Typed reads on [`AsyncBufferedInput`](crate::AsyncBufferedInput), compatible with Apache
//! Lucene's `DataInput`, one file per kind of value:
//!
//! - `fixed_width`: fixed-width integers in both byte orders;
//! - `bulk`: runs of fixed-width integers into a slice;
//! - `varint_reads`: varints and zig-zag varints, over `varint_format` (decoding from a slice);
//! - `string_reads`: strings (a vint length, then UTF-8), over `utf8` (short-string validation);
//! - `window_view`: [`WindowView`], synchronous decoding over the window;
//! - `corrupt`: corruption errors for formats read from the input (`corrupt_at`).
//!
//! Every read has a fast path that decodes straight from the window, synchronously, when the
//! window holds the whole value, and a separate slow path for values that straddle the window's
//! edge or the end of the data. Like the core reads, a typed read either completes or consumes
//! nothing: after an error or a cancellation the position is where the value starts.

mod bulk;
mod converted;
mod corrupt;
mod fixed_width;
mod string_reads;
pub(crate) mod utf8;
pub(crate) mod varint_format;
mod varint_reads;
mod window_view;

pub use window_view::WindowView;
