use std::fmt;
use std::time::Duration;

use super::cell::Cell;
use super::format::{seconds, significant};
use crate::source::ReadAhead;

/// What one [`Cell`] of a run measured: one reader reading the file sequentially, `repetitions`
/// times, at one request size and capacity.
///
/// The counts of source operations come from the [`CountingSource`](super::CountingSource) under
/// the reader, so they mean the same for every stream reader. The
/// [read-ahead reader](super::ReaderKind::BufferedReadAhead) reads the positional form of the
/// source instead, and its counts come from a
/// [`CountingPositionalSource`](super::CountingPositionalSource): requests that reach the
/// source, which is what a stream reader's reads are too (one request, one round trip).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CellReport {
    /// The reader, request size and capacity.
    pub cell: Cell,
    /// Bytes the reader handed out, over all passes.
    pub bytes: u64,
    /// Requests made (reads of `read_size` bytes, or fewer at the end of the file).
    pub requests: u64,
    /// Time from the first request to the last, seeks back to the start between passes
    /// included; opening the source is not.
    pub elapsed: Duration,
    /// Completed reads on the source (see [`CountingSource::reads`](super::CountingSource::reads));
    /// for the read-ahead reader, requests started on the positional source, read-ahead chunks
    /// included, whether or not they were used (see
    /// [`CountingPositionalSource::requests`](super::CountingPositionalSource::requests)).
    pub underlying_reads: u64,
    /// Seeks started on the source; for the read-ahead reader, which has no seeks, requests that
    /// did not start where the previous one ended (see
    /// [`CountingPositionalSource::jumps`](super::CountingPositionalSource::jumps)).
    pub underlying_seeks: u64,
    /// Bytes the source returned: more than `bytes` when a window read ahead of the requests,
    /// fewer when a later pass found bytes still in the window.
    pub underlying_bytes: u64,
    /// The [`Checksum`](super::Checksum) of the bytes handed out, over all passes.
    pub checksum: u64,
    /// The time the cell could take (`None`: no limit).
    pub budget: Option<Duration>,
    /// Whether the cell read the whole file `repetitions` times. `false` when the run's time
    /// budget ran out first: the cell then reports what it read until then.
    pub complete: bool,
    /// The read-ahead of the read-ahead reader's cells; `None` for the other readers.
    pub read_ahead: Option<ReadAhead>,
}

impl CellReport {
    /// [`elapsed`](Self::elapsed) in seconds.
    pub fn seconds(&self) -> f64 {
        self.elapsed.as_secs_f64()
    }

    /// Bytes read per second.
    pub fn bytes_per_second(&self) -> f64 {
        per_second(self.bytes, self.elapsed)
    }

    /// Megabytes (10^6 bytes) read per second.
    pub fn mb_per_second(&self) -> f64 {
        self.bytes_per_second() / 1e6
    }

    /// Requests per second.
    pub fn requests_per_second(&self) -> f64 {
        per_second(self.requests, self.elapsed)
    }
}

/// `count / elapsed`, 0 for no count, and without dividing by a zero duration.
pub(crate) fn per_second(count: u64, elapsed: Duration) -> f64 {
    if count == 0 {
        return 0.0;
    }
    count as f64 / elapsed.max(Duration::from_nanos(1)).as_secs_f64()
}

impl fmt::Display for CellReport {
    /// One line in the manner of the classic test: `AsyncBufferedInput, 100 B requests, 8 KiB
    /// window: read 1048576 bytes in 0.002 seconds for 524288000 bytes-per-second`, with
    /// `(partial)` at the end of an incomplete cell.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: read {} bytes in {} seconds for {} bytes-per-second",
            self.cell,
            self.bytes,
            seconds(self.seconds()),
            significant(self.bytes_per_second().round(), 1)
        )?;
        if !self.complete {
            f.write_str(" (partial: time budget ran out)")?;
        }
        Ok(())
    }
}
