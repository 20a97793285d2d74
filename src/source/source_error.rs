use std::error::Error as StdError;
use std::fmt;
use std::io;

/// A source failure: what was asked of which source, with the underlying error (and its kind)
/// as the cause: its [`source()`](StdError::source), not part of the message.
#[derive(Debug)]
pub(crate) struct SourceError {
    context: String,
    cause: io::Error,
}

impl SourceError {
    /// Wraps `cause` as an `io::Error` of the same kind whose message is `context` (e.g. "read
    /// of 100 bytes at offset 5 from /tmp/f") and whose source is `cause`.
    pub(crate) fn wrap(context: String, cause: io::Error) -> io::Error {
        io::Error::new(cause.kind(), SourceError { context, cause })
    }
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.context)
    }
}

impl StdError for SourceError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&self.cause)
    }
}
