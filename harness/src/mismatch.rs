//! [`Mismatch`]: why a row failed its verification.

use std::fmt;

/// Why a cell (or the limit row) failed its verification.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mismatch {
    /// A byte the reader handed out in the verification pass differs from the truth: the
    /// source's byte (or the harness's pattern in a file it wrote).
    Byte {
        /// The task that read it (0 with one task).
        task: usize,
        /// Its offset in the file.
        offset: u64,
        /// The byte the file holds.
        expected: u8,
        /// The byte the reader handed out.
        found: u8,
    },
    /// The timed pass looked at other bytes than the verification pass read (the first and last
    /// byte of each request): the reader handed out different bytes in the two passes.
    TimedPass,
    /// The stream row read other bytes than the limit row, where the file does not hold the
    /// harness's pattern: the checksums of the whole file differ.
    Checksum {
        /// The limit row's checksum.
        expected: u64,
        /// The stream row's.
        found: u64,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Byte {
                task,
                offset,
                expected,
                found,
            } => {
                write!(
                    f,
                    "byte {offset} is {found:#04x}, the file holds {expected:#04x}"
                )?;
                if *task > 0 {
                    write!(f, " (task {task})")?;
                }
                Ok(())
            }
            Mismatch::TimedPass => f.write_str(
                "the timed pass saw other bytes than the verification pass (the first and last \
                 byte of its requests)",
            ),
            Mismatch::Checksum { expected, found } => write!(
                f,
                "the checksum of the bytes streamed is {found:#018x}, the limit row's is \
                 {expected:#018x}"
            ),
        }
    }
}
