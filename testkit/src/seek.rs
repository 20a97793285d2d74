//! The seek arithmetic the in-memory streams share.

use std::io::{self, ErrorKind, SeekFrom};

/// The position `from` names for a stream at `pos` of `len` bytes, or `InvalidInput` if it is
/// negative or past `u64::MAX`.
pub(crate) fn resolve_seek(from: SeekFrom, pos: u64, len: u64) -> io::Result<u64> {
    let target: i128 = match from {
        SeekFrom::Start(x) => x as i128,
        SeekFrom::Current(d) => pos as i128 + d as i128,
        SeekFrom::End(d) => len as i128 + d as i128,
    };
    if target < 0 || target > u64::MAX as i128 {
        Err(io::Error::new(
            ErrorKind::InvalidInput,
            format!("invalid seek to a negative or overflowing position ({from:?})"),
        ))
    } else {
        Ok(target as u64)
    }
}
