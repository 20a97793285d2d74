//! Lucene-style clones and slices of an input over a positional source.

use std::io;

use crate::error::{Amount, ByteCount, Error};
use crate::fetch::PositionalFetch;
use crate::source::PositionalSource;
use crate::AsyncBufferedInput;

impl<S: PositionalSource> Clone for AsyncBufferedInput<PositionalFetch<S>> {
    /// An independent input over the same source, like Lucene's `IndexInput.clone()`: same
    /// view (a clone of a slice is that slice), capacity, read-ahead and position, but an empty
    /// window and fresh [`stats`](AsyncBufferedInput::stats). Costs no I/O.
    ///
    /// ```
    /// use async_buffered_input::fetch::PositionalFetch;
    /// use async_buffered_input::source::MemorySource;
    /// use async_buffered_input::AsyncBufferedInput;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut input = AsyncBufferedInput::new(PositionalFetch::new(MemorySource::new(vec![1u8, 2, 3])));
    /// input.read_byte().await?;
    /// let mut other = input.clone();
    /// assert_eq!(other.read_byte().await?, 2);
    /// assert_eq!(other.read_byte().await?, 3);
    /// assert_eq!(input.position(), 1); // the original did not move
    /// # Ok(())
    /// # }
    /// ```
    fn clone(&self) -> Self {
        let mut input = AsyncBufferedInput::with_capacity(self.capacity(), self.fetch().clone());
        input.seek_to(self.position());
        input
    }
}

impl<S: PositionalSource> AsyncBufferedInput<PositionalFetch<S>> {
    /// A new input reading this one's bytes `[offset, offset + len)` as a file of its own, like
    /// Lucene's `IndexInput.slice()`: its positions start at 0, its [`length`](Self::length) is
    /// `len`, and it cannot read outside the range. It shares the source, has the same capacity
    /// and read-ahead, starts at position 0 with an empty window, and is independent of this
    /// input (whose position does not move). Offsets are relative to this input, so a slice of
    /// a slice stays inside its parent.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `offset + len` overflows or is past this input's length (the error
    /// names the offset, the length asked and the length available); the source's error if its
    /// length must be asked and that fails.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing changes until it returns.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::fetch::PositionalFetch;
    /// use async_buffered_input::source::MemorySource;
    /// use async_buffered_input::AsyncBufferedInput;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let data: Vec<u8> = (0..100u8).collect();
    /// let input = AsyncBufferedInput::new(PositionalFetch::new(MemorySource::new(data)));
    /// let mut slice = input.slice(10, 5).await?;
    /// let mut buf = [0u8; 5];
    /// slice.read_bytes(&mut buf).await?;
    /// assert_eq!(buf, [10, 11, 12, 13, 14]);
    /// assert!(slice.read_byte().await.is_err()); // the slice ends at 5
    ///
    /// let err = input.slice(90, 20).await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    /// assert_eq!(
    ///     err.to_string(),
    ///     "slice of 20 bytes at position 90: the input's length is 100, so only 10 bytes are there"
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub async fn slice(&self, offset: u64, len: u64) -> io::Result<Self> {
        let fail = |e: Error| e.into_io("slice", offset, Amount::Exact(len));
        let length = self
            .fetch()
            .view_length()
            .await
            .map_err(|e| fail(e.into()))?;
        if offset.checked_add(len).is_none_or(|end| end > length) {
            return Err(fail(Error::InvalidInput(format!(
                "the input's length is {length}, so only {} are there",
                ByteCount(length.saturating_sub(offset))
            ))));
        }
        let fetch = self.fetch().slice_unchecked(offset, len);
        Ok(AsyncBufferedInput::with_capacity(self.capacity(), fetch))
    }
}
