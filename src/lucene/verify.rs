use std::io;

use super::{CompoundDirectory, SegmentInfos};
use crate::lucene::codec::{self, ID_LENGTH};
use crate::lucene::in_order::try_join_in_order;
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
pub async fn verify_commit(dir: &Directory, commit: &SegmentInfos) -> io::Result<Verified> {
    let mut verified = Verified {
        files: 1,
        sub_files: 0,
        bytes_read: commit.bytes_read,
    };
    let mut jobs = Vec::new();
    for segment in &commit.segments {
        for file in &segment.files {
            verified.files += 1;
            if file.ends_with(".si") || file.ends_with(".cfe") {
                continue; // with the commit, and with the .cfs below
            }
            let dir = dir.clone();
            jobs.push(if file.ends_with(".cfs") {
                let (name, id) = (segment.info.name.clone(), segment.info.id);
                Job::Compound(dir, name, id)
            } else {
                Job::File(dir, file.clone())
            });
        }
    }
    let done = try_join_in_order(dir.concurrency(), jobs.into_iter().map(Job::run)).await?;
    for (sub_files, bytes_read) in done {
        verified.sub_files += sub_files;
        verified.bytes_read += bytes_read;
    }
    Ok(verified)
}

/// One file to verify, with what it needs to run as a task of its own.
enum Job {
    /// A file checked whole.
    File(Directory, String),
    /// A segment's compound file (name, id), with its sub-files.
    Compound(Directory, String, [u8; ID_LENGTH]),
}

impl Job {
    /// Verifies the file: its sub-files, and the bytes read from storage.
    async fn run(self) -> io::Result<(usize, u64)> {
        match self {
            Job::File(dir, file) => {
                let mut input = dir.open(&file).await?;
                codec::checksum_entire_file(&mut input).await?;
                Ok((0, input.stats().bytes_from_source))
            }
            Job::Compound(dir, segment, id) => {
                let mut compound = CompoundDirectory::read(&dir, &segment, &id).await?;
                let sub_files = compound.verify().await?;
                Ok((sub_files, compound.bytes_read()))
            }
        }
    }
}
