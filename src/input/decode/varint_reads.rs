//! Varints and zig-zag varints, with a branch-free window fast path.

use std::future::Future;
use std::io;
use std::task::{ready, Context, Poll};

use crate::error::{Amount, Error};
use crate::input::decode::converted::Converted;
use crate::input::decode::varint_format::{
    decode_varint, decode_varint_fast, zigzag_decode, Varint, VARINT64_LAST_BITS, VARINT64_MAX_LEN,
    VINT_LAST_BITS, VINT_MAX_LEN, VLONG_LAST_BITS, VLONG_MAX_LEN,
};
use crate::input::fetch::Fetch;
use crate::input::window_read::{ReadFuture, WindowRead};
use crate::input::AsyncBufferedInput;

/// Varints, as Lucene's `DataInput` writes them.
impl<F: Fetch> AsyncBufferedInput<F> {
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

    /// Decodes the varint at `at` (the position) without consuming it: returns its value and
    /// length. Gathers its bytes across window refills when it straddles the window's edge,
    /// and from the bytes a failed attempt kept, which it keeps in turn when a refill fails
    /// (`keep_for_retry`); `gather` starts as `Gather::default()` and carries the bytes
    /// gathered so far across `Pending`.
    pub(crate) fn poll_peek_varint(
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
                if let Err(e) = ready!(self.engine_mut().poll_fill_at(cx, next, max_len - n)) {
                    let bytes = &gather.bytes[..n];
                    self.engine_mut().keep_for_retry(at, n, &e, |offset, out| {
                        out.copy_from_slice(&bytes[offset..offset + out.len()]);
                    });
                    return Poll::Ready(Err(e.after(n as u64)));
                }
                gather.filling = false;
            } else {
                match decode_varint(&gather.bytes[..n], max_len, last_bits) {
                    Varint::Done { value, len } => return Poll::Ready(Ok((value, len))),
                    Varint::Malformed(detail) => return Poll::Ready(Err(Error::Invalid(detail))),
                    Varint::Short => {}
                }
                if self.engine().window().bytes_from(next).is_empty() {
                    let dst = &mut gather.bytes[n..max_len];
                    let kept = ready!(self.engine_mut().poll_take_kept(cx, next, dst))
                        .map_err(|e| e.after(n as u64))?;
                    if kept > 0 {
                        gather.n += kept;
                        continue;
                    }
                    gather.filling = true;
                    continue;
                }
            }
            let held = self.engine().window().bytes_from(next);
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
pub(crate) struct Gather {
    bytes: [u8; VARINT64_MAX_LEN],
    n: usize,
    /// A refill at the next byte has started and not finished.
    filling: bool,
}

impl Gather {
    /// The bytes gathered so far (and zeros after them).
    pub(crate) fn bytes(&self) -> &[u8; VARINT64_MAX_LEN] {
        &self.bytes
    }
}

/// A varint of at most `MAX_LEN` bytes, converted into a `T`.
struct VarintRead<const MAX_LEN: usize, const LAST_BITS: u32, T, C>(Converted<T, C>);

impl<const MAX_LEN: usize, const LAST_BITS: u32, T, C> VarintRead<MAX_LEN, LAST_BITS, T, C> {
    #[inline(always)]
    fn new(op: &'static str, convert: C) -> Self {
        Self(Converted::new(op, convert))
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
        (self.0.op(), Amount::UpTo(MAX_LEN as u64))
    }

    #[inline(always)]
    fn fast(&mut self, input: &mut AsyncBufferedInput<F>) -> Option<T> {
        let window = input.engine().window().bytes_from(input.position());
        let (value, len) = decode_varint_fast::<MAX_LEN, LAST_BITS>(window)?;
        input.engine_mut().consume_window(len);
        Some(self.0.apply(value))
    }

    fn poll_slow(
        &mut self,
        gather: &mut Gather,
        input: &mut AsyncBufferedInput<F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, Error>> {
        let at = input.position();
        let (value, len) = ready!(input.poll_peek_varint(cx, at, MAX_LEN, LAST_BITS, gather))?;
        input.engine_mut().finish_read(at, len, 0);
        Poll::Ready(Ok(self.0.apply(value)))
    }
}
