//! An `object_store` error as a [`SourceError`]: the kind the HTTP/S3 client saw, and its
//! reason in one line.

use std::error::Error as StdError;
use std::io;

use object_store::client::{HttpError, HttpErrorKind};

use crate::error::source_error::SourceError;

/// How `object_store` words a response with an error status, before the status.
const STATUS_PREFIX: &str = "Server returned non-2xx status code: ";

/// The longest reason kept from a message of unknown shape.
const MAX_REASON: usize = 200;

/// `context` failed with `e`: an `io::Error` whose kind is what the client saw (see [`kind`])
/// and whose message is `context: REASON` (see [`reason`]); its payload's
/// [`cause`](SourceError::cause) is `e`, with that kind.
pub(crate) fn wrap(context: String, e: object_store::Error) -> io::Error {
    let kind = kind(&e);
    let reason = reason(&e);
    SourceError::wrap_with_reason(context, reason, io::Error::new(kind, e))
}

/// The errors under `e`, `e` first: `source()` links, and the payload of `io::Error`s (whose
/// own `source()` skips it).
fn chain<'a>(
    e: &'a (dyn StdError + 'static),
) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    std::iter::successors(Some(e), |&e| next(e))
}

/// The error under `e`.
fn next<'a>(e: &'a (dyn StdError + 'static)) -> Option<&'a (dyn StdError + 'static)> {
    match e.downcast_ref::<io::Error>() {
        Some(io) => io.get_ref().map(|inner| inner as &(dyn StdError + 'static)),
        None => e.source(),
    }
}

/// The kind of the first `io::Error` in the chain that has one (a refused, reset or timed out
/// connection, as the socket reported it); otherwise what `object_store` says: `NotFound`,
/// `PermissionDenied`, `TimedOut` for a timeout, `NotConnected` for a connection that failed
/// without an OS error, `ConnectionAborted` for a request cut off; `Other` for the rest.
fn kind(e: &object_store::Error) -> io::ErrorKind {
    let mut http = None;
    for link in chain(e) {
        if let Some(io) = link.downcast_ref::<io::Error>() {
            if io.kind() != io::ErrorKind::Other {
                return io.kind();
            }
        }
        if let Some(h) = link.downcast_ref::<HttpError>() {
            http.get_or_insert(h.kind());
        }
    }
    match e {
        object_store::Error::NotFound { .. } => return io::ErrorKind::NotFound,
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => return io::ErrorKind::PermissionDenied,
        _ => {}
    }
    match http {
        Some(HttpErrorKind::Timeout) => io::ErrorKind::TimedOut,
        Some(HttpErrorKind::Connect) => io::ErrorKind::NotConnected,
        Some(HttpErrorKind::Interrupted) => io::ErrorKind::ConnectionAborted,
        _ => io::ErrorKind::Other,
    }
}

/// Why, in one line: the text of the last error in the chain (the socket's error, the
/// client's "operation timed out"), an error status as `404 Not Found` (with an S3 error code
/// if the body has one: `403 Forbidden (SignatureDoesNotMatch)`); the first line of a
/// message of another shape, at most 200 bytes.
fn reason(e: &object_store::Error) -> String {
    let last = chain(e).last().map_or_else(String::new, |e| e.to_string());
    if let Some(rest) = last.strip_prefix(STATUS_PREFIX) {
        let (status, body) = rest.split_once(": ").unwrap_or((rest, ""));
        return match s3_code(body) {
            Some(code) => format!("{status} ({code})"),
            None => status.to_owned(),
        };
    }
    let line = last.lines().next().unwrap_or_default().trim();
    match line.char_indices().nth(MAX_REASON) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

/// The `<Code>` of an S3 error body, if it has a short one.
fn s3_code(body: &str) -> Option<&str> {
    let start = body.find("<Code>")? + "<Code>".len();
    let len = body[start..].find("</Code>")?;
    let code = body[start..start + len].trim();
    (!code.is_empty() && code.len() <= 64).then_some(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn not_found(source: impl StdError + Send + Sync + 'static) -> object_store::Error {
        object_store::Error::NotFound {
            path: "x".into(),
            source: Box::new(source),
        }
    }

    #[test]
    fn the_socket_kind_wins_and_its_text_ends_the_message() {
        let socket = io::Error::from(io::ErrorKind::ConnectionRefused);
        let text = socket.to_string();
        let wrapped = io::Error::other(socket); // as a client would box it
        let e = wrap(
            "HEAD http://h/x".into(),
            object_store::Error::Generic {
                store: "HTTP",
                source: Box::new(wrapped),
            },
        );
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
        assert_eq!(e.to_string(), format!("HEAD http://h/x: {text}"));
        let cause = e
            .get_ref()
            .unwrap()
            .downcast_ref::<SourceError>()
            .unwrap()
            .cause();
        assert_eq!(cause.kind(), io::ErrorKind::ConnectionRefused);
        assert!(cause.get_ref().unwrap().is::<object_store::Error>());
    }

    #[test]
    fn a_status_is_its_code_and_reason_with_an_s3_code() {
        #[derive(Debug)]
        struct Status(&'static str);
        impl std::fmt::Display for Status {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl StdError for Status {}
        let plain = not_found(Status(
            "Server returned non-2xx status code: 404 Not Found: <html>\r\n<body>nope</body>",
        ));
        assert_eq!(kind(&plain), io::ErrorKind::NotFound);
        assert_eq!(reason(&plain), "404 Not Found");
        let s3 = object_store::Error::Generic {
            store: "S3",
            source: Box::new(Status(
                "Server returned non-2xx status code: 403 Forbidden: <?xml version=\"1.0\"?>\n\
                 <Error><Code>SignatureDoesNotMatch</Code><Message>m</Message></Error>",
            )),
        };
        assert_eq!(kind(&s3), io::ErrorKind::Other);
        assert_eq!(reason(&s3), "403 Forbidden (SignatureDoesNotMatch)");
        let long = not_found(Status(Box::leak("y".repeat(300).into_boxed_str())));
        assert_eq!(reason(&long).chars().count(), MAX_REASON + 1);
    }
}
