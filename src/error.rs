//! The error payload carried inside [`std::io::Error`] by this crate.

use std::error::Error as StdError;
use std::fmt;
use std::io;

/// What went wrong, and where, when an input operation failed.
///
/// Every error this crate returns is an [`io::Error`] whose [`kind`](io::Error::kind) says what
/// happened (`UnexpectedEof` for a read past the end, `InvalidData` for malformed encodings, the
/// source's own kind for source failures) and whose payload is an `InputError` naming the
/// operation, the position it started at, and the lengths involved. Reach it with
/// [`io::Error::get_ref`] and [`downcast_ref`](https://doc.rust-lang.org/std/error/trait.Error.html#method.downcast_ref):
///
/// ```
/// use async_buffered_input::{AsyncBufferedInput, InputError};
/// use std::io::{Cursor, ErrorKind};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut input = AsyncBufferedInput::new(Cursor::new(vec![1u8, 2, 3]));
/// let mut buf = [0u8; 5];
/// let err = input.read_bytes(&mut buf).await.unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
/// let detail = err.get_ref().unwrap().downcast_ref::<InputError>().unwrap();
/// assert_eq!((detail.position(), detail.requested(), detail.available()), (0, 5, Some(3)));
/// assert_eq!(input.position(), 0); // nothing was consumed
/// # }
/// ```
#[derive(Debug)]
pub struct InputError {
    op: &'static str,
    position: u64,
    requested: u64,
    available: Option<u64>,
    detail: Option<String>,
    source: Option<io::Error>,
}

impl InputError {
    /// A read of `requested` bytes at `position` found only `available` before the end.
    pub(crate) fn eof(
        op: &'static str,
        position: u64,
        requested: u64,
        available: u64,
    ) -> io::Error {
        let e = InputError {
            op,
            position,
            requested,
            available: Some(available),
            detail: None,
            source: None,
        };
        io::Error::new(io::ErrorKind::UnexpectedEof, e)
    }

    /// The source failed while serving `op` at `position`; the kind is kept.
    pub(crate) fn source(
        op: &'static str,
        position: u64,
        requested: u64,
        err: io::Error,
    ) -> io::Error {
        let kind = err.kind();
        let e = InputError {
            op,
            position,
            requested,
            available: None,
            detail: None,
            source: Some(err),
        };
        io::Error::new(kind, e)
    }

    /// The bytes at `position` are not a valid encoding of what `op` decodes.
    pub(crate) fn invalid(
        op: &'static str,
        position: u64,
        requested: u64,
        detail: String,
    ) -> io::Error {
        let e = InputError {
            op,
            position,
            requested,
            available: None,
            detail: Some(detail),
            source: None,
        };
        io::Error::new(io::ErrorKind::InvalidData, e)
    }

    /// A request that cannot be honoured whatever the data (an arithmetic overflow, a negative seek).
    pub(crate) fn invalid_input(op: &'static str, position: u64, detail: String) -> io::Error {
        let e = InputError {
            op,
            position,
            requested: 0,
            available: None,
            detail: Some(detail),
            source: None,
        };
        io::Error::new(io::ErrorKind::InvalidInput, e)
    }

    /// The operation that failed, such as `"read_bytes"` or `"read_vint"`.
    pub fn operation(&self) -> &'static str {
        self.op
    }

    /// The position (offset in the source) where the failed operation started.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// How many bytes the operation asked for (for decoders, the most the value could take).
    pub fn requested(&self) -> u64 {
        self.requested
    }

    /// For reads past the end: how many bytes were there between the position and the end.
    pub fn available(&self) -> Option<u64> {
        self.available
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} bytes at position {}",
            self.op, self.requested, self.position
        )?;
        if let Some(available) = self.available {
            write!(f, " went past the end: only {available} bytes available")?;
        }
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        if let Some(source) = &self.source {
            write!(f, ": source error: {source}")?;
        }
        Ok(())
    }
}

impl StdError for InputError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_ref().map(|e| e as &(dyn StdError + 'static))
    }
}
