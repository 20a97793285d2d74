//! The prefetch hint: start fetching a range the caller will read soon, without waiting.

use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

impl<F: Fetch> AsyncBufferedInput<F> {
    /// Hints that the bytes `[offset, offset + len)` (offsets of this input: a slice's start at
    /// 0) will be read soon, as Lucene's `IndexInput.prefetch`: over a
    /// [`PositionalFetch`](crate::PositionalFetch), a request for them starts now, in the
    /// background, and returns at once; a later read of them waits for that request, or takes
    /// its bytes, and makes no request of its own. Use it where the next reads are known (a
    /// file's footer and header, the blocks a lookup will read) to overlap their round trips.
    ///
    /// The range is widened back to the start of the window-sized block that holds `offset`,
    /// as a read after a seek refills the window from there (at most
    /// [`capacity`](Self::capacity) - 1 more bytes). Nothing is done when the window holds the
    /// range already.
    ///
    /// It is a hint, never an error, and bounded (see [Memory](Self#memory)):
    ///
    /// - it is cut at the input's end (if the length is known) and at 8 MiB, and ignored when
    ///   empty, when the input holds 16 prefetched ranges or 8 MiB of them already, or when
    ///   the [`MemoryBudget`](crate::MemoryBudget) of the fetcher has no room for it;
    /// - a prefetched range stays until a read reaches its end: reads elsewhere, seeks and the
    ///   read-ahead leave it be; [`release`](Self::release) and dropping the input abort it;
    /// - if its request fails, the read of the range asks again as if there had been no
    ///   hint, and reports an error only if that fails too.
    ///
    /// A [`StreamFetch`](crate::StreamFetch) ignores it (a stream has one cursor). Over a
    /// `Cached` source (feature `cache`), the request loads the range's blocks into the cache
    /// too, for every input over it.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::source::MemorySource;
    /// use async_buffered_input::{AsyncBufferedInput, PositionalFetch};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let data: Vec<u8> = (0..100u8).collect();
    /// let mut input = AsyncBufferedInput::with_capacity(16, PositionalFetch::new(MemorySource::new(data)));
    /// let length = input.length().await?;
    /// input.prefetch(length - 16, 16); // the footer, while the header is read
    /// input.prefetch(0, 8);
    /// assert_eq!(input.read_byte().await?, 0);
    /// input.seek_to(length - 16);
    /// assert_eq!(input.read_byte().await?, 84);
    /// assert_eq!(input.stats().underlying_reads, 2); // two fetches, each from its prefetch
    /// # Ok(())
    /// # }
    /// ```
    pub fn prefetch(&mut self, offset: u64, len: u64) {
        let mut end = offset.saturating_add(len);
        if let Some(length) = self.known_length() {
            end = end.min(length);
        }
        if end <= offset {
            return; // empty, or at or past the end
        }
        let window = self.window_range();
        if window.start <= offset && end <= window.end {
            return;
        }
        // A read at `offset` after a seek refills from the window-sized block that holds it.
        let start = offset - offset % self.capacity() as u64;
        self.fetcher_mut().prefetch(start, end - start);
    }
}
