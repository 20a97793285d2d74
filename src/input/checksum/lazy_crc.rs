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

use crc32fast::Hasher;

use crate::error::Error;
use crate::input::engine::window::Window;

/// The CRC32 (IEEE, as `java.util.zip.CRC32`) of the input's bytes `[start, upto)`.
///
/// Invariants: `start <= mark.1 <= upto`; `mark.0` is the CRC of `[start, mark.1)`; while the
/// checksum is not void, `mark.1 <= ` the input's position (which only moves forward).
#[derive(Clone, Debug)]
pub(crate) struct Checksum {
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
    pub(crate) fn new(start: u64) -> Self {
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
    pub(crate) fn start(&self) -> u64 {
        self.start
    }

    /// The end of what is folded.
    pub(crate) fn upto(&self) -> u64 {
        self.upto
    }

    /// A seek back to `to`, before the position: the checksum is void from now on.
    pub(crate) fn seek_back(&mut self, to: u64) {
        self.backward.get_or_insert(to);
    }

    /// A seek from the input's position `pos` to `to`: one back voids the checksum.
    #[inline]
    pub(crate) fn note_seek(&mut self, pos: u64, to: u64) {
        if to < pos {
            self.seek_back(to);
        }
    }

    /// Refuses a seek from the input's position `pos` back to `to` (the fallible seeks): a
    /// checksum describes one forward pass.
    #[inline]
    pub(crate) fn check_seek(&self, pos: u64, to: u64) -> Result<(), Error> {
        if to >= pos {
            return Ok(());
        }
        Err(Error::InvalidInput(format!(
            "a seek back to {to} while checksumming from {}: a checksum covers one forward pass",
            self.start
        )))
    }

    /// Folds what `window` holds of the bytes consumed up to the position `pos` (before the
    /// window is dropped); the rest is read when next folded.
    pub(crate) fn fold_consumed(&mut self, window: &Window, pos: u64) {
        let held = window.bytes_from(self.upto);
        let n = held.len().min(pos.saturating_sub(self.upto) as usize);
        self.fold(self.upto, &held[..n], pos);
    }

    /// Where a seek went back to, if one did.
    pub(crate) fn backward(&self) -> Option<u64> {
        self.backward
    }

    /// Folds `bytes`, which sit at offset `at`, and where they continue what is folded:
    /// their part from `upto` on. `position` is the input's position, for the mark.
    ///
    /// Bytes past a gap are only possible when nothing is folded any more: the checksum is void
    /// (a seek went back), or `bytes` is empty (a read past the end, where folding stopped).
    pub(crate) fn fold(&mut self, at: u64, bytes: &[u8], position: u64) {
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
    pub(crate) fn rewind(&mut self, position: u64) {
        if self.upto > position {
            debug_assert!(self.mark.1 <= position, "the mark is past the position");
            self.hasher = self.mark.0.clone();
            self.upto = self.mark.1;
        }
    }

    /// The CRC of `[start, upto)`.
    pub(crate) fn value(&self) -> u32 {
        self.hasher.clone().finalize()
    }

    /// Where folding found the data's end, if it did.
    pub(crate) fn end(&self) -> Option<u64> {
        self.end
    }

    /// Folding found the data's end at `end` (nothing came there).
    pub(crate) fn set_end(&mut self, end: u64) {
        self.end = Some(end);
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
