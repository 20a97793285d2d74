use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::cell_report::per_second;
use super::format::{seconds, significant};

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
