//! What a run says about a source, in a line per request size: the best of this crate's readers
//! at the smallest and at the largest request size, against the source's limit row and against
//! tokio's `BufReader` (and object_store's, where it ran) at the same size; and where the
//! read-ahead reader ran with several shapes, the adaptive default against the best fixed one.

use async_buffered_input::ReadAhead;

use crate::plan::ReaderKind;
use crate::report::{CellReport, SourceReport};
use crate::workload::Pattern;

/// The verdict on one request size of one pattern and number of tasks of a source.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Verdict<'a> {
    /// The access pattern of the cells judged.
    pub(crate) pattern: Pattern,
    /// Their number of concurrent tasks.
    pub(crate) tasks: usize,
    /// Their request size.
    pub(crate) read_size: usize,
    /// The fastest of this crate's readers (`AsyncBufferedInput` and its read-ahead and cached
    /// forms) at this size, any window; `None` if the run timed none that read right.
    pub(crate) best: Option<&'a CellReport>,
    /// The fastest tokio `BufReader` at this size, any window; `None` if none was timed.
    pub(crate) buf_reader: Option<&'a CellReport>,
    /// The fastest object_store `BufReader` at this size, any capacity; `None` if none was
    /// timed.
    pub(crate) object_store: Option<&'a CellReport>,
    /// The fastest read-ahead row with the adaptive default, and with a fixed shape; `None`
    /// where the run timed no such row.
    pub(crate) adaptive: Option<&'a CellReport>,
    pub(crate) fixed: Option<&'a CellReport>,
}

impl Verdict<'_> {
    /// The best reader's throughput over tokio `BufReader`'s, if both were timed.
    pub(crate) fn ratio_to_buf_reader(&self) -> Option<f64> {
        speedup(self.best?, self.buf_reader?)
    }

    /// The best reader's throughput over object_store `BufReader`'s, if both were timed.
    pub(crate) fn ratio_to_object_store(&self) -> Option<f64> {
        speedup(self.best?, self.object_store?)
    }

    /// The adaptive read-ahead's throughput over the best fixed shape's, and that row, if
    /// both were timed.
    pub(crate) fn adaptive_to_fixed(&self) -> Option<(f64, &CellReport)> {
        let fixed = self.fixed?;
        Some((speedup(self.adaptive?, fixed)?, fixed))
    }
}

/// `a`'s throughput over `b`'s; `None` if `b` read nothing.
fn speedup(a: &CellReport, b: &CellReport) -> Option<f64> {
    let base = b.bytes_per_second();
    (base > 0.0).then(|| a.bytes_per_second() / base)
}

/// Whether `reader` is one of this crate's inputs.
fn is_ours(reader: ReaderKind) -> bool {
    matches!(
        reader,
        ReaderKind::Buffered | ReaderKind::BufferedReadAhead | ReaderKind::Cached
    )
}

/// The fastest cell of `cells` that read right (no error, no mismatch) and passes `keep`.
fn fastest<'a>(
    cells: &[&'a CellReport],
    keep: impl Fn(&CellReport) -> bool,
) -> Option<&'a CellReport> {
    cells
        .iter()
        .copied()
        .filter(|r| r.error.is_none() && r.mismatch.is_none() && keep(r))
        .max_by(|a, b| a.bytes_per_second().total_cmp(&b.bytes_per_second()))
}

impl SourceReport {
    /// The verdicts on this source: for each pattern and number of tasks, in the order timed,
    /// one at the smallest request size and one at the largest (one only if they are the same).
    /// Empty if the run timed no reader.
    pub(crate) fn verdicts(&self) -> Vec<Verdict<'_>> {
        let mut groups: Vec<(Pattern, usize)> = Vec::new();
        for r in &self.cells {
            if !groups.contains(&(r.cell.pattern, r.cell.tasks)) {
                groups.push((r.cell.pattern, r.cell.tasks));
            }
        }
        let mut verdicts = Vec::new();
        for (pattern, tasks) in groups {
            let group: Vec<&CellReport> = self
                .cells
                .iter()
                .filter(|r| r.cell.pattern == pattern && r.cell.tasks == tasks)
                .collect();
            let sizes = group.iter().map(|r| r.cell.read_size);
            let (Some(small), Some(large)) = (sizes.clone().min(), sizes.max()) else {
                continue;
            };
            let mut judged = vec![small];
            if large != small {
                judged.push(large);
            }
            for read_size in judged {
                let at: Vec<&CellReport> = group
                    .iter()
                    .copied()
                    .filter(|r| r.cell.read_size == read_size)
                    .collect();
                verdicts.push(Verdict {
                    pattern,
                    tasks,
                    read_size,
                    best: fastest(&at, |r| is_ours(r.cell.reader)),
                    buf_reader: fastest(&at, |r| r.cell.reader == ReaderKind::BufReader),
                    object_store: fastest(&at, |r| {
                        r.cell.reader == ReaderKind::ObjectStoreBufReader
                    }),
                    adaptive: fastest(&at, |r| r.cell.read_ahead == Some(ReadAhead::default())),
                    fixed: fastest(&at, |r| {
                        r.cell.read_ahead.is_some_and(|s| s != ReadAhead::default())
                    }),
                });
            }
        }
        verdicts
    }
}
