//! Looking into the errors an input returns: their causes, payload and message.

use std::io::{self, ErrorKind};

use async_buffered_input::InputError;

/// True when the error carries the crate's `InputError` payload (API.md: "payload inside
/// io::Error, via get_ref().downcast_ref").
pub fn has_input_error_payload(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<InputError>())
        .is_some()
}

/// The crate's `InputError` payload of `e`.
///
/// # Panics
///
/// If `e` carries none (naming `e`).
#[track_caller]
pub fn input_error(e: &io::Error) -> &InputError {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<InputError>())
        .unwrap_or_else(|| panic!("no InputError payload in {e:?}"))
}

/// The error's message and the message of every cause under it (`source()`, recursively),
/// joined with ": ": where a cause's text (a path, a URL, an OS message) is found now that an
/// error names its cause only as its `source()`.
///
/// # Examples
///
/// ```
/// use std::fmt;
///
/// use abi_testkit::{causes, chain};
///
/// /// An error naming its cause only as its `source()`.
/// #[derive(Debug)]
/// struct Open(std::io::Error);
///
/// impl fmt::Display for Open {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         f.write_str("open f.bin")
///     }
/// }
///
/// impl std::error::Error for Open {
///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
///         Some(&self.0)
///     }
/// }
///
/// let e = std::io::Error::other(Open(std::io::Error::other("no such file")));
/// assert_eq!(e.to_string(), "open f.bin");
/// assert_eq!(chain(&e), "open f.bin: no such file");
/// assert_eq!(causes(&e), ["open f.bin", "no such file"]);
/// ```
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    causes(e).join(": ")
}

/// The error's message and the message of every cause under it (`source()`, recursively), one
/// each, as a reporter (`anyhow`'s `{:#}`) walks them.
pub fn causes(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut next = e.source();
    while let Some(cause) = next {
        out.push(cause.to_string());
        next = cause.source();
    }
    out
}

/// Asserts that the error's message contains `n` written in decimal.
#[track_caller]
pub fn assert_msg_mentions(e: &io::Error, n: u64, what: &str, ctx: &str) {
    let msg = e.to_string();
    assert!(
        msg.contains(&n.to_string()),
        "{ctx}: error message should mention the {what} {n}, got: {msg:?} ({e:?})"
    );
}

/// Asserts that `e` is a source error of `kind` reported by the input at position `pos`: same
/// `ErrorKind`, message mentions the position in decimal, `InputError` payload present.
#[track_caller]
pub fn assert_source_error(e: &io::Error, kind: ErrorKind, pos: u64, ctx: &str) {
    assert_eq!(e.kind(), kind, "{ctx}: error kind of {e:?}");
    assert_msg_mentions(e, pos, "position", ctx);
    assert!(
        has_input_error_payload(e),
        "{ctx}: source errors should be wrapped with an InputError payload, got {e:?}"
    );
}
