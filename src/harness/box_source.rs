use tokio::io::{AsyncRead, AsyncSeek};

/// A source the harness can time: readable, seekable, movable between tasks.
///
/// Implemented for every `AsyncRead + AsyncSeek + Unpin + Send` type: tokio's `File`, a
/// `std::io::Cursor`, [`PositionalReader`](crate::source::PositionalReader), and so on.
pub trait ReadSeek: AsyncRead + AsyncSeek + Unpin + Send {}

impl<T: AsyncRead + AsyncSeek + Unpin + Send + ?Sized> ReadSeek for T {}

/// A boxed [`ReadSeek`]: what a [`Source`](super::Source) opens for each cell of a run.
pub type BoxSource = Box<dyn ReadSeek>;
