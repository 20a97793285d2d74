//! A buffered, seekable async input for files that are slow to touch: index segments on local
//! disk, files on network mounts, objects in HTTP/S3-style stores.
//!
//! [`AsyncBufferedInput`] keeps a window over its source, in the manner of Apache Lucene's
//! `BufferedIndexInput` after LUCENE-695: what the window holds is copied in one step, the rest
//! is fetched with one source read, and a request at least as large as the window goes
//! straight into the caller's buffer. Small requests never turn into byte-at-a-time loops or one
//! I/O each. On top of that: Lucene's typed reads (fixed-width integers, varints, strings),
//! seeks that keep the window, and tokio's `AsyncRead`, `AsyncBufRead` and `AsyncSeek` and a
//! `Stream` of `Bytes` through [`into_tokio_io`](AsyncBufferedInput::into_tokio_io)
//! ([`interop::TokioIo`]).
//!
//! ```
//! use async_buffered_input::AsyncBufferedInput;
//! use std::io::Cursor;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let mut input = AsyncBufferedInput::new(Cursor::new(b"\x05hello".to_vec()));
//! let len = input.read_byte().await? as usize;
//! let word = input.read_bytes_owned(len).await?;
//! assert_eq!(&word[..], b"hello");
//! assert_eq!(input.stats().underlying_reads, 1);
//! # Ok(())
//! # }
//! ```
//!
//! # The modules
//!
//! - the crate root: [`AsyncBufferedInput`], the window and every read; [`WindowView`], a
//!   synchronous view of the window for decoding without an `.await` per value; the seam to
//!   the source ([`Fetch`]: [`StreamFetch`] over any `AsyncRead + AsyncSeek`,
//!   [`PositionalFetch`] over a positional source, with [`ReadAhead`]); [`InputError`]
//!   (corruption included) and [`SourceError`], what errors carry; [`Stats`] and [`StatsGroup`],
//!   what inputs asked of their sources; [`MemoryBudget`], one byte budget for the read-ahead
//!   of many inputs and a block cache;
//! - [`source`]: positional sources, bytes at an offset: a local file, memory, object stores
//!   (feature `object-store`), OpenDAL services (feature `opendal`);
//! - [`layer`]: sources that wrap a source: retries, hedging, a request limit, deadlines, a
//!   simulated link;
//! - `cache` (feature `cache`): a block cache shared by inputs, with a disk tier (feature
//!   `disk-cache`);
//! - [`lucene`]: Lucene's codec framing, a [`Directory`](lucene::Directory) whose files open
//!   by name, commits (`segments_N`), segment infos (`.si`) and compound files (`.cfs`/`.cfe`);
//! - [`interop`]: an input as tokio's (and through `tokio_util`'s `compat`, `futures-io`'s)
//!   `AsyncRead`/`AsyncBufRead`/`AsyncSeek` and as a `Stream` of `Bytes` chunks, both from
//!   one [`TokioIo`](interop::TokioIo);
//! - [`metrics`]: the names of the exported metrics (feature `metrics`).
//!
//! A stream (`tokio::fs::File`, `Cursor`) goes straight into
//! [`AsyncBufferedInput::new`]. A positional source goes through a `PositionalFetch`, which
//! brings read-ahead, page cache reads for local files, and inputs that can be cloned and
//! sliced:
//!
//! ```
//! use async_buffered_input::source::MemorySource;
//! use async_buffered_input::{AsyncBufferedInput, PositionalFetch, ReadAhead};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let source = MemorySource::new((0..=255u8).collect::<Vec<_>>());
//! let input = AsyncBufferedInput::new(PositionalFetch::new(source).with_read_ahead(ReadAhead::default()));
//! let mut header = input.slice(0, 16).await?;
//! assert_eq!(header.read_u32().await?, 0x0001_0203);
//! # Ok(())
//! # }
//! ```
//!
//! # Observing
//!
//! Each counter has one home. An input's work (reads, seeks, bytes from the source, the window
//! and direct) is in [`Stats`], from `input.stats()` or a [`StatsGroup`]. A layer's counters
//! are methods of that one instance (`hedged.hedges_fired()`, `retrying.deadlines_hit()`,
//! `limiter.waited()`); a cache's state (hits and misses, the disk tier) is in its `stats()`, a
//! snapshot of that one cache. The `metrics` feature exports the source-side counters
//! process-wide (every instance added up) under the names in [`metrics`], for a service's
//! dashboards; it adds no counter of its own. [`Stats`] and the cache's snapshots subtract
//! field by field, saturating at 0: `later - earlier` is the work in between.
//!
//! # Layers
//!
//! Each module uses only the modules below it:
//!
//! 1. `error`, `stats` (with [`metrics`]) and [`MemoryBudget`]: what the others share (errors
//!    and their context, counters, one byte budget for the read-ahead and the block cache);
//! 2. [`source`]: positional sources, bytes at an offset;
//! 3. [`layer`] and `cache`: sources over sources;
//! 4. `input`: [`AsyncBufferedInput`], the window over a fetcher ([`Fetch`], which turns a
//!    stream or a positional source into "the bytes at this offset" and "the length"), every
//!    read on it, and [`interop`];
//! 5. [`lucene`]: the codec, directories, commits and compound files, read through inputs.
//!
//! # Unsafe code
//!
//! One line: `read_string` builds its `String` with `String::from_utf8_unchecked` after
//! validating the bytes with its own short-string UTF-8 check, which is about 2x faster than
//! `std::str::from_utf8` on 20-byte strings (see BENCHMARKS.md). That check is tested against
//! std on every sequence of up to three bytes and on random and mutated strings. Everything
//! else, including the page cache reads (through `rustix`), is safe code.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)] // one exception, reviewed: `input/decode/utf8.rs`
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    rust_2018_idioms
)]

#[cfg(feature = "cache")]
#[cfg_attr(docsrs, doc(cfg(feature = "cache")))]
pub mod cache;
mod error;
mod input;
pub mod layer;
pub mod lucene;
mod memory_budget;
pub mod source;
mod stats;

pub use error::{InputError, SourceError};
pub use input::fetch::{Fetch, PositionalFetch, ReadAhead, StreamFetch};
pub use input::interop;
pub use input::{AsyncBufferedInput, WindowView};
pub use memory_budget::MemoryBudget;
/// The `object_store` crate this crate's object store support is built on, so that a user can
/// build a store (or name a path in one) without depending on it, and on the same version.
#[cfg(feature = "object-store")]
#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
pub use object_store;
pub use stats::metrics;
pub use stats::{Stats, StatsGroup};

/// The README's example, compiled and run by `cargo test` as a doctest (not part of the API:
/// this item exists only when rustdoc collects doctests).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
