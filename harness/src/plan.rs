//! What a run times: the [`Plan`], its [`Cell`]s and the [`ReaderKind`]s it compares.

use std::fmt;
use std::io;
use std::str::FromStr;
use std::time::Duration;

use async_buffered_input::fetch::ReadAhead;

use crate::report::binary_size;
use crate::sources::Source;

/// A description of a throughput run: what to read, at which request sizes, with which window
/// capacities and readers, how many times, within which time budget, and whether to write the
/// file first.
///
/// The run times one cell per (reader, request size, capacity); readers without a window
/// ([`ReaderKind::uses_capacity`]) once per request size. Each cell opens the source afresh,
/// wraps it in a [`CountingSource`](crate::CountingSource), puts its reader on top and reads the
/// whole file sequentially, `repetitions` times (seeking back to 0 between passes), in requests
/// of the cell's size, hashing every request into a [`Checksum`](crate::Checksum). The
/// [read-ahead reader](ReaderKind::BufferedReadAhead) opens the source's
/// [positional form](Source::open_positional) instead, wraps it in a
/// [`CountingPositionalSource`](crate::CountingPositionalSource), and reads it through an
/// `AsyncBufferedInput` over a [`PositionalFetch`](async_buffered_input::fetch::PositionalFetch)
/// with the plan's [`read_ahead`](Self::read_ahead); that input asks the source's length before
/// the clock starts, so read-ahead stops at the end of the file.
///
/// # Time budget
///
/// With a [`budget`](Self::budget), a cell stops at the first request that starts after its
/// budget ran out, and reports what it read until then with
/// [`complete`](crate::CellReport::complete) `false`. Unlimited by default. A reader can have a
/// budget of its own ([`reader_budget`](Self::reader_budget)): typically a small one for the
/// unbuffered reader and the byte loop, which take minutes on large files, while the others
/// finish.
///
/// # Examples
///
/// ```
/// use throughput_harness::{Plan, ReaderKind, Source};
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
    // Read by the run (`run.rs`).
    pub(crate) source: Source,
    // Sorted, without duplicates.
    pub(crate) sizes: Vec<usize>,
    pub(crate) capacities: Vec<usize>,
    // In the order given, without duplicates.
    pub(crate) readers: Vec<ReaderKind>,
    pub(crate) repetitions: u32,
    pub(crate) budget: Option<Duration>,
    // Overrides of `budget`, one per reader at most.
    pub(crate) reader_budgets: Vec<(ReaderKind, Option<Duration>)>,
    pub(crate) read_ahead: ReadAhead,
    // The write phase: the file's length and the size of each write.
    pub(crate) write: Option<(u64, usize)>,
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
    /// use std::time::Duration;
    /// use throughput_harness::{Plan, ReaderKind, Source};
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
    /// [test pattern](crate::fill_pattern) in writes of `buffer_size` bytes, timed (up to
    /// `sync_all`) into [`Report::write`](crate::Report::write). Needs a source with a
    /// [`path`](Source::path).
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

/// One measurement of a run: a reader, a request size and, for readers with a window, a
/// capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    /// The reader.
    pub reader: ReaderKind,
    /// The size of each request, in bytes (the last request of a pass may be shorter).
    pub read_size: usize,
    /// The window's capacity in bytes; `None` for readers without a window
    /// ([`ReaderKind::uses_capacity`]).
    pub capacity: Option<usize>,
}

impl fmt::Display for Cell {
    /// `AsyncBufferedInput, 100 B requests, 8 KiB window`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {} requests",
            self.reader,
            binary_size(self.read_size as u64)
        )?;
        if let Some(capacity) = self.capacity {
            write!(f, ", {} window", binary_size(capacity as u64))?;
        }
        Ok(())
    }
}

/// The readers the harness compares, each reading the file sequentially in requests of a fixed
/// size.
///
/// All but one read a stream source (`AsyncRead + AsyncSeek`) through the same
/// [`CountingSource`](crate::CountingSource). [`BufferedReadAhead`](Self::BufferedReadAhead)
/// reads the source's positional form instead, through a
/// [`CountingPositionalSource`](crate::CountingPositionalSource), since read-ahead needs
/// requests that name their own offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ReaderKind {
    /// [`AsyncBufferedInput`](async_buffered_input::AsyncBufferedInput) over the stream, with
    /// the cell's window capacity, one
    /// [`read_bytes`](async_buffered_input::AsyncBufferedInput::read_bytes) per request.
    Buffered,
    /// [`AsyncBufferedInput`](async_buffered_input::AsyncBufferedInput) with the cell's window
    /// capacity over a [`PositionalFetch`](async_buffered_input::fetch::PositionalFetch) with
    /// the plan's [`ReadAhead`], over the source's
    /// [positional form](Source::open_positional): the window plus read-ahead, one
    /// [`read_bytes`](async_buffered_input::AsyncBufferedInput::read_bytes) per request. Its
    /// source reads are the requests that reach the positional source (chunks, mostly).
    BufferedReadAhead,
    /// tokio's [`BufReader`](tokio::io::BufReader) with the cell's capacity, one
    /// [`read_exact`](tokio::io::AsyncReadExt::read_exact) per request.
    BufReader,
    /// The source itself, one [`read_exact`](tokio::io::AsyncReadExt::read_exact) per request:
    /// every request is at least one source read. Has no window.
    Unbuffered,
    /// tokio's `BufReader` with the cell's capacity, but each request read as one
    /// [`read_u8`](tokio::io::AsyncReadExt::read_u8) per byte: what Lucene's
    /// `BufferedIndexInput.readBytes` did before LUCENE-695.
    ByteLoop,
}

impl ReaderKind {
    /// Every reader, in the order the harness reports them.
    pub const ALL: [ReaderKind; 5] = [
        ReaderKind::Buffered,
        ReaderKind::BufferedReadAhead,
        ReaderKind::BufReader,
        ReaderKind::Unbuffered,
        ReaderKind::ByteLoop,
    ];

    /// A short, stable identifier: `buffered`, `readahead`, `bufreader`, `unbuffered` or
    /// `byteloop`. This is what [`FromStr`] parses and what the JSON report prints.
    pub fn id(self) -> &'static str {
        match self {
            ReaderKind::Buffered => "buffered",
            ReaderKind::BufferedReadAhead => "readahead",
            ReaderKind::BufReader => "bufreader",
            ReaderKind::Unbuffered => "unbuffered",
            ReaderKind::ByteLoop => "byteloop",
        }
    }

    /// The name shown in tables: `AsyncBufferedInput`, `AsyncBufferedInput+RA`,
    /// `tokio BufReader`, `unbuffered`, `byte loop`.
    pub fn name(self) -> &'static str {
        match self {
            ReaderKind::Buffered => "AsyncBufferedInput",
            ReaderKind::BufferedReadAhead => "AsyncBufferedInput+RA",
            ReaderKind::BufReader => "tokio BufReader",
            ReaderKind::Unbuffered => "unbuffered",
            ReaderKind::ByteLoop => "byte loop",
        }
    }

    /// Whether the reader has a window, so that the run times it once per capacity. Readers
    /// without one are timed once per request size.
    pub fn uses_capacity(self) -> bool {
        !matches!(self, ReaderKind::Unbuffered)
    }

    /// Whether the reader reads the source's [positional form](Source::open_positional) with
    /// read-ahead (only [`BufferedReadAhead`](Self::BufferedReadAhead)), rather than its
    /// stream.
    pub fn uses_read_ahead(self) -> bool {
        matches!(self, ReaderKind::BufferedReadAhead)
    }
}

impl fmt::Display for ReaderKind {
    /// Writes the [`name`](Self::name).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ReaderKind {
    type Err = io::Error;

    /// Parses an [`id`](Self::id) or a [`name`](Self::name), ignoring case, spaces, `-` and `_`
    /// (so `byte-loop`, `read-ahead`, `BufReader`, `AsyncBufferedInput` and
    /// `AsyncBufferedInput+RA` all work).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key: String = s
            .chars()
            .filter(|c| !matches!(c, ' ' | '-' | '_'))
            .flat_map(char::to_lowercase)
            .collect();
        let found = ReaderKind::ALL.into_iter().find(|kind| {
            let name: String = kind
                .name()
                .chars()
                .filter(|c| *c != ' ')
                .flat_map(char::to_lowercase)
                .collect();
            key == kind.id() || key == name
        });
        found.ok_or_else(|| {
            let ids: Vec<_> = ReaderKind::ALL.iter().map(|k| k.id()).collect();
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("unknown reader {s:?}: expected one of {}", ids.join(", ")),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_parse_from_ids_and_names() {
        for kind in ReaderKind::ALL {
            assert_eq!(kind.id().parse::<ReaderKind>().unwrap(), kind);
            assert_eq!(kind.name().parse::<ReaderKind>().unwrap(), kind);
            assert_eq!(
                kind.name().to_uppercase().parse::<ReaderKind>().unwrap(),
                kind
            );
        }
        assert_eq!(
            "byte-loop".parse::<ReaderKind>().unwrap(),
            ReaderKind::ByteLoop
        );
        assert_eq!(
            "BufReader".parse::<ReaderKind>().unwrap(),
            ReaderKind::BufReader
        );
        for s in ["read-ahead", "ReadAhead", "asyncbufferedinput+ra"] {
            assert_eq!(
                s.parse::<ReaderKind>().unwrap(),
                ReaderKind::BufferedReadAhead,
                "{s}"
            );
        }
        assert!(ReaderKind::ALL
            .iter()
            .all(|k| k.uses_read_ahead() == (*k == ReaderKind::BufferedReadAhead)));
        let err = "fast".parse::<ReaderKind>().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("\"fast\""), "{err}");
        assert!(
            err.to_string()
                .contains("buffered, readahead, bufreader, unbuffered, byteloop"),
            "{err}"
        );
    }

    #[test]
    fn cells_go_by_size_then_capacity_then_reader() {
        let plan = Plan::new(Source::memory(vec![0u8; 10]))
            .sizes([8, 1])
            .capacities([64, 16])
            .readers([ReaderKind::Unbuffered, ReaderKind::Buffered]);
        let cells: Vec<_> = plan
            .cells()
            .into_iter()
            .map(|c| (c.reader.id(), c.read_size, c.capacity))
            .collect();
        assert_eq!(
            cells,
            [
                ("buffered", 1, Some(16)),
                ("buffered", 1, Some(64)),
                ("unbuffered", 1, None),
                ("buffered", 8, Some(16)),
                ("buffered", 8, Some(64)),
                ("unbuffered", 8, None),
            ]
        );
    }
}
