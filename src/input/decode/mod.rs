//! Typed reads on [`AsyncBufferedInput`](crate::AsyncBufferedInput), compatible with Apache
//! Lucene's `DataInput`, one file per kind of value:
//!
//! - `fixed_width`: fixed-width integers in both byte orders;
//! - `bulk`: runs of fixed-width integers into a slice;
//! - `varints`: varints and zig-zag varints;
//! - `string`: strings (a vint length, then UTF-8).
//!
//! Every read has a fast path that decodes straight from the window, synchronously, when the
//! window holds the whole value, and a separate slow path for values that straddle the window's
//! edge or the end of the data. Like the core reads, a typed read either completes or consumes
//! nothing: after an error or a cancellation the position is where the value starts.

mod bulk;
mod converted;
mod fixed_width;
mod string;
mod varints;
