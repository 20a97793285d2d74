//! Errors with context: what the harness was doing, with the failure that stopped it as the
//! cause.

use std::error::Error as StdError;
use std::fmt;
use std::io;

/// What the harness was doing (`cannot open /tmp/f`, `AsyncBufferedInput, 100 B requests, 8 KiB
/// window`), with the error that stopped it as its [`source()`](StdError::source), not repeated
/// in the message: reporters that walk the chain ([`chain`]) print each cause once.
#[derive(Debug)]
struct Context {
    message: String,
    cause: io::Error,
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for Context {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&self.cause)
    }
}

/// `cause` as an `io::Error` of the same kind whose message is `message` and whose source is
/// `cause`.
pub(crate) fn context(cause: io::Error, message: impl Into<String>) -> io::Error {
    io::Error::new(
        cause.kind(),
        Context {
            message: message.into(),
            cause,
        },
    )
}

/// `cannot VERB PATH: it is a directory, not a file`, as an `IsADirectory` error.
pub(crate) fn not_a_file(verb: &str, path: &std::path::Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::IsADirectory,
        format!(
            "cannot {verb} {}: it is a directory, not a file",
            path.display()
        ),
    )
}

/// `error` and each of its causes, joined with `": "`: `cannot open /tmp/f: No such file or
/// directory (os error 2)` (the test kit's, as the tests read errors).
pub(crate) use abi_testkit::chain;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_the_source_not_the_message() {
        let os = io::Error::new(io::ErrorKind::NotFound, "no such file");
        let err = context(context(os, "cannot open /tmp/f"), "the length of /tmp/f");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert_eq!(err.to_string(), "the length of /tmp/f");
        assert_eq!(
            chain(&err),
            "the length of /tmp/f: cannot open /tmp/f: no such file"
        );
    }
}
