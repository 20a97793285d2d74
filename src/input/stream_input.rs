//! Inputs over streams: reaching the stream under an input made from one.

use tokio::io::{AsyncRead, AsyncSeek};

use crate::input::fetch::StreamFetch;
use crate::input::AsyncBufferedInput;

/// Reaching the stream of an input made by [`AsyncBufferedInput::new`] from a stream.
impl<R: AsyncRead + AsyncSeek + Unpin> AsyncBufferedInput<StreamFetch<R>> {
    /// The stream.
    pub fn get_ref(&self) -> &R {
        self.fetcher().get_ref()
    }

    /// The stream, mutably.
    ///
    /// Since the caller may move the stream's cursor, the input forgets where it is, and its
    /// next fetch seeks first. The window is kept: the caller must not change the bytes it
    /// covers.
    pub fn get_mut(&mut self) -> &mut R {
        self.fetcher_mut().get_mut()
    }

    /// The stream, dropping the window. Its cursor is wherever the input's last fetch or seek
    /// left it (usually the end of the window, ahead of [`position`](Self::position)); seek it
    /// before reading from it.
    pub fn into_inner(self) -> R {
        self.into_fetch().into_inner()
    }
}
