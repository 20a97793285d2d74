//! Corruption errors for the formats read from an input, naming its resource.

use std::io;

use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

/// Corruption errors.
impl<F: Fetch> AsyncBufferedInput<F> {
    /// A corruption error for a format read from this input: at `position` of this input's
    /// resource, `expected` was required and `found` is there. An `InvalidData`
    /// [`io::Error`] carrying an [`InputError`](crate::InputError) with what was
    /// [`expected`](crate::InputError::expected) and [`found`](crate::InputError::found).
    pub fn corrupt_at(
        &self,
        position: u64,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> io::Error {
        crate::error::InputError::corrupt(Some(self.resource()), position, expected, found)
    }
}
