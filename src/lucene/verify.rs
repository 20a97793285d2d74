use std::io;

use super::SegmentInfos;
use crate::lucene::codec::{self, ID_LENGTH};
use crate::lucene::in_order::try_join_in_order;
use crate::lucene::Directory;

/// Verifies every file of `commit` in `dir`, and every sub-file of its compound files,
/// reading each byte once: the CRC32 footer of each (Lucene's `CodecUtil.checksumEntireFile`
/// and `CompoundDirectory.checkIntegrity`). `segments_N` and the `.si` files were verified
/// when the commit was read; each `.cfe` is verified as its compound file is opened
/// ([`Directory::open_compound`]), and each `.cfs` and its sub-files in one pass.
///
/// Returns the bytes read from storage, the commit's own ([`SegmentInfos::bytes_read`])
/// included: the sum of the files' lengths when each byte was read once. (The files verified
/// are [`commit.files()`](SegmentInfos::files).)
///
/// Reads up to [`dir.concurrency()`](Directory::concurrency) files at once (a compound file and
/// its `.cfe` count as one, and may have two requests in flight: the `.cfs` header is
/// prefetched while the `.cfe` is read), each with an input of its own: memory is at most that
/// many inputs' bound. The result is the one a loop over the files in the commit's order gives,
/// the error included.
///
/// # Errors
///
/// The failure of the first file, in the commit's order, that fails: the directory's error
/// naming the file if it is missing or cannot be read; `InvalidData` with an
/// [`InputError`](crate::InputError) (corruption) naming the file (and a compound file's
/// sub-file as "slice NAME [a..b) of PATH") for a wrong checksum or footer. Once a file has
/// failed, no other starts and those after it in the commit's order are abandoned.
///
/// # Cancel safety
///
/// Cancel safe: dropping the future abandons every file being read; nothing is kept, and a new
/// call starts over.
pub async fn verify_commit(dir: &Directory, commit: &SegmentInfos) -> io::Result<u64> {
    let mut jobs = Vec::new();
    for segment in &commit.segments {
        for file in &segment.files {
            if file.ends_with(".si") || file.ends_with(".cfe") {
                continue; // with the commit, and with the .cfs below
            }
            let dir = dir.clone();
            jobs.push(if file.ends_with(".cfs") {
                let (name, id) = (segment.name.clone(), segment.id);
                Job::Compound(dir, name, id)
            } else {
                Job::File(dir, file.clone())
            });
        }
    }
    let done = try_join_in_order(dir.concurrency(), jobs.into_iter().map(Job::run)).await?;
    Ok(commit.bytes_read + done.iter().sum::<u64>())
}

/// One file to verify, with what it needs to run as a task of its own.
enum Job {
    /// A file checked whole.
    File(Directory, String),
    /// A segment's compound file (name, id), with its sub-files.
    Compound(Directory, String, [u8; ID_LENGTH]),
}

impl Job {
    /// Verifies the file (and its sub-files): the bytes read from storage.
    async fn run(self) -> io::Result<u64> {
        match self {
            Job::File(dir, file) => {
                let mut input = dir.open(&file).await?;
                codec::checksum_entire_file(&mut input).await?;
                Ok(input.stats().bytes_from_source)
            }
            Job::Compound(dir, segment, id) => {
                let mut compound = dir.compound_file(&segment, &id).await?;
                compound.verify().await?;
                Ok(compound.bytes_read())
            }
        }
    }
}
