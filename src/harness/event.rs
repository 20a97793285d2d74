use std::path::Path;

use super::cell::Cell;
use super::cell_report::CellReport;
use super::write_report::WriteReport;

/// What a run is doing, as [`Plan::run_with`](super::Plan::run_with) tells its observer: enough
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
        /// Its index in [`Plan::cells`](super::Plan::cells).
        index: usize,
        /// How many cells the run has.
        total: usize,
        /// The cell.
        cell: Cell,
        /// The most the cell will take (the run's time budget), if limited.
        budget: Option<std::time::Duration>,
    },
    /// A cell is over.
    CellFinished {
        /// Its index in [`Plan::cells`](super::Plan::cells).
        index: usize,
        /// How many cells the run has.
        total: usize,
        /// What it measured.
        report: &'a CellReport,
    },
}
