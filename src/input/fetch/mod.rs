//! The seam between an input's window and where its bytes come from.
//!
//! An [`AsyncBufferedInput`](crate::AsyncBufferedInput) asks its fetcher two things, as Lucene's
//! `BufferedIndexInput` asks `readInternal`: *the bytes at this offset* and *the length*. The
//! input keeps the only position; a fetcher never has a cursor of its own to keep in step.
//! Two fetchers implement the seam:
//!
//! - [`StreamFetch`] over any `AsyncRead + AsyncSeek` (a `tokio::fs::File`, a `Cursor`): it
//!   tracks where the stream's cursor is, seeks only when a fetch does not continue the last
//!   one, completes a seek left in flight by a dropped future, and asks the length with one seek
//!   to the end;
//! - [`PositionalFetch`] over a [`PositionalSource`](crate::source::PositionalSource) (a local
//!   file, memory, an object store): every fetch names its offset, so there is no cursor at
//!   all; optionally with [`ReadAhead`], chunks requested ahead of sequential reads (adaptive by
//!   default), bounded across inputs by a [`MemoryBudget`]. Inputs over it can be cloned and
//!   sliced.
//!
//! [`AsyncBufferedInput::new`](crate::AsyncBufferedInput::new) takes either: a stream is wrapped
//! in a `StreamFetch` for you.

mod positional_fetch;
mod read_ahead;
mod stream_fetch;

pub use positional_fetch::PositionalFetch;
pub use read_ahead::ReadAhead;
pub use stream_fetch::StreamFetch;

/// Where an [`AsyncBufferedInput`](crate::AsyncBufferedInput) gets its bytes:
/// [`StreamFetch`] or [`PositionalFetch`].
///
/// The trait is sealed: its methods are the crate's internal interface between the window and
/// the sources, free to change. To read from a new kind of storage, implement
/// [`PositionalSource`](crate::source::PositionalSource) (bytes at an offset) or tokio's
/// `AsyncRead + AsyncSeek`.
pub trait Fetch: seam::Seam {}

impl<T: seam::Seam> Fetch for T {}

/// The seam itself, sealed: reachable in the crate, unnameable outside it.
pub(crate) mod seam {
    use std::io;
    use std::sync::Arc;
    use std::task::{Context, Poll};

    use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};

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

    /// What [`AsyncBufferedInput::new`](crate::AsyncBufferedInput::new) accepts: a fetcher, or
    /// any `AsyncRead + AsyncSeek + Unpin` stream, which becomes a [`StreamFetch`].
    #[allow(unreachable_pub)] // sealed: `pub` so that `new` may take it
    pub trait IntoFetch {
        /// The fetcher this becomes.
        type Fetch: super::Fetch;

        /// Makes the fetcher.
        fn into_fetch(self) -> Self::Fetch;
    }

    impl<R: AsyncRead + AsyncSeek + Unpin> IntoFetch for R {
        type Fetch = super::StreamFetch<R>;

        fn into_fetch(self) -> super::StreamFetch<R> {
            super::StreamFetch::new(self)
        }
    }

    impl<R: AsyncRead + AsyncSeek + Unpin> IntoFetch for super::StreamFetch<R> {
        type Fetch = Self;

        fn into_fetch(self) -> Self {
            self
        }
    }

    impl<S: crate::source::PositionalSource> IntoFetch for super::PositionalFetch<S> {
        type Fetch = Self;

        fn into_fetch(self) -> Self {
            self
        }
    }
}
