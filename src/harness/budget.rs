use std::fmt;
use std::time::{Duration, Instant};

/// A cell's time budget, checked before every request without reading the clock every time.
///
/// Reading the clock costs about as much as a 1-byte request served from a window, so the check
/// reads it every `stride` calls and adapts `stride` to keep about [`TARGET`] between reads: it
/// doubles while the calls between two reads took less than half of that, and halves while they
/// took more than twice that. So fast loops pay ~nothing and slow ones (one network round trip a
/// request) overshoot their deadline by about one request.
pub(crate) struct Budget {
    deadline: Option<Instant>,
    // Invariants: `1 <= stride <= MAX_STRIDE`; `countdown <= stride`.
    stride: u32,
    countdown: u32,
    last: Instant,
}

/// The time the budget aims to let pass between two reads of the clock.
const TARGET: Duration = Duration::from_micros(100);
const MAX_STRIDE: u32 = 1 << 14;

impl Budget {
    /// A budget of `limit` from now; `None` never runs out.
    pub(crate) fn starting_now(limit: Option<Duration>) -> Self {
        let now = Instant::now();
        Self {
            deadline: limit.map(|limit| now + limit),
            stride: 1,
            countdown: 1,
            last: now,
        }
    }

    /// Whether the budget has run out. Call it once before each request.
    #[inline]
    pub(crate) fn exhausted(&mut self) -> bool {
        let Some(deadline) = self.deadline else {
            return false;
        };
        self.countdown -= 1;
        if self.countdown > 0 {
            return false;
        }
        let now = Instant::now();
        let took = now - self.last;
        self.last = now;
        if took < TARGET / 2 {
            self.stride = (self.stride * 2).min(MAX_STRIDE);
        } else if took > TARGET * 2 {
            self.stride = (self.stride / 2).max(1);
        }
        self.countdown = self.stride;
        debug_assert!(self.stride >= 1 && self.countdown <= self.stride);
        now >= deadline
    }
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budget")
            .field(
                "left",
                &self
                    .deadline
                    .map(|d| d.saturating_duration_since(Instant::now())),
            )
            .field("stride", &self.stride)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_limit_never_runs_out() {
        let mut budget = Budget::starting_now(None);
        assert!((0..100_000).all(|_| !budget.exhausted()));
    }

    #[test]
    fn zero_runs_out_at_the_first_check() {
        let mut budget = Budget::starting_now(Some(Duration::ZERO));
        assert!(budget.exhausted());
    }

    #[test]
    fn fast_loops_stop_soon_after_the_deadline() {
        let limit = Duration::from_millis(20);
        let start = Instant::now();
        let mut budget = Budget::starting_now(Some(limit));
        let mut calls = 0u64;
        while !budget.exhausted() {
            calls += 1;
        }
        let took = start.elapsed();
        assert!(took >= limit, "{took:?}");
        assert!(
            took < limit + Duration::from_millis(500),
            "{took:?} after {calls} calls"
        );
        assert!(budget.stride > 1);
    }

    #[test]
    fn slow_loops_read_the_clock_every_call() {
        let mut budget = Budget::starting_now(Some(Duration::from_millis(30)));
        let start = Instant::now();
        while !budget.exhausted() {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(budget.stride, 1);
        assert!(start.elapsed() < Duration::from_millis(30 + 500));
    }
}
