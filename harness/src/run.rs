//! Running a plan, in two phases: first everything is timed, one thing at a time (for each
//! source the write phase, the limit row, the stream row, then every cell's tasks), then
//! everything is verified (the limit and stream rows, then every cell, on a pool of threads: those passes are not timed); and the
//! [`Event`]s that tell an observer where the run is.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{chain, context};
use crate::limit::{time_limit, verify_limit, LimitTimed, LimitVerified, LIMIT_READ};
use crate::mismatch::Mismatch;
use crate::plan::{Cell, Plan, ReaderKind};
use crate::readers::{each_reader, Counts, Readers, RequestReader};
use crate::remote::{Remote, RemoteCounts};
use crate::report::{CellReport, LimitMethod, LimitReport, Report, SourceReport, WriteReport};
use crate::sources::Source;
use crate::stream::{time_stream, verify_stream};
use crate::tasks::{all_tasks, failed_request};
use crate::timing::{Latency, Meter};
use crate::truth::Truth;
use crate::verify::{verify_cells, CellCheck, CellVerified, Fingerprint};
use crate::workload::Requests;
use crate::write::{check_writable, write_file};

impl Plan {
    /// Runs the plan: for each source in turn, the write phase if any, the limit row, then
    /// every cell, timed; then the verification passes of all of them.
    ///
    /// Every source is checked before anything is timed: a missing file, an unreachable server
    /// or an empty file stops the run at once, naming the source. The timed passes run one at
    /// a time on the calling task (a cell's tasks as spawned tasks). The verification passes,
    /// which are not timed, run afterwards on one thread per core, each with a tokio runtime of
    /// its own.
    ///
    /// # Errors
    ///
    /// The [`validate`](Self::validate) errors; an empty source (`InvalidInput`); any error
    /// writing a file, opening a source or reading it, with a message naming the file or the
    /// cell and offset, and the failure that stopped it as its
    /// [`source()`](std::error::Error::source). With several sources, the error's message
    /// names the source (`source 2 of 4, sshfs`) and the rest of the chain says what failed.
    /// A byte read wrong is not an error: the report says so ([`Report::verified`]).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropping the future abandons the run (verification threads finish the
    /// pass they are in), and a write phase may leave the file partly written.
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
        let names = self.source_names();
        for (i, source) in self.sources.iter().enumerate() {
            self.preflight(source)
                .await
                .map_err(|e| self.about(&names, i, e))?;
        }

        // Phase 1: time everything, one thing at a time.
        let cells = self.cells();
        let total = cells.len() * self.sources.len();
        let mut timed = Vec::with_capacity(self.sources.len());
        for (i, source) in self.sources.iter().enumerate() {
            observe(Event::SourceStarted {
                index: i,
                total: self.sources.len(),
                name: &names[i],
                source,
            });
            let first = i * cells.len();
            let source_timed = self
                .time_source(source, &cells, first, total, &mut observe)
                .await
                .map_err(|e| self.about(&names, i, e))?;
            timed.push(source_timed);
        }

        // Phase 2: verify everything.
        observe(Event::VerificationStarted { cells: total });
        let sources = self.verify_sources(&names, timed, &mut observe).await?;
        Ok(Report {
            sources,
            repetitions: self.repetitions,
            capacities: self.capacities.clone(),
            seed: self.seed,
            read_aheads: self.read_aheads.clone(),
        })
    }

    // ----- private helpers -----

    /// Phase 2: the limit rows, source by source (they decide what each source's bytes should
    /// be), then every cell, on a pool of threads (one per core); the sources' reports.
    async fn verify_sources<F: FnMut(Event<'_>)>(
        &self,
        names: &[String],
        timed: Vec<SourceTimed>,
        observe: &mut F,
    ) -> io::Result<Vec<SourceReport>> {
        let per_source = timed.first().map_or(0, |t| t.cells.len());
        let total = per_source * timed.len();
        let mut reports = Vec::with_capacity(timed.len());
        let mut truths = Vec::with_capacity(timed.len());
        let mut checks = Vec::with_capacity(total);
        // The timed passes still to verify, by cell index (over all sources), and the reports.
        let mut pending = Vec::with_capacity(total);
        let mut verified: Vec<Option<CellReport>> = (0..total).map(|_| None).collect();
        for (i, (source, t)) in self.sources.iter().zip(timed).enumerate() {
            let limit = self
                .verify_limit(source, t.file_len, t.limit, t.write.is_some())
                .await
                .map_err(|e| self.about(names, i, e))?;
            observe(Event::LimitFinished {
                name: &names[i],
                report: &limit,
            });
            let stream = match t.stream {
                Some(timed) => Some(
                    self.verify_stream(source, t.file_len, timed, &limit, t.write.is_some())
                        .await
                        .map_err(|e| self.about(names, i, e))?,
                ),
                None => None,
            };
            let truth = if limit.holds_pattern {
                Truth::Pattern
            } else {
                Truth::of_source(source)
            };
            for cell in t.cells {
                let index = pending.len();
                if cell.error.is_some() {
                    // Its timed pass failed: nothing to verify.
                    verified[index] = Some(cell_report(cell, self, None));
                    pending.push(None);
                    continue;
                }
                checks.push((
                    index,
                    CellCheck {
                        cell: cell.cell,
                        source: source.clone(),
                        cache_capacity: self.cache_capacity,
                        disk_cache: self.disk_cache.clone(),
                        requests: Arc::clone(&cell.requests),
                        made: cell.tasks.iter().map(|t| t.made).collect(),
                        truth: truth.clone(),
                        file_len: t.file_len,
                    },
                ));
                pending.push(Some(cell));
            }
            reports.push(SourceReport {
                name: names[i].clone(),
                label: source.label().to_string(),
                file_len: t.file_len,
                write: t.write,
                limit,
                stream,
                cells: Vec::with_capacity(per_source),
                reference_reads: 0,
            });
            truths.push(truth);
        }
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (indices, checks): (Vec<usize>, Vec<CellCheck>) = checks.into_iter().unzip();
        verify_cells(checks, workers, |k, result| {
            let index = indices[k];
            let cell = pending[index].take().expect("each cell verified once");
            let report = cell_report(cell, self, Some(result));
            observe(Event::CellFinished {
                index,
                total,
                report: &report,
            });
            verified[index] = Some(report);
            Ok(())
        })
        .await?;
        // Cells are numbered source by source, in plan order.
        for (index, report) in verified.into_iter().enumerate() {
            reports[index / per_source]
                .cells
                .push(report.expect("every cell was verified"));
        }
        for (report, truth) in reports.iter_mut().zip(&truths) {
            report.reference_reads = truth.reads();
        }
        Ok(reports)
    }

    /// `e`, naming source `i` when the plan has several.
    fn about(&self, names: &[String], i: usize, e: io::Error) -> io::Error {
        let n = self.sources.len();
        if n == 1 {
            e
        } else {
            context(e, format!("source {} of {n}, {}", i + 1, names[i]))
        }
    }

    /// Checks, before anything is timed, that the source can be read (or, if the run writes
    /// it, written): its length, or the folder it will be written in.
    async fn preflight(&self, source: &Source) -> io::Result<()> {
        if let (Some(_), Some(path)) = (self.write, source.path()) {
            return check_writable(path);
        }
        let len = source.length().await?;
        if len == 0 {
            return Err(empty(source));
        }
        Ok(())
    }

    /// The timed phase of one source: the write phase, the limit row, the cells.
    async fn time_source<F: FnMut(Event<'_>)>(
        &self,
        source: &Source,
        cells: &[Cell],
        first: usize,
        total: usize,
        observe: &mut F,
    ) -> io::Result<SourceTimed> {
        let write = match (self.write, source.path()) {
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
        let file_len = source.length().await?;
        if file_len == 0 {
            return Err(empty(source));
        }
        let (passes, budget, floor) = (self.repetitions, self.budget, self.limit_floor);
        let limit = time_limit(source, file_len, passes, budget, floor, self.seed).await?;
        let stream = time_stream(source, file_len, passes, budget, floor, self.seed).await?;
        let mut timed = Vec::with_capacity(cells.len());
        for (k, &cell) in cells.iter().enumerate() {
            let index = first + k;
            let budget = self.budget_for(cell.reader);
            observe(Event::CellStarted {
                index,
                total,
                cell,
                budget,
            });
            let requests = Arc::new(self.requests_of(&cell, file_len));
            let remote_before = source.remote().map(Remote::counts);
            // A cell that fails is reported as failed, and the run goes on: one reader a
            // backend refuses does not void the comparison.
            let measured = async {
                let readers = Readers::open(
                    cell,
                    source,
                    self.cache_capacity,
                    self.disk_cache.as_ref(),
                    &requests.starts(),
                )
                .await?;
                let (repetitions, seed) = (self.repetitions, self.seed);
                each_reader!(readers, |readers| {
                    time_tasks(readers, &requests, repetitions, budget, seed).await
                })
            }
            .await;
            // The cell's sources report their counts when dropped; aborted read-ahead tasks
            // drop theirs once they run again.
            for _ in 0..8 {
                tokio::task::yield_now().await;
            }
            let remote = source
                .remote()
                .zip(remote_before)
                .map(|(remote, before)| remote.counts().since(before));
            let (elapsed, tasks, error) = match measured {
                Ok((elapsed, tasks)) => (elapsed, tasks, None),
                Err(e) => (Duration::ZERO, Vec::new(), Some(chain(&e))),
            };
            observe(Event::CellTimed {
                index,
                total,
                cell,
                elapsed,
            });
            timed.push(CellTimed {
                cell,
                budget,
                requests,
                elapsed,
                tasks,
                error,
                remote,
            });
        }
        Ok(SourceTimed {
            file_len,
            write,
            limit,
            stream,
            cells: timed,
        })
    }

    /// The limit row's verification, and its report.
    async fn verify_limit(
        &self,
        source: &Source,
        file_len: u64,
        timed: LimitTimed,
        written: bool,
    ) -> io::Result<LimitReport> {
        let verified = verify_limit(source, file_len, timed.requests).await?;
        let pattern = verified.pattern.mismatch();
        // The file read back must hold what the write phase wrote.
        let mismatch = written.then_some(pattern).flatten();
        Ok(self.limit_report(
            LimitMethod::Loop,
            file_len,
            timed,
            verified,
            mismatch,
            written,
        ))
    }

    /// The stream row's verification, and its report: its bytes are the pattern's where the
    /// limit row found the file to hold it, and the limit row's otherwise.
    async fn verify_stream(
        &self,
        source: &Source,
        file_len: u64,
        timed: LimitTimed,
        limit: &LimitReport,
        written: bool,
    ) -> io::Result<LimitReport> {
        let passes = self.repetitions;
        let verified = verify_stream(source, file_len, passes, timed.bytes).await?;
        let complete = timed.bytes == file_len * u64::from(passes);
        let checksum = verified.checksum.finish();
        let mismatch = if limit.holds_pattern || written {
            verified.pattern.mismatch()
        } else if complete && limit.complete && checksum != limit.checksum {
            Some(Mismatch::Checksum {
                expected: limit.checksum,
                found: checksum,
            })
        } else {
            None
        };
        Ok(self.limit_report(
            LimitMethod::Stream,
            file_len,
            timed,
            verified,
            mismatch,
            written,
        ))
    }

    /// A limit row's report from its timed rounds and its verification pass; `mismatch`: what
    /// the verification found wrong, beyond a timed pass that saw other bytes; `written`:
    /// whether the run wrote the file (then it holds the pattern, even if the row was cut).
    fn limit_report(
        &self,
        method: LimitMethod,
        file_len: u64,
        timed: LimitTimed,
        verified: LimitVerified,
        mismatch: Option<Mismatch>,
        written: bool,
    ) -> LimitReport {
        let complete = timed.bytes == file_len * u64::from(self.repetitions);
        let pattern = verified.pattern.mismatch();
        // The stream's one request per pass is the whole file.
        let read_size = match method {
            LimitMethod::Stream => usize::try_from(file_len).unwrap_or(usize::MAX),
            _ => LIMIT_READ,
        };
        let mismatch = if timed.fingerprint != verified.fingerprint || !timed.steady {
            Some(Mismatch::TimedPass)
        } else {
            mismatch
        };
        LimitReport {
            method,
            file_len,
            passes: self.repetitions,
            read_size,
            bytes: timed.bytes,
            requests: timed.requests,
            elapsed: timed.elapsed,
            latency: Latency::of(timed.samples),
            underlying_reads: timed.reads,
            rounds: timed.rounds,
            verify_reads: verified.reads,
            checksum: verified.checksum.finish(),
            complete,
            budget: self.budget,
            holds_pattern: pattern.is_none() && (complete || written),
            mismatch,
        }
    }
}

/// What the timed phase measured of one source.
struct SourceTimed {
    file_len: u64,
    write: Option<WriteReport>,
    limit: LimitTimed,
    // `None`: the source has no streaming call.
    stream: Option<LimitTimed>,
    cells: Vec<CellTimed>,
}

/// What a run is doing, as [`Plan::run_with`] tells its observer: enough to drive a progress
/// bar or a log.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Event<'a> {
    /// A source's timed phase is starting (its write phase, limit row and cells follow).
    SourceStarted {
        /// Its index in [`Plan::sources`].
        index: usize,
        /// How many sources the run has.
        total: usize,
        /// Its name in the report.
        name: &'a str,
        /// The source.
        source: &'a Source,
    },
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
    /// A cell's timed pass is starting.
    CellStarted {
        /// Its index among all the run's cells (every source's, in order).
        index: usize,
        /// How many cells the run has, over all sources.
        total: usize,
        /// The cell.
        cell: Cell,
        /// The most the timed pass will take (the cell's time budget), if limited.
        budget: Option<Duration>,
    },
    /// A cell's timed pass is over.
    CellTimed {
        /// Its index among all the run's cells.
        index: usize,
        /// How many cells the run has.
        total: usize,
        /// The cell.
        cell: Cell,
        /// Its time.
        elapsed: Duration,
    },
    /// Everything is timed; the verification passes start.
    VerificationStarted {
        /// How many cells they verify, over all sources.
        cells: usize,
    },
    /// A source's limit row is verified (in the order of the sources).
    LimitFinished {
        /// The source's name in the report.
        name: &'a str,
        /// The limit row.
        report: &'a LimitReport,
    },
    /// A cell is verified (in the order the passes finish), and its report complete.
    CellFinished {
        /// Its index among all the run's cells.
        index: usize,
        /// How many cells the run has.
        total: usize,
        /// What it measured.
        report: &'a CellReport,
    },
}

// ----- the timed passes -----

/// What a cell's timed pass measured.
struct CellTimed {
    cell: Cell,
    budget: Option<Duration>,
    requests: Arc<Requests>,
    elapsed: Duration,
    tasks: Vec<TaskTimed>,
    // Why the timed pass failed, if it did: then `tasks` is empty and there is nothing to verify.
    error: Option<String>,
    // What the positional sources sent to the store, with `Source::with_remote`.
    remote: Option<RemoteCounts>,
}

/// What one task of a timed pass measured.
struct TaskTimed {
    made: u64,
    bytes: u64,
    fingerprint: Fingerprint,
    samples: Vec<u64>,
    counts: Counts,
    end: Instant,
}

/// Runs one task per reader, at once, on one clock: the cell's time runs from the start to the
/// end of the last task. Returns that time and what each task measured.
async fn time_tasks<R: RequestReader>(
    readers: Vec<R>,
    requests: &Arc<Requests>,
    repetitions: u32,
    budget: Option<Duration>,
    seed: u64,
) -> io::Result<(Duration, Vec<TaskTimed>)> {
    let start = Instant::now();
    let deadline = budget.map(|budget| start + budget);
    let tasks = all_tasks(readers, |task, reader| {
        time_task(
            reader,
            Arc::clone(requests),
            task,
            repetitions,
            deadline,
            seed,
        )
    })
    .await?;
    let end = tasks.iter().map(|t| t.end).max().unwrap_or(start);
    Ok((end - start, tasks))
}

/// One task's requests, `repetitions` times: the loop that is timed. Each request is read into
/// the same buffer and looked at, as a reader's user would, and nothing else.
async fn time_task<R: RequestReader>(
    mut reader: R,
    requests: Arc<Requests>,
    task: usize,
    repetitions: u32,
    deadline: Option<Instant>,
    seed: u64,
) -> io::Result<TaskTimed> {
    let mut buf = vec![0u8; requests.largest()];
    let mut meter = Meter::new(deadline, seed ^ (task as u64).rotate_left(32));
    let mut fingerprint = Fingerprint::default();
    let (mut made, mut bytes) = (0u64, 0u64);
    'passes: for pass in 0..repetitions {
        for (offset, len) in requests.walk(task) {
            if !meter.before() {
                break 'passes;
            }
            let request = &mut buf[..len];
            if let Err(e) = reader.read_at(offset, request).await {
                return Err(failed_request(e, task, offset, pass));
            }
            meter.after();
            fingerprint.look(request);
            made += 1;
            bytes += len as u64;
        }
    }
    let end = Instant::now();
    Ok(TaskTimed {
        made,
        bytes,
        fingerprint,
        samples: meter.into_samples(),
        counts: reader.counts(),
        end,
    })
}

/// The report of a cell from its two passes; `verified` is `None` for a cell whose timed pass
/// failed, and an error if its verification pass did.
fn cell_report(
    timed: CellTimed,
    plan: &Plan,
    verified: Option<io::Result<CellVerified>>,
) -> CellReport {
    let cell = timed.cell;
    let mut fingerprint = Fingerprint::default();
    let mut counts = Counts::default();
    let mut samples = Vec::new();
    let (mut bytes, mut made) = (0, 0);
    let mut complete = timed.error.is_none();
    for (task, t) in timed.tasks.into_iter().enumerate() {
        fingerprint.combine(t.fingerprint);
        counts = counts.add(t.counts);
        samples.extend(t.samples);
        bytes += t.bytes;
        made += t.made;
        complete &= t.made == timed.requests.of_task(task) * u64::from(plan.repetitions);
    }
    let (checksum, mismatch, verify_reads, error) = match verified {
        Some(Ok(verified)) => {
            // A byte read wrong says more than the fingerprint that it changed.
            let mismatch = verified
                .mismatch
                .or_else(|| (fingerprint != verified.fingerprint).then_some(Mismatch::TimedPass));
            (verified.checksum, mismatch, verified.reads, None)
        }
        Some(Err(e)) => (0, None, 0, Some(chain(&e))),
        None => (0, None, 0, timed.error),
    };
    CellReport {
        cell,
        bytes,
        requests: made,
        elapsed: timed.elapsed,
        latency: Latency::of(samples),
        underlying_reads: counts.reads,
        underlying_seeks: counts.seeks,
        underlying_bytes: counts.bytes,
        disk_hits: (cell.reader == ReaderKind::Cached && plan.disk_cache.is_some())
            .then_some(counts.disk_hits),
        verify_reads,
        checksum,
        mismatch,
        error,
        budget: timed.budget,
        complete,
        read_ahead: cell.read_ahead,
        cache_capacity: (cell.reader == ReaderKind::Cached).then_some(plan.cache_capacity),
        remote: timed.remote.filter(|_| cell.reader.uses_positional()),
    }
}

fn empty(source: &Source) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{} is empty: nothing to time", source.label()),
    )
}
