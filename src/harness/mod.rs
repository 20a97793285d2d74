//! The throughput harness: time sequential reads of a file at a sweep of request sizes,
//! through several readers, over local or network-backed storage.
//!
//! In the tradition of the classic I/O test that wrote a 1 MB file in 1 KB buffers, read it back
//! and printed "Read a file of N bytes in S seconds for B bytes-per-second" for NFS, TCP-FTP and a
//! native protocol side by side, a run compares, over the same source:
//!
//! - [`AsyncBufferedInput`](crate::AsyncBufferedInput) ([`ReaderKind::Buffered`]);
//! - `AsyncBufferedInput` over a [`PositionalReader`](crate::source::PositionalReader) with
//!   [`ReadAhead`](crate::source::ReadAhead), over the source's positional form
//!   ([`ReaderKind::BufferedReadAhead`]): the window plus read-ahead;
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
//! and a [`Checksum`] of the bytes read, so a run proves that every reader read the same data. A [time budget](Plan#time-budget) keeps slow readers from taking minutes; an
//! optional write phase writes the file first and times that too ([`WriteReport`]).
//!
//! The `throughput` example is the command-line front end:
//! `cargo run --release --example throughput -- --help`.
//!
//! ```
//! use async_buffered_input::harness::{Plan, Source};
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

mod box_positional_source;
mod box_source;
mod budget;
mod cell;
mod cell_report;
mod cell_runner;
mod checksum;
mod counting_positional_source;
mod counting_source;
mod event;
mod file_url;
mod format;
mod pattern;
mod plan;
mod reader_kind;
mod report;
mod source;
mod write_phase;
mod write_report;

pub use box_positional_source::BoxPositionalSource;
pub use box_source::{BoxSource, ReadSeek};
pub use cell::Cell;
pub use cell_report::CellReport;
pub use checksum::Checksum;
pub use counting_positional_source::CountingPositionalSource;
pub use counting_source::CountingSource;
pub use event::Event;
pub use pattern::fill_pattern;
pub use plan::Plan;
pub use reader_kind::ReaderKind;
pub use report::Report;
pub use source::Source;
pub use write_report::WriteReport;
