//! [`TokenBucket`]: the per-connection rate cap of the proxy, as a generic cell rate algorithm
//! (GCRA, the token bucket kept as one instant).
//!
//! The bucket holds [`BURST`] worth of bytes at the rate: bytes sent after an idle spell go at
//! once up to that, and then at the rate. So `N` bytes take at least `N / rate - BURST` from
//! the first one, whatever the pieces, and a sleep that wakes up to `BURST - PIECE` late costs
//! nothing (the next pieces catch up within the bucket).

use std::time::{Duration, Instant};

/// The bucket's depth, as time at the rate: the most that goes out at once after an idle spell.
pub(crate) const BURST: Duration = Duration::from_millis(4);

/// The longest piece a capped connection writes at once, as time at the rate: the output is
/// smooth at this granularity.
const PIECE: Duration = Duration::from_millis(1);

/// A token bucket of [`BURST`] at a rate given at each use (it may change between pieces).
///
/// Invariant: `tat` (the theoretical arrival time: when the bytes reserved so far would all have
/// gone at exactly the rate) never moves back.
#[derive(Debug, Default)]
pub(crate) struct TokenBucket {
    tat: Option<Instant>,
}

impl TokenBucket {
    /// An empty history: the first bytes may go at once, up to the bucket.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The longest piece to reserve at once at `rate` bytes/s: 1 ms of bytes, at least 1, at
    /// most `max`.
    pub(crate) fn piece(rate: u64, max: usize) -> usize {
        let per_piece = u128::from(rate) * PIECE.as_nanos() / 1_000_000_000;
        usize::try_from(per_piece)
            .unwrap_or(usize::MAX)
            .clamp(1, max.max(1))
    }

    /// Reserves `n` bytes at `rate` bytes/s (`rate` > 0) at `now`; returns when they may go:
    /// `None` at once, or the instant to wait for.
    pub(crate) fn reserve(&mut self, now: Instant, n: usize, rate: u64) -> Option<Instant> {
        debug_assert!(rate > 0, "a rate of 0 would never send");
        let start = self.tat.map_or(now, |tat| tat.max(now));
        let tat = start + cost(n, rate);
        debug_assert!(self.tat.is_none_or(|old| tat >= old), "tat moved back");
        self.tat = Some(tat);
        tat.checked_sub(BURST).filter(|&at| at > now)
    }
}

/// The time `n` bytes take at `rate` bytes/s, rounded up to the nanosecond (so that a sum of
/// costs is never below the exact time).
fn cost(n: usize, rate: u64) -> Duration {
    let nanos = (n as u128 * 1_000_000_000).div_ceil(u128::from(rate.max(1)));
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: u64 = 20_000_000; // 20 MB/s: 20 000 bytes per ms

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_piece_is_one_ms_of_bytes_within_bounds() {
        assert_eq!(TokenBucket::piece(RATE, 64 << 10), 20_000);
        assert_eq!(TokenBucket::piece(RATE, 1000), 1000);
        assert_eq!(TokenBucket::piece(500, 64 << 10), 1, "below 1 byte per ms");
        assert_eq!(
            TokenBucket::piece(u64::MAX, 64 << 10),
            64 << 10,
            "no overflow"
        );
    }

    #[test]
    fn a_burst_goes_at_once_then_the_rate_holds() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new();
        // The bucket: 4 ms of bytes, in 1 ms pieces, go at once.
        for _ in 0..4 {
            assert_eq!(bucket.reserve(t0, 20_000, RATE), None);
        }
        // The fifth piece waits 1 ms, the sixth 2 ms (nobody sent the fifth yet: time stood).
        assert_eq!(bucket.reserve(t0, 20_000, RATE), Some(t0 + ms(1)));
        assert_eq!(bucket.reserve(t0, 20_000, RATE), Some(t0 + ms(2)));
        // Sent on time, the next piece waits its 1 ms of bytes.
        assert_eq!(bucket.reserve(t0 + ms(2), 20_000, RATE), Some(t0 + ms(3)));
    }

    #[test]
    fn n_bytes_take_at_least_n_over_rate_minus_one_bucket() {
        // Pieces of every size, each sent the moment it may go: the last goes no sooner than
        // N / rate - BURST after the first.
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new();
        let (mut now, mut total) = (t0, 0u64);
        for i in 0..2_000usize {
            let n = 1 + (i * 7919) % 20_000;
            if let Some(at) = bucket.reserve(now, n, RATE) {
                assert!(at > now);
                now = at;
            }
            total += n as u64;
        }
        let exact = Duration::from_secs_f64(total as f64 / RATE as f64);
        assert!(
            now - t0 >= exact - BURST,
            "{:?} < {exact:?} - {BURST:?}",
            now - t0
        );
        assert!(
            now - t0 <= exact,
            "no slower than the rate: {:?} > {exact:?}",
            now - t0
        );
    }

    #[test]
    fn a_late_wake_up_within_the_bucket_costs_nothing() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new();
        let mut now = t0;
        // 1 s of bytes in 1 ms pieces, every wait overslept by 2 ms (a loaded timer).
        for _ in 0..1000 {
            if let Some(at) = bucket.reserve(now, 20_000, RATE) {
                now = at + ms(2);
            }
        }
        assert!(now - t0 <= ms(1000), "{:?}", now - t0);
        assert!(now - t0 >= ms(1000) - BURST, "{:?}", now - t0);
    }

    #[test]
    fn an_idle_spell_refills_one_bucket_only() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new();
        assert_eq!(bucket.reserve(t0, 80_000, RATE), None);
        // A second later: one bucket (80 000 bytes) at once, not a second's worth.
        let t1 = t0 + ms(1000);
        assert_eq!(bucket.reserve(t1, 80_000, RATE), None);
        assert_eq!(bucket.reserve(t1, 20_000, RATE), Some(t1 + ms(1)));
    }

    #[test]
    fn the_rate_may_change_between_pieces() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new();
        assert_eq!(bucket.reserve(t0, 80_000, RATE), None);
        // At 1 MB/s, 1 000 bytes more cost 1 ms beyond the full bucket.
        assert_eq!(bucket.reserve(t0, 1_000, 1_000_000), Some(t0 + ms(1)));
    }
}
