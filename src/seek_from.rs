//! How the crate's `AsyncSeek` implementations resolve a [`SeekFrom`] against a logical
//! position: shared by `AsyncBufferedInput` and `PositionalReader`, which both seek without I/O
//! except for an `End` seek before the length is known.

use std::io::{self, SeekFrom};

use crate::error::InputError;

/// What `start_seek` makes of a [`SeekFrom`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SeekStart {
    /// The new position, known at once.
    To(u64),
    /// An `End` seek by this offset, to resolve once the length is known.
    FromEnd(i64),
}

/// Resolves `seek` from position `pos`, with the source's `length` if it is known.
///
/// # Errors
///
/// `InvalidInput` (naming `pos`) for a target before 0 or past `u64::MAX`.
pub(crate) fn start(pos: u64, length: Option<u64>, seek: SeekFrom) -> io::Result<SeekStart> {
    Ok(match seek {
        SeekFrom::Start(target) => SeekStart::To(target),
        SeekFrom::Current(offset) => SeekStart::To(target(pos, pos, offset)?),
        SeekFrom::End(offset) => match length {
            Some(length) => SeekStart::To(target(pos, length, offset)?),
            None => SeekStart::FromEnd(offset),
        },
    })
}

/// `base + offset`, or `InvalidInput` (naming the position `pos` the seek started from) if that
/// is before 0 or past `u64::MAX`.
pub(crate) fn target(pos: u64, base: u64, offset: i64) -> io::Result<u64> {
    base.checked_add_signed(offset).ok_or_else(|| {
        InputError::invalid_input(
            "seek",
            pos,
            format!("offset {offset} from {base} is outside 0..=u64::MAX"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_each_kind() {
        assert_eq!(
            start(5, None, SeekFrom::Start(9)).unwrap(),
            SeekStart::To(9)
        );
        assert_eq!(
            start(5, None, SeekFrom::Current(-2)).unwrap(),
            SeekStart::To(3)
        );
        assert_eq!(
            start(5, Some(10), SeekFrom::End(-1)).unwrap(),
            SeekStart::To(9)
        );
        assert_eq!(
            start(5, None, SeekFrom::End(-1)).unwrap(),
            SeekStart::FromEnd(-1)
        );
        let err = start(5, None, SeekFrom::Current(-6)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("position 5"), "{err}");
        assert!(target(0, u64::MAX, 1).is_err());
    }
}
