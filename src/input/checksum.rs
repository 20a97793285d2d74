//! The CRC32 of what an input consumes: Lucene's `BufferedChecksumIndexInput`, folded lazily.
//!
//! Window hits never touch the checksum: they only move the position. Bytes are folded into the
//! CRC when they are about to leave the window (before a refill discards them, before
//! `read_bytes_owned` hands them out), when they are fetched straight into a caller's buffer,
//! and when the checksum is asked for. So an input that does not checksum pays nothing, and one
//! that does pays one CRC pass over each byte, in large runs.
//!
//! A read in progress may fold its bytes before it completes (they leave the window before the
//! position moves past them). If it then fails or is dropped, the CRC has run ahead of the
//! position: [`Checksum::rewind`] goes back to `mark`, the last point folded at or before the
//! position, and the caller folds forward again from there.

use std::future::poll_fn;
use std::io;
use std::task::{ready, Context, Poll};

use crc32fast::Hasher;
use tokio::io::ReadBuf;

use super::buffered_input::fetch_counted;
use super::AsyncBufferedInput;
use crate::error::{Amount, Error};
use crate::fetch::Fetch;

/// The CRC32 (IEEE, as `java.util.zip.CRC32`) of the input's bytes `[start, upto)`.
///
/// Invariants: `start <= mark.1 <= upto`; `mark.0` is the CRC of `[start, mark.1)`; while the
/// checksum is not void, `mark.1 <= ` the input's position (which only moves forward).
#[derive(Clone, Debug)]
pub(super) struct Checksum {
    hasher: Hasher,
    start: u64,
    upto: u64,
    mark: (Hasher, u64),
    /// A seek went back to this offset: the checksum no longer describes one pass.
    backward: Option<u64>,
    /// Where folding found the data's end: not fetched there again (a read past the end would
    /// otherwise fetch there on every poll, moving a stream away from what the read needs).
    end: Option<u64>,
}

impl Checksum {
    /// A checksum of the bytes from `start` on.
    pub(super) fn new(start: u64) -> Self {
        Self {
            hasher: Hasher::new(),
            start,
            upto: start,
            mark: (Hasher::new(), start),
            backward: None,
            end: None,
        }
    }

    /// Where checksumming started.
    pub(super) fn start(&self) -> u64 {
        self.start
    }

    /// The end of what is folded.
    pub(super) fn upto(&self) -> u64 {
        self.upto
    }

    /// A seek back to `to`, before the position: the checksum is void from now on.
    pub(super) fn seek_back(&mut self, to: u64) {
        self.backward.get_or_insert(to);
    }

    /// Where a seek went back to, if one did.
    pub(super) fn backward(&self) -> Option<u64> {
        self.backward
    }

    /// Folds `bytes`, which sit at offset `at`, and where they continue what is folded:
    /// their part from `upto` on. `position` is the input's position, for the mark.
    ///
    /// Bytes past a gap are only possible when nothing is folded any more: the checksum is void
    /// (a seek went back), or `bytes` is empty (a read past the end, where folding stopped).
    pub(super) fn fold(&mut self, at: u64, bytes: &[u8], position: u64) {
        if self.backward.is_some() || bytes.is_empty() {
            return; // void: its value is never asked; or nothing to fold
        }
        debug_assert!(at <= self.upto, "a gap before the bytes folded");
        let end = at + bytes.len() as u64;
        if end <= self.upto || at > self.upto {
            return;
        }
        if self.upto <= position {
            self.mark = (self.hasher.clone(), self.upto);
        }
        self.hasher.update(&bytes[(self.upto - at) as usize..]);
        self.upto = end;
    }

    /// Goes back to the mark if what is folded ran past `position`.
    pub(super) fn rewind(&mut self, position: u64) {
        if self.upto > position {
            debug_assert!(self.mark.1 <= position, "the mark is past the position");
            self.hasher = self.mark.0.clone();
            self.upto = self.mark.1;
        }
    }

    /// The CRC of `[start, upto)`.
    pub(super) fn value(&self) -> u32 {
        self.hasher.clone().finalize()
    }
}

/// Checksummed reading, as Lucene's `ChecksumIndexInput`.
impl<F: Fetch> AsyncBufferedInput<F> {
    /// Starts a CRC32 (IEEE, as `java.util.zip.CRC32`) of every byte consumed from the position
    /// on, so that a file is parsed and verified in one pass: read it, then compare
    /// [`checksum`](Self::checksum) with the one it stores (see
    /// [`codec::check_footer`](crate::codec::check_footer)). A checksum already started is
    /// dropped.
    ///
    /// Reads that hit the window cost nothing more: bytes are folded into the CRC in large runs
    /// when they leave the window, when they are read straight into a caller's buffer, and when
    /// the checksum is asked for. A seek forward counts the bytes it skips (read when next
    /// folded). A seek back is refused by [`try_seek_to`](Self::try_seek_to) and
    /// [`AsyncSeek`](tokio::io::AsyncSeek), as in Lucene; [`seek_to`](Self::seek_to), which
    /// cannot fail, voids the checksum instead, and the next `checksum` fails.
    pub fn start_checksum(&mut self) {
        self.checksum = Some(Box::new(Checksum::new(self.position())));
    }

    /// Stops checksumming.
    pub fn stop_checksum(&mut self) {
        self.checksum = None;
    }

    /// Whether the input is checksumming, and from where.
    pub fn checksum_start(&self) -> Option<u64> {
        self.checksum.as_deref().map(Checksum::start)
    }

    /// The CRC32 of the bytes from where [`start_checksum`](Self::start_checksum) was called to
    /// the position.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if the input is not checksumming or a seek went back since it started;
    /// `UnexpectedEof` if the position is past the end (the bytes skipped to get there do not
    /// exist); the source's own error kind if reading skipped bytes fails.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: what was folded before the future was dropped stays folded.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let data = b"0123456789".to_vec();
    /// let mut input = AsyncBufferedInput::with_capacity(4, std::io::Cursor::new(data.clone()));
    /// input.start_checksum();
    /// input.read_bytes(&mut [0u8; 6]).await?;
    /// input.seek_to(8); // skips 6 and 7: still checksummed
    /// assert_eq!(input.checksum().await?, crc32fast::hash(&data[..8]));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn checksum(&mut self) -> io::Result<u32> {
        const OP: &str = "checksum";
        let at = self.position();
        let Some(checksum) = self.checksum.as_deref_mut() else {
            let e =
                Error::InvalidInput("the input is not checksumming: call start_checksum".into());
            return Err(self.error(e, OP, at, Amount::None));
        };
        if let Some(back) = checksum.backward() {
            let e = Error::InvalidInput(format!(
                "a seek went back to {back} while checksumming from {}: the bytes were not read \
                 in one pass",
                checksum.start()
            ));
            return Err(self.error(e, OP, at, Amount::None));
        }
        checksum.rewind(at);
        poll_fn(|cx| self.poll_fold_until(cx, at))
            .await
            .map_err(|e| self.error(e, OP, at, Amount::None))?;
        let checksum = self.checksum.as_deref().expect("checked above");
        if checksum.upto() < at {
            let e = Error::eof(checksum.upto() - checksum.start());
            return Err(self.error(
                e,
                OP,
                checksum.start(),
                Amount::Exact(at - checksum.start()),
            ));
        }
        Ok(checksum.value())
    }

    /// Refuses a seek to `to` if it goes back while checksumming (the fallible seeks).
    #[inline]
    pub(super) fn check_seek(&self, to: u64) -> io::Result<()> {
        match self.checksum.as_deref() {
            Some(checksum) if to < self.pos => {
                let e = Error::InvalidInput(format!(
                    "a seek back to {to} while checksumming from {}: a checksum covers one \
                     forward pass",
                    checksum.start()
                ));
                Err(self.error(e, "seek", self.pos, Amount::None))
            }
            _ => Ok(()),
        }
    }

    /// A seek to `to`: one back voids the checksum.
    #[inline]
    pub(super) fn note_seek(&mut self, to: u64) {
        if let Some(checksum) = self.checksum.as_deref_mut() {
            if to < self.pos {
                checksum.seek_back(to);
            }
        }
    }

    /// Folds what the window holds of the consumed bytes (before [`release`](Self::release)
    /// drops it); the rest is read when next folded.
    pub(super) fn fold_window(&mut self) {
        let position = self.position();
        if let Some(checksum) = self.checksum.as_deref_mut() {
            let upto = checksum.upto();
            let held = self.window.bytes_from(upto);
            let n = held.len().min(position.saturating_sub(upto) as usize);
            checksum.fold(upto, &held[..n], position);
        }
    }

    /// Folds the bytes up to `until` into the checksum, if the input is checksumming: from the
    /// window where it holds them, otherwise fetched into it (bytes a seek skipped). Progress
    /// is kept across `Pending`. Stops early, without an error, where the data ends.
    pub(super) fn poll_fold_until(
        &mut self,
        cx: &mut Context<'_>,
        until: u64,
    ) -> Poll<Result<(), Error>> {
        loop {
            let position = self.position();
            let Some(checksum) = self.checksum.as_deref_mut() else {
                return Poll::Ready(Ok(()));
            };
            let upto = checksum.upto();
            if upto >= until || checksum.backward().is_some() || checksum.end == Some(upto) {
                return Poll::Ready(Ok(()));
            }
            let held = self.window.bytes_from(upto);
            if !held.is_empty() {
                let n = held.len().min((until - upto) as usize);
                checksum.fold(upto, &held[..n], position);
                continue;
            }
            // Bytes no longer (or not yet) in the window: fetch them into it, from `upto`.
            self.window.keep(upto);
            let capacity = self.capacity();
            let mut spare = ReadBuf::new(self.window.spare(capacity));
            let n = ready!(fetch_counted(
                &mut self.fetch,
                &mut self.stats,
                &mut self.fetched_to,
                cx,
                upto,
                &mut spare
            ))?;
            self.window.commit(n);
            if n == 0 {
                // The end: nothing more to fold, and nothing to fetch here again.
                if let Some(checksum) = self.checksum.as_deref_mut() {
                    checksum.end = Some(upto);
                }
                return Poll::Ready(Ok(()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Folding overlapping runs, running ahead and rewinding, gives the CRC of the bytes
        /// up to the position, each counted once.
        #[test]
        fn folds_each_byte_once_and_rewinds_to_the_position(
            steps in prop::collection::vec((0usize..40, 0usize..40, any::<bool>()), 1..60)
        ) {
            let data: Vec<u8> = (0..4000u32).map(|i| (i * 31 % 251) as u8).collect();
            let mut checksum = Checksum::new(0);
            let mut position = 0u64;
            for (back, len, advance) in steps {
                // A run starting at or before `upto`, as a window or a direct read gives them.
                let at = checksum.upto().saturating_sub(back as u64);
                let end = (at + len as u64).min(data.len() as u64);
                checksum.fold(at, &data[at as usize..end as usize], position);
                if advance {
                    position = position.max(checksum.upto());
                }
                let mut expected = Hasher::new();
                expected.update(&data[..checksum.upto() as usize]);
                prop_assert_eq!(checksum.value(), expected.finalize());
            }
            checksum.rewind(position);
            prop_assert!(checksum.upto() <= position);
            let mut expected = Hasher::new();
            expected.update(&data[..checksum.upto() as usize]);
            prop_assert_eq!(checksum.value(), expected.finalize());
        }
    }
}
