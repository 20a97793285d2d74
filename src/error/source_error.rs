use std::error::Error as StdError;
use std::fmt;
use std::io;

use crate::error::debug_as_message;

/// A source failure: what was asked of which source, and why it failed, in one line.
///
/// The payload of the [`io::Error`]s the crate's sources return (and what
/// [`Retrying`](crate::layer::Retrying) returns when it gives up): the error's kind is the cause's
/// kind, and its message is the request followed by the cause's own text, such as
/// `open idx/nope.si: No such file or directory (os error 2)` or
/// `HEAD http://host/nope.si: 404 Not Found`. The cause is not also returned by
/// [`source()`](StdError::source), so a reporter that walks the chain (`anyhow`, `eyre`)
/// prints it once; reach it with [`cause`](Self::cause).
///
/// ```
/// use async_buffered_input::SourceError;
/// use async_buffered_input::source::FileSource;
/// use std::io::ErrorKind;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let err = FileSource::open("idx/nope.si").await.unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::NotFound);
/// let detail = err.get_ref().unwrap().downcast_ref::<SourceError>().unwrap();
/// assert_eq!(detail.context(), "open idx/nope.si");
/// assert_eq!(detail.cause().kind(), ErrorKind::NotFound);
/// // On Linux: "open idx/nope.si: No such file or directory (os error 2)".
/// assert_eq!(err.to_string(), format!("open idx/nope.si: {}", detail.cause()));
/// assert!(std::error::Error::source(&err).is_none()); // the cause is in the message
/// # }
/// ```
pub struct SourceError {
    context: String,
    // The cause's text as the message shows it, when it is not the cause's own `Display` (an
    // object store's error, whose own text runs to several lines).
    reason: Option<String>,
    cause: io::Error,
}

impl SourceError {
    /// `context` (what was asked of which source, e.g. `read of 100 bytes at offset 5 from
    /// /tmp/f`) failed because of `cause`. Turn it into an [`io::Error`] of the cause's kind
    /// with `io::Error::from`.
    pub fn new(context: impl Into<String>, cause: io::Error) -> Self {
        Self {
            context: context.into(),
            reason: None,
            cause,
        }
    }

    /// Wraps `cause` as an `io::Error` of the same kind whose message is `context`, then the
    /// cause's text.
    pub(crate) fn wrap(context: String, cause: io::Error) -> io::Error {
        Self::new(context, cause).into()
    }

    /// As [`wrap`](Self::wrap), with `reason` in the message in place of the cause's text.
    #[cfg_attr(not(feature = "object-store"), allow(dead_code))]
    pub(crate) fn wrap_with_reason(context: String, reason: String, cause: io::Error) -> io::Error {
        Self {
            context,
            reason: Some(reason),
            cause,
        }
        .into()
    }

    /// What was asked of which source: the message without the cause.
    pub fn context(&self) -> &str {
        &self.context
    }

    /// The error the request failed with, with its own kind and payload.
    pub fn cause(&self) -> &io::Error {
        &self.cause
    }

    /// The error the request failed with.
    pub fn into_cause(self) -> io::Error {
        self.cause
    }
}

impl From<SourceError> for io::Error {
    /// An `io::Error` of the cause's kind, with the `SourceError` as its payload.
    fn from(e: SourceError) -> Self {
        io::Error::new(e.cause.kind(), e)
    }
}

/// `CONTEXT: CAUSE`.
impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            Some(reason) => write!(f, "{}: {reason}", self.context),
            None => write!(f, "{}: {}", self.context, self.cause),
        }
    }
}

/// The message, in quotes (`SourceError("…")`), so that `?` from `main` prints one readable
/// line; `{:#?}` shows the fields, the cause's own `Debug` included.
impl fmt::Debug for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_as_message(f, "SourceError", self, |fields| {
            fields
                .field("context", &self.context)
                .field("reason", &self.reason)
                .field("cause", &self.cause);
        })
    }
}

/// No `source()`: the cause's text ends the message, and [`SourceError::cause`] returns it.
impl StdError for SourceError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_ends_with_the_cause_and_the_chain_has_one_link() {
        let cause = io::Error::new(io::ErrorKind::ConnectionReset, "peer went away");
        let e = SourceError::wrap("read of 4 bytes at offset 0 from f".into(), cause);
        assert_eq!(e.kind(), io::ErrorKind::ConnectionReset);
        assert_eq!(
            e.to_string(),
            "read of 4 bytes at offset 0 from f: peer went away"
        );
        assert!(StdError::source(&e).is_none());
        assert_eq!(
            format!("{e:?}"),
            "Custom { kind: ConnectionReset, error: SourceError(\"read of 4 bytes at offset 0 \
             from f: peer went away\") }"
        );
        let detail = e.get_ref().unwrap().downcast_ref::<SourceError>().unwrap();
        assert_eq!(detail.cause().to_string(), "peer went away");
        assert!(format!("{detail:#?}").contains("ConnectionReset"));
    }

    #[test]
    fn a_reason_replaces_the_cause_text() {
        let cause = io::Error::new(io::ErrorKind::NotFound, "a long\nstory");
        let e = SourceError::wrap_with_reason("HEAD u".into(), "404 Not Found".into(), cause);
        assert_eq!(e.to_string(), "HEAD u: 404 Not Found");
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
