//! The seam itself: [`Fetch`], the sealed trait an input's window asks for bytes, and its
//! methods ([`Seam`]), reachable in the crate and unnameable outside it.

use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::ReadBuf;

/// What a fetcher does for the window: bytes at an offset, the length, counters.
#[allow(unreachable_pub)] // sealed: `pub` so that `Fetch` may name it as a supertrait
pub trait Seam: Unpin {
    /// Reads bytes at `at` into `buf`: at least one unless `at` is at or past the end (then
    /// none), at most `buf.remaining()`. Short reads are fine; the window continues them.
    ///
    /// Cancel safety: a call that returned `Pending` may never be repeated; whatever it
    /// started must not make a later call at another offset return wrong bytes.
    fn poll_fetch(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>>;

    /// The length in bytes, asked once and then known.
    fn poll_length(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<u64>>;

    /// The length, if known without I/O.
    fn known_length(&self) -> Option<u64>;

    /// Completed reads: read calls on an underlying stream, fetches of a positional source.
    fn reads(&self) -> u64;

    /// What the fetcher reads, for errors: a path, a URL, "memory (N bytes)", "stream".
    fn resource(&self) -> Arc<str>;

    /// How many bytes from `at` on a fetch there would copy from bytes the fetcher holds
    /// already (read-ahead chunks that arrived), without I/O; 0 if none (the default).
    fn held(&mut self, _at: u64) -> usize {
        0
    }

    /// Starts fetching `[at, at + len)` without waiting, for a fetch there soon: a hint,
    /// never an error (a failed prefetch is forgotten, and the fetch asks again). Bounded
    /// by the fetcher; the default ignores it.
    fn prefetch(&mut self, _at: u64, _len: u64) {}

    /// Gives back what the fetcher holds beyond what it needs to go on (read-ahead chunks,
    /// prefetched ranges).
    fn release(&mut self) {}

    /// Seeks started on an underlying stream (0 for positional sources).
    fn seeks(&self) -> u64 {
        0
    }
}

/// Where an [`AsyncBufferedInput`](crate::AsyncBufferedInput) gets its bytes:
/// [`StreamFetch`](crate::StreamFetch) or [`PositionalFetch`](crate::PositionalFetch).
///
/// The trait is sealed: its methods are the crate's internal interface between the window and
/// the sources, free to change. To read from a new kind of storage, implement
/// [`PositionalSource`](crate::source::PositionalSource) (bytes at an offset) or tokio's
/// `AsyncRead + AsyncSeek`.
pub trait Fetch: Seam {}

impl<T: Seam> Fetch for T {}
