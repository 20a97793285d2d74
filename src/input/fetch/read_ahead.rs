use std::io;
use std::time::Duration;

/// How far a [`PositionalFetch`](super::PositionalFetch) reads ahead of sequential reads.
///
/// Once a fetch starts where the previous one ended, the fetcher requests the following chunks
/// before they are asked for, keeping a few requested or received and not yet consumed. Bytes
/// the source has at hand (a cached file) are instead read a chunk at a time into one reused
/// buffer, with no requests. On a link with round trip `rtt` and bandwidth `bw`, throughput
/// approaches `bw` once `chunk * (depth - 1)` is at least `rtt * bw`.
///
/// Two shapes:
///
/// - [`fixed`](Self::new): chunks of `chunk_size` bytes, `depth` at a time, always;
/// - [`adaptive`](Self::adaptive), the default: as the Linux kernel grows its readahead window,
///   it starts small (64 KiB chunks, 2 at a time) on the first sequential reads, and each time
///   the consumer has to wait for a chunk still in flight (the source is slower than the
///   consumer: a local disk, a mount, a network link), it grows by 4x, the depth up to `depth`
///   first, then the chunk size up to `chunk_size` (by default 64 KiB x 2, 64 KiB x 4,
///   256 KiB x 4, 1 MiB x 4, 4 MiB x 4). Up to
///   1 MiB in flight it grows at every wait; past it only while the chunks it waits for are
///   slow (most took more than 1 ms: 1 ms). A link's latency
///   is what more in flight can hide; a fast source on loopback (nginx, an FTP server) keeps a
///   consumer waiting because both share the CPU, and there chunks of 4 MiB only leave the
///   caches between the copy that collects a chunk and the copy that hands it out (nginx on
///   loopback: 256 KiB x 4 reaches about 1.0x the 1 MiB limit row, 4 MiB x 4 0.4-0.6x;
///   BENCHMARKS.md). A read elsewhere starts it small again. On a cached local file it stays
///   small (nothing is requested at all), on a 2 ms link or over SSHFS it grows to its
///   largest.
///
/// On a FUSE mount that reads each file as one stream and restarts it for a read far from
/// where it is (an `rclone mount` without its VFS cache, over FTP or HTTP), chunks in flight
/// far apart restart it for every chunk: use a small fixed shape in order, such as
/// `ReadAhead::new(128 << 10, 2)` (at or above its limit there, where the default reached
/// 0.1-0.2x; BENCHMARKS.md, "OpenDAL backends").
///
/// Either way, the chunks take at most [`memory_bound`](Self::memory_bound) (`chunk_size *
/// depth`) of a [`MemoryBudget`](crate::MemoryBudget), which can bound them across inputs;
/// what an input holds in all is stated in
/// [`AsyncBufferedInput`'s Memory section](crate::AsyncBufferedInput#memory). The default is
/// adaptive up to 4 MiB × 4 (16 MiB).
///
/// # Examples
///
/// ```
/// use async_buffered_input::ReadAhead;
///
/// let fixed = ReadAhead::new(1 << 20, 8);
/// assert_eq!(fixed.memory_bound(), 8 << 20);
/// assert!(!fixed.is_adaptive());
/// assert!(ReadAhead::try_new(0, 4).is_err());
///
/// let default = ReadAhead::default();
/// assert!(default.is_adaptive());
/// assert_eq!((default.initial_chunk_size(), default.initial_depth()), (64 << 10, 2));
/// assert_eq!(default.memory_bound(), 16 << 20);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadAhead {
    // All at least 1; `initial_chunk <= chunk_size`, `initial_depth <= depth`, equal when fixed.
    chunk_size: usize,
    depth: usize,
    initial_chunk: usize,
    initial_depth: usize,
}

impl ReadAhead {
    /// The default's largest chunk: 4 MiB.
    pub(crate) const DEFAULT_CHUNK_SIZE: usize = 4 << 20;
    /// The default's most chunks at a time: 4.
    pub(crate) const DEFAULT_DEPTH: usize = 4;
    /// Where an adaptive read-ahead starts: chunks of 64 KiB (or its largest, if smaller) ...
    pub(crate) const INITIAL_CHUNK_SIZE: usize = 64 << 10;
    /// ... 2 at a time (or its most, if fewer).
    pub(crate) const INITIAL_DEPTH: usize = 2;
    /// An adaptive read-ahead grows up to this much in flight (`chunk * depth`, 1 MiB: 256 KiB
    /// x 4 by default) whenever the consumer waits; past it, only once the chunks it waits for
    /// are slow (see 1 ms).
    pub(crate) const CHEAP_IN_FLIGHT: usize = 1 << 20;
    /// The chunks are slow when, of those the consumer waited for since the sequential run
    /// began (at its small shapes too), at least
    /// [`SLOW_WAITS`](Self::SLOW_WAITS) and more than half took more than this (1 ms) from
    /// being asked to their answer: the link's latency, not its bandwidth or the CPU, keeps the
    /// consumer waiting, and more in flight than 1 MiB
    /// pays. A majority, not one: a busy machine makes some chunks slow on any link, and any
    /// link has a fast one now and then. Measured at 256 KiB x 4 (BENCHMARKS.md): nginx on
    /// loopback 0.2-0.5 ms, SSHFS and an S3 server on loopback 2.5-4 ms.
    pub(crate) const SLOW_REQUEST: Duration = Duration::from_millis(1);
    /// How many slow chunks, at least, say the chunks of a sequential run are slow: 2.
    pub(crate) const SLOW_WAITS: u32 = 2;

    /// Chunks of `chunk_size` bytes, at most `depth` of them at a time, always (fixed).
    ///
    /// # Panics
    ///
    /// If either is 0; [`try_new`](Self::try_new) returns an error instead.
    pub fn new(chunk_size: usize, depth: usize) -> Self {
        match Self::try_new(chunk_size, depth) {
            Ok(ahead) => ahead,
            Err(e) => panic!("{e}"),
        }
    }

    /// Chunks of `chunk_size` bytes, at most `depth` of them at a time, always (fixed).
    ///
    /// # Errors
    ///
    /// `InvalidInput` if either is 0.
    pub fn try_new(chunk_size: usize, depth: usize) -> io::Result<Self> {
        if chunk_size == 0 || depth == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "ReadAhead needs a chunk size and depth of at least 1, got chunk_size {chunk_size}, depth {depth}"
                ),
            ));
        }
        Ok(Self {
            chunk_size,
            depth,
            initial_chunk: chunk_size,
            initial_depth: depth,
        })
    }

    /// Adaptive: starts at 64 KiB ×
    /// 2 and grows while the consumer waits for chunks,
    /// up to chunks of `max_chunk_size` bytes, `max_depth` at a time.
    ///
    /// # Panics
    ///
    /// If either is 0.
    pub fn adaptive(max_chunk_size: usize, max_depth: usize) -> Self {
        let max = Self::new(max_chunk_size, max_depth);
        Self {
            initial_chunk: Self::INITIAL_CHUNK_SIZE.min(max.chunk_size),
            initial_depth: Self::INITIAL_DEPTH.min(max.depth),
            ..max
        }
    }

    /// The size of a read-ahead request, in bytes: the largest, if adaptive.
    pub fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    /// The most chunks requested or held at a time: the most, if adaptive.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The chunk size a sequential run starts with.
    pub fn initial_chunk_size(&self) -> usize {
        self.initial_chunk
    }

    /// The depth a sequential run starts with.
    pub fn initial_depth(&self) -> usize {
        self.initial_depth
    }

    /// Whether it grows from its initial shape.
    pub fn is_adaptive(&self) -> bool {
        (self.initial_chunk, self.initial_depth) != (self.chunk_size, self.depth)
    }

    /// The most bytes of chunks the read-ahead holds or has in flight, and the most it takes of
    /// a [`MemoryBudget`](crate::MemoryBudget): `chunk_size * depth` (saturating). Chunks under
    /// 4 KiB are the one exception ([Memory](crate::AsyncBufferedInput#memory)).
    pub fn memory_bound(&self) -> usize {
        self.chunk_size.saturating_mul(self.depth)
    }

    /// The shape `(chunk size, depth)` a sequential run starts with.
    pub(crate) fn initial_shape(&self) -> (usize, usize) {
        (self.initial_chunk, self.initial_depth)
    }

    /// The largest shape `(chunk size, depth)`: what ranged reads get when they are tried in
    /// place of a stream (see `positional_fetch::pace`).
    pub(crate) fn full_shape(&self) -> (usize, usize) {
        (self.chunk_size, self.depth)
    }

    /// The shape after `(chunk, depth)` once the consumer waited for a chunk, `slow` whether the
    /// chunks waited for so far in the sequential run are slow (see 1 ms): the growth
    /// rule, in this one place. The depth grows by 4x up to `depth`, then the chunk size by 4x
    /// up to `chunk_size` (several small chunks before a few large ones); past
    /// 1 MiB in flight only if `slow`. A fixed read-ahead
    /// is at its full shape from the start.
    pub(crate) fn grown(&self, (chunk, depth): (usize, usize), slow: bool) -> (usize, usize) {
        const FACTOR: usize = 4;
        let grown = if depth < self.depth {
            (chunk, depth.saturating_mul(FACTOR).min(self.depth))
        } else {
            (chunk.saturating_mul(FACTOR).min(self.chunk_size), depth)
        };
        if grown.0.saturating_mul(grown.1) > Self::CHEAP_IN_FLIGHT && !slow {
            return (chunk, depth); // a fast source: larger shapes only cost the caches
        }
        debug_assert!(grown.0 <= self.chunk_size && grown.1 <= self.depth);
        grown
    }
}

impl Default for ReadAhead {
    /// Adaptive, up to 4 MiB ×
    /// 4.
    fn default() -> Self {
        Self::adaptive(Self::DEFAULT_CHUNK_SIZE, Self::DEFAULT_DEPTH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_rejected_with_both_values() {
        let err = ReadAhead::try_new(4096, 0).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(
            err.to_string().contains("chunk_size 4096, depth 0"),
            "{err}"
        );
    }

    /// The shapes an adaptive read-ahead goes through, its chunks slow or not.
    fn shapes(read_ahead: ReadAhead, slow: bool) -> Vec<(usize, usize)> {
        let mut shapes = vec![read_ahead.initial_shape()];
        loop {
            let last = *shapes.last().unwrap();
            let next = read_ahead.grown(last, slow);
            if next == last {
                return shapes;
            }
            shapes.push(next);
        }
    }

    const K: usize = 1 << 10;
    const M: usize = 1 << 20;
    const SLOW: bool = true;
    const FAST: bool = false;

    #[test]
    fn over_slow_requests_the_default_grows_the_depth_then_the_chunk_by_4x() {
        assert_eq!(
            shapes(ReadAhead::default(), SLOW),
            [(64 * K, 2), (64 * K, 4), (256 * K, 4), (M, 4), (4 * M, 4)]
        );
        assert_eq!(
            shapes(ReadAhead::new(M, 3), SLOW),
            [(M, 3)],
            "fixed: never grows"
        );
        assert_eq!(
            shapes(ReadAhead::adaptive(100 * K, 8), SLOW),
            [(64 * K, 2), (64 * K, 8), (100 * K, 8)],
            "capped at the largest chunk"
        );
        assert_eq!(
            shapes(ReadAhead::adaptive(4 * M, 16), SLOW),
            [
                (64 * K, 2),
                (64 * K, 8),
                (64 * K, 16),
                (256 * K, 16),
                (M, 16),
                (4 * M, 16)
            ]
        );
    }

    #[test]
    fn over_fast_requests_it_stops_at_a_mebibyte_in_flight() {
        assert_eq!(
            shapes(ReadAhead::default(), FAST),
            [(64 * K, 2), (64 * K, 4), (256 * K, 4)]
        );
        assert_eq!(
            shapes(ReadAhead::adaptive(4 * M, 16), FAST),
            [(64 * K, 2), (64 * K, 8), (64 * K, 16)]
        );
        // Once requests turn slow, it grows on from where it stopped.
        let default = ReadAhead::default();
        assert_eq!(default.grown((256 * K, 4), SLOW), (M, 4));
        assert_eq!(default.grown((M, 4), FAST), (M, 4));
    }

    #[test]
    fn a_small_adaptive_read_ahead_starts_at_its_largest() {
        let small = ReadAhead::adaptive(4096, 1);
        assert_eq!(
            (small.initial_chunk_size(), small.initial_depth()),
            (4096, 1)
        );
        assert!(!small.is_adaptive());
    }
}
