use std::io;

use super::{CompoundDirectory, SegmentInfos};
use crate::lucene::codec;
use crate::lucene::Directory;

/// What [`verify_commit`] checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verified {
    /// The files of the commit, `segments_N` included.
    pub files: usize,
    /// The sub-files of its compound files.
    pub sub_files: usize,
    /// The bytes read from storage, for the commit too: each file's length when each byte
    /// was read once.
    pub bytes_read: u64,
}

/// Verifies every file of `commit` in `dir`, and every sub-file of its compound files,
/// reading each byte once: the CRC32 footer of each (Lucene's `CodecUtil.checksumEntireFile`
/// and `CompoundDirectory.checkIntegrity`). `segments_N` and the `.si` files were verified
/// when the commit was read; each `.cfe` is verified as its [`CompoundDirectory`] is read.
///
/// # Errors
///
/// The first failure: the directory's error naming the file if one is missing or cannot be
/// read; `InvalidData` with a [`InputError`](crate::InputError) (corruption) naming the file (and a
/// compound file's sub-file as "slice NAME [a..b) of PATH") for a wrong checksum or footer.
///
/// # Cancel safety
///
/// Cancel safe: nothing is kept; a new call starts over.
pub async fn verify_commit(dir: &Directory, commit: &SegmentInfos) -> io::Result<Verified> {
    let mut verified = Verified {
        files: 1,
        sub_files: 0,
        bytes_read: commit.bytes_read,
    };
    for segment in &commit.segments {
        for file in &segment.files {
            verified.files += 1;
            if file.ends_with(".si") || file.ends_with(".cfe") {
                continue; // with the commit, and with the .cfs below
            }
            if file.ends_with(".cfs") {
                let mut compound =
                    CompoundDirectory::read(dir, &segment.info.name, &segment.info.id).await?;
                verified.sub_files += compound.verify().await?;
                verified.bytes_read += compound.bytes_read();
            } else {
                let mut input = dir.open(file).await?;
                codec::checksum_entire_file(&mut input).await?;
                verified.bytes_read += input.stats().bytes_from_source;
            }
        }
    }
    Ok(verified)
}
