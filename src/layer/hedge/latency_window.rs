use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The recent latencies of a source's requests and a quantile of them, for
/// [`Hedged`](crate::layer::Hedged)'s learned delay.
///
/// Keeps the last `capacity` samples in a ring and recomputes the quantile every
/// [`RECOMPUTE_EVERY`](Self::RECOMPUTE_EVERY) samples, so reading it is one atomic load.
pub(crate) struct LatencyWindow {
    quantile: f64,
    capacity: usize,
    // Invariant: `ring.samples.len() <= capacity`, `ring.next < capacity`.
    ring: Mutex<Ring>,
    // The quantile in nanoseconds; `u64::MAX` until `MIN_SAMPLES` samples were seen.
    cached_nanos: AtomicU64,
}

struct Ring {
    samples: Vec<u64>,
    next: usize,
    since_recompute: usize,
}

impl LatencyWindow {
    /// Samples needed before the quantile means anything.
    pub(crate) const MIN_SAMPLES: usize = 20;
    /// How many samples between recomputations.
    pub(crate) const RECOMPUTE_EVERY: usize = 8;

    /// A window of the last `capacity` (at least `MIN_SAMPLES`) samples, reporting their
    /// `quantile` (clamped to 0..=1).
    pub(crate) fn new(quantile: f64, capacity: usize) -> Self {
        let capacity = capacity.max(Self::MIN_SAMPLES);
        Self {
            quantile: quantile.clamp(0.0, 1.0),
            capacity,
            ring: Mutex::new(Ring {
                samples: Vec::with_capacity(capacity),
                next: 0,
                since_recompute: 0,
            }),
            cached_nanos: AtomicU64::new(u64::MAX),
        }
    }

    /// Adds one latency.
    pub(crate) fn record(&self, latency: Duration) {
        let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        // A poisoned lock only means a panic elsewhere; the samples are still numbers.
        let mut ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        if ring.samples.len() < self.capacity {
            ring.samples.push(nanos);
        } else {
            let at = ring.next;
            ring.samples[at] = nanos;
        }
        ring.next = (ring.next + 1) % self.capacity;
        ring.since_recompute += 1;
        debug_assert!(ring.samples.len() <= self.capacity && ring.next < self.capacity);
        if ring.samples.len() >= Self::MIN_SAMPLES && ring.since_recompute >= Self::RECOMPUTE_EVERY
        {
            ring.since_recompute = 0;
            let mut sorted = ring.samples.clone();
            drop(ring);
            let rank = ((sorted.len() - 1) as f64 * self.quantile).round() as usize;
            let (_, value, _) = sorted.select_nth_unstable(rank);
            self.cached_nanos.store(*value, Ordering::Relaxed);
        }
    }

    /// The quantile of the recent samples, `None` before there are enough.
    pub(crate) fn quantile(&self) -> Option<Duration> {
        match self.cached_nanos.load(Ordering::Relaxed) {
            u64::MAX => None,
            nanos => Some(Duration::from_nanos(nanos)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_the_quantile_of_the_last_samples() {
        let window = LatencyWindow::new(0.95, 100);
        for _ in 0..LatencyWindow::MIN_SAMPLES - 1 {
            window.record(Duration::from_millis(1));
        }
        assert_eq!(window.quantile(), None, "too few samples");
        for ms in 1..=200u64 {
            window.record(Duration::from_millis(ms));
        }
        // The last 100 samples are 101..=200 ms, their p95 195 ms; the quantile is recomputed
        // every 8 samples, so it may lag by up to 7 (at least 188 ms).
        let p95 = window.quantile().unwrap();
        assert!(
            (Duration::from_millis(188)..=Duration::from_millis(195)).contains(&p95),
            "{p95:?}"
        );
    }
}
