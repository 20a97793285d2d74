//! What a limit or stream pass keeps as it goes, timed or verifying.

use std::time::{Duration, Instant};

use crate::timing::Meter;
use crate::truth::PatternCheck;
use crate::verify::{Checksum, Fingerprint};

/// The state the limit row's passes ([`limit`](crate::limit)) and the stream row's
/// ([`stream`](crate::stream)) share: a timed pass has a meter (its budget and latencies), a
/// verifying pass what the bytes are compared with; both look at the bytes and count them.
pub(crate) struct PassState {
    pub(crate) meter: Option<Meter>,
    deadline_after: Option<Duration>,
    seed: u64,
    pub(crate) verify: Option<(Checksum, PatternCheck)>,
    pub(crate) fingerprint: Fingerprint,
    pub(crate) bytes: u64,
    pub(crate) reads: u64,
    pub(crate) elapsed: Duration,
}

impl PassState {
    /// A timed pass, its budget `deadline_after` from [`start`](Self::start).
    pub(crate) fn timed(deadline_after: Option<Duration>, seed: u64) -> Self {
        Self {
            meter: Some(Meter::new(None, seed)),
            deadline_after,
            seed,
            verify: None,
            fingerprint: Fingerprint::default(),
            bytes: 0,
            reads: 0,
            elapsed: Duration::ZERO,
        }
    }

    /// A verifying pass, untimed.
    pub(crate) fn verifying() -> Self {
        Self {
            meter: None,
            verify: Some((Checksum::new(), PatternCheck::default())),
            ..Self::timed(None, 0)
        }
    }

    /// The clock starts: the budget counts from now.
    pub(crate) fn start(&mut self) -> Instant {
        let now = Instant::now();
        if let Some(meter) = &mut self.meter {
            *meter = Meter::new(self.deadline_after.map(|d| now + d), self.seed);
        }
        now
    }
}
