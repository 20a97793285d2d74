use std::error::Error as StdError;
use std::fmt;
use std::io;

/// A source failure with what was asked of which source, keeping the underlying error (and its
/// kind) as the cause.
#[derive(Debug)]
pub(crate) struct SourceError {
    context: String,
    cause: io::Error,
}

impl SourceError {
    /// Wraps `cause` as an `io::Error` of the same kind whose message starts with `context`
    /// (e.g. "read of 100 bytes at offset 5 from /tmp/f").
    pub(crate) fn wrap(context: String, cause: io::Error) -> io::Error {
        io::Error::new(cause.kind(), SourceError { context, cause })
    }
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.context, self.cause)
    }
}

impl StdError for SourceError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&self.cause)
    }
}
