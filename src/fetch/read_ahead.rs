use std::io;

/// How far a [`PositionalFetch`](super::PositionalFetch) reads ahead of sequential reads.
///
/// Once a fetch starts where the previous one ended, the fetcher requests the following
/// `chunk_size`-byte chunks before they are asked for, keeping at most `depth` chunks requested
/// or received and not yet consumed. Bytes the source has at hand (a cached file) are instead
/// read a chunk at a time into one reused buffer, with no requests. So memory is bounded by
/// `chunk_size * depth` (plus the input's window), and on a link with round trip `rtt` and bandwidth `bw`, throughput
/// approaches `bw` once `chunk_size * (depth - 1)` is at least `rtt * bw`.
///
/// The default is 256 KiB × 4: 1 MiB in flight.
///
/// # Examples
///
/// ```
/// use async_buffered_input::fetch::ReadAhead;
///
/// let ahead = ReadAhead::new(1 << 20, 8);
/// assert_eq!(ahead.memory_bound(), 8 << 20);
/// assert!(ReadAhead::try_new(0, 4).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadAhead {
    // Both at least 1.
    chunk_size: usize,
    depth: usize,
}

impl ReadAhead {
    /// The default chunk size: 256 KiB.
    pub const DEFAULT_CHUNK_SIZE: usize = 256 * 1024;
    /// The default depth: 4 chunks.
    pub const DEFAULT_DEPTH: usize = 4;

    /// Chunks of `chunk_size` bytes, at most `depth` of them at a time.
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

    /// Chunks of `chunk_size` bytes, at most `depth` of them at a time.
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
        Ok(Self { chunk_size, depth })
    }

    /// The size of one read-ahead request, in bytes.
    pub fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    /// The most chunks requested or held at a time.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The most bytes read-ahead holds or has in flight: `chunk_size * depth` (saturating).
    pub fn memory_bound(&self) -> usize {
        self.chunk_size.saturating_mul(self.depth)
    }
}

impl Default for ReadAhead {
    fn default() -> Self {
        Self::new(Self::DEFAULT_CHUNK_SIZE, Self::DEFAULT_DEPTH)
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
}
