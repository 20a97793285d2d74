//! What a run measured, and how it is shown: the [`Report`] of a run with its [`CellReport`]s and
//! [`WriteReport`], the aligned table and the JSON they print as, and the [`Checksum`] that
//! proves every reader read the same bytes.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use async_buffered_input::fetch::ReadAhead;

use crate::plan::{Cell, ReaderKind};

/// Everything a run measured: the write phase, if any, and one [`CellReport`] per cell, in the
/// order of [`Plan::cells`](crate::Plan::cells).
///
/// Its [`Display`](fmt::Display) is the aligned table the `throughput` example prints, with
/// MB/s (10^6 bytes per second) and each row's ratio to `AsyncBufferedInput`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Report {
    /// The source's [`label`](crate::Source::label).
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

    /// The report as JSON: an array with one object per cell, in the order of
    /// [`cells`](Self::cells), with the cell's figures (`reader`, `read_size`, `capacity`,
    /// `bytes`, `seconds`, `bytes_per_second`, `underlying_reads`, ...) and the run's
    /// (`repetitions`, `file_len`, `source`). `checksum` is a hex string, since JSON numbers
    /// lose 64-bit precision in many readers.
    pub fn json(&self) -> serde_json::Value {
        serde_json::Value::Array(self.cells.iter().map(|r| self.cell_json(r)).collect())
    }

    // ----- private helpers -----

    /// One cell of [`json`](Self::json).
    fn cell_json(&self, r: &CellReport) -> serde_json::Value {
        serde_json::json!({
            "reader": r.cell.reader.id(),
            "reader_name": r.cell.reader.name(),
            "read_size": r.cell.read_size,
            "capacity": r.cell.capacity,
            "bytes": r.bytes,
            "requests": r.requests,
            "seconds": r.seconds(),
            "bytes_per_second": r.bytes_per_second(),
            "mb_per_second": r.mb_per_second(),
            "requests_per_second": r.requests_per_second(),
            "underlying_reads": r.underlying_reads,
            "underlying_seeks": r.underlying_seeks,
            "underlying_bytes": r.underlying_bytes,
            "checksum": format!("{:#018x}", r.checksum),
            "complete": r.complete,
            "read_ahead": r.read_ahead.map(|ahead| serde_json::json!({
                "chunk_size": ahead.chunk_size(),
                "depth": ahead.depth(),
            })),
            "ratio_to_buffered": self.ratio_to_buffered(r),
            "repetitions": self.repetitions,
            "file_len": self.file_len,
            "source": self.source,
        })
    }

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

/// What one [`Cell`] of a run measured: one reader reading the file sequentially, `repetitions`
/// times, at one request size and capacity.
///
/// The counts of source operations come from the [`CountingSource`](crate::CountingSource)
/// under the reader, so they mean the same for every stream reader. The
/// [read-ahead reader](ReaderKind::BufferedReadAhead) reads the positional form of the
/// source instead, and its counts come from a
/// [`CountingPositionalSource`](crate::CountingPositionalSource): requests that reach the
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
    /// Completed reads on the source (see
    /// [`CountingSource::reads`](crate::CountingSource::reads)); for the read-ahead reader,
    /// requests started on the positional source, read-ahead chunks included, whether or not
    /// they were used (see
    /// [`CountingPositionalSource::requests`](crate::CountingPositionalSource::requests)).
    pub underlying_reads: u64,
    /// Seeks started on the source; for the read-ahead reader, which has no seeks, requests that
    /// did not start where the previous one ended (see
    /// [`CountingPositionalSource::jumps`](crate::CountingPositionalSource::jumps)).
    pub underlying_seeks: u64,
    /// Bytes the source returned: more than `bytes` when a window read ahead of the requests,
    /// fewer when a later pass found bytes still in the window.
    pub underlying_bytes: u64,
    /// The [`Checksum`] of the bytes handed out, over all passes.
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
fn per_second(count: u64, elapsed: Duration) -> f64 {
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

impl WriteReport {
    /// [`elapsed`](Self::elapsed) in seconds.
    pub fn seconds(&self) -> f64 {
        self.elapsed.as_secs_f64()
    }

    /// Bytes written per second.
    pub fn bytes_per_second(&self) -> f64 {
        per_second(self.bytes, self.elapsed)
    }

    /// Megabytes (10^6 bytes) written per second.
    pub fn mb_per_second(&self) -> f64 {
        self.bytes_per_second() / 1e6
    }
}

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

/// A cheap, order-sensitive 64-bit checksum of a byte stream, to prove that two readers read the
/// same bytes.
///
/// The stream is mixed eight bytes at a time (FxHash-style: rotate, xor, multiply) and finished
/// with the SplitMix64 finalizer and the stream's length. The result depends only on the bytes
/// and their order, not on how the stream was split into [`update`](Self::update) calls, so a
/// reader that reads one byte at a time and one that reads 64 KiB at a time agree. It is fast
/// (one multiply per eight bytes) and not cryptographic.
///
/// # Examples
///
/// ```
/// use throughput_harness::Checksum;
///
/// let mut whole = Checksum::new();
/// whole.update(b"hello, world");
///
/// let mut pieces = Checksum::new();
/// for piece in [&b"hel"[..], b"lo, w", b"", b"orld"] {
///     pieces.update(piece);
/// }
/// assert_eq!(whole.finish(), pieces.finish());
/// assert_ne!(whole.finish(), Checksum::of(b"world, hello"));
/// ```
#[derive(Clone)]
pub struct Checksum {
    // Invariants: `tail_len < 8`; `tail` holds the last `tail_len` bytes of the stream (little
    // endian, the earliest byte lowest) that do not fill a word yet, and is 0 above them; `state`
    // has mixed every full word before them; `len` counts every byte.
    state: u64,
    tail: u64,
    tail_len: u32,
    len: u64,
}

const SEED: u64 = 0xcbf2_9ce4_8422_2325;
const MULTIPLIER: u64 = 0x517c_c1b7_2722_0a95;

impl Checksum {
    /// An empty checksum (of no bytes).
    pub const fn new() -> Self {
        Self {
            state: SEED,
            tail: 0,
            tail_len: 0,
            len: 0,
        }
    }

    /// The checksum of `bytes`, in one call.
    pub fn of(bytes: &[u8]) -> u64 {
        let mut sum = Self::new();
        sum.update(bytes);
        sum.finish()
    }

    /// Appends `bytes` to the stream.
    #[inline]
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.tail_len > 0 {
            while self.tail_len < 8 {
                let Some((&b, rest)) = bytes.split_first() else {
                    return;
                };
                self.tail |= u64::from(b) << (8 * self.tail_len);
                self.tail_len += 1;
                bytes = rest;
            }
            self.mix(self.tail);
            self.tail = 0;
            self.tail_len = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let word: [u8; 8] = word.try_into().expect("chunks_exact(8) yields 8 bytes");
            self.mix(u64::from_le_bytes(word));
        }
        for (i, &b) in words.remainder().iter().enumerate() {
            self.tail |= u64::from(b) << (8 * i);
        }
        self.tail_len = words.remainder().len() as u32;
        debug_assert!(self.tail_len < 8);
    }

    /// The checksum of every byte appended so far. The stream can go on after this.
    pub fn finish(&self) -> u64 {
        let mut h = self.state;
        if self.tail_len > 0 {
            h = (h.rotate_left(5) ^ self.tail).wrapping_mul(MULTIPLIER);
        }
        h ^= self.len;
        // SplitMix64's finalizer, so that nearby streams give far-apart sums.
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    }

    /// How many bytes the stream has had.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the stream has had no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    // ----- private helpers -----

    #[inline(always)]
    fn mix(&mut self, word: u64) {
        self.state = (self.state.rotate_left(5) ^ word).wrapping_mul(MULTIPLIER);
    }
}

impl Default for Checksum {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checksum")
            .field("len", &self.len)
            .field("sum", &format_args!("{:#018x}", self.finish()))
            .finish()
    }
}

// ----- number formatting, shared by the reports and labels -----

/// `100 B`, `8 KiB`, `1.5 MiB`, `64 MiB`: binary units, exact where they can be.
pub(crate) fn binary_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut unit = 0;
    let mut value = n as f64;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{} {}", significant(value, 3), UNITS[unit])
    }
}

/// `x` with about `digits` significant digits, without exponents: `1234`, `12.3`, `0.00123`.
pub(crate) fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    format!("{x:.decimals$}")
}

/// Seconds, with millisecond resolution for short times.
pub(crate) fn seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.3}")
    } else {
        format!("{s:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| (i.wrapping_mul(31) ^ (i >> 3)) as u8)
            .collect()
    }

    #[test]
    fn a_checksum_is_independent_of_how_the_stream_is_split() {
        let data = data(1000);
        let whole = Checksum::of(&data);
        for step in [1, 2, 3, 7, 8, 9, 15, 64, 999, 1000] {
            let mut sum = Checksum::new();
            for chunk in data.chunks(step) {
                sum.update(chunk);
                assert!(sum.tail_len < 8);
            }
            assert_eq!(sum.finish(), whole, "step {step}");
            assert_eq!(sum.len(), 1000);
        }
    }

    #[test]
    fn a_checksum_is_sensitive_to_order_length_and_content() {
        let data = data(64);
        let base = Checksum::of(&data);
        let mut swapped = data.clone();
        swapped.swap(3, 40);
        assert_ne!(Checksum::of(&swapped), base);
        assert_ne!(Checksum::of(&data[..63]), base);
        let mut zeros = Checksum::new();
        zeros.update(&[0; 8]);
        assert_ne!(zeros.finish(), Checksum::of(&[0; 7]));
        assert_ne!(zeros.finish(), Checksum::of(&[]));
        let mut flipped = data.clone();
        flipped[63] ^= 1;
        assert_ne!(Checksum::of(&flipped), base);
    }

    #[test]
    fn finishing_a_checksum_does_not_end_the_stream() {
        let mut sum = Checksum::new();
        sum.update(b"abc");
        let _ = sum.finish();
        sum.update(b"def");
        assert_eq!(sum.finish(), Checksum::of(b"abcdef"));
        assert!(!sum.is_empty());
        assert!(Checksum::default().is_empty());
    }

    #[test]
    fn sizes() {
        assert_eq!(binary_size(1), "1 B");
        assert_eq!(binary_size(1000), "1000 B");
        assert_eq!(binary_size(8192), "8 KiB");
        assert_eq!(binary_size(64 << 20), "64 MiB");
        assert_eq!(binary_size(1536 << 10), "1.50 MiB");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(1234.4, 3), "1234");
        assert_eq!(significant(12.345, 3), "12.3");
        assert_eq!(significant(0.0012345, 3), "0.00123");
        assert_eq!(significant(0.0, 3), "0");
    }
}
