//! The stats of several inputs together, kept as they work.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::stats::Stats;

/// A running total of the [`Stats`] of a group of inputs: an input, its clones and slices (and
/// their clones and slices), and any input that [joins](crate::AsyncBufferedInput::with_stats_group)
/// it. For a service that wants the work done on a file (or a whole index) by every input it
/// opened on it, those still open and those already dropped.
///
/// A handle: clones of a `StatsGroup` are the same group. An input belongs to at most one
/// group, and its clones and [slices](crate::AsyncBufferedInput::slice) belong to it too. Read
/// the total with [`stats`](Self::stats), at any time and from any thread.
///
/// What the total holds:
///
/// - every input of the group that was dropped: all its work;
/// - every input still open: its fetches (bytes from source, reads, seeks) as each completes,
///   and the bytes it handed out as of its last read that went past its window; the bytes it
///   handed out of its window since then, without I/O, count when it next reads past the window
///   or is dropped.
///
/// So once the inputs are dropped, the total is exactly the sum of their
/// [`stats`](crate::AsyncBufferedInput::stats). It costs nothing on reads served from the
/// window, and a few atomic additions per fetch and per read that goes past the window, only for
/// inputs in a group.
///
/// # Examples
///
/// ```
/// use async_buffered_input::PositionalFetch;
/// use async_buffered_input::source::MemorySource;
/// use async_buffered_input::{AsyncBufferedInput, StatsGroup};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let group = StatsGroup::new();
/// let fetch = PositionalFetch::new(MemorySource::new(vec![7u8; 10_000]));
/// let mut input = AsyncBufferedInput::with_capacity(1024, fetch).with_stats_group(&group);
/// input.read_u32().await?;
/// let mut tail = input.slice(9000, 1000).await?; // in the group too
/// tail.read_bytes_owned(1000).await?;
/// let (a, b) = (input.stats(), tail.stats());
/// drop((input, tail));
/// assert_eq!(group.stats(), a + b);
/// assert_eq!(group.stats().bytes_from_source, 1024 + 1000); // a window refill each
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default)]
pub struct StatsGroup {
    counters: Arc<Counters>,
}

/// The counters of [`Stats`], added to from any thread.
#[derive(Default)]
struct Counters {
    underlying_reads: AtomicU64,
    underlying_seeks: AtomicU64,
    bytes_from_source: AtomicU64,
    bytes_from_window: AtomicU64,
    bytes_direct: AtomicU64,
}

impl StatsGroup {
    /// A new group, with nothing counted yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The work of the group's inputs so far (see [the type's docs](Self) for when an open
    /// input's work shows).
    pub fn stats(&self) -> Stats {
        let c = &*self.counters;
        Stats {
            underlying_reads: c.underlying_reads.load(Ordering::Relaxed),
            underlying_seeks: c.underlying_seeks.load(Ordering::Relaxed),
            bytes_from_source: c.bytes_from_source.load(Ordering::Relaxed),
            bytes_from_window: c.bytes_from_window.load(Ordering::Relaxed),
            bytes_direct: c.bytes_direct.load(Ordering::Relaxed),
        }
    }

    /// Whether `self` and `other` are the same group.
    pub fn same_group(&self, other: &StatsGroup) -> bool {
        Arc::ptr_eq(&self.counters, &other.counters)
    }

    /// Adds `work` to the total (atomic adds; counters never get near `u64::MAX`).
    pub(crate) fn add(&self, work: Stats) {
        let c = &*self.counters;
        for (counter, n) in [
            (&c.underlying_reads, work.underlying_reads),
            (&c.underlying_seeks, work.underlying_seeks),
            (&c.bytes_from_source, work.bytes_from_source),
            (&c.bytes_from_window, work.bytes_from_window),
            (&c.bytes_direct, work.bytes_direct),
        ] {
            if n != 0 {
                counter.fetch_add(n, Ordering::Relaxed);
            }
        }
    }
}

/// The total, as [`Stats`]' `Debug`.
impl fmt::Debug for StatsGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StatsGroup").field(&self.stats()).finish()
    }
}

/// The total, as [`Stats`]' `Display`.
impl fmt::Display for StatsGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.stats().fmt(f)
    }
}
