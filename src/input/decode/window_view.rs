//! A synchronous view of the window: decode a run of values with no `.await` each.

use std::fmt;
use std::io;
use std::sync::Arc;

use std::future::poll_fn;

use bytes::Buf;

use crate::error::{Amount, Error};
use crate::input::decode::varint_format::{self, Varint};
use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

/// The bytes the window holds from the position, to decode synchronously: a loop over a block
/// of vints, ints or records runs at the speed of a loop over a slice, and awaits only to
/// refill ([`AsyncBufferedInput::fill`](crate::AsyncBufferedInput::fill)).
///
/// Decode a block in a plain (not `async`) function that takes the view, as below: the loop's
/// state then lives in registers, where in an `async fn` it would live in the future across
/// the `.await` that refills.
///
/// Made by [`AsyncBufferedInput::view`](crate::AsyncBufferedInput::view). It implements
/// [`bytes::Buf`] (`get_u32`, `copy_to_slice`, ...: those panic when fewer bytes remain than
/// they take, as `Buf` does), and Lucene's decoders as `try_` methods that answer `Ok(None)`
/// when the view ends before the value does, consuming nothing. Dropping the view moves the
/// input's position past what it consumed.
///
/// ```
/// use async_buffered_input::AsyncBufferedInput;
/// use bytes::Buf;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let bytes = vec![0x01, 0x80, 0x01, 0x00, 0x00, 0x00, 0x2a];
/// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(bytes));
/// input.fill(7).await?;
/// let mut view = input.view();
/// assert_eq!(view.try_read_vint()?, Some(1));
/// assert_eq!(view.try_read_vint()?, Some(128));
/// assert_eq!(view.get_u32(), 42);
/// assert_eq!(view.try_read_vint()?, None); // the view, and here the data, ended
/// drop(view);
/// assert_eq!(input.position(), 7);
/// # Ok(())
/// # }
/// ```
///
/// A block of vints, refilling only where one straddles the window's end:
///
/// ```
/// use async_buffered_input::{AsyncBufferedInput, WindowView};
///
/// /// Sums vints while whole ones are in the view; how many it took.
/// fn sum_vints(view: &mut WindowView<'_>, left: usize, sum: &mut u64) -> std::io::Result<usize> {
///     let mut taken = 0;
///     while taken < left {
///         match view.try_read_vint()? {
///             Some(v) => *sum += u64::from(v),
///             None => break,
///         }
///         taken += 1;
///     }
///     Ok(taken)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let bytes: Vec<u8> = (0..1000u32).flat_map(|i| [0x80 | (i as u8 & 0x7f), 0x01]).collect();
/// let mut input = AsyncBufferedInput::with_capacity(64, std::io::Cursor::new(bytes));
/// let (mut sum, mut left) = (0u64, 1000);
/// while left > 0 {
///     left -= sum_vints(&mut input.view(), left, &mut sum)?;
///     if left > 0 {
///         input.fill(5).await?; // at most a vint's length: the next one is then whole
///     }
/// }
/// assert_eq!(sum, (0..1000u64).map(|i| 128 + (i & 0x7f)).sum::<u64>());
/// # Ok(())
/// # }
/// ```
pub struct WindowView<'a> {
    bytes: &'a [u8],
    consumed: usize,
    position: &'a mut u64,
    resource: Option<&'a Arc<str>>,
}

impl<'a> WindowView<'a> {
    pub(crate) fn new(
        bytes: &'a [u8],
        position: &'a mut u64,
        resource: Option<&'a Arc<str>>,
    ) -> Self {
        Self {
            bytes,
            consumed: 0,
            position,
            resource,
        }
    }

    /// The input's position after what the view consumed so far.
    pub fn position(&self) -> u64 {
        *self.position + self.consumed as u64
    }

    /// The bytes left in the view, as a slice.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[self.consumed..]
    }

    /// Reads a byte as signed (Lucene's `readByte`), or `None` at the view's end.
    #[inline]
    pub fn try_read_i8(&mut self) -> Option<i8> {
        let b = *self.as_slice().first()?;
        self.consumed += 1;
        Some(b as i8)
    }

    /// Reads a Lucene vint, or `None` (consuming nothing) if the view ends before it does.
    ///
    /// # Errors
    ///
    /// `InvalidData`, naming the position, for a malformed vint; nothing is consumed.
    #[inline]
    pub fn try_read_vint(&mut self) -> io::Result<Option<u32>> {
        self.try_varint::<{ varint_format::VINT_MAX_LEN }, { varint_format::VINT_LAST_BITS }>(
            "read_vint",
        )
        .map(|v| v.map(|v| v as u32))
    }

    /// Reads a Lucene vlong (below 2^63, at most 9 bytes), or `None` (consuming nothing) if the
    /// view ends before it does.
    ///
    /// # Errors
    ///
    /// `InvalidData`, naming the position, for a malformed vlong; nothing is consumed.
    #[inline]
    pub fn try_read_vlong(&mut self) -> io::Result<Option<u64>> {
        self.try_varint::<{ varint_format::VLONG_MAX_LEN }, { varint_format::VLONG_LAST_BITS }>(
            "read_vlong",
        )
    }

    /// Reads a zig-zag vint (Lucene's `readZInt`), or `None` (consuming nothing) if the view
    /// ends before it does.
    ///
    /// # Errors
    ///
    /// As [`try_read_vint`](Self::try_read_vint).
    #[inline]
    pub fn try_read_zint(&mut self) -> io::Result<Option<i32>> {
        self.try_varint::<{ varint_format::VINT_MAX_LEN }, { varint_format::VINT_LAST_BITS }>(
            "read_zint",
        )
        .map(|v| v.map(|v| varint_format::zigzag_decode(v) as i32))
    }

    /// Reads a zig-zag vlong (Lucene's `readZLong`), or `None` (consuming nothing) if the view
    /// ends before it does.
    ///
    /// # Errors
    ///
    /// `InvalidData`, naming the position, for a malformed varint; nothing is consumed.
    #[inline]
    pub fn try_read_zlong(&mut self) -> io::Result<Option<i64>> {
        self.try_varint::<{ varint_format::VARINT64_MAX_LEN }, { varint_format::VARINT64_LAST_BITS }>(
            "read_zlong",
        )
        .map(|v| v.map(varint_format::zigzag_decode))
    }

    /// Reads a string (a vint length, then that many bytes of UTF-8), or `None` (consuming
    /// nothing) if the view ends before it does. A string longer than the window never fits
    /// in a view: read it with [`read_string`](crate::AsyncBufferedInput::read_string).
    ///
    /// # Errors
    ///
    /// `InvalidData`, naming the position, for a malformed length or invalid UTF-8; nothing is
    /// consumed.
    pub fn try_read_string(&mut self) -> io::Result<Option<String>> {
        let Some((len, prefix)) = self
            .peek_varint::<{ varint_format::VINT_MAX_LEN }, { varint_format::VINT_LAST_BITS }>(
                "read_string",
            )?
        else {
            return Ok(None);
        };
        let Some(bytes) = self.as_slice().get(prefix..prefix + len as usize) else {
            return Ok(None);
        };
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                let s = s.to_owned();
                self.consumed += prefix + len as usize;
                Ok(Some(s))
            }
            Err(e) => Err(self.error(
                "read_string",
                Amount::Exact((prefix + len as usize) as u64),
                Error::Invalid(format!(
                    "the {len}-byte string is not UTF-8 (valid up to byte {})",
                    e.valid_up_to()
                )),
            )),
        }
    }

    #[inline(always)]
    fn try_varint<const MAX_LEN: usize, const LAST_BITS: u32>(
        &mut self,
        op: &'static str,
    ) -> io::Result<Option<u64>> {
        let Some((value, len)) = self.peek_varint::<MAX_LEN, LAST_BITS>(op)? else {
            return Ok(None);
        };
        self.consumed += len;
        Ok(Some(value))
    }

    #[inline(always)]
    fn peek_varint<const MAX_LEN: usize, const LAST_BITS: u32>(
        &self,
        op: &'static str,
    ) -> io::Result<Option<(u64, usize)>> {
        let bytes = self.as_slice();
        if let Some(done) = varint_format::decode_varint_fast::<MAX_LEN, LAST_BITS>(bytes) {
            return Ok(Some(done));
        }
        match varint_format::decode_varint(bytes, MAX_LEN, LAST_BITS) {
            Varint::Done { value, len } => Ok(Some((value, len))),
            Varint::Short => Ok(None),
            Varint::Malformed(detail) => {
                Err(self.error(op, Amount::UpTo(MAX_LEN as u64), Error::Invalid(detail)))
            }
        }
    }

    fn error(&self, op: &'static str, amount: Amount, e: Error) -> io::Error {
        e.into_io(self.resource, op, self.position(), amount)
    }
}

impl Buf for WindowView<'_> {
    #[inline]
    fn remaining(&self) -> usize {
        self.bytes.len() - self.consumed
    }

    #[inline]
    fn chunk(&self) -> &[u8] {
        self.as_slice()
    }

    /// One copy out of the window (the view is one slice).
    ///
    /// # Panics
    ///
    /// If `dst` is longer than [`remaining`](Buf::remaining), as `Buf` requires.
    #[inline]
    fn copy_to_slice(&mut self, dst: &mut [u8]) {
        let Some(src) = self.as_slice().get(..dst.len()) else {
            panic!(
                "copy_to_slice({}) past the view's {} bytes",
                dst.len(),
                self.remaining()
            );
        };
        dst.copy_from_slice(src);
        self.consumed += dst.len();
    }

    /// # Panics
    ///
    /// If `cnt` is more than [`remaining`](Buf::remaining), as `Buf` requires.
    #[inline]
    fn advance(&mut self, cnt: usize) {
        assert!(
            cnt <= self.remaining(),
            "advance({cnt}) past the view's {} bytes",
            self.remaining()
        );
        self.consumed += cnt;
    }
}

impl Drop for WindowView<'_> {
    /// Commits the position: the input continues after what the view consumed.
    fn drop(&mut self) {
        *self.position += self.consumed as u64;
    }
}

impl fmt::Debug for WindowView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WindowView")
            .field("position", &self.position())
            .field("remaining", &self.remaining())
            .finish()
    }
}

/// Synchronous decoding over the window.
impl<F: Fetch> AsyncBufferedInput<F> {
    /// A synchronous view of the bytes the window holds from the position (none if the
    /// position is outside it): see [`WindowView`]. Dropping the view moves the position past
    /// what it consumed.
    pub fn view(&mut self) -> WindowView<'_> {
        let (bytes, position, resource) = self.window_and_position();
        WindowView::new(bytes, position, Some(resource))
    }

    /// Makes the window hold at least `min` bytes from the position (at most the capacity), or
    /// every byte left if fewer remain, refilling it if it holds fewer; returns how many it
    /// holds. 0 only at the end. Then decode them with [`view`](Self::view).
    ///
    /// # Errors
    ///
    /// The source's own error kind if it fails; the position is unchanged.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is consumed.
    pub async fn fill(&mut self, min: usize) -> io::Result<usize> {
        let at = self.position();
        poll_fn(|cx| self.engine_mut().poll_fill_at(cx, at, min.max(1)))
            .await
            .map_err(|e| self.error(e, "fill", at, Amount::UpTo(min as u64)))?;
        Ok(self.engine().window().bytes_from(at).len())
    }
}
