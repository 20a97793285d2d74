//! The progress of a read of an exact number of bytes, carried across `Pending`.

/// The progress of a [`poll_read_exact_at`](super::read_engine::ReadEngine::poll_read_exact_at).
#[derive(Debug)]
pub(crate) struct ReadExact {
    /// The bytes of the destination's start that are there (copied from the window, then from
    /// the bytes kept by a failed attempt) at the first poll; `None` before it.
    pub(super) have: Option<usize>,
    /// Of `have`: those copied from the window, and those kept by a failed attempt.
    pub(super) window: usize,
    pub(super) kept: usize,
    /// The bytes fetched straight into the destination so far, after `have`.
    pub(super) direct: usize,
    /// Whether a failure keeps what was fetched (`false` for a step of a longer read).
    pub(super) keep: bool,
}

impl Default for ReadExact {
    fn default() -> Self {
        Self {
            have: None,
            window: 0,
            kept: 0,
            direct: 0,
            keep: true,
        }
    }
}

impl ReadExact {
    /// The progress of a step of a longer read, which keeps its bytes itself when it fails.
    pub(crate) fn step() -> Self {
        Self {
            keep: false,
            ..Self::default()
        }
    }

    /// The bytes that did not come from the window: fetched straight into the destination, or
    /// kept from a failed attempt (for `stats`).
    pub(crate) fn direct(&self) -> usize {
        self.kept + self.direct
    }

    /// How many bytes at the destination's start are there.
    pub(crate) fn done(&self) -> usize {
        self.have.unwrap_or(0) + self.direct
    }
}
