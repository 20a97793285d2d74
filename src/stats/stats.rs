//! Counters of the work an input did.

use std::fmt;

/// Counters of what an [`AsyncBufferedInput`](crate::AsyncBufferedInput) asked of its source
/// and how it served its callers, for logs and benchmarks.
///
/// Read them with [`AsyncBufferedInput::stats`](crate::AsyncBufferedInput::stats). Subtract an
/// earlier snapshot from a later one to get the work done between them; add (or
/// [`sum`](Iterator::sum)) the stats of several inputs to get their work together; print them
/// with `{}` for a log line. New counters may be added, so build one with `Stats::default()`
/// rather than a struct literal.
///
/// ```
/// use async_buffered_input::PositionalFetch;
/// use async_buffered_input::source::MemorySource;
/// use async_buffered_input::{AsyncBufferedInput, Stats};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let source = || PositionalFetch::new(MemorySource::new(vec![0u8; 10_000]));
/// let mut a = AsyncBufferedInput::new(source());
/// let mut b = AsyncBufferedInput::new(source());
/// a.read_u32().await?;
/// let before = a.stats();
/// a.read_bytes_owned(6000).await?;
/// let stretch = a.stats() - before;
/// assert_eq!(stretch.bytes_from_window, 6000);
/// assert_eq!(stretch.underlying_reads, 0); // the first read filled the window
///
/// b.read_u32().await?;
/// let total: Stats = [a.stats(), b.stats()].iter().sum();
/// assert_eq!(total, a.stats() + b.stats());
/// assert_eq!(
///     total.to_string(),
///     "reads 2, seeks 0, 16.0 KiB from source, 5.9 KiB from window, 0 B direct"
/// );
/// # Ok(())
/// # }
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stats {
    /// Completed fetches: reads the window asked of its [fetcher](crate::Fetch), including
    /// zero-length ones that found the end. Over a stream, each is one read call on it; over a
    /// positional source, each is served by bytes at hand, a read-ahead chunk, or a request.
    pub underlying_reads: u64,
    /// Seeks started on an underlying stream (including the one that asks for the length); 0
    /// over a positional source, which has no cursor.
    pub underlying_seeks: u64,
    /// Bytes fetches returned, into the window or straight into callers' buffers.
    pub bytes_from_source: u64,
    /// Bytes handed to callers out of the window.
    pub bytes_from_window: u64,
    /// Bytes handed to callers bypassing the window: read by the source straight into their
    /// buffers (or copied there from read-ahead chunks that had arrived), or kept for its
    /// retry by a read that failed (at most 16 MiB: see
    /// [`AsyncBufferedInput`](crate::AsyncBufferedInput#errors-and-retries)).
    pub bytes_direct: u64,
}

impl Stats {
    /// The work done between `earlier` and this snapshot (of the same input), or `None` if a
    /// counter of `earlier` is larger than this one's (the snapshots are the other way round,
    /// or of different inputs). [`Sub`](#impl-Sub-for-Stats) does the same without the check.
    pub fn checked_sub(self, earlier: Stats) -> Option<Stats> {
        let between = self - earlier;
        // Exact unless a counter of `earlier` is larger, which `-` saturated to 0.
        (between + earlier == self).then_some(between)
    }

    /// Applies `op` to each pair of counters.
    fn zip(self, other: Stats, op: fn(u64, u64) -> u64) -> Stats {
        Stats {
            underlying_reads: op(self.underlying_reads, other.underlying_reads),
            underlying_seeks: op(self.underlying_seeks, other.underlying_seeks),
            bytes_from_source: op(self.bytes_from_source, other.bytes_from_source),
            bytes_from_window: op(self.bytes_from_window, other.bytes_from_window),
            bytes_direct: op(self.bytes_direct, other.bytes_direct),
        }
    }
}

/// Implements the arithmetic of the counters `$t`, a struct of `u64`s whose `zip(self, other,
/// op)` applies `op` field by field: `Add` and `Sub`, saturating (at `u64::MAX`, at 0), with
/// their `AddAssign` and `SubAssign`, and `Sum` over values and references from
/// `$t::default()` (all zeros). For [`Stats`] and the block cache's `BlockCacheStats`, whose
/// arithmetic agrees. The docs of `Add`, `Sub` and `Sum` are given.
macro_rules! counter_ops {
    ($t:ty, add: $add:literal, sub: $sub:literal, sum: $sum:literal) => {
        $crate::stats::stats::counter_ops!(@op $t, $add, Add add AddAssign add_assign saturating_add);
        $crate::stats::stats::counter_ops!(@op $t, $sub, Sub sub SubAssign sub_assign saturating_sub);

        #[doc = $sum]
        impl std::iter::Sum for $t {
            fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
                iter.fold(Self::default(), std::ops::Add::add)
            }
        }

        /// As `Sum` over values.
        impl<'a> std::iter::Sum<&'a $t> for $t {
            fn sum<I: Iterator<Item = &'a Self>>(iter: I) -> Self {
                iter.copied().sum()
            }
        }
    };
    (@op $t:ty, $doc:literal, $op:ident $f:ident $assign:ident $f_assign:ident $saturating:ident) => {
        #[doc = $doc]
        impl std::ops::$op for $t {
            type Output = Self;

            fn $f(self, other: Self) -> Self {
                self.zip(other, u64::$saturating)
            }
        }

        #[doc = concat!("As `", stringify!($op), "`.")]
        impl std::ops::$assign for $t {
            fn $f_assign(&mut self, other: Self) {
                *self = std::ops::$op::$f(*self, other);
            }
        }
    };
}
pub(crate) use counter_ops;

counter_ops!(
    Stats,
    add: "The counters added one by one: the work of two inputs (or two stretches) together. \
          Counters saturate at `u64::MAX` (they never get there in practice), as the block \
          cache's counters do.",
    sub: "The counters subtracted one by one: `later - earlier`, two snapshots of the same \
          input, is the work done between them. Never panics: counters saturate at 0, as the \
          block cache's do, so `earlier - later` gives zeros rather than an error. Use \
          [`checked_sub`](Stats::checked_sub) to have that case caught.",
    sum: "The sum of the stats of several inputs (their clones and slices each count their own)."
);

/// One line for a log:
/// `reads 12, seeks 0, 4.0 KiB from source, 3.9 KiB from window, 0 B direct`. Byte counts
/// below 1 KiB are exact; above, in KiB, MiB, GiB or TiB (1024-based) with one decimal.
impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "reads {}, seeks {}, {} from source, {} from window, {} direct",
            self.underlying_reads,
            self.underlying_seeks,
            ByteSize(self.bytes_from_source),
            ByteSize(self.bytes_from_window),
            ByteSize(self.bytes_direct),
        )
    }
}

/// A byte count for people: `512 B`, `4.0 KiB`, `1.5 MiB`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ByteSize(pub(crate) u64);

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
        if self.0 < 1024 {
            return write!(f, "{} B", self.0);
        }
        let mut value = self.0 as f64 / 1024.0;
        let mut unit = 0;
        // Rounded to one decimal, 1023.96 KiB would print as "1024.0 KiB": move up first.
        while value >= 1023.95 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        write!(f, "{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(n: [u64; 5]) -> Stats {
        Stats {
            underlying_reads: n[0],
            underlying_seeks: n[1],
            bytes_from_source: n[2],
            bytes_from_window: n[3],
            bytes_direct: n[4],
        }
    }

    #[test]
    fn arithmetic_is_per_counter() {
        let a = stats([1, 2, 3, 4, 5]);
        let b = stats([10, 20, 30, 40, 50]);
        assert_eq!(a + b, stats([11, 22, 33, 44, 55]));
        assert_eq!(b - a, stats([9, 18, 27, 36, 45]));
        let mut c = a;
        c += b;
        c -= a;
        assert_eq!(c, b);
        assert_eq!([a, b, a].iter().sum::<Stats>(), stats([12, 24, 36, 48, 60]));
        assert_eq!([a, b].into_iter().sum::<Stats>(), a + b);
        assert_eq!(std::iter::empty::<Stats>().sum::<Stats>(), Stats::default());
    }

    #[test]
    fn subtraction_the_wrong_way_round_saturates_and_checked_sub_catches_it() {
        let a = stats([1, 2, 3, 4, 5]);
        let b = stats([1, 2, 4, 4, 5]);
        assert_eq!(b.checked_sub(a), Some(stats([0, 0, 1, 0, 0])));
        assert_eq!(a.checked_sub(b), None);
        assert_eq!(
            a - b,
            Stats::default(),
            "saturates at 0, as BlockCacheStats does"
        );
        let max = stats([u64::MAX; 5]);
        assert_eq!(max + a, max, "saturates at the top");
    }

    #[test]
    fn display_is_one_line() {
        let s = stats([12, 0, 4096, 4000, 0]);
        assert_eq!(
            s.to_string(),
            "reads 12, seeks 0, 4.0 KiB from source, 3.9 KiB from window, 0 B direct"
        );
        let s = stats([1, 1, 1023, 3 << 20, (3 << 19) * 1024]);
        assert_eq!(
            s.to_string(),
            "reads 1, seeks 1, 1023 B from source, 3.0 MiB from window, 1.5 GiB direct"
        );
    }

    #[test]
    fn byte_sizes_round_up_into_the_next_unit() {
        let cases = [
            (0, "0 B"),
            (1024, "1.0 KiB"),
            (1536, "1.5 KiB"),
            ((1 << 20) - 1, "1.0 MiB"),
            (1 << 40, "1.0 TiB"),
            (u64::MAX, "16384.0 PiB"),
        ];
        for (n, text) in cases {
            assert_eq!(ByteSize(n).to_string(), text, "{n}");
        }
    }
}
