//! Inputs over positional sources: one call to open a local file, and Lucene-style clones
//! and slices.

use std::io;
use std::path::Path;

use crate::error::{Amount, ByteCount, Error};
use crate::input::fetch::{PositionalFetch, ReadAhead};
use crate::input::AsyncBufferedInput;
use crate::source::{FileSource, PositionalSource};

impl AsyncBufferedInput<PositionalFetch<FileSource>> {
    /// Opens the local file at `path` the fast way: positional reads (a
    /// [`FileSource`], with page cache reads on Linux), the default
    /// [`ReadAhead`] on sequential reads, an 8 KiB window, and the file's length asked once,
    /// here, so that [`slice`](Self::slice) never asks it and
    /// [`known_length`](Self::known_length) has it. Errors name the path
    /// ([`resource`](Self::resource)). The input can be cloned and sliced.
    ///
    /// # Errors
    ///
    /// The operating system's error for the open or the length, naming the path.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future closes the file once the open finishes.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::AsyncBufferedInput;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut input = AsyncBufferedInput::open("Cargo.toml").await?;
    /// let length = input.known_length().unwrap();
    /// let mut tail = input.slice(length - 10, 10).await?; // no I/O for the length
    /// let mut last = [0u8; 10];
    /// tail.read_bytes(&mut last).await?;
    /// assert!(input.resource().ends_with("Cargo.toml"));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let source = FileSource::open(path).await?;
        let length = source.len().await?;
        let mut fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::default());
        fetch.set_length(length);
        Ok(Self::new(fetch))
    }
}

impl<S: PositionalSource> Clone for AsyncBufferedInput<PositionalFetch<S>> {
    /// An independent input over the same source, like Lucene's `IndexInput.clone()`: same
    /// view (a clone of a slice is that slice), capacity, read-ahead, position and
    /// [stats group](AsyncBufferedInput::with_stats_group), but an empty window and fresh
    /// [`stats`](AsyncBufferedInput::stats). Costs no I/O.
    ///
    /// ```
    /// use async_buffered_input::PositionalFetch;
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
        let mut input = AsyncBufferedInput::with_capacity(self.capacity(), self.fetcher().clone())
            .with_resource(self.shared_resource());
        input.seek_to(self.position());
        if let Some(group) = self.stats_group() {
            input.join_stats_group(group);
        }
        input
    }
}

impl<S: PositionalSource> AsyncBufferedInput<PositionalFetch<S>> {
    /// The bytes of several ranges of this input, fetched together: ranges less than 1 MiB
    /// apart are fetched by one request, the requests run at once, and each answer is a slice
    /// of its request's bytes. For a service that knows which postings or blocks it needs.
    /// Neither the window nor the position change; the answers come in the order asked. The
    /// ranges are checked against the input's length first: if it is not
    /// [known](Self::known_length) yet, that is one more request.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` if a range ends past the input's end (before any request is made),
    /// `InvalidInput` for a range that ends before it starts, naming that range's start; the
    /// source's own error kind if a request fails. When that error is one a retry can get past,
    /// the answers that came back are kept (at most 16 MiB, until the next `read_ranges`
    /// completes or [`release`](Self::release)), so a retry requests only the rest.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future aborts the requests; nothing changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::PositionalFetch;
    /// use async_buffered_input::source::MemorySource;
    /// use async_buffered_input::AsyncBufferedInput;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let data: Vec<u8> = (0..=255).collect();
    /// let input = AsyncBufferedInput::new(PositionalFetch::new(MemorySource::new(data)));
    /// let postings = input.read_ranges(&[200..203, 10..12, 100..101]).await?;
    /// assert_eq!(&postings[0][..], [200, 201, 202]);
    /// assert_eq!(&postings[1][..], [10, 11]);
    /// assert_eq!(&postings[2][..], [100]);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn read_ranges(
        &self,
        ranges: &[std::ops::Range<u64>],
    ) -> io::Result<Vec<bytes::Bytes>> {
        if ranges.is_empty() {
            return Ok(Vec::new());
        }
        self.fetcher().read_ranges(ranges).await.map_err(|(i, e)| {
            let r = &ranges[i.min(ranges.len().saturating_sub(1))];
            self.error(
                e,
                "read_ranges",
                r.start,
                Amount::Exact(r.end.saturating_sub(r.start)),
            )
        })
    }

    /// A new input reading this one's bytes `[offset, offset + len)` as a file of its own, like
    /// Lucene's `IndexInput.slice()`: its positions start at 0, its [`length`](Self::length) is
    /// `len` (known: [`known_length`](Self::known_length)), and it cannot read outside the
    /// range. Its [`resource`](Self::resource) is "slice [a..b) of PARENT"; name it with
    /// [`slice_named`](Self::slice_named). It shares the source, has the same capacity
    /// and read-ahead, starts at position 0 with an empty window, and is independent of this
    /// input (whose position does not move). Offsets are relative to this input, so a slice of
    /// a slice stays inside its parent.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `offset + len` overflows or is past this input's length (the error
    /// names the offset, the length asked and the length available); the source's error if its
    /// length must be asked (it is not [known](Self::known_length) yet) and that fails. Once
    /// asked, the length is kept (shared by this input and its clones, through `&self`): a
    /// parent shared behind an `Arc` asks it once for all its slices.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing changes until it returns.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::PositionalFetch;
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
    ///     "memory (100 bytes): slice of 20 bytes at position 90: the input's length is 100, so \
    ///      only 10 bytes are there"
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub async fn slice(&self, offset: u64, len: u64) -> io::Result<Self> {
        self.slice_named("", offset, len).await
    }

    /// A [`slice`](Self::slice) whose [`resource`](Self::resource) is "slice NAME [a..b) of
    /// PARENT", as Lucene's `IndexInput.slice(sliceDescription, ...)` names them: errors reading
    /// it name the sub-file and the file it is in.
    ///
    /// # Errors
    ///
    /// As [`slice`](Self::slice).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing changes until it returns.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::PositionalFetch;
    /// use async_buffered_input::source::MemorySource;
    /// use async_buffered_input::AsyncBufferedInput;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let input = AsyncBufferedInput::new(PositionalFetch::new(MemorySource::new(vec![0u8; 100])))
    ///     .with_resource("_0.cfs");
    /// let mut fdt = input.slice_named("_0.fdt", 10, 20).await?;
    /// fdt.seek_to(18);
    /// let err = fdt.read_u32().await.unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "slice _0.fdt [10..30) of _0.cfs: read_u32 of 4 bytes at position 18 went past the \
    ///      end: only 2 bytes available"
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub async fn slice_named(&self, name: &str, offset: u64, len: u64) -> io::Result<Self> {
        let fail = |e: Error| self.error(e, "slice", offset, Amount::Exact(len));
        let length = match self.known_length() {
            Some(length) => length,
            None => self
                .fetcher()
                .view_length()
                .await
                .map_err(|e| fail(e.into()))?,
        };
        if offset.checked_add(len).is_none_or(|end| end > length) {
            return Err(fail(Error::InvalidInput(format!(
                "the input's length is {length}, so only {} are there",
                ByteCount(length.saturating_sub(offset))
            ))));
        }
        let fetch = self.fetcher().slice_unchecked(offset, len);
        let end = offset + len;
        let parent = self.resource();
        let resource = match name {
            "" => format!("slice [{offset}..{end}) of {parent}"),
            name => format!("slice {name} [{offset}..{end}) of {parent}"),
        };
        let mut slice =
            AsyncBufferedInput::with_capacity(self.capacity(), fetch).with_resource(resource);
        if let Some(group) = self.stats_group() {
            slice.join_stats_group(group);
        }
        Ok(slice)
    }
}
