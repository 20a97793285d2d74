//! Fixed-width integers, big- and little-endian, each with a window fast path.

use std::future::Future;
use std::io;
use std::mem::size_of;
use std::task::{ready, Context, Poll};

use crate::error::{Amount, Error};
use crate::input::decode::converted::Converted;
use crate::input::engine::read_exact::ReadExact;
use crate::input::fetch::Fetch;
use crate::input::window_read::{ReadFuture, WindowRead};
use crate::input::AsyncBufferedInput;

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

/// Fixed-width integers, as Lucene's `DataInput` writes them.
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
}

/// A fixed-width read of `N` bytes, converted into a `T`.
struct FixedWidth<const N: usize, T, C>(Converted<T, C>);

impl<const N: usize, T, C> FixedWidth<N, T, C> {
    #[inline(always)]
    fn new(op: &'static str, convert: C) -> Self {
        Self(Converted::new(op, convert))
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
        (self.0.op(), Amount::Exact(N as u64))
    }

    #[inline(always)]
    fn fast(&mut self, input: &mut AsyncBufferedInput<F>) -> Option<T> {
        let bytes = *input
            .engine()
            .window()
            .bytes_from(input.position())
            .first_chunk::<N>()?;
        input.engine_mut().consume_window(N);
        Some(self.0.apply(bytes))
    }

    fn poll_slow(
        &mut self,
        slow: &mut FixedWidthSlow<N>,
        input: &mut AsyncBufferedInput<F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, Error>> {
        let at = input.position();
        ready!(input
            .engine_mut()
            .poll_read_exact_at(cx, at, &mut slow.bytes, &mut slow.exact))?;
        input.engine_mut().finish_read(at, N, slow.exact.direct());
        Poll::Ready(Ok(self.0.apply(slow.bytes)))
    }
}
