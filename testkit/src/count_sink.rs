//! Where a [`Counting`](crate::Counting) stream counts: the trait, and the shared [`Counts`].

use std::io::SeekFrom;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::Counts;

/// How a `poll_read` on a counted stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// `Ready(Ok)` with this many bytes (0: the end of the stream, or no room in the buffer).
    Bytes(u64),
    /// `Ready(Err)`.
    Failed,
    /// `Pending`.
    Pending,
}

/// The counters of a [`Counting`](crate::Counting) stream: told of every `poll_read` and
/// every `start_seek` that reaches the wrapped stream.
pub trait CountSink {
    /// A `poll_read` on the stream ended as `outcome`.
    fn read(&mut self, outcome: ReadOutcome);

    /// A `start_seek(position)` was made on the stream (whatever its outcome).
    fn seek(&mut self, position: SeekFrom);
}

/// The test kit's counters, shared with the test (sequentially consistent atomics, and every
/// seek logged).
impl CountSink for Arc<Counts> {
    fn read(&mut self, outcome: ReadOutcome) {
        match outcome {
            ReadOutcome::Bytes(n) => {
                self.reads.fetch_add(1, Ordering::SeqCst);
                self.bytes.fetch_add(n, Ordering::SeqCst);
                if n == 0 {
                    self.zero_reads.fetch_add(1, Ordering::SeqCst);
                }
            }
            ReadOutcome::Failed => {
                self.reads.fetch_add(1, Ordering::SeqCst);
                self.read_errors.fetch_add(1, Ordering::SeqCst);
            }
            ReadOutcome::Pending => {
                self.pending_reads.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    fn seek(&mut self, position: SeekFrom) {
        self.seeks.fetch_add(1, Ordering::SeqCst);
        self.seek_log.lock().unwrap().push(position);
    }
}
