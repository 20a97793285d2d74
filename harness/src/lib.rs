//! The throughput harness of `async-buffered-input`: time sequential reads of a file at a sweep
//! of request sizes, through several readers, over local or network-backed storage.
//!
//! In the tradition of the classic I/O test that wrote a 1 MB file in 1 KB buffers, read it back
//! and printed "Read a file of N bytes in S seconds for B bytes-per-second" for NFS, TCP-FTP and a
//! native protocol side by side, a run compares, over the same source:
//!
//! - [`AsyncBufferedInput`](async_buffered_input::AsyncBufferedInput) over the source's stream
//!   ([`ReaderKind::Buffered`]);
//! - `AsyncBufferedInput` over a [`PositionalFetch`](async_buffered_input::fetch::PositionalFetch)
//!   with [`ReadAhead`](async_buffered_input::fetch::ReadAhead), over the source's positional
//!   form ([`ReaderKind::BufferedReadAhead`]): the window plus read-ahead;
//! - tokio's `BufReader` with `read_exact` ([`ReaderKind::BufReader`]);
//! - the bare source with `read_exact` per request ([`ReaderKind::Unbuffered`]);
//! - the byte loop, one `read_u8` per byte over a `BufReader`, as Lucene did before LUCENE-695
//!   ([`ReaderKind::ByteLoop`]).
//!
//! Describe a run with a [`Plan`] over a [`Source`] (a local file, memory, a simulated link, or
//! a URL: `file://`, and `http(s)://` or `s3://` with the feature `object-store`), run it, and
//! get a [`Report`]: per cell (reader, request size, capacity) a [`CellReport`] with bytes,
//! time, bytes and requests per second, the reads and seeks the source saw (counted by a
//! [`CountingSource`] under every stream reader alike, and by a [`CountingPositionalSource`]
//! under the read-ahead reader: its reads are the requests that reach the positional source),
//! and a [`Checksum`] of the bytes read, so a run proves that every reader read the same data.
//! A [time budget](Plan#time-budget) keeps slow readers from taking minutes; an optional write
//! phase writes the file first and times that too ([`WriteReport`]).
//!
//! The modules, one concept each:
//!
//! - `plan`: what to run: [`Plan`], its [`Cell`]s, the [`ReaderKind`]s;
//! - `run`: running it: the write phase ([`fill_pattern`]), each cell's request loop and time
//!   budget, the [`Event`]s an observer sees;
//! - `sources`: where the bytes come from: [`Source`], its stream ([`BoxSource`]) and
//!   positional ([`BoxPositionalSource`]) forms, `file://` and object store URLs;
//! - `counting`: [`CountingSource`] and [`CountingPositionalSource`], under every reader;
//! - `report`: what was measured: [`Report`], [`CellReport`], [`WriteReport`], the table, the
//!   JSON, the [`Checksum`];
//! - [`plot`]: the SVG chart;
//! - [`cli`]: the `throughput` example's command line:
//!   `cargo run --release --example throughput -- --help`.
//!
//! ```
//! use throughput_harness::{Plan, Source};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let dir = std::env::temp_dir().join(format!("abi-harness-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let path = dir.join("data.bin");
//!
//! let report = Plan::new(Source::file(&path))
//!     .write_first(256 * 1024, 1024)
//!     .sizes([100, 65536])
//!     .capacities([8192])
//!     .budget(std::time::Duration::from_secs(5))
//!     .run()
//!     .await?;
//! println!("{report}");
//! assert!(report.checksums_agree());
//! assert_eq!(report.write.as_ref().unwrap().bytes, 256 * 1024);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    rust_2018_idioms
)]

pub mod cli;
mod counting;
mod error;
mod plan;
pub mod plot;
mod report;
mod run;
mod sources;

pub use counting::{CountingPositionalSource, CountingSource};
pub use plan::{Cell, Plan, ReaderKind};
pub use report::{CellReport, Checksum, Report, WriteReport};
pub use run::{fill_pattern, Event};
pub use sources::{BoxPositionalSource, BoxSource, ReadSeek, Source};
