//! The throughput harness of `async-buffered-input`: time reads of a file at a sweep of request
//! sizes, through several readers, over local and network-backed storage, several sources side
//! by side in one run.
//!
//! In the tradition of the classic I/O test that wrote a 1 MB file in 1 KB buffers, read it back
//! and printed "Read a file of N bytes in S seconds for B bytes-per-second" for NFS, TCP-FTP and a
//! native protocol side by side, a run times, for each [`Source`] (a local file, a mount, an
//! `http(s)://` or `s3://` object, memory, a simulated link):
//!
//! - the write phase, if asked and the source takes writes ([`WriteReport`]);
//! - the *limit*: one sequential pass of 1 MiB reads straight from the source, the `dd bs=1M`
//!   of that backend ([`LimitReport`]), and the *stream*: one streaming read of the whole file
//!   through the source's own streaming call (object_store's `get` stream, OpenDAL's bytes
//!   stream, tokio's `File` read to its end; none for NFS and other sources read by requests).
//!   The faster of the two is the source's limit, which every reader's figure is a fraction
//!   of; a [time floor](Plan::limit_floor) times both again until it has passed;
//! - one cell per reader, request size, window, access [`Pattern`] and number of concurrent
//!   tasks ([`CellReport`]), comparing
//!   - [`AsyncBufferedInput`](async_buffered_input::AsyncBufferedInput) over the source's stream
//!     ([`ReaderKind::Buffered`]);
//!   - `AsyncBufferedInput` over a
//!     [`PositionalFetch`](async_buffered_input::PositionalFetch) with
//!     [`ReadAhead`](async_buffered_input::ReadAhead), over the source's positional
//!     form ([`ReaderKind::BufferedReadAhead`]): the window plus read-ahead;
//!   - `AsyncBufferedInput` over the positional form read through a
//!     [`BlockCache`](async_buffered_input::cache::BlockCache) shared by a cell's tasks
//!     ([`ReaderKind::Cached`], not in the default run): a lookup service's shared cache;
//!   - tokio's `BufReader` with `read_exact` ([`ReaderKind::BufReader`]);
//!   - the bare source with `read_exact` per request ([`ReaderKind::Unbuffered`]);
//!   - the byte loop, one `read_u8` per byte over a `BufReader`, as Lucene did before
//!     LUCENE-695 ([`ReaderKind::ByteLoop`]).
//!
//! Timing is fair: the timed loop does with each request what a reader's user does (it looks
//! at it: the first and last byte), and byte-exact verification happens in a second pass that is
//! not timed, so every row is still proven to read the file's bytes ([`Mismatch`]). Each cell
//! reports bytes, time, bytes and requests per second, per-request [`Latency`] (p50, p99), the
//! reads, seeks and bytes the source saw (counted by a [`CountingSource`] under every stream
//! reader alike, and by the test kit's [`CountingPositional`](abi_testkit::CountingPositional)
//! under the read-ahead reader and under the cached reader's cache), the bytes fetched per byte
//! used, and its ratios to the limit and to `AsyncBufferedInput`. A
//! [time budget](Plan#time-budget) keeps slow readers from taking minutes.
//!
//! The modules, one concept each, in layers. What a run does flows plan → run → report →
//! output; imports point down only: a module imports from the layers below its own and from
//! the modules listed before it in its layer, never back up (no circle; `tests/it/layers.rs`
//! checks it):
//!
//! 1. foundations: `units` (sizes, durations, rates, ratios, read and printed), `error`
//!    (context on errors), `workload` (the access [`Pattern`] and its seeded requests),
//!    `timing` (the meter around each request: time budget, sampled [`Latency`]), `mismatch`
//!    ([`Mismatch`]), `boxed` (the boxed forms a reader gets: [`BoxSource`],
//!    [`BoxPositionalSource`]), `counting` ([`CountingSource`]: the test kit's counting
//!    wrapper with [`StreamCounts`], under every reader), `tasks` (a cell's tasks run at once);
//! 2. sources: `remote` (hedged, limited reads of a store), `opendal` (OpenDAL locations),
//!    `sources` (where the bytes come from: [`Source`], `file://` and object store URLs);
//! 3. plan: `plan` (what to run: [`Plan`], its [`Cell`]s, the [`ReaderKind`]s);
//! 4. report: `report` (what was measured: [`Report`], [`SourceReport`], [`CellReport`],
//!    [`LimitReport`], [`WriteReport`], and the JSON), `verdict` (the best reader per source
//!    against the limit and tokio's `BufReader`);
//! 5. run: `write` (the file a run writes, the test kit's
//!    [pattern](abi_testkit::fill_word_pattern)), `truth` (what the bytes should be), `readers`
//!    (the readers, as the run drives them), `verify` (the untimed passes, the [`Checksum`]),
//!    `pass_state` (what a limit or stream pass keeps), `limit` (the limit row), `stream` (the stream row), `run` (a plan run: sources, limit
//!    rows, cells, the [`Event`]s an observer sees);
//! 6. output: `table` (the report as text: table, legend, verdict), `plot` (the SVG chart);
//! 7. `cli`: the `throughput` example's command line:
//!    `cargo run --release --example throughput -- --help`.
//!
//! ```
//! use throughput_harness::{Plan, Source};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let dir = std::env::temp_dir().join(format!("abi-harness-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//!
//! let report = Plan::over([
//!     Source::file(dir.join("a.bin")).named("disk"),
//!     Source::slow_link(dir.join("b.bin"), std::time::Duration::from_micros(200), 0),
//! ])
//! .write_first(256 * 1024, 1024)
//! .sizes([100, 65536])
//! .capacities([8192])
//! .budget(std::time::Duration::from_secs(5))
//! .run()
//! .await?;
//! println!("{report}");
//! assert!(report.verified());
//! assert_eq!(report.sources_agree(), Some(true));
//! let disk = &report.sources[0];
//! assert_eq!(disk.write.as_ref().unwrap().bytes, 256 * 1024);
//! assert!(disk.limit.to_string().starts_with("Read a file of 262144 bytes in "));
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

mod boxed;
pub mod cli;
mod counting;
mod error;
mod limit;
mod mismatch;
#[cfg(feature = "opendal")]
mod opendal;
mod pass_state;
mod plan;
mod plot;
mod readers;
mod remote;
mod report;
mod run;
mod sources;
mod stream;
mod table;
mod tasks;
mod timing;
mod truth;
mod units;
mod verdict;
mod verify;
mod workload;
mod write;

pub use boxed::{BoxPositionalSource, BoxSource, ReadSeek};
pub use counting::{CountingSource, StreamCounts};
pub use mismatch::Mismatch;
pub use plan::{Cell, Plan, ReaderKind};
pub use report::{CellReport, LimitMethod, LimitReport, Report, SourceReport, WriteReport};
pub use run::Event;
pub use sources::Source;
pub use timing::Latency;
pub use verify::Checksum;
pub use workload::Pattern;
