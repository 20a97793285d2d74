//! The input for the async ecosystem, [`TokioIo`]: tokio's (and through `tokio_util`, the
//! `futures` crate's) `AsyncRead`/`AsyncBufRead`/`AsyncSeek`, and a
//! [`Stream`](futures_core::Stream) of [`Bytes`](bytes::Bytes) chunks.
//!
//! The input itself keeps only its own reads (Lucene's byte order, varints, strings), so that
//! tokio's extension methods (`read_u32`, big-endian) do not crowd or shadow them;
//! [`into_tokio_io`](crate::AsyncBufferedInput::into_tokio_io) (owned) and
//! [`tokio_io`](crate::AsyncBufferedInput::tokio_io) (borrowed) make it tokio's I/O, as
//! `tokio_util`'s `compat()` makes a reader `futures-io`'s.
//!
//! # futures-io
//!
//! An input's [`TokioIo`] implements tokio's `AsyncRead`, `AsyncBufRead` and `AsyncSeek`; `tokio_util`'s
//! [`compat`](https://docs.rs/tokio-util/latest/tokio_util/compat/) adapter turns it into the
//! `futures-io` traits of the same names, with the same behaviour (reads served from the
//! window, seeks that keep it). Add `tokio-util = { version = "0.7", features = ["compat"] }`
//! to your dependencies:
//!
//! ```
//! use async_buffered_input::PositionalFetch;
//! use async_buffered_input::source::MemorySource;
//! use async_buffered_input::AsyncBufferedInput;
//! use futures::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt, SeekFrom};
//! use tokio_util::compat::TokioAsyncReadCompatExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let text = b"first line\nsecond line\n".to_vec();
//! let input = AsyncBufferedInput::new(PositionalFetch::new(MemorySource::new(text)));
//! let mut reader = input.into_tokio_io().compat(); // futures::io::{AsyncRead, AsyncBufRead, AsyncSeek}
//!
//! let mut line = String::new();
//! reader.read_line(&mut line).await?;
//! assert_eq!(line, "first line\n");
//! reader.seek(SeekFrom::Start(6)).await?;
//! let mut rest = Vec::new();
//! reader.read_to_end(&mut rest).await?;
//! assert_eq!(rest, b"line\nsecond line\n");
//! let input = reader.into_inner().into_inner(); // the input, with its window and stats
//! assert_eq!(input.position(), 23);
//! # Ok(())
//! # }
//! ```
//!
//! # A stream of chunks
//!
//! [`AsyncBufferedInput::into_stream`](crate::AsyncBufferedInput::into_stream) makes an input a
//! [`TokioIo`] whose `Stream` of `io::Result<Bytes>` chunks is bounded in size; the chunks are
//! the window's own buffer handed out (no copy after the fetch). `tokio_util::io::ReaderStream`
//! works too, but copies every chunk out of the window into a buffer of its own.
//!
//! ```
//! use async_buffered_input::PositionalFetch;
//! use async_buffered_input::source::MemorySource;
//! use async_buffered_input::AsyncBufferedInput;
//! use futures::TryStreamExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
//! let input = AsyncBufferedInput::with_capacity(
//!     64 * 1024,
//!     PositionalFetch::new(MemorySource::new(data.clone())),
//! );
//! let chunks: Vec<bytes::Bytes> = input.into_stream(usize::MAX).try_collect().await?;
//! assert_eq!(chunks.iter().map(|c| c.len()).collect::<Vec<_>>(), [65536, 34464]);
//! assert_eq!(chunks.concat(), data);
//! # Ok(())
//! # }
//! ```

mod tokio_io;

pub use tokio_io::TokioIo;
