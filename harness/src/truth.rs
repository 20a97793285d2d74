//! What the bytes of a source should be, for the verification passes ([`Truth`]): the harness's
//! [test pattern](abi_testkit::fill_word_pattern) when the run wrote the file or found it to hold the
//! pattern (computed, no I/O), otherwise the source itself, read straight in large ranges
//! ([`Source::open_reference`]); and [`PatternCheck`], which finds out whether a file holds the
//! pattern.

use std::fmt;
use std::io::{self, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use abi_testkit::fill_word_pattern;
use async_buffered_input::source::PositionalSource;
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use crate::mismatch::Mismatch;
use crate::sources::{Reference, Source};

/// What the bytes of a source should be, for the verification passes.
#[derive(Clone)]
pub(crate) enum Truth {
    /// The harness's test pattern ([`fill_word_pattern`]): computed, no I/O.
    Pattern,
    /// The source itself, read straight in ranges of 64 KiB to 1 MiB through its
    /// [reference form](Source::open_reference), one per task; `reads` counts those reads.
    Source {
        source: Source,
        reads: Arc<AtomicU64>,
    },
}

impl Truth {
    /// The truth of `source`, read from the source itself.
    pub(crate) fn of_source(source: &Source) -> Self {
        Truth::Source {
            source: source.clone(),
            reads: Arc::default(),
        }
    }

    /// Reads made of the source to learn the truth so far.
    pub(crate) fn reads(&self) -> u64 {
        match self {
            Truth::Pattern => 0,
            Truth::Source { reads, .. } => reads.load(Relaxed),
        }
    }

    /// A cursor over the truth of a file of `file_len` bytes, for one task.
    pub(crate) async fn cursor(&self, file_len: u64) -> io::Result<TruthCursor> {
        let reference = match self {
            Truth::Pattern => TruthReference::Pattern,
            Truth::Source { source, reads } => {
                let opened = source.open_reference().await?;
                TruthReference::Source(opened, Arc::clone(reads))
            }
        };
        Ok(TruthCursor {
            reference,
            block: Vec::new(),
            block_at: 0,
            file_len,
        })
    }
}

impl fmt::Debug for Truth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Truth::Pattern => f.write_str("Truth::Pattern"),
            Truth::Source { source, reads } => f
                .debug_struct("Truth::Source")
                .field("source", &source.label())
                .field("reads", &reads.load(Relaxed))
                .finish(),
        }
    }
}

/// Where a [`TruthCursor`] gets its blocks.
enum TruthReference {
    Pattern,
    Source(Reference, Arc<AtomicU64>),
}

/// One task's view of the truth: the true bytes of any range, from a block of up to 1 MiB it
/// keeps (so that sequential requests cost one read of the source per MiB, and random ones one
/// read of 64 KiB each).
///
/// Invariant: `block_at + block.len() <= file_len`.
pub(crate) struct TruthCursor {
    reference: TruthReference,
    // The true bytes `[block_at, block_at + block.len())`.
    block: Vec<u8>,
    block_at: u64,
    file_len: u64,
}

/// The block read after a block it continues.
const SEQUENTIAL_BLOCK: usize = 1 << 20;
/// The block read elsewhere.
const RANDOM_BLOCK: usize = 64 << 10;

impl TruthCursor {
    /// The true bytes at `offset..offset + len`, if the block holds them.
    #[inline]
    pub(crate) fn at_hand(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let start = offset.checked_sub(self.block_at)? as usize;
        self.block.get(start..start.checked_add(len)?)
    }

    /// Makes the block hold `offset..offset + len` (inside the file): 1 MiB from `offset` if
    /// the request continues or straddles the block (sequential reading), 64 KiB otherwise.
    pub(crate) async fn load(&mut self, offset: u64, len: usize) -> io::Result<()> {
        let block_end = self.block_at + self.block.len() as u64;
        let continues = !self.block.is_empty() && (self.block_at..=block_end).contains(&offset);
        let size = if continues {
            SEQUENTIAL_BLOCK
        } else {
            RANDOM_BLOCK
        };
        let size = (size.max(len) as u64).min(self.file_len.saturating_sub(offset)) as usize;
        self.fill(offset, size.max(len)).await
    }

    /// The true bytes at `offset..offset + len` (inside the file).
    #[cfg(test)]
    pub(crate) async fn get(&mut self, offset: u64, len: usize) -> io::Result<&[u8]> {
        if self.at_hand(offset, len).is_none() {
            self.load(offset, len).await?;
        }
        Ok(self.at_hand(offset, len).expect("just loaded"))
    }

    async fn fill(&mut self, offset: u64, len: usize) -> io::Result<()> {
        self.block_at = offset;
        match &mut self.reference {
            TruthReference::Pattern => {
                self.block.resize(len, 0);
                fill_word_pattern(offset, &mut self.block);
            }
            TruthReference::Source(Reference::Positional(source), reads) => {
                reads.fetch_add(1, Relaxed);
                let bytes = source.read_at(offset, len).await?;
                self.block.clear();
                self.block.extend_from_slice(&bytes);
            }
            TruthReference::Source(Reference::Stream(stream), reads) => {
                reads.fetch_add(1, Relaxed);
                stream.seek(SeekFrom::Start(offset)).await?;
                self.block.resize(len, 0);
                let mut filled = 0;
                while filled < len {
                    match stream.read(&mut self.block[filled..]).await? {
                        0 => break,
                        n => filled += n,
                    }
                }
                self.block.truncate(filled);
            }
        }
        if self.block.len() < len {
            let got = self.block.len();
            self.block.clear();
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the source ended at {} while reading {len} bytes at {offset} to verify \
                     against: has the file changed during the run?",
                    offset + got as u64
                ),
            ));
        }
        Ok(())
    }
}

/// Whether a file holds the harness's pattern, checked range by range in file order (the
/// limit's verification pass).
#[derive(Debug, Default)]
pub(crate) struct PatternCheck {
    scratch: Vec<u8>,
    // The first offset whose byte is not the pattern's, with both bytes.
    first_difference: Option<(u64, u8, u8)>,
}

impl PatternCheck {
    /// Compares `bytes`, the file's bytes at `offset`, with the pattern.
    pub(crate) fn check(&mut self, offset: u64, bytes: &[u8]) {
        if self.first_difference.is_some() {
            return;
        }
        self.scratch.resize(bytes.len(), 0);
        fill_word_pattern(offset, &mut self.scratch);
        if let Some(i) = self.scratch.iter().zip(bytes).position(|(a, b)| a != b) {
            self.first_difference = Some((offset + i as u64, self.scratch[i], bytes[i]));
        }
    }

    /// `None` if every byte checked is the pattern's; otherwise the first that is not, as a
    /// [`Mismatch`].
    pub(crate) fn mismatch(&self) -> Option<Mismatch> {
        self.first_difference
            .map(|(offset, expected, found)| Mismatch::Byte {
                task: 0,
                offset,
                expected,
                found,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::{Checksum, TaskVerifier};
    // Any bytes but the harness's word pattern: the kit's byte pattern.
    use abi_testkit::pattern_vec as data;

    #[tokio::test]
    async fn the_source_truth_reads_large_ranges() {
        let data = data(3 << 20);
        let source = Source::memory(data.clone());
        let truth = Truth::of_source(&source);
        let mut verifier = TaskVerifier::new(2, truth.cursor(data.len() as u64).await.unwrap());
        // Sequential 1000-byte requests: one read of 64 KiB, then 1 MiB at a time.
        for offset in (0..data.len()).step_by(1000) {
            let end = (offset + 1000).min(data.len());
            assert!(verifier
                .check(offset as u64, &data[offset..end])
                .await
                .unwrap());
        }
        assert!((4..=6).contains(&truth.reads()), "{truth:?}");
        // A wrong byte far away is found, and named with its task.
        let mut wrong = data[2_000_000..2_000_010].to_vec();
        wrong[9] = !wrong[9];
        assert!(!verifier.check(2_000_000, &wrong).await.unwrap());
        let (checksum, _, mismatch) = verifier.finish();
        assert_eq!(checksum.len(), data.len() as u64);
        assert_eq!(
            checksum.finish(),
            Checksum::of(&data),
            "checksummed in runs"
        );
        let mismatch = mismatch.unwrap();
        assert!(matches!(
            mismatch,
            Mismatch::Byte {
                task: 2,
                offset: 2_000_009,
                ..
            }
        ));
        assert!(mismatch.to_string().ends_with("(task 2)"), "{mismatch}");
    }

    #[tokio::test]
    async fn a_source_shorter_than_expected_is_an_error() {
        let source = Source::memory(vec![1u8; 100]);
        let mut cursor = Truth::of_source(&source).cursor(200).await.unwrap();
        let err = cursor.get(150, 10).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("has the file changed"), "{err}");
    }

    #[test]
    fn a_pattern_check_finds_the_first_difference() {
        let mut data = abi_testkit::word_pattern_vec(3000);
        let mut check = PatternCheck::default();
        check.check(0, &data[..1000]);
        check.check(1000, &data[1000..]);
        assert_eq!(check.mismatch(), None);
        data[2500] ^= 0xff;
        data[2600] ^= 0xff;
        let mut check = PatternCheck::default();
        check.check(0, &data[..2000]);
        check.check(2000, &data[2000..]);
        assert!(matches!(
            check.mismatch(),
            Some(Mismatch::Byte { offset: 2500, .. })
        ));
    }
}
