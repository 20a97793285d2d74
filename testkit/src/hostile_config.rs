//! The misbehaviour switches of a [`Hostile`](crate::Hostile) stream.

use std::io::ErrorKind;

#[cfg(doc)]
use crate::Hostile;

/// `ErrorKind` of the read error a [`Hostile`] injects.
pub const HOSTILE_READ_ERROR: ErrorKind = ErrorKind::ConnectionReset;
/// `ErrorKind` of the seek error a [`Hostile`] injects.
pub const HOSTILE_SEEK_ERROR: ErrorKind = ErrorKind::TimedOut;

/// Where a [`Hostile`] injected seek failure surfaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeekFail {
    /// `start_seek` returns the error (no seek is then in flight).
    InStart,
    /// `start_seek` succeeds and the following `poll_complete` returns the error; the source
    /// position is left unchanged.
    InComplete,
}

/// Misbehaviour switches of a [`Hostile`] source. `Default` is a well-behaved source.
#[derive(Clone, Debug, Default)]
pub struct HostileConfig {
    /// Deliver between 1 and 13 bytes per `poll_read` (sequence determined by `seed`), never
    /// more than asked for.
    pub short_reads: bool,
    /// Return `Pending` (after `cx.waker().wake_by_ref()`) on every other call of `poll_read`
    /// (with a non-empty buffer) and of `poll_complete`, starting with the first one.
    pub pending: bool,
    /// Seed of the short-read length sequence.
    pub seed: u64,
    /// Fail one `poll_read` with [`HOSTILE_READ_ERROR`] as soon as this many bytes have been
    /// delivered in total (counting all reads since creation). Reads before that are capped so
    /// exactly this many bytes are delivered before the error. Afterwards the source works
    /// normally; its position is unaffected by the error.
    pub fail_read_after: Option<u64>,
    /// Fail the k-th (0-based, counting every `start_seek` call) seek once, with
    /// [`HOSTILE_SEEK_ERROR`], either in `start_seek` or in `poll_complete`.
    pub fail_seek: Option<(u64, SeekFail)>,
}

impl HostileConfig {
    /// Short reads and `Pending` everywhere, no errors.
    pub fn short_and_pending(seed: u64) -> Self {
        HostileConfig {
            short_reads: true,
            pending: true,
            seed,
            ..Default::default()
        }
    }

    /// `Pending` everywhere, no errors.
    pub fn pending() -> Self {
        HostileConfig {
            pending: true,
            ..Default::default()
        }
    }

    /// The `k`-th seek (0-based) fails once, as `how` says; no other misbehaviour.
    pub fn failing_seek(k: u64, how: SeekFail) -> Self {
        HostileConfig {
            fail_seek: Some((k, how)),
            ..Default::default()
        }
    }
}
