//! What a run measured: the [`Report`], one [`SourceReport`] per source with its
//! [`WriteReport`], [`LimitReport`] and [`CellReport`]s, the ratios between them, and the JSON
//! they print as. The text table is in `table.rs`.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use async_buffered_input::ReadAhead;
use serde_json::{json, Value};

use crate::mismatch::Mismatch;
use crate::plan::{Cell, ReaderKind};
use crate::remote::RemoteCounts;
use crate::timing::Latency;
use crate::units::{seconds, significant};

/// `seconds`, `bytes_per_second` and `mb_per_second` of a report with `bytes` and `elapsed`
/// fields (`$verb`: what was done with the bytes, for the docs).
macro_rules! rates {
    ($report:ty, $verb:literal) => {
        impl $report {
            /// [`elapsed`](Self::elapsed) in seconds.
            pub fn seconds(&self) -> f64 {
                self.elapsed.as_secs_f64()
            }

            #[doc = concat!("Bytes ", $verb, " per second.")]
            pub fn bytes_per_second(&self) -> f64 {
                per_second(self.bytes, self.elapsed)
            }

            #[doc = concat!("Megabytes (10^6 bytes) ", $verb, " per second.")]
            pub fn mb_per_second(&self) -> f64 {
                self.bytes_per_second() / 1e6
            }
        }
    };
}

/// Everything a run measured: one [`SourceReport`] per source, in the order they were timed.
///
/// Its [`Display`](fmt::Display) is the table the `throughput` example prints: per source the
/// classic test's lines ("Wrote a file of N bytes in S seconds for B bytes-per-second", "Read a
/// file ..."), then one table with a source column, the write and limit rows of each source and
/// every cell, with MB/s (10^6 bytes per second), requests per second, latency, each row's
/// fraction of its source's limit and its ratio to `AsyncBufferedInput`; then a legend of every
/// reader and column, the verification, and a verdict per source (the best `AsyncBufferedInput`
/// row at the smallest and largest request size, against the limit and tokio's `BufReader`).
/// `{report}` fits 120 columns, leaving out the columns that do not fit (the legend names
/// them); `{report:#}` prints every column.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Report {
    /// One report per source.
    pub sources: Vec<SourceReport>,
    /// How many times each cell made its requests.
    pub repetitions: u32,
    /// The window capacities of the run, in the order they were timed.
    pub capacities: Vec<usize>,
    /// The seed of the random, clustered and term-lookup patterns.
    pub seed: u64,
    /// The read-ahead shapes of the [read-ahead reader](ReaderKind::BufferedReadAhead), in the
    /// order timed (whether or not it ran; see [`read_ahead`](Self::read_ahead)).
    pub read_aheads: Vec<ReadAhead>,
}

impl Report {
    /// Whether every byte of every verification pass matched the file, and every timed pass
    /// saw what its verification pass read, in every source. (A [failed](Self::failures) cell
    /// has nothing to verify, so it does not count here.)
    pub fn verified(&self) -> bool {
        self.sources.iter().all(SourceReport::verified)
    }

    /// The cells that failed (see [`CellReport::error`]), with their source.
    pub fn failures(&self) -> Vec<(&SourceReport, &CellReport)> {
        self.sources
            .iter()
            .flat_map(|s| {
                s.cells
                    .iter()
                    .filter(|r| r.error.is_some())
                    .map(move |r| (s, r))
            })
            .collect()
    }

    /// Whether some cell ran out of time before making all its requests.
    pub fn has_partial(&self) -> bool {
        self.sources
            .iter()
            .any(|s| s.cells.iter().any(|r| !r.complete) || s.limit_rows().any(|l| !l.complete))
    }

    /// The read-ahead of the read-ahead reader (its first shape), if the run timed it.
    pub fn read_ahead(&self) -> Option<ReadAhead> {
        self.sources
            .iter()
            .flat_map(|s| &s.cells)
            .find_map(|r| r.read_ahead)
    }

    /// Whether every source whose limit row read the whole file read the same bytes (their
    /// checksums agree); `None` with fewer than two such sources.
    pub fn sources_agree(&self) -> Option<bool> {
        let sums: Vec<u64> = self
            .sources
            .iter()
            .filter(|s| s.limit.complete)
            .map(|s| s.limit.checksum)
            .collect();
        (sums.len() >= 2).then(|| sums.iter().all(|&s| s == sums[0]))
    }

    /// The report as JSON: an array with one object per row of the table, source by source:
    /// the write row (`"row": "write"`), the limit rows (`"row": "limit"`: the loop of 1 MiB
    /// reads, `"reader": "limit"`, then the stream, `"reader": "stream"`, where the source has a
    /// streaming call), then one per cell (`"row": "read"`). Every row has the same fields, `null` where one does not apply:
    /// `source` (the label), `source_name`, `file_len`, `row`, `reader` (`write`, `limit` or a
    /// reader's id), `reader_name`, `read_size`, `capacity`, `pattern`, `tasks`, `bytes`,
    /// `requests`, `seconds`, `bytes_per_second`, `mb_per_second`, `requests_per_second`,
    /// `latency_p50_ns`, `latency_p99_ns`, `latency_max_ns`, `latency_samples`,
    /// `underlying_reads`, `underlying_seeks`, `underlying_bytes`, `disk_hits`,
    /// `bytes_fetched_per_byte_used` ([`CellReport::fetched_per_used`]), `verify_reads`, `rounds`
    /// (of a limit row: [`LimitReport::rounds`]), `checksum`
    /// (a hex string: JSON numbers lose 64-bit precision in many readers), `verified`,
    /// `mismatch`, `error`, `complete`, `budget_seconds`, `read_ahead`, `cache_capacity`,
    /// `source_requests`, `hedges_fired`, `hedges_won`, `hedges_denied`, `reads_coalesced` (with
    /// `--hedge` or `--max-requests`),
    /// `limit_bytes_per_second` (the faster limit row's: [`SourceReport::limit_bytes_per_second`]),
    /// `ratio_to_limit` (for a limit row too: 1 for the faster), `ratio_to_buffered`, `holds_pattern`, `reference_reads`,
    /// `repetitions`, `seed`.
    pub fn json(&self) -> Value {
        let mut rows = Vec::new();
        for source in &self.sources {
            if let Some(write) = &source.write {
                rows.push(self.row_json(source, Row::Write(write)));
            }
            for limit in source.limit_rows() {
                rows.push(self.row_json(source, Row::Limit(limit)));
            }
            for cell in &source.cells {
                rows.push(self.row_json(source, Row::Read(cell)));
            }
        }
        Value::Array(rows)
    }

    // ----- private helpers -----

    /// One row of [`json`](Self::json).
    fn row_json(&self, source: &SourceReport, row: Row<'_>) -> Value {
        let mut value = json!({
            "source": source.label,
            "source_name": source.name,
            "file_len": source.file_len,
            "row": null, "reader": null, "reader_name": null, "read_size": null,
            "capacity": null, "pattern": null, "tasks": null, "bytes": null, "requests": null,
            "seconds": null, "bytes_per_second": null, "mb_per_second": null,
            "requests_per_second": null, "latency_p50_ns": null, "latency_p99_ns": null,
            "latency_max_ns": null, "latency_samples": null, "underlying_reads": null,
            "underlying_seeks": null, "underlying_bytes": null, "disk_hits": null,
            "bytes_fetched_per_byte_used": null, "verify_reads": null,
            "checksum": null, "verified": null, "mismatch": null, "error": null, "complete": null,
            "budget_seconds": null, "read_ahead": null, "cache_capacity": null,
            "limit_bytes_per_second": source.limit_bytes_per_second(),
            "ratio_to_limit": null, "ratio_to_buffered": null, "holds_pattern": null,
            "reference_reads": source.reference_reads,
            "repetitions": self.repetitions,
            "seed": self.seed,
        });
        let latency = |value: &mut Value, latency: Option<Latency>| {
            if let Some(l) = latency {
                value["latency_p50_ns"] = json!(l.p50.as_nanos() as u64);
                value["latency_p99_ns"] = json!(l.p99.as_nanos() as u64);
                value["latency_max_ns"] = json!(l.max.as_nanos() as u64);
                value["latency_samples"] = json!(l.samples);
            }
        };
        let fields = match row {
            Row::Write(w) => json!({
                "row": "write",
                "reader": "write",
                "reader_name": "write",
                "read_size": w.buffer_size,
                "bytes": w.bytes,
                "requests": w.writes,
                "seconds": w.seconds(),
                "bytes_per_second": w.bytes_per_second(),
                "mb_per_second": w.mb_per_second(),
                "requests_per_second": per_second(w.writes, w.elapsed),
                "complete": true,
            }),
            Row::Limit(l) => {
                latency(&mut value, l.latency);
                json!({
                    "row": "limit",
                    "reader": l.method.id(),
                    "reader_name": l.method.name(),
                    "read_size": l.read_size,
                    "pattern": "seq",
                    "tasks": 1,
                    "bytes": l.bytes,
                    "requests": l.requests,
                    "seconds": l.seconds(),
                    "bytes_per_second": l.bytes_per_second(),
                    "mb_per_second": l.mb_per_second(),
                    "requests_per_second": l.requests_per_second(),
                    "underlying_reads": l.underlying_reads,
                    "verify_reads": l.verify_reads,
                    "rounds": l.rounds,
                    "checksum": format!("{:#018x}", l.checksum),
                    "verified": l.mismatch.is_none(),
                    "mismatch": l.mismatch.as_ref().map(ToString::to_string),
                    "complete": l.complete,
                    "budget_seconds": l.budget.map(|b| b.as_secs_f64()),
                    "ratio_to_limit": source.ratio_of_limit_row(l),
                    "holds_pattern": l.holds_pattern,
                })
            }
            Row::Read(r) => {
                latency(&mut value, r.latency);
                json!({
                    "row": "read",
                    "reader": r.cell.reader.id(),
                    "reader_name": r.cell.reader.name(),
                    "read_size": r.cell.read_size,
                    "capacity": r.cell.capacity,
                    "pattern": r.cell.pattern.id(),
                    "tasks": r.cell.tasks,
                    "bytes": r.bytes,
                    "requests": r.requests,
                    "seconds": r.seconds(),
                    "bytes_per_second": r.bytes_per_second(),
                    "mb_per_second": r.mb_per_second(),
                    "requests_per_second": r.requests_per_second(),
                    "underlying_reads": r.underlying_reads,
                    "underlying_seeks": r.underlying_seeks,
                    "underlying_bytes": r.underlying_bytes,
                    "disk_hits": r.disk_hits,
                    "bytes_fetched_per_byte_used": r.fetched_per_used(),
                    "verify_reads": r.verify_reads,
                    "checksum": format!("{:#018x}", r.checksum),
                    "verified": r.error.is_none() && r.mismatch.is_none(),
                    "mismatch": r.mismatch.as_ref().map(ToString::to_string),
                    "error": r.error,
                    "complete": r.complete,
                    "budget_seconds": r.budget.map(|b| b.as_secs_f64()),
                    "read_ahead": r.read_ahead.map(|ahead| json!({
                        "chunk_size": ahead.chunk_size(),
                        "depth": ahead.depth(),
                    })),
                    "cache_capacity": r.cache_capacity,
                    "source_requests": r.remote.map(|c| c.store_requests()),
                    "hedges_fired": r.remote.map(|c| c.hedges_fired),
                    "hedges_won": r.remote.map(|c| c.hedges_won),
                    "hedges_denied": r.remote.map(|c| c.hedges_denied),
                    "reads_coalesced": r.remote.map(|c| c.coalesced),
                    "ratio_to_limit": source.ratio_to_limit(r),
                    "ratio_to_buffered": source.ratio_to_buffered(r),
                })
            }
        };
        if let (Value::Object(all), Value::Object(these)) = (&mut value, fields) {
            all.extend(these);
        }
        if let Value::Object(all) = &mut value {
            for field in [
                "rounds",
                "source_requests",
                "hedges_fired",
                "hedges_won",
                "hedges_denied",
                "reads_coalesced",
            ] {
                all.entry(field).or_insert(Value::Null);
            }
        }
        value
    }
}

/// A row of the table or of the JSON.
#[derive(Clone, Copy)]
pub(crate) enum Row<'a> {
    Write(&'a WriteReport),
    Limit(&'a LimitReport),
    Read(&'a CellReport),
}

/// What a run measured of one source: the write phase if the run wrote it, the limit row, and
/// one [`CellReport`] per cell, in the order of [`Plan::cells`](crate::Plan::cells).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SourceReport {
    /// The source's short name in the table (see `Plan::source_names`).
    pub name: String,
    /// What it read ([`Source::label`](crate::Source::label)).
    pub label: String,
    /// The file's length in bytes.
    pub file_len: u64,
    /// The write phase, if the run wrote this source's file.
    pub write: Option<WriteReport>,
    /// One sequential pass of 1 MiB reads straight from the source (the loop).
    pub limit: LimitReport,
    /// One streaming read of the whole file through the source's own streaming call; `None`
    /// for a source without one (NFS, a simulated link, other sources read by requests).
    pub stream: Option<LimitReport>,
    /// One report per cell.
    pub cells: Vec<CellReport>,
    /// Reads the verification passes made of the source itself to learn what the bytes should
    /// be: 0 when the file holds the harness's pattern (then the bytes are computed).
    pub reference_reads: u64,
}

impl SourceReport {
    /// The first cell of `reader` at `read_size` and `capacity` (whatever its pattern and
    /// tasks), if the run timed one.
    pub fn get(
        &self,
        reader: ReaderKind,
        read_size: usize,
        capacity: Option<usize>,
    ) -> Option<&CellReport> {
        self.cells.iter().find(|r| {
            r.cell.reader == reader && r.cell.read_size == read_size && r.cell.capacity == capacity
        })
    }

    /// The report of `cell`, if the run timed it.
    pub fn cell(&self, cell: &Cell) -> Option<&CellReport> {
        self.cells.iter().find(|r| r.cell == *cell)
    }

    /// The `AsyncBufferedInput` cell that `report` is compared with: the one at the same
    /// pattern, tasks, request size and capacity, or, for a reader without a window, at the
    /// smallest capacity timed.
    pub fn baseline(&self, report: &CellReport) -> Option<&CellReport> {
        let c = report.cell;
        self.cells.iter().find(|r| {
            r.cell.reader == ReaderKind::Buffered
                && r.cell.pattern == c.pattern
                && r.cell.tasks == c.tasks
                && r.cell.read_size == c.read_size
                && (c.capacity.is_none() || r.cell.capacity == c.capacity)
        })
    }

    /// `report`'s throughput divided by its [`baseline`](Self::baseline)'s: below 1 means
    /// slower than `AsyncBufferedInput`.
    pub fn ratio_to_buffered(&self, report: &CellReport) -> Option<f64> {
        let base = self.baseline(report)?.bytes_per_second();
        (base > 0.0).then(|| report.bytes_per_second() / base)
    }

    /// The limit rows: the loop ([`limit`](Self::limit)), then the [`stream`](Self::stream) if
    /// the source has one.
    pub fn limit_rows(&self) -> impl Iterator<Item = &LimitReport> {
        std::iter::once(&self.limit).chain(&self.stream)
    }

    /// The source's limit: the faster of its limit rows (the loop of 1 MiB reads and the
    /// stream), in bytes per second; a row that read other bytes than the file holds does not
    /// count. 0 if neither read anything right.
    pub fn limit_bytes_per_second(&self) -> f64 {
        self.limit_rows()
            .filter(|l| l.mismatch.is_none())
            .map(LimitReport::bytes_per_second)
            .fold(0.0, f64::max)
    }

    /// The limit row that sets the [limit](Self::limit_bytes_per_second), if one read right.
    pub fn limit_row(&self) -> Option<&LimitReport> {
        self.limit_rows()
            .filter(|l| l.mismatch.is_none() && l.bytes > 0)
            .max_by(|a, b| a.bytes_per_second().total_cmp(&b.bytes_per_second()))
    }

    /// Whether the limit is measured: the row that sets it read the whole file.
    pub fn limit_complete(&self) -> bool {
        self.limit_row().is_some_and(|l| l.complete)
    }

    /// `report`'s throughput as a fraction of the source's
    /// [limit](Self::limit_bytes_per_second): 1 is as fast as the faster of reading the source
    /// straight in 1 MiB reads, one at a time, and streaming the whole file.
    pub fn ratio_to_limit(&self, report: &CellReport) -> Option<f64> {
        let limit = self.limit_bytes_per_second();
        (limit > 0.0).then(|| report.bytes_per_second() / limit)
    }

    /// A limit row's throughput as a fraction of the source's limit (1 for the faster row), if
    /// it read the whole file.
    pub fn ratio_of_limit_row(&self, row: &LimitReport) -> Option<f64> {
        let limit = self.limit_bytes_per_second();
        (row.complete && limit > 0.0).then(|| row.bytes_per_second() / limit)
    }

    /// The cells whose verification failed.
    pub fn mismatches(&self) -> Vec<&CellReport> {
        self.cells.iter().filter(|r| r.mismatch.is_some()).collect()
    }

    /// Whether the limit rows and every cell passed verification.
    pub fn verified(&self) -> bool {
        self.limit_rows().all(|l| l.mismatch.is_none()) && self.mismatches().is_empty()
    }
}

/// How a limit row reads its source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitMethod {
    /// One sequential pass of 1 MiB reads straight from the source, one at a time (the
    /// source's raw form: `read` calls on a local file, as `dd bs=1M` makes; 1 MiB requests
    /// to an object store): the `limit` row.
    Loop,
    /// One streaming read of the whole file through the source's own streaming call
    /// (object_store's `get` stream, OpenDAL's bytes stream, tokio's `File` read to its end):
    /// the `stream` row.
    Stream,
}

impl LimitMethod {
    /// The row's id in the JSON's `reader` field and its label in the table: `limit`, `stream`.
    pub fn id(self) -> &'static str {
        match self {
            LimitMethod::Loop => "limit",
            LimitMethod::Stream => "stream",
        }
    }

    /// The row's description in the JSON's `reader_name` field.
    pub fn name(self) -> &'static str {
        match self {
            LimitMethod::Loop => "limit (1 MiB reads straight from the source)",
            LimitMethod::Stream => {
                "stream (one streaming read of the whole file through the source's own \
                 streaming call)"
            }
        }
    }
}

/// A limit row of a source, timed as the cells are, then verified: the loop of 1 MiB reads
/// straight from the source ([`LimitMethod::Loop`]) or one streaming read of the whole file
/// ([`LimitMethod::Stream`]). With a [time floor](crate::Plan::limit_floor) the passes are
/// timed in rounds until the floor has passed, and the row reports the median round.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LimitReport {
    /// How the row reads the source.
    pub method: LimitMethod,
    /// The file's length.
    pub file_len: u64,
    /// Passes over the file, as many as the cells make (the plan's repetitions).
    pub passes: u32,
    /// The size of each request: 1 MiB for the loop, the file's length for the stream (one
    /// streaming read per pass).
    pub read_size: usize,
    /// Bytes read (the file's length times the passes, unless the budget ran out).
    pub bytes: u64,
    /// Requests made: reads of 1 MiB, or streaming reads (one per pass).
    pub requests: u64,
    /// Time from the first request to the end of the last (of the median round).
    pub elapsed: Duration,
    /// Latency per read of 1 MiB, or per chunk of the stream, sampled (over every round).
    pub latency: Option<Latency>,
    /// Read calls (or requests) the pass made of the source: for the stream, the `read` calls
    /// of a file or a stream, or the one `GET` (or OpenDAL read) of each pass.
    pub underlying_reads: u64,
    /// The rounds timed: 1 without a time floor; the figures are the median round's.
    pub rounds: u32,
    /// Those of the verification pass.
    pub verify_reads: u64,
    /// The [`Checksum`](crate::Checksum) of the bytes read: of the whole file (read
    /// [`passes`](Self::passes) times) when [`complete`](Self::complete), and then the same for
    /// every source holding the same file.
    pub checksum: u64,
    /// Whether the passes read the whole file before the plan's budget ran out.
    pub complete: bool,
    /// The time the pass could take.
    pub budget: Option<Duration>,
    /// Whether the file holds the harness's [pattern](abi_testkit::fill_word_pattern) (the run wrote it,
    /// or the verification pass read the whole file and found it so): the cells are then
    /// verified against the pattern, without reading the source again.
    pub holds_pattern: bool,
    /// Why verification failed: the timed pass saw other bytes, or the file read back does not
    /// hold what the write phase wrote.
    pub mismatch: Option<Mismatch>,
}

rates!(LimitReport, "read");

impl LimitReport {
    /// Reads per second.
    pub fn requests_per_second(&self) -> f64 {
        per_second(self.requests, self.elapsed)
    }
}

impl fmt::Display for LimitReport {
    /// The classic test's line: `Read a file of 1048576 bytes in 0.002 seconds for 524288000
    /// bytes-per-second.`, `Read a file of 1048576 bytes 3 times in ...` for several passes,
    /// or, if the budget ran out first, `Read 524288 bytes of a file of 1048576 bytes in 10.000
    /// seconds for 52429 bytes-per-second (the time budget ran out).` The stream row says
    /// `Streamed` instead of `Read`; several rounds add `(the median of 12 rounds)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (time, rate) = (
            seconds(self.seconds()),
            significant(self.bytes_per_second().round(), 1),
        );
        let times = if self.passes > 1 {
            format!(" {} times", self.passes)
        } else {
            String::new()
        };
        let verb = match self.method {
            LimitMethod::Loop => "Read",
            LimitMethod::Stream => "Streamed",
        };
        let rounds = if self.rounds > 1 {
            format!(" (the median of {} rounds)", self.rounds)
        } else {
            String::new()
        };
        if self.complete {
            write!(
                f,
                "{verb} a file of {} bytes{times} in {time} seconds for {rate} \
                 bytes-per-second{rounds}.",
                self.file_len
            )
        } else {
            write!(
                f,
                "{verb} {} bytes of a file of {} bytes{times} in {time} seconds for {rate} \
                 bytes-per-second (the time budget ran out).",
                self.bytes, self.file_len
            )
        }
    }
}

/// What one [`Cell`] of a run measured: its tasks making their requests, `repetitions` times,
/// at one request size and capacity.
///
/// The counts of source operations come from the [`CountingSource`](crate::CountingSource)
/// under the reader, so they mean the same for every stream reader. The
/// [read-ahead reader](ReaderKind::BufferedReadAhead) reads the positional form of the
/// source instead, and its counts come from a
/// [`CountingPositional`](abi_testkit::CountingPositional): requests that reach the
/// source, which is what a stream reader's reads are too (one request, one round trip). The
/// [cached reader](ReaderKind::Cached)'s counts are taken under its block cache: the block
/// loads that reached the source, not the lookups the cache answered. With several tasks, the
/// counts are their sums.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CellReport {
    /// The reader, request size, capacity, pattern and tasks.
    pub cell: Cell,
    /// Bytes the readers handed out, over all passes and tasks.
    pub bytes: u64,
    /// Requests made.
    pub requests: u64,
    /// Time from the first request to the end of the last task, seeks between passes
    /// included; opening and positioning the readers is not.
    pub elapsed: Duration,
    /// Per-request latency, sampled (see [`Latency`]).
    pub latency: Option<Latency>,
    /// Completed reads on the source (see
    /// [`StreamCounts::reads`](crate::StreamCounts::reads)); for the read-ahead reader,
    /// requests started on the positional source, read-ahead chunks included, whether or not
    /// they were used (see
    /// [`CountingPositional::requests`](abi_testkit::CountingPositional::requests)).
    pub underlying_reads: u64,
    /// Seeks started on the source; for the read-ahead reader, which has no seeks, requests that
    /// did not start where the previous one ended (see
    /// [`CountingPositional::jumps`](abi_testkit::CountingPositional::jumps)).
    pub underlying_seeks: u64,
    /// Bytes the source returned: more than `bytes` when a window read ahead of the requests,
    /// fewer when a later pass found bytes still in the window.
    pub underlying_bytes: u64,
    /// Blocks the [cached reader](ReaderKind::Cached)'s disk tier served in the timed pass
    /// (memory misses that did not reach the source); `None` without a disk tier
    /// ([`Plan::disk_cache`](crate::Plan::disk_cache)) and for the other readers.
    pub disk_hits: Option<u64>,
    /// Source reads of the verification pass (counted the same way), which was not timed.
    pub verify_reads: u64,
    /// The [`Checksum`](crate::Checksum) of the bytes the verification pass handed out (for
    /// several tasks, of their checksums in task order): with one task, a complete sequential
    /// cell has the limit row's.
    pub checksum: u64,
    /// Why verification failed, if it did: the first byte handed out that differs from the
    /// file, or a timed pass that saw other bytes than its verification pass.
    pub mismatch: Option<Mismatch>,
    /// Why the cell failed, if it did: an error of its timed pass (its figures are then 0) or
    /// of its verification pass, with its causes (`AsyncBufferedInput, 1 B requests, ...:
    /// request at offset 0 (pass 1): ...`). The run goes on after a failed cell.
    pub error: Option<String>,
    /// The time the cell could take (`None`: no limit).
    pub budget: Option<Duration>,
    /// Whether every task made all its requests `repetitions` times. `false` when the time
    /// budget ran out first: the cell then reports what it read until then.
    pub complete: bool,
    /// The read-ahead of the read-ahead reader's cells; `None` for the other readers.
    pub read_ahead: Option<ReadAhead>,
    /// The capacity in bytes of the block cache the
    /// [cached reader](ReaderKind::Cached)'s tasks share (one per cell); `None` for the other
    /// readers.
    pub cache_capacity: Option<u64>,
    /// For the read-ahead and cached readers of a source read through a `Remote` (`--hedge`,
    /// `--max-requests`): the reads its hedged sources
    /// were asked, the hedges they sent and won. `None` otherwise.
    pub(crate) remote: Option<RemoteCounts>,
}

rates!(CellReport, "read");

impl CellReport {
    /// Requests per second.
    pub fn requests_per_second(&self) -> f64 {
        per_second(self.requests, self.elapsed)
    }

    /// Bytes fetched per byte used: the bytes the source returned
    /// ([`underlying_bytes`](Self::underlying_bytes)) over the bytes the requests asked for
    /// ([`bytes`](Self::bytes)). 1 for a reader that fetches only what it is asked; a window
    /// refilled for each 100-byte lookup fetches many times more. `None` for a cell that read
    /// nothing, and for readers whose requests are not counted (OpenDAL's and object_store's).
    pub fn fetched_per_used(&self) -> Option<f64> {
        (self.bytes > 0 && self.cell.reader.counts_source())
            .then(|| self.underlying_bytes as f64 / self.bytes as f64)
    }
}

impl fmt::Display for CellReport {
    /// One line in the manner of the classic test: `AsyncBufferedInput, 100 B requests, 8 KiB
    /// window: read 1048576 bytes in 0.002 seconds for 524288000 bytes-per-second`, with
    /// `(partial: time budget ran out)` at the end of an incomplete cell and the mismatch of one
    /// that failed verification.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: read {} bytes in {} seconds for {} bytes-per-second",
            self.cell,
            self.bytes,
            seconds(self.seconds()),
            significant(self.bytes_per_second().round(), 1)
        )?;
        if let Some(remote) = self.remote {
            write!(
                f,
                " ({} source requests, {} hedges, {} won)",
                remote.store_requests(),
                remote.hedges_fired,
                remote.hedges_won
            )?;
        }
        if !self.complete {
            f.write_str(" (partial: time budget ran out)")?;
        }
        if let Some(mismatch) = &self.mismatch {
            write!(f, " (MISMATCH: {mismatch})")?;
        }
        if let Some(error) = &self.error {
            write!(f, " (FAILED: {error})")?;
        }
        Ok(())
    }
}

/// What the write phase of a run measured: the file written sequentially in buffers of a fixed
/// size, as the classic NFS test did before reading it back.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct WriteReport {
    /// The file written.
    pub path: PathBuf,
    /// Bytes written: the file's length.
    pub bytes: u64,
    /// The size of each write.
    pub buffer_size: usize,
    /// Writes made (`write_all` calls).
    pub writes: u64,
    /// Time from creating the file to `sync_all` returning, so it measures the storage rather
    /// than the page cache.
    pub elapsed: Duration,
}

rates!(WriteReport, "written");

impl fmt::Display for WriteReport {
    /// `Wrote a file of 1048576 bytes in 0.041 seconds for 25575024 bytes-per-second.`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Wrote a file of {} bytes in {} seconds for {} bytes-per-second.",
            self.bytes,
            seconds(self.seconds()),
            significant(self.bytes_per_second().round(), 1)
        )
    }
}

/// `count / elapsed`, 0 for no count, and without dividing by a zero duration.
pub(crate) fn per_second(count: u64, elapsed: Duration) -> f64 {
    if count == 0 {
        return 0.0;
    }
    count as f64 / elapsed.max(Duration::from_nanos(1)).as_secs_f64()
}
