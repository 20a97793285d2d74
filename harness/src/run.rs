//! Running a plan: the write phase, then each cell in turn (its reader over a counted source,
//! the request loop, the clock and the time budget), and the [`Event`]s that tell an observer
//! where the run is.

use std::fmt;
use std::future::Future;
use std::io::{self, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use async_buffered_input::fetch::{PositionalFetch, ReadAhead, StreamFetch};
use async_buffered_input::AsyncBufferedInput;
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt, BufReader};

use crate::counting::{CountingPositionalSource, CountingSource};
use crate::error::context;
use crate::plan::{Cell, Plan, ReaderKind};
use crate::report::{CellReport, Checksum, Report, WriteReport};
use crate::sources::{BoxPositionalSource, BoxSource};

impl Plan {
    /// Runs the plan: the write phase if any, then every cell in turn.
    ///
    /// # Errors
    ///
    /// The [`validate`](Self::validate) errors; an empty source (`InvalidInput`); any error
    /// writing the file, opening the source or reading it, with a message naming the file or the
    /// cell and offset, and the failure that stopped it as its
    /// [`source()`](std::error::Error::source).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropping the future abandons the run, and a write phase may leave the
    /// file partly written.
    pub async fn run(&self) -> io::Result<Report> {
        self.run_with(|_| {}).await
    }

    /// Like [`run`](Self::run), telling `observe` when each phase and cell starts and ends.
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run).
    ///
    /// # Cancel safety
    ///
    /// As [`run`](Self::run).
    pub async fn run_with(&self, mut observe: impl FnMut(Event<'_>)) -> io::Result<Report> {
        self.validate()?;
        let write = match (self.write, self.source.path()) {
            (Some((len, buffer_size)), Some(path)) => {
                observe(Event::WriteStarted {
                    path,
                    len,
                    buffer_size,
                });
                let report = write_file(path, len, buffer_size).await?;
                observe(Event::WriteFinished(&report));
                Some(report)
            }
            _ => None,
        };
        let file_len = self.source.length().await?;
        if file_len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is empty: nothing to time", self.source.label()),
            ));
        }
        let cells = self.cells();
        let total = cells.len();
        let mut reports: Vec<CellReport> = Vec::with_capacity(total);
        for (index, &cell) in cells.iter().enumerate() {
            let budget = self.budget_for(cell.reader);
            observe(Event::CellStarted {
                index,
                total,
                cell,
                budget,
            });
            let source = if cell.reader.uses_read_ahead() {
                CellSource::Positional(self.source.open_positional().await?)
            } else {
                CellSource::Stream(self.source.open_at_start().await?)
            };
            let report = run_cell(
                cell,
                source,
                file_len,
                self.repetitions,
                budget,
                self.read_ahead,
            )
            .await?;
            observe(Event::CellFinished {
                index,
                total,
                report: &report,
            });
            reports.push(report);
        }
        Ok(Report {
            source: self.source.label().to_string(),
            file_len,
            repetitions: self.repetitions,
            capacities: self.capacities.clone(),
            write,
            cells: reports,
        })
    }
}

/// What a run is doing, as [`Plan::run_with`] tells its observer: enough
/// to drive a progress bar or a log.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Event<'a> {
    /// The write phase is starting.
    WriteStarted {
        /// The file being written.
        path: &'a Path,
        /// Its length.
        len: u64,
        /// The size of each write.
        buffer_size: usize,
    },
    /// The write phase is over.
    WriteFinished(&'a WriteReport),
    /// A cell is starting.
    CellStarted {
        /// Its index in [`Plan::cells`].
        index: usize,
        /// How many cells the run has.
        total: usize,
        /// The cell.
        cell: Cell,
        /// The most the cell will take (the run's time budget), if limited.
        budget: Option<Duration>,
    },
    /// A cell is over.
    CellFinished {
        /// Its index in [`Plan::cells`].
        index: usize,
        /// How many cells the run has.
        total: usize,
        /// What it measured.
        report: &'a CellReport,
    },
}

// ----- the write phase -----

/// Creates (or truncates) `path` and writes `len` bytes of the [test pattern](fill_pattern) in
/// writes of `buffer_size` bytes, timed up to `sync_all`.
async fn write_file(path: &Path, len: u64, buffer_size: usize) -> io::Result<WriteReport> {
    let failed = |what: &str, e: io::Error| context(e, format!("cannot {what} {}", path.display()));
    let mut buf = vec![0u8; buffer_size];
    let start = Instant::now();
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(|e| failed("create", e))?;
    let (mut pos, mut writes) = (0u64, 0u64);
    while pos < len {
        let n = (len - pos).min(buffer_size as u64) as usize;
        fill_pattern(pos, &mut buf[..n]);
        file.write_all(&buf[..n])
            .await
            .map_err(|e| failed("write", e))?;
        pos += n as u64;
        writes += 1;
    }
    file.flush().await.map_err(|e| failed("write", e))?;
    file.sync_all().await.map_err(|e| failed("sync", e))?;
    let elapsed = start.elapsed();
    Ok(WriteReport {
        path: path.to_path_buf(),
        bytes: len,
        buffer_size,
        writes,
        elapsed,
    })
}

/// Fills `buf` with the harness's test pattern for the file offsets `offset..offset + buf.len()`.
///
/// The pattern is a fixed pseudo-random byte stream: byte `n` is byte `n % 8` (little endian) of
/// SplitMix64 applied to `n / 8`. It looks like compressed data (no runs, no repeats), so a
/// reader that returns bytes from the wrong offset changes the checksum, and any slice of it can
/// be generated or checked without the rest. The write phase of a [`Plan`] writes it.
///
/// # Examples
///
/// ```
/// use throughput_harness::fill_pattern;
///
/// let mut whole = [0u8; 20];
/// fill_pattern(0, &mut whole);
/// let mut part = [0u8; 7];
/// fill_pattern(11, &mut part);
/// assert_eq!(part, whole[11..18]);
/// ```
pub fn fill_pattern(offset: u64, buf: &mut [u8]) {
    let mut at = offset;
    let mut rest = buf;
    // The unaligned head, byte by byte.
    while at % 8 != 0 {
        let Some((b, tail)) = rest.split_first_mut() else {
            return;
        };
        *b = word(at / 8).to_le_bytes()[(at % 8) as usize];
        at += 1;
        rest = tail;
    }
    let mut chunks = rest.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&word(at / 8).to_le_bytes());
        at += 8;
    }
    let tail = chunks.into_remainder();
    let len = tail.len();
    tail.copy_from_slice(&word(at / 8).to_le_bytes()[..len]);
}

/// SplitMix64 of `i`.
#[inline]
fn word(i: u64) -> u64 {
    let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

// ----- a cell -----

type Counted = CountingSource<BoxSource>;
type CountedPositional = PositionalFetch<CountingPositionalSource<BoxPositionalSource>>;

/// What a cell reads: the source's stream, or its positional form for the read-ahead reader.
enum CellSource {
    Stream(BoxSource),
    Positional(BoxPositionalSource),
}

/// Reads the `len` bytes of `source` `repetitions` times with the cell's reader, in requests of
/// the cell's size, until done or out of `budget`. `read_ahead` configures the read-ahead
/// reader.
async fn run_cell(
    cell: Cell,
    source: CellSource,
    len: u64,
    repetitions: u32,
    budget: Option<Duration>,
    read_ahead: ReadAhead,
) -> io::Result<CellReport> {
    let capacity = || {
        cell.capacity.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{cell}: no window capacity"),
            )
        })
    };
    let counted = match source {
        CellSource::Stream(source) if !cell.reader.uses_read_ahead() => CountingSource::new(source),
        CellSource::Positional(source) if cell.reader.uses_read_ahead() => {
            let fetch = PositionalFetch::new(CountingPositionalSource::new(source))
                .with_read_ahead(read_ahead);
            let mut input = AsyncBufferedInput::try_with_capacity(capacity()?, fetch)?;
            // Learn the length before the clock starts (one `len`, not a read), as the stream
            // readers' sources are opened and sought to 0 before it: read-ahead then stops at
            // the end instead of asking past it.
            input
                .length()
                .await
                .map_err(|e| context(e, format!("{cell}: cannot find the length")))?;
            let timed = drive(
                BufferedReadAhead(input),
                cell.read_size,
                len,
                repetitions,
                budget,
            )
            .await;
            return report(cell, timed, len, repetitions, budget, Some(read_ahead));
        }
        _ => {
            return Err(io::Error::other(format!(
                "{cell}: the harness opened the wrong form of the source for this reader"
            )))
        }
    };
    let timed = match cell.reader {
        ReaderKind::Buffered => {
            let input = AsyncBufferedInput::try_with_capacity(capacity()?, counted)?;
            drive(Buffered(input), cell.read_size, len, repetitions, budget).await
        }
        ReaderKind::BufReader => {
            let reader = BufReader::with_capacity(capacity()?, counted);
            drive(
                TokioBufReader(reader),
                cell.read_size,
                len,
                repetitions,
                budget,
            )
            .await
        }
        ReaderKind::Unbuffered => {
            drive(
                Unbuffered(counted),
                cell.read_size,
                len,
                repetitions,
                budget,
            )
            .await
        }
        ReaderKind::ByteLoop => {
            let reader = BufReader::with_capacity(capacity()?, counted);
            drive(ByteLoop(reader), cell.read_size, len, repetitions, budget).await
        }
        ReaderKind::BufferedReadAhead => unreachable!("handled with the positional source"),
    };
    report(cell, timed, len, repetitions, budget, None)
}

/// The cell's report from what [`drive`] measured.
fn report(
    cell: Cell,
    timed: io::Result<Timed>,
    len: u64,
    repetitions: u32,
    budget: Option<Duration>,
    read_ahead: Option<ReadAhead>,
) -> io::Result<CellReport> {
    let timed = timed.map_err(|e| context(e, cell.to_string()))?;
    let counts = &timed.counts;
    Ok(CellReport {
        cell,
        bytes: timed.bytes,
        requests: timed.requests,
        elapsed: timed.elapsed,
        underlying_reads: counts.reads,
        underlying_seeks: counts.seeks,
        underlying_bytes: counts.bytes,
        checksum: timed.checksum.finish(),
        budget,
        complete: timed.bytes == len * u64::from(repetitions),
        read_ahead,
    })
}

/// What [`drive`] measured.
struct Timed {
    bytes: u64,
    requests: u64,
    elapsed: Duration,
    checksum: Checksum,
    counts: Counts,
}

/// What the source under a reader saw (see [`CellReport`]'s `underlying_*` fields).
struct Counts {
    reads: u64,
    seeks: u64,
    bytes: u64,
}

impl Counts {
    fn of_stream(counted: &Counted) -> Self {
        Self {
            reads: counted.reads(),
            seeks: counted.seeks(),
            bytes: counted.bytes(),
        }
    }
}

/// A reader as the harness drives it: one request at a time, and back to offset 0 between
/// passes.
trait RequestReader {
    /// Fills `buf` with the next `buf.len()` bytes.
    fn read_request(&mut self, buf: &mut [u8]) -> impl Future<Output = io::Result<()>> + Send;
    /// Goes back to offset 0.
    fn rewind(&mut self) -> impl Future<Output = io::Result<()>> + Send;
    /// What the counted source under the reader saw.
    fn counts(&self) -> Counts;
}

/// The request loop, the same for every reader: the clock and the budget around it, the
/// checksum after each request.
async fn drive<R: RequestReader>(
    mut reader: R,
    size: usize,
    len: u64,
    repetitions: u32,
    budget: Option<Duration>,
) -> io::Result<Timed> {
    let mut buf = vec![0u8; size];
    let mut checksum = Checksum::new();
    let (mut bytes, mut requests) = (0u64, 0u64);
    let start = Instant::now();
    let mut budget = Budget::starting_now(budget);
    'passes: for pass in 0..repetitions {
        if pass > 0 {
            reader.rewind().await?;
        }
        let mut pos = 0u64;
        while pos < len {
            if budget.exhausted() {
                break 'passes;
            }
            let n = (len - pos).min(size as u64) as usize;
            let request = &mut buf[..n];
            reader
                .read_request(request)
                .await
                .map_err(|e| context(e, format!("request at offset {pos} (pass {})", pass + 1)))?;
            checksum.update(request);
            pos += n as u64;
            bytes += n as u64;
            requests += 1;
        }
    }
    let elapsed = start.elapsed();
    Ok(Timed {
        bytes,
        requests,
        elapsed,
        checksum,
        counts: reader.counts(),
    })
}

struct Buffered(AsyncBufferedInput<StreamFetch<Counted>>);

impl RequestReader for Buffered {
    fn read_request(&mut self, buf: &mut [u8]) -> impl Future<Output = io::Result<()>> + Send {
        self.0.read_bytes(buf)
    }

    fn rewind(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        self.0.seek_to(0);
        std::future::ready(Ok(()))
    }

    fn counts(&self) -> Counts {
        Counts::of_stream(self.0.get_ref())
    }
}

struct BufferedReadAhead(AsyncBufferedInput<CountedPositional>);

impl RequestReader for BufferedReadAhead {
    fn read_request(&mut self, buf: &mut [u8]) -> impl Future<Output = io::Result<()>> + Send {
        self.0.read_bytes(buf)
    }

    fn rewind(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        self.0.seek_to(0);
        std::future::ready(Ok(()))
    }

    /// Requests to the positional source, the requests that did not continue the previous one
    /// (a positional source has no seeks), and the bytes it returned.
    fn counts(&self) -> Counts {
        let counted = self.0.fetch().get_ref();
        Counts {
            reads: counted.requests(),
            seeks: counted.jumps(),
            bytes: counted.bytes(),
        }
    }
}

struct TokioBufReader(BufReader<Counted>);

impl RequestReader for TokioBufReader {
    async fn read_request(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.0.read_exact(buf).await.map(drop)
    }

    async fn rewind(&mut self) -> io::Result<()> {
        self.0.seek(SeekFrom::Start(0)).await.map(drop)
    }

    fn counts(&self) -> Counts {
        Counts::of_stream(self.0.get_ref())
    }
}

struct Unbuffered(Counted);

impl RequestReader for Unbuffered {
    async fn read_request(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.0.read_exact(buf).await.map(drop)
    }

    async fn rewind(&mut self) -> io::Result<()> {
        self.0.seek(SeekFrom::Start(0)).await.map(drop)
    }

    fn counts(&self) -> Counts {
        Counts::of_stream(&self.0)
    }
}

struct ByteLoop(BufReader<Counted>);

impl RequestReader for ByteLoop {
    async fn read_request(&mut self, buf: &mut [u8]) -> io::Result<()> {
        for b in buf.iter_mut() {
            *b = self.0.read_u8().await?;
        }
        Ok(())
    }

    async fn rewind(&mut self) -> io::Result<()> {
        self.0.seek(SeekFrom::Start(0)).await.map(drop)
    }

    fn counts(&self) -> Counts {
        Counts::of_stream(self.0.get_ref())
    }
}

/// A cell's time budget, checked before every request without reading the clock every time.
///
/// Reading the clock costs about as much as a 1-byte request served from a window, so the check
/// reads it every `stride` calls and adapts `stride` to keep about [`TARGET`] between reads: it
/// doubles while the calls between two reads took less than half of that, and halves while they
/// took more than twice that. So fast loops pay ~nothing and slow ones (one network round trip a
/// request) overshoot their deadline by about one request.
struct Budget {
    deadline: Option<Instant>,
    // Invariants: `1 <= stride <= MAX_STRIDE`; `countdown <= stride`.
    stride: u32,
    countdown: u32,
    last: Instant,
}

/// The time the budget aims to let pass between two reads of the clock.
const TARGET: Duration = Duration::from_micros(100);
const MAX_STRIDE: u32 = 1 << 14;

impl Budget {
    /// A budget of `limit` from now; `None` never runs out.
    fn starting_now(limit: Option<Duration>) -> Self {
        let now = Instant::now();
        Self {
            deadline: limit.map(|limit| now + limit),
            stride: 1,
            countdown: 1,
            last: now,
        }
    }

    /// Whether the budget has run out. Call it once before each request.
    #[inline]
    fn exhausted(&mut self) -> bool {
        let Some(deadline) = self.deadline else {
            return false;
        };
        self.countdown -= 1;
        if self.countdown > 0 {
            return false;
        }
        let now = Instant::now();
        let took = now - self.last;
        self.last = now;
        if took < TARGET / 2 {
            self.stride = (self.stride * 2).min(MAX_STRIDE);
        } else if took > TARGET * 2 {
            self.stride = (self.stride / 2).max(1);
        }
        self.countdown = self.stride;
        debug_assert!(self.stride >= 1 && self.countdown <= self.stride);
        now >= deadline
    }
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budget")
            .field(
                "left",
                &self
                    .deadline
                    .map(|d| d.saturating_duration_since(Instant::now())),
            )
            .field("stride", &self.stride)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_slice_matches_the_whole() {
        let mut whole = vec![0u8; 100];
        fill_pattern(0, &mut whole);
        for start in 0..40 {
            for len in [0, 1, 5, 8, 9, 17, 60] {
                let mut part = vec![0u8; len];
                fill_pattern(start as u64, &mut part);
                assert_eq!(part, whole[start..start + len], "start {start} len {len}");
            }
        }
    }

    #[test]
    fn has_no_obvious_structure() {
        let mut data = vec![0u8; 4096];
        fill_pattern(0, &mut data);
        let mut counts = [0u32; 256];
        for &b in &data {
            counts[b as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 0 && c < 50), "{counts:?}");
        assert_ne!(data[..8], data[8..16]);
    }

    #[test]
    fn no_limit_never_runs_out() {
        let mut budget = Budget::starting_now(None);
        assert!((0..100_000).all(|_| !budget.exhausted()));
    }

    #[test]
    fn zero_runs_out_at_the_first_check() {
        let mut budget = Budget::starting_now(Some(Duration::ZERO));
        assert!(budget.exhausted());
    }

    #[test]
    fn fast_loops_stop_soon_after_the_deadline() {
        let limit = Duration::from_millis(20);
        let start = Instant::now();
        let mut budget = Budget::starting_now(Some(limit));
        let mut calls = 0u64;
        while !budget.exhausted() {
            calls += 1;
        }
        let took = start.elapsed();
        assert!(took >= limit, "{took:?}");
        assert!(
            took < limit + Duration::from_millis(500),
            "{took:?} after {calls} calls"
        );
        assert!(budget.stride > 1);
    }

    #[test]
    fn slow_loops_read_the_clock_every_call() {
        let mut budget = Budget::starting_now(Some(Duration::from_millis(30)));
        let start = Instant::now();
        while !budget.exhausted() {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(budget.stride, 1);
        assert!(start.elapsed() < Duration::from_millis(30 + 500));
    }
}
