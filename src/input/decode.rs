//! Typed reads on [`AsyncBufferedInput`], compatible with Apache Lucene's `DataInput`:
//! fixed-width integers in both byte orders, varints, zig-zag varints and strings.
//!
//! Every read has a fast path that decodes straight from the window, synchronously, when the
//! window holds the whole value, and a separate slow path for values that straddle the window's
//! edge or the end of the data. Like the core reads, a typed read either completes or consumes
//! nothing: after an error or a cancellation the position is where the value starts.

use std::future::{poll_fn, Future};
use std::io;
use std::marker::PhantomData;
use std::mem::size_of;
use std::task::{ready, Context, Poll};

use super::refill::ReadExact;
use super::window_read::{ReadFuture, WindowRead};
use super::AsyncBufferedInput;
use crate::error::{Amount, Error};
use crate::fetch::Fetch;

/// The most bytes a Lucene vint takes; its 5th byte carries the top 4 bits.
pub(super) const VINT_MAX_LEN: usize = 5;
pub(super) const VINT_LAST_BITS: u32 = 4;
/// The most bytes a Lucene vlong takes: 9, for 63 bits, as `readVLong` reads it (it rejects
/// negative values, which would need a 10th byte).
pub(super) const VLONG_MAX_LEN: usize = 9;
pub(super) const VLONG_LAST_BITS: u32 = 7;
/// The most bytes any `u64` takes: 10, the 10th carrying the top bit. Zig-zag vlongs (Lucene's
/// `readZLong`) and `read_varint_u64` use it.
pub(super) const VARINT64_MAX_LEN: usize = 10;
pub(super) const VARINT64_LAST_BITS: u32 = 1;
/// How many bytes bulk reads decode per step when the values are not all in the window.
const BULK_STEP: usize = 4096;

/// What a slice holds at the start of a varint.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Varint {
    /// A whole varint of `len` bytes.
    Done { value: u64, len: usize },
    /// The slice ends before the varint does.
    Short,
    /// The bytes are not a valid varint of this width.
    Malformed(String),
}

/// Decodes a Lucene varint (7 bits per byte, low groups first, high bit set on every byte but
/// the last) of at most `max_len` bytes, whose last possible byte may carry only `last_bits`
/// bits.
#[inline]
pub(super) fn decode_varint(bytes: &[u8], max_len: usize, last_bits: u32) -> Varint {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(max_len).enumerate() {
        let shift = 7 * i as u32;
        if i == max_len - 1 {
            if u32::from(b) >> last_bits != 0 {
                return Varint::Malformed(format!(
                    "byte {} of {max_len} is {b:#04x}: too many bits for a {}-bit value, \
                     or longer than {max_len} bytes",
                    i + 1,
                    7 * (max_len as u32 - 1) + last_bits
                ));
            }
            return Varint::Done {
                value: value | u64::from(b) << shift,
                len: max_len,
            };
        }
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Varint::Done { value, len: i + 1 };
        }
    }
    Varint::Short
}

/// Decodes the varint at the start of `bytes` without a branch per byte, when `bytes` holds at
/// least 8 bytes and the varint ends within them: its value and length. `None` in every other
/// case (fewer than 8 bytes, a longer or malformed varint), for [`decode_varint`] to handle.
///
/// The stop byte is the first without its high bit; the 7-bit groups before it are then packed
/// together by three mask-and-shift steps (pairs, quads, octets).
#[inline(always)]
pub(super) fn decode_varint_fast<const MAX_LEN: usize, const LAST_BITS: u32>(
    bytes: &[u8],
) -> Option<(u64, usize)> {
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let x = u64::from_le_bytes(*bytes.first_chunk::<8>()?);
    let stops = !x & HIGH_BITS;
    if stops == 0 {
        return None;
    }
    let len = (stops.trailing_zeros() / 8) as usize + 1;
    if len > MAX_LEN {
        return None;
    }
    if len == MAX_LEN && (x >> (8 * (len - 1)) & 0xff) >> LAST_BITS != 0 {
        return None;
    }
    // Keep the bytes up to the stop byte, without their high bits.
    let x = x & (stops ^ (stops - 1)) & !HIGH_BITS;
    let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    let x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
    Some((x, len))
}

#[inline]
pub(super) fn zigzag_decode(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

/// Generates a fixed-width integer read with a window fast path.
macro_rules! fixed_width_read {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $from:ident) => {
        $(#[$doc])*
        ///
        /// # Errors
        ///
        /// `UnexpectedEof` if fewer bytes than the width remain; the source's own error if it
        /// fails. The position is unchanged after an error.
        ///
        /// # Cancel safety
        ///
        /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
        #[inline]
        pub fn $name(&mut self) -> impl Future<Output = io::Result<$ty>> + use<'_, F> {
            ReadFuture::new(
                self,
                FixedWidth::<{ size_of::<$ty>() }, $ty, _>::new(stringify!($name), <$ty>::$from),
            )
        }
    };
}

/// Generates a bulk fixed-width read into a slice; `$to` is the inverse of `$from`.
macro_rules! bulk_read {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $from:ident, $to:ident) => {
        $(#[$doc])*
        ///
        /// Decodes straight from the window when it holds all the values, otherwise in steps of
        /// a few KiB, with no await per element. If a step fails with an error a retry can get
        /// past, the bytes of the steps before it are kept, so that the retry fetches only the
        /// rest (see "Memory" on [`AsyncBufferedInput`]).
        ///
        /// # Errors
        ///
        /// `UnexpectedEof` if fewer than `dst.len()` values remain; the source's own error if it
        /// fails. The position is unchanged after an error, and `dst` holds unspecified values.
        ///
        /// # Cancel safety
        ///
        /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
        pub async fn $name(&mut self, dst: &mut [$ty]) -> io::Result<()> {
            const N: usize = size_of::<$ty>();
            let at = self.position();
            let total = dst.len() * N;
            if let Some(window) = self.window_at(at).get(..total) {
                for (value, bytes) in dst.iter_mut().zip(window.chunks_exact(N)) {
                    let mut b = [0u8; N];
                    b.copy_from_slice(bytes);
                    *value = <$ty>::$from(b);
                }
                self.consume_window(total);
                return Ok(());
            }
            let mut step = [0u8; BULK_STEP];
            let (mut done, mut direct) = (0, 0);
            while done < total {
                let bytes = &mut step[..(total - done).min(BULK_STEP / N * N)];
                let mut exact = ReadExact::step();
                let read =
                    poll_fn(|cx| self.poll_read_exact_at(cx, at + done as u64, bytes, &mut exact))
                        .await;
                if let Err(e) = read {
                    // Keep the values decoded so far, as bytes again, and the failed step's.
                    let values = &dst[..done / N];
                    let fetched = &bytes[..exact.done()];
                    self.keep_for_retry(at, done + fetched.len(), &e, |offset, out| {
                        bulk_progress(values, <$ty>::$to, fetched, offset, out)
                    });
                    return Err(self.error(
                        e.after(done as u64),
                        stringify!($name),
                        at,
                        Amount::Exact(total as u64),
                    ));
                }
                let values = &mut dst[done / N..(done + bytes.len()) / N];
                for (value, chunk) in values.iter_mut().zip(bytes.chunks_exact(N)) {
                    let mut b = [0u8; N];
                    b.copy_from_slice(chunk);
                    *value = <$ty>::$from(b);
                }
                done += bytes.len();
                direct += exact.direct();
            }
            self.finish_read(at, total, direct);
            Ok(())
        }
    };
}

/// Writes the bytes `[offset, offset + out.len())` of a bulk read that failed: first the
/// `values` it had decoded, each as the `N` bytes `encode` gives back, then `fetched`, the bytes
/// the failed step had.
fn bulk_progress<T: Copy, const N: usize>(
    values: &[T],
    encode: fn(T) -> [u8; N],
    fetched: &[u8],
    offset: usize,
    out: &mut [u8],
) {
    debug_assert!(offset + out.len() <= values.len() * N + fetched.len());
    let mut written = 0;
    while written < out.len() {
        let pos = offset + written;
        let n = if let Some(&value) = values.get(pos / N) {
            let bytes = encode(value);
            let n = (N - pos % N).min(out.len() - written);
            out[written..written + n].copy_from_slice(&bytes[pos % N..pos % N + n]);
            n
        } else {
            let from = pos - values.len() * N;
            let n = out.len() - written;
            out[written..].copy_from_slice(&fetched[from..from + n]);
            n
        };
        written += n;
    }
}

/// Typed reads: fixed-width integers, varints and strings, as Lucene's `DataInput` writes them.
impl<F: Fetch> AsyncBufferedInput<F> {
    fixed_width_read!(
        /// Reads a byte as signed (Lucene's `readByte`, a Java `byte`).
        read_i8, i8, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a big-endian `u16` (Lucene 8 `readShort`, unsigned).
        read_u16, u16, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a big-endian `u32` (Lucene 8 `readInt`, unsigned).
        read_u32, u32, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a big-endian `u64` (Lucene 8 `readLong`, unsigned).
        read_u64, u64, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a big-endian `i16` (Lucene 8 `readShort`).
        read_i16, i16, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a big-endian `i32` (Lucene 8 `readInt`).
        ///
        /// # Examples
        ///
        /// ```
        /// # use async_buffered_input::AsyncBufferedInput;
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> std::io::Result<()> {
        /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(vec![0xff, 0xff, 0xff, 0xfe]));
        /// assert_eq!(input.read_i32().await?, -2);
        /// # Ok(())
        /// # }
        /// ```
        read_i32, i32, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a big-endian `i64` (Lucene 8 `readLong`).
        read_i64, i64, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `u16` (Lucene 9+ `readShort`, unsigned).
        read_u16_le, u16, from_le_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `u32` (Lucene 9+ `readInt`, unsigned).
        read_u32_le, u32, from_le_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `u64` (Lucene 9+ `readLong`, unsigned).
        read_u64_le, u64, from_le_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `i16` (Lucene 9+ `readShort`).
        read_i16_le, i16, from_le_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `i32` (Lucene 9+ `readInt`).
        read_i32_le, i32, from_le_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `i64` (Lucene 9+ `readLong`).
        read_i64_le, i64, from_le_bytes
    );

    bulk_read!(
        /// Fills `dst` with big-endian `u16`s.
        read_u16_into, u16, from_be_bytes, to_be_bytes
    );
    bulk_read!(
        /// Fills `dst` with big-endian `u32`s (Lucene 8 `readInts`).
        ///
        /// # Examples
        ///
        /// ```
        /// # use async_buffered_input::AsyncBufferedInput;
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> std::io::Result<()> {
        /// let bytes = vec![0, 0, 0, 1, 0, 0, 1, 0];
        /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(bytes));
        /// let mut values = [0u32; 2];
        /// input.read_u32_into(&mut values).await?;
        /// assert_eq!(values, [1, 256]);
        /// # Ok(())
        /// # }
        /// ```
        read_u32_into, u32, from_be_bytes, to_be_bytes
    );
    bulk_read!(
        /// Fills `dst` with big-endian `u64`s (Lucene 8 `readLongs`).
        read_u64_into, u64, from_be_bytes, to_be_bytes
    );
    bulk_read!(
        /// Fills `dst` with big-endian `i32`s.
        read_i32_into, i32, from_be_bytes, to_be_bytes
    );
    bulk_read!(
        /// Fills `dst` with big-endian `i64`s.
        read_i64_into, i64, from_be_bytes, to_be_bytes
    );
    bulk_read!(
        /// Fills `dst` with little-endian `u16`s.
        read_u16_le_into, u16, from_le_bytes, to_le_bytes
    );
    bulk_read!(
        /// Fills `dst` with little-endian `u32`s (Lucene 9+ `readInts`).
        read_u32_le_into, u32, from_le_bytes, to_le_bytes
    );
    bulk_read!(
        /// Fills `dst` with little-endian `u64`s (Lucene 9+ `readLongs`).
        read_u64_le_into, u64, from_le_bytes, to_le_bytes
    );
    bulk_read!(
        /// Fills `dst` with little-endian `i32`s.
        read_i32_le_into, i32, from_le_bytes, to_le_bytes
    );
    bulk_read!(
        /// Fills `dst` with little-endian `i64`s.
        read_i64_le_into, i64, from_le_bytes, to_le_bytes
    );

    /// Reads a Lucene vint: 1 to 5 bytes, 7 bits per byte, low groups first.
    ///
    /// Negative Java ints, which Lucene writes as 5-byte vints, read as their `u32` bit pattern.
    ///
    /// # Errors
    ///
    /// `InvalidData` (naming the position) if the 5th byte has bits beyond the 32nd or a
    /// continuation bit; `UnexpectedEof` if the data ends inside the vint; the source's own
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
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(vec![0x80, 0x01, 0x7f]));
    /// assert_eq!(input.read_vint().await?, 128);
    /// assert_eq!(input.read_vint().await?, 127);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn read_vint(&mut self) -> impl Future<Output = io::Result<u32>> + use<'_, F> {
        ReadFuture::new(
            self,
            VarintRead::<VINT_MAX_LEN, VINT_LAST_BITS, u32, _>::new("read_vint", |v| v as u32),
        )
    }

    /// Reads a Lucene vlong: 1 to 9 bytes, 7 bits per byte, low groups first, a value below
    /// 2^63. As strict as Lucene's `readVLong`, which rejects as corrupt the 10-byte encodings
    /// of larger values; [`read_varint_u64`](Self::read_varint_u64) reads those.
    ///
    /// # Errors
    ///
    /// `InvalidData` (naming the position) if the 9th byte has a continuation bit;
    /// `UnexpectedEof` if the data ends inside the vlong; the source's own error kind if it
    /// fails. The position is unchanged after an error.
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
    /// let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]; // 2^63 - 1
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(max.to_vec()));
    /// assert_eq!(input.read_vlong().await?, i64::MAX as u64);
    ///
    /// let two_to_63 = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01];
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(two_to_63.to_vec()));
    /// let err = input.read_vlong().await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    /// assert_eq!(input.read_varint_u64().await?, 1 << 63);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn read_vlong(&mut self) -> impl Future<Output = io::Result<u64>> + use<'_, F> {
        ReadFuture::new(
            self,
            VarintRead::<VLONG_MAX_LEN, VLONG_LAST_BITS, u64, _>::new("read_vlong", |v| v),
        )
    }

    /// Reads a varint of up to 10 bytes: any `u64`, 7 bits per byte, low groups first (the
    /// encoding protobuf uses for `uint64`). Wider than [`read_vlong`](Self::read_vlong), which
    /// is as strict as Lucene's `readVLong`: use this one for data that is not a Lucene index.
    ///
    /// # Errors
    ///
    /// `InvalidData` (naming the position) if the 10th byte has bits beyond the 64th or a
    /// continuation bit; `UnexpectedEof` if the data ends inside the varint; the source's own
    /// error kind if it fails. The position is unchanged after an error.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
    #[inline]
    pub fn read_varint_u64(&mut self) -> impl Future<Output = io::Result<u64>> + use<'_, F> {
        ReadFuture::new(
            self,
            VarintRead::<VARINT64_MAX_LEN, VARINT64_LAST_BITS, u64, _>::new(
                "read_varint_u64",
                |v| v,
            ),
        )
    }

    /// Reads a zig-zag encoded vint (Lucene `readZInt`): small magnitudes, either sign, take few
    /// bytes.
    ///
    /// # Errors
    ///
    /// As [`read_vint`](Self::read_vint).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
    #[inline]
    pub fn read_zint(&mut self) -> impl Future<Output = io::Result<i32>> + use<'_, F> {
        ReadFuture::new(
            self,
            VarintRead::<VINT_MAX_LEN, VINT_LAST_BITS, i32, _>::new("read_zint", |v| {
                zigzag_decode(v) as i32
            }),
        )
    }

    /// Reads a zig-zag encoded vlong (Lucene `readZLong`).
    ///
    /// # Errors
    ///
    /// As [`read_vlong`](Self::read_vlong).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
    #[inline]
    pub fn read_zlong(&mut self) -> impl Future<Output = io::Result<i64>> + use<'_, F> {
        ReadFuture::new(
            self,
            VarintRead::<VARINT64_MAX_LEN, VARINT64_LAST_BITS, i64, _>::new(
                "read_zlong",
                zigzag_decode,
            ),
        )
    }

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

    // ----- private helpers -----

    /// Decodes the varint at `at` without consuming it: returns its value and length. Gathers
    /// its bytes across window refills when it straddles the window's edge; `gather` starts as
    /// `Gather::default()` and carries the bytes gathered so far across `Pending`.
    fn poll_peek_varint(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        max_len: usize,
        last_bits: u32,
        gather: &mut Gather,
    ) -> Poll<Result<(u64, usize), Error>> {
        loop {
            let n = gather.n;
            let next = at + n as u64;
            if gather.filling {
                ready!(self.poll_fill_at(cx, next, max_len - n)).map_err(|e| e.after(n as u64))?;
                gather.filling = false;
            } else {
                match decode_varint(&gather.bytes[..n], max_len, last_bits) {
                    Varint::Done { value, len } => return Poll::Ready(Ok((value, len))),
                    Varint::Malformed(detail) => return Poll::Ready(Err(Error::Invalid(detail))),
                    Varint::Short => {}
                }
                if self.window_at(next).is_empty() {
                    gather.filling = true;
                    continue;
                }
            }
            let held = self.window_at(next);
            if held.is_empty() {
                return Poll::Ready(Err(Error::eof(n as u64)));
            }
            let take = held.len().min(max_len - n);
            gather.bytes[n..n + take].copy_from_slice(&held[..take]);
            gather.n += take;
        }
    }
}

/// The bytes of a varint gathered so far by
/// [`poll_peek_varint`](AsyncBufferedInput::poll_peek_varint).
#[derive(Debug, Default)]
struct Gather {
    bytes: [u8; VARINT64_MAX_LEN],
    n: usize,
    /// A refill at the next byte has started and not finished.
    filling: bool,
}

/// A fixed-width read of `N` bytes turned into a `T` by `convert`.
struct FixedWidth<const N: usize, T, F> {
    op: &'static str,
    convert: F,
    _value: PhantomData<fn() -> T>,
}

impl<const N: usize, T, F> FixedWidth<N, T, F> {
    #[inline(always)]
    fn new(op: &'static str, convert: F) -> Self {
        Self {
            op,
            convert,
            _value: PhantomData,
        }
    }
}

/// The slow path of a [`FixedWidth`]: the value's bytes, gathered across refills.
struct FixedWidthSlow<const N: usize> {
    bytes: [u8; N],
    exact: ReadExact,
}

impl<const N: usize> Default for FixedWidthSlow<N> {
    fn default() -> Self {
        Self {
            bytes: [0; N],
            exact: ReadExact::default(),
        }
    }
}

impl<F, const N: usize, T, C> WindowRead<F> for FixedWidth<N, T, C>
where
    F: Fetch,
    C: Fn([u8; N]) -> T,
{
    type Output = T;
    type Slow = FixedWidthSlow<N>;

    fn op(&self) -> (&'static str, Amount) {
        (self.op, Amount::Exact(N as u64))
    }

    #[inline(always)]
    fn fast(&mut self, input: &mut AsyncBufferedInput<F>) -> Option<T> {
        let bytes = *input.window_at(input.position()).first_chunk::<N>()?;
        input.consume_window(N);
        Some((self.convert)(bytes))
    }

    fn poll_slow(
        &mut self,
        slow: &mut FixedWidthSlow<N>,
        input: &mut AsyncBufferedInput<F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, Error>> {
        let at = input.position();
        ready!(input.poll_read_exact_at(cx, at, &mut slow.bytes, &mut slow.exact))?;
        input.finish_read(at, N, slow.exact.direct());
        Poll::Ready(Ok((self.convert)(slow.bytes)))
    }
}

/// A varint of at most `MAX_LEN` bytes turned into a `T` by `convert`.
struct VarintRead<const MAX_LEN: usize, const LAST_BITS: u32, T, F> {
    op: &'static str,
    convert: F,
    _value: PhantomData<fn() -> T>,
}

impl<const MAX_LEN: usize, const LAST_BITS: u32, T, F> VarintRead<MAX_LEN, LAST_BITS, T, F> {
    #[inline(always)]
    fn new(op: &'static str, convert: F) -> Self {
        Self {
            op,
            convert,
            _value: PhantomData,
        }
    }
}

impl<F, const MAX_LEN: usize, const LAST_BITS: u32, T, C> WindowRead<F>
    for VarintRead<MAX_LEN, LAST_BITS, T, C>
where
    F: Fetch,
    C: Fn(u64) -> T,
{
    type Output = T;
    type Slow = Gather;

    fn op(&self) -> (&'static str, Amount) {
        (self.op, Amount::UpTo(MAX_LEN as u64))
    }

    #[inline(always)]
    fn fast(&mut self, input: &mut AsyncBufferedInput<F>) -> Option<T> {
        let window = input.window_at(input.position());
        let (value, len) = decode_varint_fast::<MAX_LEN, LAST_BITS>(window)?;
        input.consume_window(len);
        Some((self.convert)(value))
    }

    fn poll_slow(
        &mut self,
        gather: &mut Gather,
        input: &mut AsyncBufferedInput<F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, Error>> {
        let at = input.position();
        let (value, len) = ready!(input.poll_peek_varint(cx, at, MAX_LEN, LAST_BITS, gather))?;
        input.finish_read(at, len, 0);
        Poll::Ready(Ok((self.convert)(value)))
    }
}

/// [`AsyncBufferedInput::read_string`]: a vint length, then that many bytes of UTF-8.
struct ReadString;

/// The slow path of [`ReadString`], step by step.
enum StringSlow {
    /// Gathering the length prefix, across refills if it straddles the window's edge.
    Prefix(Gather),
    /// A string longer than the window: asking the source's length before allocating for it.
    Length { len: usize, prefix: usize },
    /// Reading the bytes into their own buffer.
    Body {
        prefix: usize,
        bytes: Vec<u8>,
        exact: ReadExact,
    },
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
        let window = input.window_at(input.position());
        let (len, prefix) = decode_varint_fast::<VINT_MAX_LEN, VINT_LAST_BITS>(window)?;
        let total = prefix.checked_add(len as usize)?;
        let s = super::utf8::to_string(window.get(prefix..total)?).ok()?;
        input.consume_window(total);
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
                    if let Some(bytes) = input.window_at(at).get(prefix..total) {
                        let s = std::str::from_utf8(bytes)
                            .map_err(|e| invalid_utf8(len, e))?
                            .to_owned();
                        input.consume_window(total);
                        return Poll::Ready(Ok(s));
                    }
                    *slow = if len > input.capacity() {
                        StringSlow::Length { len, prefix }
                    } else {
                        StringSlow::Body {
                            prefix,
                            bytes: vec![0u8; len],
                            exact: ReadExact::default(),
                        }
                    };
                }
                StringSlow::Length { len, prefix } => {
                    let (len, prefix) = (*len, *prefix);
                    let data_at = at + prefix as u64;
                    let available = ready!(input.poll_length(cx))?.saturating_sub(data_at);
                    if (len as u64) > available {
                        return Poll::Ready(Err(Error::Eof {
                            available: prefix as u64 + available,
                            needed: Some((prefix + len) as u64),
                        }));
                    }
                    *slow = StringSlow::Body {
                        prefix,
                        bytes: vec![0u8; len],
                        exact: ReadExact::default(),
                    };
                }
                StringSlow::Body {
                    prefix,
                    bytes,
                    exact,
                } => {
                    let (prefix, len) = (*prefix, bytes.len());
                    let total = prefix + len;
                    let data_at = at + prefix as u64;
                    ready!(input.poll_read_exact_at(cx, data_at, bytes, exact))
                        .map_err(|e| e.after(prefix as u64).needing(total as u64))?;
                    let s = String::from_utf8(std::mem::take(bytes))
                        .map_err(|e| invalid_utf8(len, e.utf8_error()))?;
                    input.finish_read(at, total, exact.direct());
                    return Poll::Ready(Ok(s));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn varint_edges() {
        assert_eq!(decode_varint(&[0], 5, 4), Varint::Done { value: 0, len: 1 });
        assert_eq!(decode_varint(&[0x80], 5, 4), Varint::Short);
        assert_eq!(
            decode_varint(&[0xff, 0xff, 0xff, 0xff, 0x0f], 5, 4),
            Varint::Done {
                value: u64::from(u32::MAX),
                len: 5
            }
        );
        assert!(matches!(
            decode_varint(&[0xff, 0xff, 0xff, 0xff, 0x1f], 5, 4),
            Varint::Malformed(_)
        ));
        assert!(matches!(
            decode_varint(&[0x80, 0x80, 0x80, 0x80, 0x80], 5, 4),
            Varint::Malformed(_)
        ));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(
            decode_varint(&max, 10, 1),
            Varint::Done {
                value: u64::MAX,
                len: 10
            }
        );
    }

    /// The branch-free decoder agrees with the byte loop wherever it answers, and answers for
    /// every well-formed varint that ends within 8 bytes.
    fn agrees<const MAX_LEN: usize, const LAST_BITS: u32>(
        bytes: &[u8],
    ) -> Result<(), TestCaseError> {
        let slow = decode_varint(bytes, MAX_LEN, LAST_BITS);
        match decode_varint_fast::<MAX_LEN, LAST_BITS>(bytes) {
            Some((value, len)) => {
                prop_assert_eq!(slow, Varint::Done { value, len }, "{:02x?}", bytes)
            }
            None => prop_assert!(
                bytes.len() < 8 || !matches!(slow, Varint::Done { len, .. } if len <= 8),
                "{:02x?}: fast path declined {:?}",
                bytes,
                slow
            ),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// Random bytes whose first `stop` bytes carry a continuation bit, so the stop byte
        /// falls anywhere from the 1st to the 11th, cut to every length that matters.
        #[test]
        fn fast_varint_agrees_with_the_byte_loop(
            mut bytes in prop::collection::vec(any::<u8>(), 16),
            stop in 0usize..11,
            end_there in any::<bool>(),
        ) {
            for (i, b) in bytes.iter_mut().enumerate().take(10) {
                if i < stop {
                    *b |= 0x80;
                } else if i == stop && end_there {
                    *b &= 0x7f;
                }
            }
            for len in [0, 1, 5, 7, 8, 9, 10, 16] {
                agrees::<VINT_MAX_LEN, VINT_LAST_BITS>(&bytes[..len])?;
                agrees::<VLONG_MAX_LEN, VLONG_LAST_BITS>(&bytes[..len])?;
                agrees::<VARINT64_MAX_LEN, VARINT64_LAST_BITS>(&bytes[..len])?;
            }
        }
    }

    /// Every boundary value, followed by padding.
    #[test]
    fn fast_varint_agrees_at_every_7_bit_boundary() {
        for bits in 0..64 {
            for v in [(1u64 << bits) - 1, 1u64 << bits] {
                let mut bytes = Vec::new();
                let mut w = v;
                while w >= 0x80 {
                    bytes.push(w as u8 | 0x80);
                    w >>= 7;
                }
                bytes.push(w as u8);
                bytes.resize(16, 0xaa);
                agrees::<VINT_MAX_LEN, VINT_LAST_BITS>(&bytes).unwrap();
                agrees::<VLONG_MAX_LEN, VLONG_LAST_BITS>(&bytes).unwrap();
                agrees::<VARINT64_MAX_LEN, VARINT64_LAST_BITS>(&bytes).unwrap();
            }
        }
    }

    #[test]
    fn zigzag() {
        assert_eq!(zigzag_decode(0), 0);
        assert_eq!(zigzag_decode(1), -1);
        assert_eq!(zigzag_decode(2), 1);
        assert_eq!(zigzag_decode(u64::MAX), i64::MIN);
        assert_eq!(zigzag_decode(u64::MAX - 1), i64::MAX);
    }
}
