//! The counters a [`Counting`](crate::Counting) stream shares with the test.

use std::io::SeekFrom;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

#[cfg(doc)]
use crate::Counting;

/// Counters shared between a [`Counting`] source and the test.
#[derive(Debug, Default)]
pub struct Counts {
    /// `poll_read` calls that returned `Ready` (Ok or Err), including 0-byte (EOF) reads.
    pub reads: AtomicU64,
    /// `poll_read` calls that returned `Ready(Ok)` with 0 bytes.
    pub zero_reads: AtomicU64,
    /// `poll_read` calls that returned `Ready(Err)`.
    pub read_errors: AtomicU64,
    /// `poll_read` calls that returned `Pending`.
    pub pending_reads: AtomicU64,
    /// Bytes delivered by `Ready(Ok)` reads.
    pub bytes: AtomicU64,
    /// `start_seek` calls (whatever their outcome).
    pub seeks: AtomicU64,
    /// Every `start_seek` argument, in order.
    pub seek_log: Mutex<Vec<SeekFrom>>,
}

/// A point-in-time copy of [`Counts`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountSnapshot {
    /// See [`Counts::reads`].
    pub reads: u64,
    /// See [`Counts::zero_reads`].
    pub zero_reads: u64,
    /// See [`Counts::read_errors`].
    pub read_errors: u64,
    /// See [`Counts::bytes`].
    pub bytes: u64,
    /// See [`Counts::seeks`].
    pub seeks: u64,
}

impl Counts {
    /// The counters now (the seek log aside).
    pub fn snapshot(&self) -> CountSnapshot {
        CountSnapshot {
            reads: self.reads.load(Ordering::SeqCst),
            zero_reads: self.zero_reads.load(Ordering::SeqCst),
            read_errors: self.read_errors.load(Ordering::SeqCst),
            bytes: self.bytes.load(Ordering::SeqCst),
            seeks: self.seeks.load(Ordering::SeqCst),
        }
    }

    /// Every `start_seek` argument so far, in order.
    pub fn seek_log(&self) -> Vec<SeekFrom> {
        self.seek_log.lock().unwrap().clone()
    }
}
