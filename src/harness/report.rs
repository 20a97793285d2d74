use std::fmt;
use std::time::Duration;

use super::cell_report::CellReport;
use super::format::{binary_size, seconds, significant};
use super::reader_kind::ReaderKind;
use super::write_report::WriteReport;
use crate::source::ReadAhead;

/// Everything a run measured: the write phase, if any, and one [`CellReport`] per cell, in the
/// order of [`Plan::cells`](super::Plan::cells).
///
/// Its [`Display`](fmt::Display) is the aligned table the `throughput` example prints, with
/// MB/s (10^6 bytes per second) and each row's ratio to `AsyncBufferedInput`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Report {
    /// The source's [`label`](super::Source::label).
    pub source: String,
    /// The file's length in bytes.
    pub file_len: u64,
    /// How many times each cell reads the file.
    pub repetitions: u32,
    /// The window capacities of the run, in the order they were timed.
    pub capacities: Vec<usize>,
    /// The write phase, if the run had one.
    pub write: Option<WriteReport>,
    /// One report per cell.
    pub cells: Vec<CellReport>,
}

impl Report {
    /// The report of one cell, if the run timed it.
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

    /// The `AsyncBufferedInput` cell that `report` is compared with: the one at the same request
    /// size and capacity, or, for a reader without a window, at the run's first capacity.
    pub fn baseline(&self, report: &CellReport) -> Option<&CellReport> {
        let capacity = report
            .cell
            .capacity
            .or_else(|| self.capacities.first().copied());
        self.get(ReaderKind::Buffered, report.cell.read_size, capacity)
    }

    /// `report`'s throughput divided by its [`baseline`](Self::baseline)'s: below 1 means
    /// slower than `AsyncBufferedInput`.
    pub fn ratio_to_buffered(&self, report: &CellReport) -> Option<f64> {
        let base = self.baseline(report)?.bytes_per_second();
        (base > 0.0).then(|| report.bytes_per_second() / base)
    }

    /// The checksum of the first complete cell: what every complete cell should have.
    pub fn reference_checksum(&self) -> Option<u64> {
        self.cells.iter().find(|r| r.complete).map(|r| r.checksum)
    }

    /// The complete cells whose checksum differs from the
    /// [`reference_checksum`](Self::reference_checksum). Partial cells read less, so they are
    /// not compared.
    pub fn checksum_mismatches(&self) -> Vec<&CellReport> {
        let Some(reference) = self.reference_checksum() else {
            return Vec::new();
        };
        self.cells
            .iter()
            .filter(|r| r.complete && r.checksum != reference)
            .collect()
    }

    /// Whether every complete cell read the same bytes.
    pub fn checksums_agree(&self) -> bool {
        self.checksum_mismatches().is_empty()
    }

    /// The read-ahead of the [read-ahead reader](ReaderKind::BufferedReadAhead), if the run
    /// timed it.
    pub fn read_ahead(&self) -> Option<ReadAhead> {
        self.cells.iter().find_map(|r| r.read_ahead)
    }

    /// Whether some cell ran out of time before reading everything.
    pub fn has_partial(&self) -> bool {
        self.cells.iter().any(|r| !r.complete)
    }

    // ----- private helpers -----

    /// `no time budget`, `time budget 2s per cell`, or `time budget per cell: 10s, 2s for byte
    /// loop and unbuffered`.
    fn budgets_summary(&self) -> String {
        let show = |b: Option<Duration>| b.map_or_else(|| "none".to_string(), |b| format!("{b:?}"));
        // Each reader's budget, in the order readers first appear.
        let mut budgets: Vec<(ReaderKind, Option<Duration>)> = Vec::new();
        for r in &self.cells {
            if !budgets.iter().any(|(k, _)| *k == r.cell.reader) {
                budgets.push((r.cell.reader, r.budget));
            }
        }
        let Some(&(_, first)) = budgets.first() else {
            return "no time budget".to_string();
        };
        if budgets.iter().all(|&(_, b)| b == first) {
            return match first {
                Some(b) => format!("time budget {b:?} per cell"),
                None => "no time budget".to_string(),
            };
        }
        // The first reader's budget (AsyncBufferedInput's, usually), then the others'.
        let common = first;
        let mut parts = vec![show(common)];
        let mut others: Vec<Option<Duration>> = Vec::new();
        for &(_, b) in &budgets {
            if b != common && !others.contains(&b) {
                others.push(b);
            }
        }
        for b in others {
            let names: Vec<&str> = budgets
                .iter()
                .filter(|(_, o)| *o == b)
                .map(|(k, _)| k.name())
                .collect();
            parts.push(format!("{} for {}", show(b), names.join(" and ")));
        }
        format!("time budget per cell: {}", parts.join(", "))
    }
}

impl fmt::Display for Report {
    /// The aligned table: a header naming the source and units, one row per cell grouped by
    /// request size, a note on partial cells, and the checksum verdict.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let passes = if self.repetitions == 1 {
            "pass"
        } else {
            "passes"
        };
        write!(
            f,
            "Sequential reads of {}: {} bytes ({}), {} {passes} per cell",
            self.source,
            self.file_len,
            binary_size(self.file_len),
            self.repetitions,
        )?;
        writeln!(f, ", {}.", self.budgets_summary())?;
        if let Some(write) = &self.write {
            writeln!(
                f,
                "{write} ({} writes of {} bytes)",
                write.writes, write.buffer_size
            )?;
        }
        writeln!(
            f,
            "MB/s = 10^6 bytes/s. \"vs buffered\" = MB/s / AsyncBufferedInput's MB/s at the same \
             request size and window (its first window for readers without one)."
        )?;
        if let Some(ahead) = self.read_ahead() {
            writeln!(
                f,
                "{} = AsyncBufferedInput over the source's positional reads with read-ahead \
                 ({} chunks, {} at a time); its src reads are the requests that reach the \
                 positional source, its src seeks the requests that do not continue the \
                 previous one.",
                ReaderKind::BufferedReadAhead.name(),
                binary_size(ahead.chunk_size() as u64),
                ahead.depth()
            )?;
        }
        writeln!(f)?;

        const HEADER: [&str; 11] = [
            "reader",
            "request",
            "window",
            "bytes read",
            "seconds",
            "MB/s",
            "requests/s",
            "src reads",
            "src seeks",
            "vs buffered",
            "",
        ];
        let mut rows: Vec<Option<[String; 11]>> = Vec::new();
        let mut previous_size = None;
        for r in &self.cells {
            if previous_size.is_some_and(|size| size != r.cell.read_size) {
                rows.push(None);
            }
            previous_size = Some(r.cell.read_size);
            rows.push(Some([
                r.cell.reader.name().to_string(),
                r.cell.read_size.to_string(),
                r.cell
                    .capacity
                    .map_or_else(|| "-".to_string(), |c| c.to_string()),
                r.bytes.to_string(),
                seconds(r.seconds()),
                significant(r.mb_per_second(), 3),
                significant(r.requests_per_second().round(), 1),
                r.underlying_reads.to_string(),
                r.underlying_seeks.to_string(),
                self.ratio_to_buffered(r)
                    .map_or_else(|| "-".to_string(), |x| format!("{}x", significant(x, 3))),
                if r.complete {
                    String::new()
                } else {
                    "partial".to_string()
                },
            ]));
        }
        let mut widths = HEADER.map(str::len);
        for row in rows.iter().flatten() {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.len());
            }
        }
        let line = |f: &mut fmt::Formatter<'_>, cells: [&str; 11]| -> fmt::Result {
            let mut out = String::new();
            for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
                if i > 0 {
                    out.push_str("  ");
                }
                // Names and the note left, numbers right.
                if i == 0 || i == 10 {
                    out.push_str(&format!("{cell:<w$}"));
                } else {
                    out.push_str(&format!("{cell:>w$}"));
                }
            }
            writeln!(f, "{}", out.trim_end())
        };
        line(f, HEADER)?;
        for row in &rows {
            match row {
                Some(row) => line(f, row.each_ref().map(String::as_str))?,
                None => writeln!(f)?,
            }
        }

        writeln!(f)?;
        let partial = self.cells.iter().filter(|r| !r.complete).count();
        if partial > 0 {
            writeln!(
                f,
                "partial: {partial} of {} cells ran out of time before reading the file {} time(s); \
                 their figures cover the bytes they read.",
                self.cells.len(),
                self.repetitions
            )?;
        }
        let complete = self.cells.len() - partial;
        match (
            self.reference_checksum(),
            self.checksum_mismatches().as_slice(),
        ) {
            (None, _) => writeln!(f, "checksums: no complete cell to compare."),
            (Some(sum), []) => writeln!(
                f,
                "checksums: all {complete} complete cells read the same bytes ({sum:#018x})."
            ),
            (Some(sum), bad) => {
                writeln!(
                    f,
                    "checksums: MISMATCH: {} of {complete} complete cells differ from {sum:#018x}:",
                    bad.len()
                )?;
                for r in bad {
                    writeln!(f, "  {}: {:#018x}", r.cell, r.checksum)?;
                }
                Ok(())
            }
        }
    }
}
