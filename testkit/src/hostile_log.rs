//! What a [`Hostile`](crate::Hostile) did.

use std::sync::atomic::{AtomicBool, AtomicU64};

/// What a [`Hostile`](crate::Hostile) did, shared with the test.
#[derive(Debug, Default)]
pub struct HostileLog {
    /// Whether the read error of
    /// [`HostileConfig::fail_read_after`](crate::HostileConfig::fail_read_after) was returned.
    pub read_error_fired: AtomicBool,
    /// Whether the seek error of [`HostileConfig::fail_seek`](crate::HostileConfig::fail_seek)
    /// was returned.
    pub seek_error_fired: AtomicBool,
    /// `start_seek` calls.
    pub seeks: AtomicU64,
    /// Bytes delivered.
    pub delivered: AtomicU64,
}
