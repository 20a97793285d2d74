//! Runs of fixed-width integers into a slice, decoded with no await per value.

use std::future::poll_fn;
use std::io;
use std::mem::size_of;

use crate::error::Amount;
use crate::input::engine::read_exact::ReadExact;
use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

/// How many bytes bulk reads decode per step when the values are not all in the window.
const BULK_STEP: usize = 4096;

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
            if let Some(window) = self.engine().window().bytes_from(at).get(..total) {
                for (value, bytes) in dst.iter_mut().zip(window.chunks_exact(N)) {
                    let mut b = [0u8; N];
                    b.copy_from_slice(bytes);
                    *value = <$ty>::$from(b);
                }
                self.engine_mut().consume_window(total);
                return Ok(());
            }
            let mut step = [0u8; BULK_STEP];
            let (mut done, mut direct) = (0, 0);
            while done < total {
                let bytes = &mut step[..(total - done).min(BULK_STEP / N * N)];
                let mut exact = ReadExact::step();
                let read =
                    poll_fn(|cx| self.engine_mut().poll_read_exact_at(cx, at + done as u64, bytes, &mut exact))
                        .await;
                if let Err(e) = read {
                    // Keep the values decoded so far, as bytes again, and the failed step's.
                    let values = &dst[..done / N];
                    let fetched = &bytes[..exact.done()];
                    self.engine_mut().keep_for_retry(at, done + fetched.len(), &e, |offset, out| {
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
            self.engine_mut().finish_read(at, total, direct);
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

/// Runs of fixed-width integers, as Lucene's `readInts` and `readLongs`.
impl<F: Fetch> AsyncBufferedInput<F> {
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
}
