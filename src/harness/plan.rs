use std::fmt;
use std::io::{self, SeekFrom};
use std::time::Duration;

use tokio::io::AsyncSeekExt;

use super::box_source::BoxSource;
use super::cell::Cell;
use super::cell_report::CellReport;
use super::cell_runner::{run_cell, CellSource};
use super::event::Event;
use super::reader_kind::ReaderKind;
use super::report::Report;
use super::source::Source;
use super::write_phase::write_file;
use crate::source::ReadAhead;

/// A description of a throughput run: what to read, at which request sizes, with which window
/// capacities and readers, how many times, within which time budget, and whether to write the
/// file first.
///
/// The run times one cell per (reader, request size, capacity); readers without a window
/// ([`ReaderKind::uses_capacity`]) once per request size. Each cell opens the source afresh,
/// wraps it in a [`CountingSource`](super::CountingSource), puts its reader on top and reads the
/// whole file sequentially, `repetitions` times (seeking back to 0 between passes), in requests
/// of the cell's size, hashing every request into a [`Checksum`](super::Checksum). The
/// [read-ahead reader](ReaderKind::BufferedReadAhead) opens the source's
/// [positional form](Source::open_positional) instead, wraps it in a
/// [`CountingPositionalSource`](super::CountingPositionalSource), and reads it through a
/// [`PositionalReader`](crate::source::PositionalReader) with the plan's
/// [`read_ahead`](Self::read_ahead) under an `AsyncBufferedInput`; that reader asks the source's
/// length before the clock starts, so read-ahead stops at the end of the file.
///
/// # Time budget
///
/// With a [`budget`](Self::budget), a cell stops at the first request that starts after its
/// budget ran out, and reports what it read until then with
/// [`complete`](CellReport::complete) `false`. Unlimited by default. A reader can have a budget
/// of its own ([`reader_budget`](Self::reader_budget)): typically a small one for the unbuffered
/// reader and the byte loop, which take minutes on large files, while the others finish.
///
/// # Examples
///
/// ```
/// use async_buffered_input::harness::{Plan, ReaderKind, Source};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
/// let report = Plan::new(Source::memory(data))
///     .sizes([100, 4096])
///     .capacities([8192])
///     .readers([ReaderKind::Buffered, ReaderKind::Unbuffered])
///     .run()
///     .await?;
///
/// assert_eq!(report.cells.len(), 4);
/// assert!(report.checksums_agree());
/// let buffered = report.get(ReaderKind::Buffered, 100, Some(8192)).unwrap();
/// let unbuffered = report.get(ReaderKind::Unbuffered, 100, None).unwrap();
/// assert_eq!(buffered.bytes, 100_000);
/// assert_eq!(unbuffered.underlying_reads, 1000);
/// assert!(buffered.underlying_reads < 20);
/// println!("{report}");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Plan {
    source: Source,
    // Sorted, without duplicates.
    sizes: Vec<usize>,
    capacities: Vec<usize>,
    // In the order given, without duplicates.
    readers: Vec<ReaderKind>,
    repetitions: u32,
    budget: Option<Duration>,
    // Overrides of `budget`, one per reader at most.
    reader_budgets: Vec<(ReaderKind, Option<Duration>)>,
    read_ahead: ReadAhead,
    write: Option<(u64, usize)>,
}

impl Plan {
    /// The request sizes a new plan times: 1, 8, 100, 1000, 8192 and 65536 bytes.
    pub const DEFAULT_SIZES: [usize; 6] = [1, 8, 100, 1000, 8192, 65536];
    /// The window capacities a new plan times: 8 KiB and 64 KiB.
    pub const DEFAULT_CAPACITIES: [usize; 2] = [8192, 65536];

    /// A plan to read `source` with the default sizes and capacities, every reader, once, with
    /// no time budget, the default [`ReadAhead`], and no write phase.
    pub fn new(source: Source) -> Self {
        Self {
            source,
            sizes: Self::DEFAULT_SIZES.to_vec(),
            capacities: Self::DEFAULT_CAPACITIES.to_vec(),
            readers: ReaderKind::ALL.to_vec(),
            repetitions: 1,
            budget: None,
            reader_budgets: Vec::new(),
            read_ahead: ReadAhead::default(),
            write: None,
        }
    }

    /// The request sizes to time, in bytes (sorted; duplicates dropped).
    #[must_use = "builder methods return the changed plan"]
    pub fn sizes(mut self, sizes: impl IntoIterator<Item = usize>) -> Self {
        self.sizes = sizes.into_iter().collect();
        self.sizes.sort_unstable();
        self.sizes.dedup();
        self
    }

    /// The window capacities to time readers with a window at, in bytes (sorted; duplicates
    /// dropped). Readers without a window are compared with `AsyncBufferedInput` at the first.
    #[must_use = "builder methods return the changed plan"]
    pub fn capacities(mut self, capacities: impl IntoIterator<Item = usize>) -> Self {
        self.capacities = capacities.into_iter().collect();
        self.capacities.sort_unstable();
        self.capacities.dedup();
        self
    }

    /// The readers to compare, in the order given (duplicates dropped).
    #[must_use = "builder methods return the changed plan"]
    pub fn readers(mut self, readers: impl IntoIterator<Item = ReaderKind>) -> Self {
        self.readers.clear();
        for reader in readers {
            if !self.readers.contains(&reader) {
                self.readers.push(reader);
            }
        }
        self
    }

    /// How many times each cell reads the whole file (1 by default).
    #[must_use = "builder methods return the changed plan"]
    pub fn repetitions(mut self, repetitions: u32) -> Self {
        self.repetitions = repetitions;
        self
    }

    /// The time each cell may take, for readers without a
    /// [budget of their own](Self::reader_budget); `None` (the default) for no limit. See
    /// [Time budget](Self#time-budget).
    #[must_use = "builder methods return the changed plan"]
    pub fn budget(mut self, budget: impl Into<Option<Duration>>) -> Self {
        self.budget = budget.into();
        self
    }

    /// The time each cell of `reader` may take, instead of the plan's
    /// [`budget`](Self::budget); `None` for no limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::harness::{Plan, ReaderKind, Source};
    /// use std::time::Duration;
    ///
    /// let plan = Plan::new(Source::file("data.bin"))
    ///     .reader_budget(ReaderKind::Unbuffered, Duration::from_secs(2))
    ///     .reader_budget(ReaderKind::ByteLoop, Duration::from_secs(2));
    /// assert_eq!(plan.budget_for(ReaderKind::Unbuffered), Some(Duration::from_secs(2)));
    /// assert_eq!(plan.budget_for(ReaderKind::Buffered), None);
    /// ```
    #[must_use = "builder methods return the changed plan"]
    pub fn reader_budget(
        mut self,
        reader: ReaderKind,
        budget: impl Into<Option<Duration>>,
    ) -> Self {
        let budget = budget.into();
        match self.reader_budgets.iter_mut().find(|(r, _)| *r == reader) {
            Some((_, b)) => *b = budget,
            None => self.reader_budgets.push((reader, budget)),
        }
        self
    }

    /// The time each cell of `reader` may take: its own budget if it has one, the plan's
    /// otherwise.
    pub fn budget_for(&self, reader: ReaderKind) -> Option<Duration> {
        self.reader_budgets
            .iter()
            .find(|(r, _)| *r == reader)
            .map_or(self.budget, |&(_, budget)| budget)
    }

    /// The read-ahead of the [read-ahead reader](ReaderKind::BufferedReadAhead)
    /// ([`ReadAhead::default`] unless set: 256 KiB chunks, 4 at a time).
    #[must_use = "builder methods return the changed plan"]
    pub fn read_ahead(mut self, read_ahead: ReadAhead) -> Self {
        self.read_ahead = read_ahead;
        self
    }

    /// Writes the source's file first: creates or truncates it and writes `len` bytes of the
    /// [test pattern](super::fill_pattern) in writes of `buffer_size` bytes, timed (up to
    /// `sync_all`) into [`Report::write`]. Needs a source with a [`path`](Source::path).
    #[must_use = "builder methods return the changed plan"]
    pub fn write_first(mut self, len: u64, buffer_size: usize) -> Self {
        self.write = Some((len, buffer_size));
        self
    }

    /// The source.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The cells the run times, in order: for each request size, each capacity with every reader
    /// that has a window, then every reader without one.
    pub fn cells(&self) -> Vec<Cell> {
        let mut cells = Vec::new();
        for &read_size in &self.sizes {
            for &capacity in &self.capacities {
                for &reader in self.readers.iter().filter(|r| r.uses_capacity()) {
                    cells.push(Cell {
                        reader,
                        read_size,
                        capacity: Some(capacity),
                    });
                }
            }
            for &reader in self.readers.iter().filter(|r| !r.uses_capacity()) {
                cells.push(Cell {
                    reader,
                    read_size,
                    capacity: None,
                });
            }
        }
        cells
    }

    /// Checks the plan without doing any I/O.
    ///
    /// # Errors
    ///
    /// `InvalidInput`, with a message saying what is wrong: no request sizes, no readers, a
    /// request size or capacity of 0, no capacities while a reader needs one, 0 repetitions,
    /// the read-ahead reader on a source without a
    /// [positional form](Source::has_positional), or a write phase of 0 bytes, with 0-byte
    /// writes, or on a source without a path.
    pub fn validate(&self) -> io::Result<()> {
        let invalid = |msg: String| Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
        if self.sizes.is_empty() {
            return invalid("no request sizes to time".into());
        }
        if self.sizes.contains(&0) {
            return invalid("request size must be at least 1 byte, got 0".into());
        }
        if self.readers.is_empty() {
            return invalid("no readers to compare".into());
        }
        if self.capacities.contains(&0) {
            return invalid("window capacity must be at least 1 byte, got 0".into());
        }
        if self.capacities.is_empty() && self.readers.iter().any(|r| r.uses_capacity()) {
            return invalid("no window capacities for the readers that have a window".into());
        }
        if self.repetitions == 0 {
            return invalid("repetitions must be at least 1, got 0".into());
        }
        if self.readers.iter().any(|r| r.uses_read_ahead()) && !self.source.has_positional() {
            return invalid(format!(
                "the reader {} ({}) reads a positional source, and {} has none: give it one with \
                 Source::with_positional, or leave the reader out",
                ReaderKind::BufferedReadAhead.name(),
                ReaderKind::BufferedReadAhead.id(),
                self.source.label()
            ));
        }
        if let Some((len, buffer_size)) = self.write {
            if len == 0 {
                return invalid(
                    "the write phase needs a file length of at least 1 byte, got 0".into(),
                );
            }
            if buffer_size == 0 {
                return invalid("the write phase needs writes of at least 1 byte, got 0".into());
            }
            if self.source.path().is_none() {
                return invalid(format!(
                    "the write phase needs a file, and {} has no path",
                    self.source.label()
                ));
            }
        }
        Ok(())
    }

    /// Runs the plan: the write phase if any, then every cell in turn.
    ///
    /// # Errors
    ///
    /// The [`validate`](Self::validate) errors; an empty source (`InvalidInput`); any error
    /// writing the file, opening the source or reading it, with a message naming the file or the
    /// cell and offset.
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
        let file_len = self.file_len().await?;
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
            observe(Event::CellStarted {
                index,
                total,
                cell,
                budget: self.budget_for(cell.reader),
            });
            let source = if cell.reader.uses_read_ahead() {
                CellSource::Positional(self.source.open_positional().await?)
            } else {
                CellSource::Stream(self.open_at_start().await?)
            };
            let budget = self.budget_for(cell.reader);
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

    // ----- private helpers -----

    /// The source's length: a seek to its end.
    async fn file_len(&self) -> io::Result<u64> {
        let mut source = self.source.open().await?;
        source.seek(SeekFrom::End(0)).await.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot find the length of {}: {e}", self.source.label()),
            )
        })
    }

    /// A freshly opened source at offset 0 (the seek is made before counting starts).
    async fn open_at_start(&self) -> io::Result<BoxSource> {
        let mut source = self.source.open().await?;
        source.seek(SeekFrom::Start(0)).await.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot seek {} to 0: {e}", self.source.label()),
            )
        })?;
        Ok(source)
    }
}

impl fmt::Debug for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plan")
            .field("source", &self.source)
            .field("sizes", &self.sizes)
            .field("capacities", &self.capacities)
            .field("readers", &self.readers)
            .field("repetitions", &self.repetitions)
            .field("budget", &self.budget)
            .field("reader_budgets", &self.reader_budgets)
            .field("read_ahead", &self.read_ahead)
            .field("write", &self.write)
            .finish()
    }
}
