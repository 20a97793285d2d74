use std::fmt;

use super::format::binary_size;
use super::reader_kind::ReaderKind;

/// One measurement of a run: a reader, a request size and, for readers with a window, a
/// capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    /// The reader.
    pub reader: ReaderKind,
    /// The size of each request, in bytes (the last request of a pass may be shorter).
    pub read_size: usize,
    /// The window's capacity in bytes; `None` for readers without a window
    /// ([`ReaderKind::uses_capacity`]).
    pub capacity: Option<usize>,
}

impl fmt::Display for Cell {
    /// `AsyncBufferedInput, 100 B requests, 8 KiB window`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {} requests",
            self.reader,
            binary_size(self.read_size as u64)
        )?;
        if let Some(capacity) = self.capacity {
            write!(f, ", {} window", binary_size(capacity as u64))?;
        }
        Ok(())
    }
}
