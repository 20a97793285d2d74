//! Errors: the crate's internal [`Error`], and the [`InputError`] payload of every
//! [`io::Error`] an input returns, made from it once, at the public boundary.

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::sync::Arc;

/// What went wrong, and where, when an input operation failed.
///
/// Every error an input returns is an [`io::Error`] whose [`kind`](io::Error::kind) says what
/// happened (`UnexpectedEof` for a read past the end, `InvalidData` for malformed encodings,
/// `InvalidInput` for a request no data could satisfy, the source's own kind for source
/// failures) and whose payload is an `InputError` naming the operation, the position it started
/// at, and the lengths involved; for bytes that are not what their format requires (Lucene's
/// `CorruptIndexException`), what was [expected](Self::expected) and what was
/// [found](Self::found). A source failure ends the message with the source's own
/// text (`…: open idx/_0.si: No such file or directory (os error 2)`), so the error says why
/// in one line when printed with `{}`; it is not also the error's
/// [`source()`](StdError::source) (which is `None`), so reporters that walk the chain
/// (`anyhow`, `eyre`) print the cause once. The source's error itself, with its kind, is
/// [`cause`](Self::cause). Reach the payload with [`io::Error::get_ref`] and
/// [`downcast_ref`](https://doc.rust-lang.org/std/error/trait.Error.html#method.downcast_ref):
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
/// assert_eq!(
///     err.to_string(),
///     "stream: read_bytes of 5 bytes at position 0 went past the end: only 3 bytes available"
/// );
/// let detail = err.get_ref().unwrap().downcast_ref::<InputError>().unwrap();
/// assert_eq!((detail.position(), detail.requested(), detail.available()), (0, 5, Some(3)));
/// assert_eq!(input.position(), 0); // nothing was consumed
/// # }
/// ```
pub struct InputError {
    resource: Option<Arc<str>>,
    op: &'static str,
    position: u64,
    amount: Amount,
    available: Option<u64>,
    detail: Option<String>,
    // Corruption: what the format requires, and what is there instead.
    corrupt: Option<(String, String)>,
    source: Option<io::Error>,
}

/// How many bytes an operation asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Amount {
    /// Exactly this many.
    Exact(u64),
    /// At most this many: a varint, whose length is only known once it is read.
    UpTo(u64),
    /// A request for no bytes in particular (a seek, the length).
    None,
}

impl InputError {
    /// What the input reads, as it describes itself (a path, a URL, "slice NAME [a..b) of
    /// PATH", "memory (N bytes)", "stream"): see
    /// [`AsyncBufferedInput::resource`](crate::AsyncBufferedInput::resource). Always there for
    /// the errors of an input.
    pub fn resource(&self) -> Option<&str> {
        self.resource.as_deref()
    }

    /// The operation that failed, such as `"read_bytes"` or `"read_vint"`; `"corrupt"` for
    /// corruption found in a format.
    pub fn operation(&self) -> &'static str {
        self.op
    }

    /// The position (offset in the input) where the failed operation started. A failed read
    /// consumes nothing, so this is also the input's position after the error.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// How many bytes the operation asked for: for decoders, the most the value could take; 0
    /// for operations that ask for no bytes in particular (a seek).
    pub fn requested(&self) -> u64 {
        match self.amount {
            Amount::Exact(n) | Amount::UpTo(n) => n,
            Amount::None => 0,
        }
    }

    /// For reads past the end: how many bytes were there between the position and the end.
    pub fn available(&self) -> Option<u64> {
        self.available
    }

    /// For a failure of the source: its error, with its own kind and payload (the message of
    /// this error ends with its text). `None` for the input's own errors (past the end,
    /// malformed data, an invalid request).
    pub fn cause(&self) -> Option<&io::Error> {
        self.source.as_ref()
    }

    /// For corruption: what the format requires at [`position`](Self::position).
    pub fn expected(&self) -> Option<&str> {
        self.corrupt.as_ref().map(|(expected, _)| expected.as_str())
    }

    /// For corruption: what is there instead.
    pub fn found(&self) -> Option<&str> {
        self.corrupt.as_ref().map(|(_, found)| found.as_str())
    }

    /// An `InvalidData` error for bytes that are not what their format requires, like Lucene's
    /// `CorruptIndexException`: `resource` holds, at `position`, something else than
    /// `expected`: `found`. The codec checks of [`codec`](crate::lucene::codec) raise it, and
    /// so can a format of your own, with this or
    /// [`AsyncBufferedInput::corrupt_at`](crate::AsyncBufferedInput::corrupt_at) (which fills in
    /// the input's resource):
    ///
    /// ```
    /// use async_buffered_input::{AsyncBufferedInput, InputError};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(vec![9u8]))
    ///     .with_resource("_0.tip");
    /// let version = input.read_byte().await.unwrap();
    /// let err = input.corrupt_at(0, "version 1 or 2", format!("version {version}"));
    /// assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    /// assert_eq!(
    ///     err.to_string(),
    ///     "_0.tip: corrupt at position 0: expected version 1 or 2, found version 9"
    /// );
    /// let corrupt = err.get_ref().unwrap().downcast_ref::<InputError>().unwrap();
    /// assert_eq!(corrupt.resource(), Some("_0.tip"));
    /// assert_eq!(corrupt.found(), Some("version 9"));
    /// # }
    /// ```
    pub fn corrupt(
        resource: Option<&str>,
        position: u64,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> io::Error {
        let (expected, found) = (expected.into(), found.into());
        let error = Self {
            resource: resource.map(Arc::from),
            op: "corrupt",
            position,
            amount: Amount::None,
            available: None,
            detail: Some(format!("expected {expected}, found {found}")),
            corrupt: Some((expected, found)),
            source: None,
        };
        io::Error::new(io::ErrorKind::InvalidData, error)
    }
}

/// "1 byte", "2 bytes".
pub(crate) struct ByteCount(pub(crate) u64);

impl fmt::Display for ByteCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            1 => f.write_str("1 byte"),
            n => write!(f, "{n} bytes"),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(resource) = &self.resource {
            write!(f, "{resource}: ")?;
        }
        f.write_str(self.op)?;
        match self.amount {
            Amount::Exact(n) => write!(f, " of {}", ByteCount(n))?,
            Amount::UpTo(n) => write!(f, " of up to {}", ByteCount(n))?,
            Amount::None => {}
        }
        write!(f, " at position {}", self.position)?;
        if let Some(available) = self.available {
            write!(
                f,
                " went past the end: only {} available",
                ByteCount(available)
            )?;
        }
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        if let Some(cause) = &self.source {
            write!(f, " failed: {cause}")?;
        }
        Ok(())
    }
}

/// The message, in quotes (`InputError("…")`), so that `?` from `main` prints one readable
/// line; `{:#?}` shows every field, the cause's own `Debug` included.
impl fmt::Debug for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_as_message(f, "InputError", self, |fields| {
            fields
                .field("resource", &self.resource)
                .field("op", &self.op)
                .field("position", &self.position)
                .field("amount", &self.amount)
                .field("available", &self.available)
                .field("detail", &self.detail)
                .field("corrupt", &self.corrupt)
                .field("cause", &self.source);
        })
    }
}

/// `Debug` for an error whose message says it all: `name("message")`, in quotes, so that `?`
/// from `main` prints one readable line; with `{:#?}`, a struct `name` with the fields that
/// `fields` adds.
pub(crate) fn debug_as_message(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    message: &dyn fmt::Display,
    fields: impl FnOnce(&mut fmt::DebugStruct<'_, '_>),
) -> fmt::Result {
    if f.alternate() {
        let mut debug = f.debug_struct(name);
        fields(&mut debug);
        debug.finish()
    } else {
        f.debug_tuple(name).field(&message.to_string()).finish()
    }
}

/// No `source()`: the cause's text ends the message, and [`InputError::cause`] returns it.
impl StdError for InputError {}

/// Whether a source error of this kind can succeed on retry: a connection reset, refused,
/// aborted or not connected, a broken pipe, a timeout, an interrupted or would-block call, a
/// body cut short (`UnexpectedEof`). Not `NotFound`, `PermissionDenied`, `InvalidInput`,
/// `InvalidData` or `Other`. [`Retrying`](crate::layer::Retrying) retries these; the crate's
/// one list of transient kinds.
pub fn is_transient(kind: io::ErrorKind) -> bool {
    use io::ErrorKind::*;
    matches!(
        kind,
        TimedOut
            | ConnectionReset
            | ConnectionAborted
            | ConnectionRefused
            | NotConnected
            | BrokenPipe
            | Interrupted
            | WouldBlock
            | UnexpectedEof
    )
}

/// Why an operation failed, before the operation and its position are known: what the crate's
/// internals return, made into an `io::Error` once by [`Error::into_io`].
#[derive(Debug)]
pub(crate) enum Error {
    /// The data ended `available` bytes after the operation's start. `needed` overrides the
    /// operation's own amount when it learned how much it needed (a string, from its prefix).
    Eof { available: u64, needed: Option<u64> },
    /// The source failed.
    Source(io::Error),
    /// The bytes are not a valid encoding of the value.
    Invalid(String),
    /// A request that cannot be honoured whatever the data (an arithmetic overflow, a negative
    /// seek, a slice out of range).
    InvalidInput(String),
}

impl Error {
    /// The data ended `available` bytes after the operation's start.
    pub(crate) fn eof(available: u64) -> Self {
        Error::Eof {
            available,
            needed: None,
        }
    }

    /// The same error for an operation that started `n` bytes earlier (a step of a longer
    /// read): a past-the-end error then counts the `n` bytes as available.
    pub(crate) fn after(self, n: u64) -> Self {
        match self {
            Error::Eof { available, needed } => Error::Eof {
                available: available.saturating_add(n),
                needed,
            },
            other => other,
        }
    }

    /// The same error for an operation that turned out to need `n` bytes in all: a
    /// past-the-end error then names `n` as the amount asked for.
    pub(crate) fn needing(self, n: u64) -> Self {
        match self {
            Error::Eof { available, .. } => Error::Eof {
                available,
                needed: Some(n),
            },
            other => other,
        }
    }

    /// Whether the same read may succeed if tried again: a source error of a kind
    /// [`is_transient`] names, except `UnexpectedEof`. Never a read past the end or malformed
    /// data.
    pub(crate) fn can_succeed_on_retry(&self) -> bool {
        match self {
            Error::Source(e) => e.kind() != io::ErrorKind::UnexpectedEof && is_transient(e.kind()),
            _ => false,
        }
    }

    /// The public error: `op` on `resource`, which started at `position` asking for `amount`,
    /// failed so.
    pub(crate) fn into_io(
        self,
        resource: Option<&Arc<str>>,
        op: &'static str,
        position: u64,
        amount: Amount,
    ) -> io::Error {
        let mut payload = InputError {
            resource: resource.cloned(),
            op,
            position,
            amount,
            available: None,
            detail: None,
            corrupt: None,
            source: None,
        };
        let kind = match self {
            Error::Eof { available, needed } => {
                payload.available = Some(available);
                if let Some(needed) = needed {
                    payload.amount = Amount::Exact(needed);
                }
                io::ErrorKind::UnexpectedEof
            }
            Error::Source(e) => {
                let kind = e.kind();
                payload.source = Some(e);
                kind
            }
            Error::Invalid(detail) => {
                payload.detail = Some(detail);
                io::ErrorKind::InvalidData
            }
            Error::InvalidInput(detail) => {
                payload.detail = Some(detail);
                io::ErrorKind::InvalidInput
            }
        };
        io::Error::new(kind, payload)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Source(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(e: &io::Error) -> Vec<String> {
        let mut out = vec![e.to_string()];
        let mut next = StdError::source(e);
        while let Some(cause) = next {
            out.push(cause.to_string());
            next = cause.source();
        }
        out
    }

    #[test]
    fn messages_count_bytes_in_words_and_name_the_cause_once() {
        let e = Error::eof(0).into_io(None, "read_byte", 5, Amount::Exact(1));
        assert_eq!(
            e.to_string(),
            "read_byte of 1 byte at position 5 went past the end: only 0 bytes available"
        );
        let e = Error::InvalidInput("offset -6 from 5 is before 0".into()).into_io(
            None,
            "seek",
            5,
            Amount::None,
        );
        assert_eq!(
            e.to_string(),
            "seek at position 5: offset -6 from 5 is before 0"
        );
        let cause = io::Error::new(io::ErrorKind::ConnectionReset, "peer went away");
        let resource: Arc<str> = Arc::from("/data/_0.tim");
        let e = Error::from(cause).into_io(Some(&resource), "read_vint", 3, Amount::UpTo(5));
        assert_eq!(e.kind(), io::ErrorKind::ConnectionReset);
        assert_eq!(
            chain(&e),
            ["/data/_0.tim: read_vint of up to 5 bytes at position 3 failed: peer went away"]
        );
        let payload = e.get_ref().unwrap().downcast_ref::<InputError>().unwrap();
        let cause = payload.cause().unwrap();
        assert_eq!(
            (cause.kind(), cause.to_string().as_str()),
            (io::ErrorKind::ConnectionReset, "peer went away")
        );
        assert_eq!(
            format!("{e:?}"),
            "Custom { kind: ConnectionReset, error: InputError(\"/data/_0.tim: read_vint of up \
             to 5 bytes at position 3 failed: peer went away\") }"
        );
        assert!(format!("{payload:#?}").contains("position: 3"));
    }

    #[test]
    fn the_input_own_errors_have_no_cause() {
        let e = Error::eof(0).into_io(None, "read_byte", 5, Amount::Exact(1));
        let payload = e.get_ref().unwrap().downcast_ref::<InputError>().unwrap();
        assert!(payload.cause().is_none());
        assert_eq!(chain(&e).len(), 1);
    }

    #[test]
    fn transient_kinds() {
        use io::ErrorKind::*;
        for kind in [
            TimedOut,
            ConnectionReset,
            ConnectionRefused,
            UnexpectedEof,
            BrokenPipe,
        ] {
            assert!(is_transient(kind), "{kind:?}");
        }
        for kind in [NotFound, PermissionDenied, InvalidInput, InvalidData, Other] {
            assert!(!is_transient(kind), "{kind:?}");
        }
        assert!(!Error::Source(UnexpectedEof.into()).can_succeed_on_retry());
        assert!(Error::Source(ConnectionReset.into()).can_succeed_on_retry());
        assert!(!Error::eof(0).can_succeed_on_retry());
    }

    #[test]
    fn a_step_counts_what_came_before_it() {
        let e = Error::eof(2)
            .after(4096)
            .into_io(None, "read_u32_into", 8, Amount::Exact(8000));
        let payload = e.get_ref().unwrap().downcast_ref::<InputError>().unwrap();
        assert_eq!(payload.available(), Some(4098));
        assert_eq!(payload.position(), 8);
    }
}
