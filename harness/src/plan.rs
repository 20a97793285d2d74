//! What a run times: the [`Plan`], its [`Cell`]s and the [`ReaderKind`]s it compares.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use async_buffered_input::ReadAhead;

use crate::sources::Source;
use crate::units::binary_size;
use crate::workload::{Pattern, Requests};

/// A description of a throughput run: which sources to read, with which access patterns and
/// numbers of concurrent tasks, at which request sizes, with which window capacities and
/// readers, how many times, within which time budget, and whether to write the files first.
///
/// For each source in turn, a run
///
/// 1. writes the file first if the plan says so and the source has a local [path](Source::path)
///    (the write phase, timed: [`write_first`](Self::write_first));
/// 2. times the source's *limit*: one sequential pass of 1 MiB reads straight from the source,
///    the `dd bs=1M` of that backend, and one streaming read of the whole file through the
///    source's own streaming call (the stream row, where the source has one); the faster is
///    the limit every reader's figure is then a fraction of. With a
///    [time floor](Self::limit_floor), both are timed again until it has passed;
/// 3. times one cell per (pattern, tasks, request size, capacity, reader); readers without a
///    window (`ReaderKind::uses_capacity`) once per request size.
///
/// Each cell opens the source afresh for each of its tasks, wraps it in a
/// [`CountingSource`](crate::CountingSource), puts its reader on top and makes its
/// [requests](Pattern) `repetitions` times; the timed loop only looks at each request (its
/// first and last byte, as a reader's user would). The
/// [read-ahead reader](ReaderKind::BufferedReadAhead) opens the source's
/// [positional form](Source::open_positional) once per cell, shared by the cell's tasks, and
/// reads it through an `AsyncBufferedInput` over a
/// [`PositionalFetch`](async_buffered_input::PositionalFetch) with the cell's
/// [read-ahead shape](Self::read_aheads) and a
/// [`CountingPositional`](abi_testkit::CountingPositional) per task; that input asks the
/// source's length before the clock starts, so read-ahead stops at the end of the file.
///
/// The [cached reader](ReaderKind::Cached), which [`new`](Self::new) leaves out, reads the
/// positional form through one
/// [`BlockCache`](async_buffered_input::cache::BlockCache) per cell, shared by the cell's
/// tasks, of [`cache_capacity`](Self::cache_capacity) bytes in blocks of the cell's window
/// capacity. The cache is made afresh for every cell (and for its verification pass), so cells
/// do not warm each other: the first pass of a cell starts cold, and with
/// [`repetitions`](Self::repetitions) above 1 the later passes find what the earlier ones
/// cached (warm passes). Its counts are what reaches the source under the cache: block loads.
///
/// # Verification
///
/// After its timed pass, every cell (and the limit row) is read again by fresh readers making
/// the same requests, untimed, and every byte they hand out is compared with the truth: the
/// harness's [pattern](abi_testkit::fill_word_pattern) when the run wrote the file or the limit row found
/// the file to hold it, the source read straight otherwise. The verification pass also folds
/// the first and last byte of every request as the timed pass did, so a timed pass that saw
/// other bytes fails too. See [`CellReport::mismatch`](crate::CellReport::mismatch).
///
/// # Time budget
///
/// With a [`budget`](Self::budget), a cell stops at the first request that starts after its
/// budget ran out (checked every ~100 µs), and reports what it read until then with
/// [`complete`](crate::CellReport::complete) `false`; its verification pass makes the same
/// requests. Unlimited by default. A reader can have a budget of its own
/// ([`reader_budget`](Self::reader_budget)): typically a small one for the unbuffered reader
/// and the byte loop, which take minutes on large files, while the others finish. The limit
/// row has the plan's budget.
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
/// let memory = &report.sources[0];
/// assert_eq!(memory.cells.len(), 4);
/// assert!(report.verified());
/// let buffered = memory.get(ReaderKind::Buffered, 100, Some(8192)).unwrap();
/// let unbuffered = memory.get(ReaderKind::Unbuffered, 100, None).unwrap();
/// assert_eq!(buffered.bytes, 100_000);
/// assert_eq!(unbuffered.underlying_reads, 1000);
/// assert!(buffered.underlying_reads < 20);
/// println!("{report}");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Plan {
    // Read by the run (`run.rs`).
    pub(crate) sources: Vec<Source>,
    // In the order given, without duplicates.
    pub(crate) patterns: Vec<Pattern>,
    // Sorted, without duplicates.
    pub(crate) tasks: Vec<usize>,
    pub(crate) sizes: Vec<usize>,
    pub(crate) capacities: Vec<usize>,
    // In the order given, without duplicates.
    pub(crate) readers: Vec<ReaderKind>,
    pub(crate) repetitions: u32,
    pub(crate) budget: Option<Duration>,
    // The time the limit rows are timed for at least, in rounds of whole passes.
    pub(crate) limit_floor: Option<Duration>,
    // Overrides of `budget`, one per reader at most.
    pub(crate) reader_budgets: Vec<(ReaderKind, Option<Duration>)>,
    // The read-ahead reader's shapes: in the order given, without duplicates.
    pub(crate) read_aheads: Vec<ReadAhead>,
    pub(crate) cache_capacity: u64,
    pub(crate) disk_cache: Option<DiskCacheSpec>,
    pub(crate) seed: u64,
    pub(crate) random_requests: Option<u64>,
    // The write phase: the file's length and the size of each write.
    pub(crate) write: Option<(u64, usize)>,
}

impl Plan {
    /// The request sizes a new plan times: 1, 8, 100, 1000, 8192 and 65536 bytes.
    pub const DEFAULT_SIZES: [usize; 6] = [1, 8, 100, 1000, 8192, 65536];
    /// The window capacities a new plan times: 8 KiB and 64 KiB.
    pub const DEFAULT_CAPACITIES: [usize; 2] = [8192, 65536];
    /// The seed of a new plan's random, clustered and term-lookup patterns.
    pub const DEFAULT_SEED: u64 = 1;
    /// The capacity of the [cached reader](ReaderKind::Cached)'s block cache in a new plan:
    /// 256 MiB, enough to hold the hot part of a file of some gigabytes.
    pub const DEFAULT_CACHE_CAPACITY: u64 = 256 << 20;

    /// A plan to read `source` sequentially with one task, the default sizes and capacities,
    /// the [default readers](ReaderKind::DEFAULT) (all but the cached one), once, with no time
    /// budget, the default [`ReadAhead`], and no write phase.
    pub fn new(source: Source) -> Self {
        Self::over([source])
    }

    /// Like [`new`](Self::new), over several sources, timed one after the other in the order
    /// given.
    pub fn over(sources: impl IntoIterator<Item = Source>) -> Self {
        Self {
            sources: sources.into_iter().collect(),
            patterns: vec![Pattern::Sequential],
            tasks: vec![1],
            sizes: Self::DEFAULT_SIZES.to_vec(),
            capacities: Self::DEFAULT_CAPACITIES.to_vec(),
            readers: ReaderKind::DEFAULT.to_vec(),
            repetitions: 1,
            budget: None,
            limit_floor: None,
            reader_budgets: Vec::new(),
            read_aheads: vec![ReadAhead::default()],
            cache_capacity: Self::DEFAULT_CACHE_CAPACITY,
            disk_cache: None,
            seed: Self::DEFAULT_SEED,
            random_requests: None,
            write: None,
        }
    }

    /// The access patterns to time, in the order given (duplicates dropped); sequential only by
    /// default.
    #[must_use = "builder methods return the changed plan"]
    pub fn patterns(mut self, patterns: impl IntoIterator<Item = Pattern>) -> Self {
        self.patterns = in_order(patterns);
        self
    }

    /// The numbers of concurrent tasks to time each cell with (sorted; duplicates dropped); 1
    /// by default. A cell of N tasks runs N readers at once over the same source, each with its
    /// own share of the requests: a sequential pass splits the file into N contiguous parts, a
    /// random one splits its requests. The tasks are spawned on the runtime the plan runs on:
    /// on a multi-threaded runtime they run in parallel.
    #[must_use = "builder methods return the changed plan"]
    pub fn tasks(mut self, tasks: impl IntoIterator<Item = usize>) -> Self {
        self.tasks = sorted(tasks);
        self
    }

    /// The seed of the random, clustered and term-lookup patterns
    /// ([`DEFAULT_SEED`](Self::DEFAULT_SEED) unless set): the same seed makes the same requests
    /// in every run.
    #[must_use = "builder methods return the changed plan"]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Requests per pass of a random, clustered or term-lookup cell, all tasks together; `None`
    /// (the default) for as many as would read the file once, at most 10 000.
    #[must_use = "builder methods return the changed plan"]
    pub fn random_requests(mut self, requests: impl Into<Option<u64>>) -> Self {
        self.random_requests = requests.into();
        self
    }

    /// The request sizes to time, in bytes (sorted; duplicates dropped).
    #[must_use = "builder methods return the changed plan"]
    pub fn sizes(mut self, sizes: impl IntoIterator<Item = usize>) -> Self {
        self.sizes = sorted(sizes);
        self
    }

    /// The window capacities to time readers with a window at, in bytes (sorted; duplicates
    /// dropped). Readers without a window are compared with `AsyncBufferedInput` at the first.
    #[must_use = "builder methods return the changed plan"]
    pub fn capacities(mut self, capacities: impl IntoIterator<Item = usize>) -> Self {
        self.capacities = sorted(capacities);
        self
    }

    /// The readers to compare, in the order given (duplicates dropped). None at all is a plan
    /// of the write phase and the limit row only: the classic test's two lines per source.
    #[must_use = "builder methods return the changed plan"]
    pub fn readers(mut self, readers: impl IntoIterator<Item = ReaderKind>) -> Self {
        self.readers = in_order(readers);
        self
    }

    /// How many times each cell makes its requests (1 by default).
    #[must_use = "builder methods return the changed plan"]
    pub fn repetitions(mut self, repetitions: u32) -> Self {
        self.repetitions = repetitions;
        self
    }

    /// The time each cell may take, for readers without a
    /// [budget of their own](Self::reader_budget), and the limit row's; `None` (the default)
    /// for no limit. See [Time budget](Self#time-budget).
    #[must_use = "builder methods return the changed plan"]
    pub fn budget(mut self, budget: impl Into<Option<Duration>>) -> Self {
        self.budget = budget.into();
        self
    }

    /// The time the limit rows (the loop of 1 MiB reads and the stream) are timed for at least:
    /// their passes are timed again, whole, in rounds, until it has passed, within the plan's
    /// [`budget`](Self::budget), and each row reports its median round. `None` (the default)
    /// times one round: a fast source then gives a figure of a few milliseconds, which a shared
    /// machine can halve. (The command line's `--limit-floor` is 500 ms by default.)
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use throughput_harness::{Plan, Source};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let report = Plan::new(Source::memory(vec![7u8; 1 << 20]))
    ///     .sizes([4096])
    ///     .capacities([8192])
    ///     .limit_floor(Duration::from_millis(20))
    ///     .run()
    ///     .await?;
    /// let memory = &report.sources[0];
    /// assert!(memory.limit.rounds > 1);
    /// assert_eq!(memory.limit.bytes, 1 << 20, "the figures are one round's");
    /// # Ok(())
    /// # }
    /// ```
    #[must_use = "builder methods return the changed plan"]
    pub fn limit_floor(mut self, floor: impl Into<Option<Duration>>) -> Self {
        self.limit_floor = floor.into();
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
    /// ([`ReadAhead::default`] unless set: adaptive, from 64 KiB chunks 2 at a time up to 4 MiB
    /// chunks 4 at a time): [`read_aheads`](Self::read_aheads) with one shape.
    #[must_use = "builder methods return the changed plan"]
    pub fn read_ahead(self, read_ahead: ReadAhead) -> Self {
        self.read_aheads([read_ahead])
    }

    /// The read-ahead shapes to time the [read-ahead reader](ReaderKind::BufferedReadAhead)
    /// with, in the order given (duplicates dropped): one cell per shape wherever the reader
    /// has one, so that the adaptive default and fixed shapes are compared in one run.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::ReadAhead;
    /// use throughput_harness::{Plan, ReaderKind, Source};
    ///
    /// let plan = Plan::new(Source::memory(vec![0u8; 10]))
    ///     .sizes([65536])
    ///     .capacities([8192])
    ///     .readers([ReaderKind::BufferedReadAhead])
    ///     .read_aheads([ReadAhead::default(), ReadAhead::new(256 << 10, 4)]);
    /// let shapes: Vec<_> = plan.cells().iter().map(|c| c.read_ahead).collect();
    /// assert_eq!(shapes, [Some(ReadAhead::default()), Some(ReadAhead::new(256 << 10, 4))]);
    /// ```
    #[must_use = "builder methods return the changed plan"]
    pub fn read_aheads(mut self, shapes: impl IntoIterator<Item = ReadAhead>) -> Self {
        self.read_aheads = in_order(shapes);
        self
    }

    /// The most bytes the [cached reader](ReaderKind::Cached)'s block cache holds, in each
    /// cell ([`DEFAULT_CACHE_CAPACITY`](Self::DEFAULT_CACHE_CAPACITY) unless set). It should
    /// hold many windows: a block larger than the capacity is never kept.
    #[must_use = "builder methods return the changed plan"]
    pub fn cache_capacity(mut self, capacity: u64) -> Self {
        self.cache_capacity = capacity;
        self
    }

    /// Puts a [`DiskTier`](async_buffered_input::cache::DiskTier) of `capacity` bytes in
    /// `dir` under the [cached reader](ReaderKind::Cached)'s memory cache (Unix), kept across
    /// cells and runs: the blocks a run wrote serve the next one, as after a restart. The
    /// tier of each window size lives in its own subfolder (`dir/block-8192`, ...), each of
    /// `capacity` bytes; blocks are kept under the source's name (its path or URL).
    #[must_use = "builder methods return the changed plan"]
    pub fn disk_cache(mut self, dir: impl Into<PathBuf>, capacity: u64) -> Self {
        self.disk_cache = Some(DiskCacheSpec {
            dir: dir.into(),
            capacity,
        });
        self
    }

    /// Writes each source's file first, for the sources that have a local
    /// [`path`](Source::path) (the others are read as they are): creates or truncates it and
    /// writes `len` bytes of the [test pattern](abi_testkit::fill_word_pattern) in writes of `buffer_size`
    /// bytes, timed (up to `sync_all`) into [`SourceReport::write`](crate::SourceReport::write).
    #[must_use = "builder methods return the changed plan"]
    pub fn write_first(mut self, len: u64, buffer_size: usize) -> Self {
        self.write = Some((len, buffer_size));
        self
    }

    /// The sources, in the order they are timed.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// The names the report gives the sources: each source's [`name`](Source::name), with
    /// `#2`, `#3`, ... after the second and later sources of the same name.
    pub(crate) fn source_names(&self) -> Vec<String> {
        let names: Vec<String> = self.sources.iter().map(Source::name).collect();
        names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let earlier = names[..i].iter().filter(|n| *n == name).count();
                if earlier == 0 {
                    name.clone()
                } else {
                    format!("{name}#{}", earlier + 1)
                }
            })
            .collect()
    }

    /// The cells the run times for each source, in order: for each pattern, each number of
    /// tasks and each request size, each capacity with every reader that has a window (the
    /// read-ahead reader once per [shape](Self::read_aheads)), then every reader without one.
    pub fn cells(&self) -> Vec<Cell> {
        let mut cells = Vec::new();
        for &pattern in &self.patterns {
            for &tasks in &self.tasks {
                for &read_size in &self.sizes {
                    let mut push = |reader: ReaderKind, capacity| {
                        let cell = |read_ahead| Cell {
                            reader,
                            read_size,
                            capacity,
                            pattern,
                            tasks,
                            read_ahead,
                        };
                        if reader.uses_read_ahead() {
                            cells.extend(self.read_aheads.iter().map(|&r| cell(Some(r))));
                        } else {
                            cells.push(cell(None));
                        }
                    };
                    for &capacity in &self.capacities {
                        for &reader in self.readers.iter().filter(|r| r.uses_capacity()) {
                            push(reader, Some(capacity));
                        }
                    }
                    for &reader in self.readers.iter().filter(|r| !r.uses_capacity()) {
                        push(reader, None);
                    }
                }
            }
        }
        cells
    }

    /// The requests the run makes in one pass of `cell` over a file of `file_len` bytes, with
    /// this plan's [`seed`](Self::seed) and [`random_requests`](Self::random_requests): for each
    /// of the cell's tasks, its `(offset, length)` requests in order. Every reader of the cell,
    /// and its verification pass, makes exactly these. Empty for an empty file, a request size
    /// of 0 or no tasks.
    ///
    /// # Examples
    ///
    /// ```
    /// use throughput_harness::{Cell, Pattern, Plan, ReaderKind, Source};
    ///
    /// let plan = Plan::new(Source::memory(vec![0u8; 10])).random_requests(1000);
    /// let mut cell = Cell::new(ReaderKind::Buffered, 100, Some(8192));
    /// cell.pattern = Pattern::Terms { s_milli: 1100 };
    /// cell.tasks = 4;
    /// let requests = plan.requests(&cell, 64 << 20);
    /// assert_eq!(requests.len(), 4);
    /// assert_eq!(requests.iter().map(Vec::len).sum::<usize>(), 1000);
    /// assert!(requests.iter().flatten().all(|&(offset, len)| len == 100 && offset + 100 <= 64 << 20));
    /// ```
    pub fn requests(&self, cell: &Cell, file_len: u64) -> Vec<Vec<(u64, usize)>> {
        if file_len == 0 || cell.read_size == 0 || cell.tasks == 0 {
            return vec![Vec::new(); cell.tasks];
        }
        let requests = self.requests_of(cell, file_len);
        (0..cell.tasks)
            .map(|task| requests.walk(task).collect())
            .collect()
    }

    /// The seeded requests of `cell` over a file of `file_len` bytes: what its timed pass and
    /// its verification make.
    pub(crate) fn requests_of(&self, cell: &Cell, file_len: u64) -> Requests {
        Requests::new(
            cell.pattern,
            file_len,
            cell.read_size,
            self.seed,
            self.random_requests,
            cell.tasks,
        )
    }

    /// Checks the plan without doing any I/O.
    ///
    /// # Errors
    ///
    /// `InvalidInput`, with a message saying what is wrong: no sources, no request sizes, no
    /// patterns, a request size, capacity or number of tasks of 0, no capacities while a reader
    /// needs one, 0 repetitions, 0 random requests, the read-ahead or cached reader on a source
    /// without a [positional form](Source::has_positional), the cached reader with a cache
    /// capacity smaller than a window (or a window over 4 GiB, the largest block), or a write
    /// phase of 0 bytes, with 0-byte writes, or where no source has a path.
    pub fn validate(&self) -> io::Result<()> {
        let invalid = |msg: String| Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
        if self.sources.is_empty() {
            return invalid("no sources to time".into());
        }
        if self.sizes.is_empty() {
            return invalid("no request sizes to time".into());
        }
        if self.sizes.contains(&0) {
            return invalid("request size must be at least 1 byte, got 0".into());
        }
        if self.patterns.is_empty() {
            return invalid("no access patterns to time".into());
        }
        if self.tasks.is_empty() || self.tasks.contains(&0) {
            return invalid("a cell needs at least 1 task, got 0".into());
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
        if self.read_aheads.is_empty() && self.readers.iter().any(|r| r.uses_read_ahead()) {
            return invalid("no read-ahead shapes for the read-ahead reader".into());
        }
        if self.random_requests == Some(0) {
            return invalid("random and clustered passes need at least 1 request, got 0".into());
        }
        if let Some(&reader) = self.readers.iter().find(|r| r.uses_positional()) {
            if let Some(source) = self.sources.iter().find(|s| !s.has_positional()) {
                return invalid(format!(
                    "the reader {} ({}) reads a positional source, and {} has none: give it one \
                     with Source::with_positional, or leave the reader out",
                    reader.name(),
                    reader.id(),
                    source.label()
                ));
            }
        }
        if self.readers.contains(&ReaderKind::ObjectStoreBufReader) {
            if let Some(source) = self.sources.iter().find(|s| !s.is_remote_store()) {
                return invalid(format!(
                    "the reader {} ({}) reads object-store URLs (http://, https://, s3://), and \
                     {} is not one: time it in a run of its own, or leave the reader out",
                    ReaderKind::ObjectStoreBufReader.name(),
                    ReaderKind::ObjectStoreBufReader.id(),
                    source.label()
                ));
            }
        }
        if let Some(&reader) = self.readers.iter().find(|r| r.uses_opendal()) {
            if let Some(source) = self.sources.iter().find(|s| !s.is_opendal()) {
                return invalid(format!(
                    "the reader {} ({}) reads OpenDAL locations (ftp://, webdav://), and {} is \
                     not one: time it in a run of its own, or leave the reader out",
                    reader.name(),
                    reader.id(),
                    source.label()
                ));
            }
        }
        if self.readers.contains(&ReaderKind::Cached) {
            let largest = self.capacities.iter().copied().max().unwrap_or(0);
            if u32::try_from(largest).is_err() {
                return invalid(format!(
                    "the cached reader reads blocks of a window, at most 4 GiB, not {}",
                    binary_size(largest as u64)
                ));
            }
            if self.cache_capacity < largest as u64 {
                return invalid(format!(
                    "the cached reader's cache of {} cannot hold one block of a {} window",
                    binary_size(self.cache_capacity),
                    binary_size(largest as u64)
                ));
            }
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
            if self.sources.iter().all(|s| s.path().is_none()) {
                let labels: Vec<&str> = self.sources.iter().map(Source::label).collect();
                return invalid(format!(
                    "the write phase needs a file, and {} {} no path",
                    labels.join(", "),
                    if labels.len() == 1 { "has" } else { "have" }
                ));
            }
        }
        Ok(())
    }
}

/// Where and how large the [cached reader](ReaderKind::Cached)'s disk tier is (see
/// [`Plan::disk_cache`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DiskCacheSpec {
    pub(crate) dir: PathBuf,
    pub(crate) capacity: u64,
}

/// One measurement of a run over a source: a reader, a request size and, for readers with a
/// window, a capacity, with an access pattern and a number of concurrent tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Cell {
    /// The reader.
    pub reader: ReaderKind,
    /// The size of each request, in bytes (the last request of a sequential pass may be
    /// shorter).
    pub read_size: usize,
    /// The window's capacity in bytes; `None` for readers without a window
    /// (`ReaderKind::uses_capacity`).
    pub capacity: Option<usize>,
    /// The order the requests visit the file in.
    pub pattern: Pattern,
    /// Readers running at once, each with its own share of the requests.
    pub tasks: usize,
    /// The read-ahead shape of the [read-ahead reader](ReaderKind::BufferedReadAhead) (one of
    /// the plan's [`read_aheads`](Plan::read_aheads)); `None` for the other readers.
    pub read_ahead: Option<ReadAhead>,
}

impl Cell {
    /// A cell of one task reading sequentially.
    pub fn new(reader: ReaderKind, read_size: usize, capacity: Option<usize>) -> Self {
        Self {
            reader,
            read_size,
            capacity,
            pattern: Pattern::Sequential,
            tasks: 1,
            read_ahead: reader.uses_read_ahead().then(ReadAhead::default),
        }
    }
}

impl Cell {
    /// The label of the cell's row: the reader's [name](ReaderKind::name), and the read-ahead
    /// shape unless it is the default (`AsyncBufferedInput+RA 256KiBx4`).
    pub(crate) fn reader_label(&self) -> String {
        match self.read_ahead {
            Some(shape) if shape != ReadAhead::default() => {
                format!("{} {}", self.reader.name(), shape_name(shape))
            }
            _ => self.reader.name().to_string(),
        }
    }
}

impl fmt::Display for Cell {
    /// `AsyncBufferedInput, 100 B requests, 8 KiB window`, with the pattern and the tasks when
    /// they are not sequential and 1: `tokio BufReader, 4 KiB random requests, 64 KiB window, 4
    /// tasks`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.reader, binary_size(self.read_size as u64))?;
        match self.pattern {
            Pattern::Sequential => {}
            Pattern::Random => f.write_str(" random")?,
            Pattern::Clustered { run } => write!(f, " clustered (runs of {run})")?,
            terms @ Pattern::Terms { .. } => write!(f, " {terms}")?,
        }
        f.write_str(" requests")?;
        if let Some(capacity) = self.capacity {
            write!(f, ", {} window", binary_size(capacity as u64))?;
        }
        if self.tasks > 1 {
            write!(f, ", {} tasks", self.tasks)?;
        }
        if let Some(shape) = self.read_ahead {
            write!(f, ", read-ahead {}", shape_name(shape))?;
        }
        Ok(())
    }
}

/// The readers the harness compares, each reading the file sequentially in requests of a fixed
/// size.
///
/// All but two read a stream source (`AsyncRead + AsyncSeek`) through the same
/// [`CountingSource`](crate::CountingSource). [`BufferedReadAhead`](Self::BufferedReadAhead)
/// and [`Cached`](Self::Cached) read the source's positional form instead, through a
/// [`CountingPositional`](abi_testkit::CountingPositional), since read-ahead and a block
/// cache need requests that name their own offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ReaderKind {
    /// [`AsyncBufferedInput`](async_buffered_input::AsyncBufferedInput) over the stream, with
    /// the cell's window capacity, one
    /// [`read_bytes`](async_buffered_input::AsyncBufferedInput::read_bytes) per request.
    Buffered,
    /// [`AsyncBufferedInput`](async_buffered_input::AsyncBufferedInput) with the cell's window
    /// capacity over a [`PositionalFetch`](async_buffered_input::PositionalFetch) with
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
    /// [`AsyncBufferedInput`](async_buffered_input::AsyncBufferedInput) with the cell's window
    /// capacity over a [`PositionalFetch`](async_buffered_input::PositionalFetch)
    /// without read-ahead, over the source's positional form read through a
    /// [`Cached`](async_buffered_input::cache::Cached) with one
    /// [`BlockCache`](async_buffered_input::cache::BlockCache) shared by the cell's tasks:
    /// what a lookup service over a slow store runs. No read-ahead, since a lookup reads a few
    /// hundred bytes and then goes elsewhere, so chunks ahead of it would be fetched for
    /// nothing. The blocks are window-sized, so an aligned refill is one block; the cache holds
    /// the plan's [`cache_capacity`](Plan::cache_capacity) and is fresh in every cell (see
    /// [`Plan`]). Its source reads are the block loads that reach the source, under the cache:
    /// what the cache saved shows in them. Not in [`DEFAULT`](Self::DEFAULT): on a sequential
    /// pass each block is read once, and the cache only adds a copy.
    Cached,
    /// OpenDAL's own reader, as its documentation suggests for `AsyncRead` users, with its
    /// default options: `operator.reader_with(path)`, `into_futures_async_read(0..length)`, a
    /// seek where a request does not continue the last, `read_exact`. Reads only OpenDAL
    /// locations (`ftp://`, `webdav://`; the harness's cargo feature `opendal`); has no window;
    /// its source reads are not known (0). Not in [`DEFAULT`](Self::DEFAULT).
    OpendalReader,
    /// [`OpendalReader`](Self::OpendalReader) with OpenDAL's `concurrent` and `chunk` options
    /// set, as the location's query says (`?concurrent=4&chunk=4MiB`, the default).
    OpendalReaderTuned,
    /// The object_store crate's own `object_store::buffered::BufReader` with the cell's
    /// capacity (its default is 1 MiB), a seek where a request does not continue the last,
    /// `read_exact`: what an object_store user reaches for. Reads only object-store URLs
    /// (`http://`, `https://`, `s3://`; the harness's cargo feature `object-store`); its
    /// source reads are not known (0). Not in [`DEFAULT`](Self::DEFAULT).
    ObjectStoreBufReader,
}

impl ReaderKind {
    /// Every reader, in the order the harness reports them.
    pub const ALL: [ReaderKind; 9] = [
        ReaderKind::Buffered,
        ReaderKind::BufferedReadAhead,
        ReaderKind::Cached,
        ReaderKind::BufReader,
        ReaderKind::Unbuffered,
        ReaderKind::ByteLoop,
        ReaderKind::OpendalReader,
        ReaderKind::OpendalReaderTuned,
        ReaderKind::ObjectStoreBufReader,
    ];

    /// The readers a [`Plan::new`] compares (and the `throughput` command without
    /// `--readers`): all but [`Cached`](Self::Cached), which is meant for lookups.
    pub const DEFAULT: [ReaderKind; 5] = [
        ReaderKind::Buffered,
        ReaderKind::BufferedReadAhead,
        ReaderKind::BufReader,
        ReaderKind::Unbuffered,
        ReaderKind::ByteLoop,
    ];

    /// A short, stable identifier: `buffered`, `readahead`, `cached`, `bufreader`,
    /// `unbuffered` or `byteloop`. This is what [`FromStr`] parses and what the JSON report
    /// prints.
    pub fn id(self) -> &'static str {
        match self {
            ReaderKind::Buffered => "buffered",
            ReaderKind::BufferedReadAhead => "readahead",
            ReaderKind::Cached => "cached",
            ReaderKind::BufReader => "bufreader",
            ReaderKind::Unbuffered => "unbuffered",
            ReaderKind::ByteLoop => "byteloop",
            ReaderKind::OpendalReader => "opendal",
            ReaderKind::OpendalReaderTuned => "opendal-tuned",
            ReaderKind::ObjectStoreBufReader => "object-store-bufreader",
        }
    }

    /// The name shown in tables: `AsyncBufferedInput`, `AsyncBufferedInput+RA`,
    /// `AsyncBufferedInput+cache`, `tokio BufReader`, `unbuffered`, `byte loop`.
    pub fn name(self) -> &'static str {
        match self {
            ReaderKind::Buffered => "AsyncBufferedInput",
            ReaderKind::BufferedReadAhead => "AsyncBufferedInput+RA",
            ReaderKind::Cached => "AsyncBufferedInput+cache",
            ReaderKind::BufReader => "tokio BufReader",
            ReaderKind::Unbuffered => "unbuffered",
            ReaderKind::ByteLoop => "byte loop",
            ReaderKind::OpendalReader => "OpenDAL Reader",
            ReaderKind::OpendalReaderTuned => "OpenDAL Reader tuned",
            ReaderKind::ObjectStoreBufReader => "object_store BufReader",
        }
    }

    /// Whether the reader has a window, so that the run times it once per capacity. Readers
    /// without one are timed once per request size.
    pub(crate) fn uses_capacity(self) -> bool {
        !matches!(
            self,
            ReaderKind::Unbuffered | ReaderKind::OpendalReader | ReaderKind::OpendalReaderTuned
        )
    }

    /// Whether the harness counts what the reader asks of its source: all but the OpenDAL
    /// readers and object_store's `BufReader`, which make their requests inside their own
    /// clients (their counts are 0, and the table shows none).
    pub(crate) fn counts_source(self) -> bool {
        !matches!(
            self,
            ReaderKind::OpendalReader
                | ReaderKind::OpendalReaderTuned
                | ReaderKind::ObjectStoreBufReader
        )
    }

    /// Whether the reader reads only OpenDAL locations (`ftp://`, `webdav://`): the OpenDAL
    /// readers.
    pub(crate) fn uses_opendal(self) -> bool {
        matches!(
            self,
            ReaderKind::OpendalReader | ReaderKind::OpendalReaderTuned
        )
    }

    /// Whether the reader reads the source's [positional form](Source::open_positional) with
    /// read-ahead (only [`BufferedReadAhead`](Self::BufferedReadAhead)), rather than its
    /// stream.
    pub fn uses_read_ahead(self) -> bool {
        matches!(self, ReaderKind::BufferedReadAhead)
    }

    /// Whether the reader reads the source's [positional form](Source::open_positional)
    /// ([`BufferedReadAhead`](Self::BufferedReadAhead) and [`Cached`](Self::Cached)), which
    /// the source must then have.
    pub(crate) fn uses_positional(self) -> bool {
        matches!(self, ReaderKind::BufferedReadAhead | ReaderKind::Cached)
    }
}

/// A read-ahead shape in a few characters, as `--read-ahead` takes it: `adaptive` for
/// [`ReadAhead::default`], the largest shape of another adaptive one (`adaptive to 1MiBx8`),
/// else `256KiBx4`.
pub(crate) fn shape_name(shape: ReadAhead) -> String {
    let size = binary_size(shape.chunk_size() as u64).replace(' ', "");
    let largest = format!("{size}x{}", shape.depth());
    match shape {
        s if s == ReadAhead::default() => "adaptive".to_string(),
        s if s.is_adaptive() => format!("adaptive to {largest}"),
        _ => largest,
    }
}

/// `items` sorted, without duplicates.
fn sorted<T: Ord>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut items: Vec<T> = items.into_iter().collect();
    items.sort_unstable();
    items.dedup();
    items
}

/// `items` in the order given, without duplicates.
fn in_order<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut kept = Vec::new();
    for item in items {
        if !kept.contains(&item) {
            kept.push(item);
        }
    }
    kept
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
    /// (so `byte-loop`, `read-ahead`, `BufReader`, `AsyncBufferedInput`,
    /// `AsyncBufferedInput+RA` and `AsyncBufferedInput+cache` all work).
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
                .filter(|c| !matches!(c, ' ' | '-' | '_'))
                .flat_map(char::to_lowercase)
                .collect();
            key == kind.id().replace('-', "") || key == name
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
        assert_eq!(
            "AsyncBufferedInput+cache".parse::<ReaderKind>().unwrap(),
            ReaderKind::Cached
        );
        assert!(ReaderKind::Cached.uses_positional() && ReaderKind::Cached.uses_capacity());
        assert!(!ReaderKind::DEFAULT.contains(&ReaderKind::Cached));
        let err = "fast".parse::<ReaderKind>().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("\"fast\""), "{err}");
        assert!(
            err.to_string()
                .contains("buffered, readahead, cached, bufreader, unbuffered, byteloop"),
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

    #[test]
    fn patterns_and_tasks_come_before_sizes() {
        let plan = Plan::new(Source::memory(vec![0u8; 10]))
            .sizes([8])
            .capacities([16])
            .readers([ReaderKind::Buffered])
            .patterns([Pattern::Random, Pattern::Sequential, Pattern::Random])
            .tasks([4, 1]);
        let cells: Vec<_> = plan
            .cells()
            .into_iter()
            .map(|c| (c.pattern.id(), c.tasks))
            .collect();
        let expected = [("random", 1), ("random", 4), ("seq", 1), ("seq", 4)];
        assert_eq!(cells, expected.map(|(p, t)| (p.to_string(), t)));
        let cell = plan.cells()[1];
        assert_eq!(
            cell.to_string(),
            "AsyncBufferedInput, 8 B random requests, 16 B window, 4 tasks"
        );
    }

    #[test]
    fn sources_of_the_same_name_are_numbered() {
        let plan = Plan::over([
            Source::memory(vec![1u8]),
            Source::memory(vec![2u8]).named("a"),
            Source::memory(vec![3u8]),
            Source::memory(vec![4u8]),
        ]);
        assert_eq!(plan.source_names(), ["memory", "a", "memory#2", "memory#3"]);
    }
}
