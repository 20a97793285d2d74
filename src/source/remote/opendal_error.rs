//! OpenDAL's errors as `io::Error`s with a kind (see [`OpendalSource`]'s Errors), and the
//! one error a read is tried again for.
//!
//! [`OpendalSource`]: crate::source::OpendalSource

use std::error::Error as StdError;
use std::io;

use opendal::Operator;

use crate::error::source_error::SourceError;

/// How many times a read is tried when OpenDAL's FTP service hands it a control connection
/// with a stale reply (see [`is_stale_ftp_reply`]).
pub(crate) const FTP_TRIES: u32 = 4;

/// Whether `e` is OpenDAL's FTP service failing a read because the pooled control connection it
/// took still had the reply to an earlier, cut-short transfer unread.
///
/// OpenDAL's FTP reader ends a ranged read by dropping the data connection, without reading the
/// server's reply to that `RETR` (`426 Transfer aborted`, RFC 959); the pool checks a
/// connection with a `NOOP` before reuse, but when the server answers the `NOOP` before it
/// notices the closed data connection, the connection goes back to the pool with the `426`
/// still pending, and the next read on it (its `REST`) reads that reply and fails as
/// `Unexpected`. The failed connection is then dropped by the pool (its next `NOOP` check reads
/// the `REST` reply), so trying again on another connection succeeds. Only `Unexpected` errors
/// of FTP operators are tried again; every other error is final.
pub(crate) fn is_stale_ftp_reply(operator: &Operator, e: &opendal::Error) -> bool {
    matches!(operator.info().scheme(), "ftp" | "ftps") && e.kind() == opendal::ErrorKind::Unexpected
}

/// OpenDAL's error as an `io::Error` whose message is `context` and whose kind is described
/// on [`OpendalSource`](crate::source::OpendalSource).
pub(crate) fn io_error(context: String, e: opendal::Error) -> io::Error {
    use opendal::ErrorKind as K;
    let kind = match e.kind() {
        K::NotFound => io::ErrorKind::NotFound,
        K::PermissionDenied => io::ErrorKind::PermissionDenied,
        K::IsADirectory => io::ErrorKind::IsADirectory,
        K::NotADirectory => io::ErrorKind::NotADirectory,
        K::AlreadyExists => io::ErrorKind::AlreadyExists,
        K::ConfigInvalid => io::ErrorKind::InvalidInput,
        K::Unsupported => io::ErrorKind::Unsupported,
        // Asked past the real end: the file is shorter than its length said.
        K::RangeNotSatisfied => io::ErrorKind::UnexpectedEof,
        _ => match io_cause(&e) {
            Some(kind) if kind != io::ErrorKind::Other => kind,
            _ if e.is_temporary() => io::ErrorKind::Interrupted,
            _ => io::ErrorKind::Other,
        },
    };
    SourceError::wrap(context, io::Error::new(kind, e))
}

/// The kind of the first `io::Error` among the causes of `e`.
fn io_cause(e: &opendal::Error) -> Option<io::ErrorKind> {
    let mut cause: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<io::Error>() {
            return Some(io.kind());
        }
        cause = c.source();
    }
    None
}
