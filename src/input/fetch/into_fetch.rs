//! What [`AsyncBufferedInput::new`](crate::AsyncBufferedInput::new) accepts: a fetcher, or a
//! stream that becomes a [`StreamFetch`].

use tokio::io::{AsyncRead, AsyncSeek};

use super::positional_fetch::PositionalFetch;
use super::seam::Fetch;
use super::stream_fetch::StreamFetch;

/// What [`AsyncBufferedInput::new`](crate::AsyncBufferedInput::new) accepts: a fetcher, or
/// any `AsyncRead + AsyncSeek + Unpin` stream, which becomes a [`StreamFetch`].
#[allow(unreachable_pub)] // sealed: `pub` so that `new` may take it
pub trait IntoFetch {
    /// The fetcher this becomes.
    type Fetch: Fetch;

    /// Makes the fetcher.
    fn into_fetch(self) -> Self::Fetch;
}

impl<R: AsyncRead + AsyncSeek + Unpin> IntoFetch for R {
    type Fetch = StreamFetch<R>;

    fn into_fetch(self) -> StreamFetch<R> {
        StreamFetch::new(self)
    }
}

impl<R: AsyncRead + AsyncSeek + Unpin> IntoFetch for StreamFetch<R> {
    type Fetch = Self;

    fn into_fetch(self) -> Self {
        self
    }
}

impl<S: crate::source::PositionalSource> IntoFetch for PositionalFetch<S> {
    type Fetch = Self;

    fn into_fetch(self) -> Self {
        self
    }
}
