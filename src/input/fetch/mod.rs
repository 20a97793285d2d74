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

pub(crate) mod into_fetch;
mod positional_fetch;
mod read_ahead;
pub(crate) mod seam;
mod stream_fetch;

pub use positional_fetch::PositionalFetch;
pub use read_ahead::ReadAhead;
pub use seam::Fetch;
pub use stream_fetch::StreamFetch;
