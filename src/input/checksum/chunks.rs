//! Reading a range of the input in large steps, past the window: whole-file verification and
//! other passes over every byte, at the speed of the source.

use std::future::poll_fn;
use std::io;
use std::ops::Range;

use tokio::io::ReadBuf;

use crate::error::{Amount, Error};
use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

/// The most a step of [`AsyncBufferedInput::for_each_chunk`] reads: large enough that a pass
/// over a cached file runs at memory speed, small enough to stay in the CPU's caches.
const CHUNK: usize = 256 * 1024;

/// Passes over a range of bytes.
impl<F: Fetch> AsyncBufferedInput<F> {
    /// Hands the bytes of `range` to `visit`, in order, in steps of up to 256 KiB (with the
    /// offset of each): the part the window holds straight from it, the rest fetched into one
    /// buffer, so each byte comes from the source at most once. Neither the window nor the
    /// position change. A fetcher with read-ahead reads ahead of the steps.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` if the data ends before `range` does (the error names `range.start`, the
    /// length asked and the length found), having visited what was there; the source's own
    /// error kind if it fails.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe as far as the input goes (nothing is consumed); `visit` has seen a prefix
    /// of the range.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(vec![1u8; 1000]));
    /// input.read_u32().await?; // the window now holds the 1000 bytes
    /// let mut sum = 0u64;
    /// input.for_each_chunk(10..1000, |_at, bytes| sum += bytes.len() as u64).await?;
    /// assert_eq!((sum, input.position()), (990, 4));
    /// assert_eq!(input.stats().bytes_from_source, 1000); // served from the window
    /// # Ok(())
    /// # }
    /// ```
    pub async fn for_each_chunk(
        &mut self,
        range: Range<u64>,
        mut visit: impl FnMut(u64, &[u8]),
    ) -> io::Result<()> {
        const OP: &str = "for_each_chunk";
        let amount = Amount::Exact(range.end.saturating_sub(range.start));
        let mut buf = Vec::new();
        let mut at = range.start;
        while at < range.end {
            let left = range.end - at;
            let held = self.engine().window().bytes_from(at);
            if !held.is_empty() {
                let n = held.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                visit(at, &held[..n]);
                at += n as u64;
                continue;
            }
            // Fetch up to where the window's bytes start, if they come next.
            let mut want = left.min(CHUNK as u64);
            let window = self.window_range();
            if !window.is_empty() && window.start > at {
                want = want.min(window.start - at);
            }
            let want = want as usize; // at most `CHUNK`
            if buf.len() < want {
                // The most any step from here on takes, allocated once.
                buf = vec![0u8; left.min(CHUNK as u64) as usize];
            }
            let mut read_buf = ReadBuf::new(&mut buf[..want]);
            let n = poll_fn(|cx| {
                self.engine_mut()
                    .fetcher_mut()
                    .poll_fetch_at(cx, at, &mut read_buf)
            })
            .await
            .map_err(|e| self.error(e, OP, range.start, amount))?;
            if n == 0 {
                let e = Error::eof(at - range.start);
                return Err(self.error(e, OP, range.start, amount));
            }
            visit(at, &buf[..n]);
            at += n as u64;
        }
        Ok(())
    }

    /// The CRC32 (IEEE, as `java.util.zip.CRC32`) of the bytes of `range`, read in large steps
    /// ([`for_each_chunk`](Self::for_each_chunk): what the window holds is not fetched again);
    /// neither the window nor the position change.
    ///
    /// # Errors
    ///
    /// As [`for_each_chunk`](Self::for_each_chunk).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is consumed.
    pub async fn crc32_of(&mut self, range: Range<u64>) -> io::Result<u32> {
        let mut hasher = crc32fast::Hasher::new();
        self.for_each_chunk(range, |_, bytes| hasher.update(bytes))
            .await?;
        Ok(hasher.finalize())
    }
}
