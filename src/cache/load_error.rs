use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::sync::Arc;

use bytes::Bytes;

/// Why a block was not cached: the source failed, the block starts at or past its end
/// (nothing to keep: an empty block is not cached), or the budget had no room for it (its
/// readers get its bytes all the same).
#[derive(Debug)]
pub(super) enum LoadError {
    Source(io::Error),
    PastEnd,
    NoBudget(Bytes),
}

/// An error of a block load that several readers waited for: each gets one like it, with the
/// same kind, message and cause.
#[derive(Debug)]
pub(super) struct SharedError(pub(super) Arc<LoadError>);

impl fmt::Display for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            LoadError::Source(e) => fmt::Display::fmt(e, f),
            LoadError::PastEnd => f.write_str("past the end of the source"),
            LoadError::NoBudget(_) => f.write_str("no room in the memory budget"),
        }
    }
}

impl StdError for SharedError {
    // The shared error's own cause: this error shows its message, as the original would.
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &*self.0 {
            LoadError::Source(e) => e.source(),
            LoadError::PastEnd | LoadError::NoBudget(_) => None,
        }
    }
}
