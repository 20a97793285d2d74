//! Strings: a vint byte length, then UTF-8.

use std::future::Future;
use std::io;
use std::task::{ready, Context, Poll};

use super::varint_reads::Gather;
use crate::error::{Amount, Error};
use crate::input::decode::utf8;
use crate::input::decode::varint_format::{decode_varint_fast, VINT_LAST_BITS, VINT_MAX_LEN};
use crate::input::engine::read_exact::ReadExact;
use crate::input::fetch::Fetch;
use crate::input::window_read::{ReadFuture, WindowRead};
use crate::input::AsyncBufferedInput;

/// Strings, as Lucene's `DataInput` writes them.
impl<F: Fetch> AsyncBufferedInput<F> {
    /// Reads a string as Lucene's `writeString` wrote it: a vint byte length, then UTF-8.
    ///
    /// A length prefix larger than the window is checked against the source's
    /// [`length`](Self::length) before anything is allocated, so a corrupt prefix never
    /// allocates more than the data holds.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` if the length prefix or the bytes run past the end; `InvalidData` for a
    /// malformed prefix or invalid UTF-8 (naming the position of the string); the source's own
    /// error if it fails. The position is unchanged after an error.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut bytes = vec![6];
    /// bytes.extend_from_slice("€uro".as_bytes());
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(bytes));
    /// assert_eq!(input.read_string().await?, "€uro");
    ///
    /// let mut bad = AsyncBufferedInput::new(std::io::Cursor::new(vec![2, 0xc3, 0x28]));
    /// let err = bad.read_string().await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    /// assert_eq!(bad.position(), 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn read_string(&mut self) -> impl Future<Output = io::Result<String>> + use<'_, F> {
        ReadFuture::new(self, ReadString)
    }
}

/// [`AsyncBufferedInput::read_string`]: a vint length, then that many bytes of UTF-8.
struct ReadString;

/// The slow path of [`ReadString`], step by step.
enum StringSlow {
    /// Gathering the length prefix, across refills if it straddles the window's edge.
    Prefix(Gather),
    /// A string longer than the window: asking the source's length before allocating for it.
    Length { len: usize, prefix: Prefix },
    /// Reading the bytes into their own buffer.
    Body {
        prefix: Prefix,
        bytes: Vec<u8>,
        exact: ReadExact,
    },
}

/// A string's length prefix, as read: kept with the bytes after it when reading them fails.
#[derive(Clone, Copy, Debug)]
struct Prefix {
    bytes: [u8; VINT_MAX_LEN],
    len: usize,
}

impl Prefix {
    fn new(gather: &Gather, len: usize) -> Self {
        let mut bytes = [0u8; VINT_MAX_LEN];
        bytes[..len].copy_from_slice(&gather.bytes()[..len]);
        Self { bytes, len }
    }
}

impl Default for StringSlow {
    fn default() -> Self {
        Self::Prefix(Gather::default())
    }
}

impl<F: Fetch> WindowRead<F> for ReadString {
    type Output = String;
    type Slow = StringSlow;

    /// Its errors count the prefix and the string once the prefix is read.
    fn op(&self) -> (&'static str, Amount) {
        ("read_string", Amount::None)
    }

    /// The whole string when the window holds it and it is valid; a malformed one is left to
    /// the slow path, which reports it.
    #[inline(always)]
    fn fast(&mut self, input: &mut AsyncBufferedInput<F>) -> Option<String> {
        let window = input.engine().window().bytes_from(input.position());
        let (len, prefix) = decode_varint_fast::<VINT_MAX_LEN, VINT_LAST_BITS>(window)?;
        let total = prefix.checked_add(len as usize)?;
        let s = utf8::to_string(window.get(prefix..total)?).ok()?;
        input.engine_mut().consume_window(total);
        Some(s)
    }

    fn poll_slow(
        &mut self,
        slow: &mut StringSlow,
        input: &mut AsyncBufferedInput<F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<String, Error>> {
        // The position stays at the string's start until it is read whole.
        let at = input.position();
        let invalid_utf8 = |len: usize, e: std::str::Utf8Error| {
            Error::Invalid(format!(
                "the {len}-byte string is not UTF-8 (valid up to byte {})",
                e.valid_up_to()
            ))
        };
        loop {
            match slow {
                StringSlow::Prefix(gather) => {
                    let (len, prefix) = ready!(input.poll_peek_varint(
                        cx,
                        at,
                        VINT_MAX_LEN,
                        VINT_LAST_BITS,
                        gather
                    ))?;
                    let len = len as usize;
                    let total = prefix + len;
                    if let Some(bytes) = input.engine().window().bytes_from(at).get(prefix..total) {
                        let s = std::str::from_utf8(bytes)
                            .map_err(|e| invalid_utf8(len, e))?
                            .to_owned();
                        input.engine_mut().consume_window(total);
                        return Poll::Ready(Ok(s));
                    }
                    let prefix = Prefix::new(gather, prefix);
                    *slow = if len > input.capacity() {
                        StringSlow::Length { len, prefix }
                    } else {
                        StringSlow::Body {
                            prefix,
                            bytes: vec![0u8; len],
                            exact: ReadExact::step(),
                        }
                    };
                }
                StringSlow::Length { len, prefix } => {
                    let (len, prefix) = (*len, *prefix);
                    let data_at = at + prefix.len as u64;
                    let available = ready!(input.engine_mut().fetcher_mut().poll_length(cx))?
                        .saturating_sub(data_at);
                    if (len as u64) > available {
                        return Poll::Ready(Err(Error::Eof {
                            available: prefix.len as u64 + available,
                            needed: Some((prefix.len + len) as u64),
                        }));
                    }
                    *slow = StringSlow::Body {
                        prefix,
                        bytes: vec![0u8; len],
                        exact: ReadExact::step(),
                    };
                }
                StringSlow::Body {
                    prefix,
                    bytes,
                    exact,
                } => {
                    let (prefix, len) = (*prefix, bytes.len());
                    let total = prefix.len + len;
                    let data_at = at + prefix.len as u64;
                    if let Err(e) = ready!(input
                        .engine_mut()
                        .poll_read_exact_at(cx, data_at, bytes, exact))
                    {
                        // Keep the prefix and the bytes read after it (`exact` is a step, so
                        // the body's bytes are kept here, after the prefix's).
                        let body = &bytes[..exact.done()];
                        input.engine_mut().keep_for_retry(
                            at,
                            prefix.len + body.len(),
                            &e,
                            |offset, out| {
                                for (i, b) in out.iter_mut().enumerate() {
                                    let k = offset + i;
                                    *b = match k.checked_sub(prefix.len) {
                                        None => prefix.bytes[k],
                                        Some(k) => body[k],
                                    };
                                }
                            },
                        );
                        return Poll::Ready(Err(e.after(prefix.len as u64).needing(total as u64)));
                    }
                    let s = String::from_utf8(std::mem::take(bytes))
                        .map_err(|e| invalid_utf8(len, e.utf8_error()))?;
                    input.engine_mut().finish_read(at, total, exact.direct());
                    return Poll::Ready(Ok(s));
                }
            }
        }
    }
}
