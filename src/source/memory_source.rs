use std::fmt;
use std::future::{ready, Future};
use std::io;

use bytes::Bytes;

use crate::source::PositionalSource;

/// A [`PositionalSource`] over bytes in memory. Reads hand out shared slices of the bytes,
/// without copying.
///
/// # Examples
///
/// ```
/// use async_buffered_input::source::{MemorySource, PositionalSource};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let source = MemorySource::new(b"hello world".to_vec());
/// assert_eq!(&source.read_at(6, 100).await?[..], b"world"); // short only at the end
/// assert!(source.read_at(50, 1).await?.is_empty());
/// assert_eq!(source.len().await?, 11);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default)]
pub struct MemorySource {
    data: Bytes,
}

impl MemorySource {
    /// A source serving `data`.
    pub fn new(data: impl Into<Bytes>) -> Self {
        Self { data: data.into() }
    }

    /// The bytes this source serves.
    pub fn bytes(&self) -> &Bytes {
        &self.data
    }
}

impl PositionalSource for MemorySource {
    /// A shared slice of the bytes at `[offset, offset + len)`, cut at the end. Never fails.
    fn read_at(&self, offset: u64, len: usize) -> impl Future<Output = io::Result<Bytes>> + Send {
        let size = self.data.len() as u64;
        let start = offset.min(size);
        let end = start.saturating_add(len as u64).min(size);
        ready(Ok(self.data.slice(start as usize..end as usize)))
    }

    fn len(&self) -> impl Future<Output = io::Result<u64>> + Send {
        ready(Ok(self.data.len() as u64))
    }

    fn known_len(&self) -> Option<u64> {
        Some(self.data.len() as u64)
    }

    /// "memory (N bytes)": bytes in memory have no name, and no [`resource`](Self::resource)
    /// (which would share [cached](crate::cache::Cached) blocks with every other source of
    /// the same name).
    fn description(&self) -> String {
        format!(
            "memory ({})",
            crate::error::ByteCount(self.data.len() as u64)
        )
    }
}

impl fmt::Debug for MemorySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemorySource")
            .field("len", &self.data.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_are_cut_at_the_end_and_never_overflow() {
        let source = MemorySource::new(vec![1u8, 2, 3]);
        assert_eq!(&source.read_at(1, 5).await.unwrap()[..], &[2, 3]);
        assert!(source.read_at(3, 1).await.unwrap().is_empty());
        assert!(source
            .read_at(u64::MAX, usize::MAX)
            .await
            .unwrap()
            .is_empty());
        assert_eq!(
            &source.read_at(0, usize::MAX).await.unwrap()[..],
            &[1, 2, 3]
        );
    }

    #[test]
    fn debug_shows_length_not_bytes() {
        let shown = format!("{:?}", MemorySource::new(vec![0xAB; 4]));
        assert_eq!(shown, "MemorySource { len: 4 }");
    }
}
