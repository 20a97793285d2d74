use std::io;

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
///   consumer: a local disk, a mount, a network link), it grows the chunk size up to
///   `chunk_size`, then the depth up to `depth`: by 4x while what it keeps in flight is under a
///   sixteenth of [`memory_bound`](Self::memory_bound), by 2x after (64 KiB, 256 KiB, 1 MiB,
///   2 MiB, 4 MiB, then 4 chunks by default). A read elsewhere starts it small again. On
///   a cached local file it stays small (nothing is requested at all), on a 2 ms link it grows
///   to its largest.
///
/// On a FUSE mount that reads each file as one stream and restarts it for a read far from
/// where it is (an `rclone mount` without its VFS cache, over FTP or HTTP), chunks in flight
/// far apart restart it for every chunk: use a small fixed shape in order, such as
/// `ReadAhead::new(128 << 10, 2)` (at or above its limit there, where the default reached
/// 0.1-0.2x; BENCHMARKS.md, "OpenDAL backends").
///
/// Either way, memory is bounded by [`memory_bound`](Self::memory_bound): `chunk_size * depth`
/// (plus the input's window; a chunk under 4 KiB that serves a larger read may be up to 4 KiB),
/// and a [`MemoryBudget`](super::MemoryBudget) can bound it across inputs. The default is adaptive up to 4 MiB × 4 (16 MiB).
///
/// # Examples
///
/// ```
/// use async_buffered_input::fetch::ReadAhead;
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
    pub const DEFAULT_CHUNK_SIZE: usize = 4 << 20;
    /// The default's most chunks at a time: 4.
    pub const DEFAULT_DEPTH: usize = 4;
    /// Where an adaptive read-ahead starts: chunks of 64 KiB (or its largest, if smaller) ...
    pub const INITIAL_CHUNK_SIZE: usize = 64 << 10;
    /// ... 2 at a time (or its most, if fewer).
    pub const INITIAL_DEPTH: usize = 2;

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

    /// Adaptive: starts at [`INITIAL_CHUNK_SIZE`](Self::INITIAL_CHUNK_SIZE) ×
    /// [`INITIAL_DEPTH`](Self::INITIAL_DEPTH) and grows while the consumer waits for chunks,
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

    /// The most bytes read-ahead holds or has in flight: `chunk_size * depth` (saturating).
    pub fn memory_bound(&self) -> usize {
        self.chunk_size.saturating_mul(self.depth)
    }

    /// The shape `(chunk size, depth)` a sequential run starts with.
    pub(crate) fn initial_shape(&self) -> (usize, usize) {
        (self.initial_chunk, self.initial_depth)
    }

    /// The shape after `(chunk, depth)` once the consumer waited for a chunk in flight: the
    /// growth rule, in this one place. The chunk size grows up to `chunk_size`, then the depth
    /// up to `depth`: by 4x while `chunk * depth` is under a sixteenth of
    /// [`memory_bound`](Self::memory_bound), by 2x after, as the Linux kernel grows its
    /// readahead window. A slow link reaches the full shape in a few waits; a fixed read-ahead
    /// is at its full shape from the start.
    pub(crate) fn grown(&self, (chunk, depth): (usize, usize)) -> (usize, usize) {
        let factor = if chunk.saturating_mul(depth) < self.memory_bound() / 16 {
            4
        } else {
            2
        };
        let grown = if chunk < self.chunk_size {
            (chunk.saturating_mul(factor).min(self.chunk_size), depth)
        } else {
            (chunk, depth.saturating_mul(factor).min(self.depth))
        };
        debug_assert!(grown.0 <= self.chunk_size && grown.1 <= self.depth);
        grown
    }
}

impl Default for ReadAhead {
    /// Adaptive, up to [`DEFAULT_CHUNK_SIZE`](Self::DEFAULT_CHUNK_SIZE) ×
    /// [`DEFAULT_DEPTH`](Self::DEFAULT_DEPTH).
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

    /// The shapes an adaptive read-ahead goes through, wait after wait, as its docs list them.
    fn shapes(read_ahead: ReadAhead) -> Vec<(usize, usize)> {
        let mut shapes = vec![read_ahead.initial_shape()];
        loop {
            let last = *shapes.last().unwrap();
            let next = read_ahead.grown(last);
            if next == last {
                return shapes;
            }
            shapes.push(next);
        }
    }

    #[test]
    fn the_default_grows_by_4x_then_2x_the_chunk_then_the_depth() {
        const K: usize = 1 << 10;
        const M: usize = 1 << 20;
        assert_eq!(
            shapes(ReadAhead::default()),
            [
                (64 * K, 2),
                (256 * K, 2),
                (M, 2),
                (2 * M, 2),
                (4 * M, 2),
                (4 * M, 4)
            ]
        );
        assert_eq!(shapes(ReadAhead::new(M, 3)), [(M, 3)], "fixed: never grows");
        assert_eq!(
            shapes(ReadAhead::adaptive(100 * K, 8)),
            [(64 * K, 2), (100 * K, 2), (100 * K, 4), (100 * K, 8)],
            "past a sixteenth of the bound: by 2x, capped at the largest chunk"
        );
        assert_eq!(
            shapes(ReadAhead::adaptive(4 * M, 16)),
            [
                (64 * K, 2),
                (256 * K, 2),
                (M, 2),
                (4 * M, 2),
                (4 * M, 4),
                (4 * M, 8),
                (4 * M, 16)
            ],
            "under a sixteenth of the bound: by 4x"
        );
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
