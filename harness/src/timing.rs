//! Timing a pass fairly: the [`Meter`] a task's request loop consults before and after every
//! request (time budget, sampled per-request latency), and the [`Latency`] it reports.
//!
//! Reading the clock costs about as much as a small request served from a window (tens of
//! nanoseconds), so the meter reads it only for *sampled* requests: about one every
//! [`TARGET`] of running time, chosen at random so that samples do not fall in step with the
//! window's refills, and every request when requests take longer than that. The budget is
//! checked at the samples, so a cell overshoots its deadline by about [`TARGET`] or one request.

use std::fmt;
use std::time::{Duration, Instant};

use abi_testkit::splitmix64;

/// The running time the meter aims to let pass between two samples.
pub(crate) const TARGET: Duration = Duration::from_micros(100);
/// The most requests between two samples, on average.
const MAX_GAP: u32 = 1 << 16;
/// The most latency samples a meter keeps; beyond, it keeps a uniform random subset
/// (reservoir sampling).
const MAX_SAMPLES: usize = 1 << 20;

/// Where a meter reads the time: the system's monotonic clock, or a fake one in tests.
pub(crate) trait Clock {
    fn now(&self) -> Instant;
}

/// The system's monotonic clock.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// What one task's request loop asks before and after each request: whether the budget allows
/// another request, and, for sampled requests, how long it took.
///
/// ```text
/// while more requests {
///     if !meter.before() { break }   // the budget ran out
///     read the request
///     meter.after();
/// }
/// ```
pub(crate) struct Meter<C = SystemClock> {
    clock: C,
    deadline: Option<Instant>,
    // Invariants: `1 <= gap <= MAX_GAP`; `1 <= countdown <= 2 * gap` between calls; `pending` is
    // `Some` only between the `before` of a sampled request and its `after`.
    gap: u32,
    countdown: u32,
    // The start of the last sampled request (`None` before the first), and the requests begun
    // since.
    last: Option<Instant>,
    since_last: u32,
    pending: Option<Instant>,
    rng: u64,
    samples: Vec<u64>,
    // Samples offered, kept or not (for the reservoir).
    offered: u64,
}

impl Meter<SystemClock> {
    /// A meter on the system clock whose budget ends at `deadline` (`None`: never); `seed`
    /// picks which requests are sampled.
    pub(crate) fn new(deadline: Option<Instant>, seed: u64) -> Self {
        Self::with_clock(SystemClock, deadline, seed)
    }
}

impl<C: Clock> Meter<C> {
    /// A meter on `clock`.
    pub(crate) fn with_clock(clock: C, deadline: Option<Instant>, seed: u64) -> Self {
        Self {
            clock,
            deadline,
            gap: 1,
            // The first request is sampled.
            countdown: 1,
            last: None,
            since_last: 0,
            pending: None,
            rng: splitmix64(seed),
            samples: Vec::new(),
            offered: 0,
        }
    }

    /// Call before each request: `false` once the budget has run out (checked at sampled
    /// requests only), and the request should not be made.
    #[inline]
    pub(crate) fn before(&mut self) -> bool {
        self.since_last += 1;
        self.countdown -= 1;
        if self.countdown > 0 {
            return true;
        }
        self.sample_start()
    }

    /// Call after each request: records its latency if it was sampled.
    #[inline]
    pub(crate) fn after(&mut self) {
        if let Some(start) = self.pending.take() {
            self.record(start);
        }
    }

    /// The latency samples taken so far, in nanoseconds.
    pub(crate) fn into_samples(self) -> Vec<u64> {
        self.samples
    }

    // ----- private helpers -----

    /// A sampled request starts: check the budget, adapt the gap to the requests' speed, draw
    /// the next sample.
    #[cold]
    fn sample_start(&mut self) -> bool {
        let now = self.clock.now();
        if self.deadline.is_some_and(|deadline| now >= deadline) {
            self.countdown = 1;
            return false;
        }
        // The mean time of the requests since the last sample (the sampled one included);
        // requests longer than half of `TARGET` are all sampled. Before the first sample there
        // is nothing to learn from: the next request is sampled too.
        if let Some(last) = self.last {
            let took = now.saturating_duration_since(last);
            let requests = self.since_last.max(1);
            let gap = if took.is_zero() {
                self.gap.saturating_mul(2)
            } else {
                let mean = took.as_nanos() as f64 / f64::from(requests);
                (TARGET.as_nanos() as f64 / mean) as u32
            };
            self.gap = gap.clamp(1, MAX_GAP);
        }
        self.last = Some(now);
        self.since_last = 0;
        // Uniform in 1..=2*gap-1: mean `gap`, never in step with anything periodic.
        self.rng = splitmix64(self.rng);
        self.countdown = 1 + (self.rng % u64::from(2 * self.gap - 1)) as u32;
        self.pending = Some(now);
        debug_assert!(self.gap >= 1 && self.countdown >= 1 && self.countdown < 2 * self.gap);
        true
    }

    #[cold]
    fn record(&mut self, start: Instant) {
        let nanos = self.clock.now().saturating_duration_since(start).as_nanos() as u64;
        self.offered += 1;
        if self.samples.len() < MAX_SAMPLES {
            self.samples.push(nanos);
        } else {
            // Keep each of the `offered` samples with the same probability.
            self.rng = splitmix64(self.rng);
            let slot = self.rng % self.offered;
            if let Some(kept) = self.samples.get_mut(slot as usize) {
                *kept = nanos;
            }
        }
    }
}

impl<C> fmt::Debug for Meter<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Meter")
            .field("deadline", &self.deadline)
            .field("gap", &self.gap)
            .field("samples", &self.samples.len())
            .finish_non_exhaustive()
    }
}

/// The rounds of a limit row: its passes over the file timed again and again, whole, until a
/// time floor has passed, so that a fast source is timed for long enough on a shared machine.
///
/// The first round always runs; another starts while the floor has not passed and the budget
/// (counted from the first round's start) has time left. A round cut short by the budget ends
/// the rounds; it counts only if it is the first (the row is then partial).
#[derive(Debug)]
pub(crate) struct Rounds {
    started: Instant,
    floor: Duration,
    budget: Option<Duration>,
}

impl Rounds {
    /// Rounds until `floor` has passed (`None`: one round), within `budget` (`None`: no limit).
    pub(crate) fn new(floor: Option<Duration>, budget: Option<Duration>) -> Self {
        Self {
            started: Instant::now(),
            floor: floor.unwrap_or(Duration::ZERO),
            budget,
        }
    }

    /// The budget the next round has (`Some(None)`: no limit), or `None` if no round should
    /// start: `done` rounds ran, and `whole` says whether the last read all it was to read.
    pub(crate) fn next(&self, done: usize, whole: bool) -> Option<Option<Duration>> {
        let spent = self.started.elapsed();
        if done > 0 && (!whole || spent >= self.floor) {
            return None;
        }
        match self.budget {
            None => Some(None),
            Some(budget) if done == 0 => Some(Some(budget)),
            Some(budget) => budget
                .checked_sub(spent)
                .filter(|left| !left.is_zero())
                .map(Some),
        }
    }
}

/// The index of the median of `times` (the lower of the two middle ones for an even count);
/// `None` for no times.
pub(crate) fn median_index(times: &[Duration]) -> Option<usize> {
    let mut order: Vec<usize> = (0..times.len()).collect();
    order.sort_by_key(|&i| times[i]);
    order.get(times.len().checked_sub(1)? / 2).copied()
}

/// Per-request latency of a cell: percentiles of the requests its meters sampled (about one
/// per 100 µs of running time, chosen at random; every request where requests take longer).
///
/// Sampled latencies include one read of the clock, some tens of nanoseconds, so requests
/// served from a window show that much at least.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Latency {
    /// Requests sampled.
    pub samples: u64,
    /// The median.
    pub p50: Duration,
    /// The 99th percentile.
    pub p99: Duration,
    /// The slowest request sampled.
    pub max: Duration,
}

impl Latency {
    /// The percentiles of `samples` (nanoseconds, any order); `None` without samples.
    pub(crate) fn of(mut samples: Vec<u64>) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        // The nearest-rank percentile: the smallest sample with at least p% at or below it.
        let rank = |p: f64| {
            let n = samples.len();
            let i = ((p / 100.0) * n as f64).ceil() as usize;
            Duration::from_nanos(samples[i.clamp(1, n) - 1])
        };
        Some(Self {
            samples: samples.len() as u64,
            p50: rank(50.0),
            p99: rank(99.0),
            max: Duration::from_nanos(*samples.last().expect("not empty")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A clock that moves only when told to (`advance`), and `per_read` on every reading.
    struct FakeClock {
        now: Cell<Instant>,
        per_read: Duration,
        reads: Cell<u64>,
    }

    impl FakeClock {
        fn new(per_read: Duration) -> Self {
            Self {
                now: Cell::new(Instant::now()),
                per_read,
                reads: Cell::new(0),
            }
        }

        fn advance(&self, by: Duration) {
            self.now.set(self.now.get() + by);
        }
    }

    impl Clock for &FakeClock {
        fn now(&self) -> Instant {
            self.reads.set(self.reads.get() + 1);
            self.advance(self.per_read);
            self.now.get()
        }
    }

    /// Runs `requests` requests (or until the budget stops them), each taking `each`.
    fn run(meter: &mut Meter<&FakeClock>, clock: &FakeClock, requests: u64, each: Duration) -> u64 {
        let mut made = 0;
        while made < requests && meter.before() {
            clock.advance(each);
            meter.after();
            made += 1;
        }
        made
    }

    #[test]
    fn fast_requests_are_sampled_rarely_slow_ones_always() {
        // 10 ns a request: samples ~100 µs of requests apart, ~10 000 requests.
        let clock = FakeClock::new(Duration::ZERO);
        let mut meter = Meter::with_clock(&clock, None, 1);
        assert_eq!(run(&mut meter, &clock, 1_000_000, ns(10)), 1_000_000);
        let sampled = meter.samples.len();
        assert!((50..=1000).contains(&sampled), "{sampled} samples");
        assert!((5_000..=20_000).contains(&meter.gap), "{meter:?}");
        assert!(meter.samples.iter().all(|&n| n == 10));

        // 1 ms a request: every request is sampled, with its latency.
        let clock = FakeClock::new(Duration::ZERO);
        let mut meter = Meter::with_clock(&clock, None, 1);
        assert_eq!(run(&mut meter, &clock, 500, Duration::from_millis(1)), 500);
        assert_eq!(meter.samples.len(), 500);
        assert_eq!(meter.gap, 1);
        assert!(meter.samples.iter().all(|&n| n == 1_000_000));
        assert_eq!(clock.reads.get(), 2 * 500);
    }

    #[test]
    fn the_budget_stops_at_a_sampled_request() {
        let clock = FakeClock::new(Duration::ZERO);
        let start = clock.now.get();
        let mut meter = Meter::with_clock(&clock, Some(start + Duration::from_millis(10)), 1);
        // 2 ms a request: requests start at 0, 2, 4, 6 and 8 ms; the one at 10 ms does not.
        let made = run(&mut meter, &clock, 1000, Duration::from_millis(2));
        assert_eq!(made, 5);
        assert!(!meter.before(), "stays out of time");
        // No budget: never stops.
        let mut meter = Meter::with_clock(&clock, None, 1);
        assert_eq!(
            run(&mut meter, &clock, 1000, Duration::from_millis(2)),
            1000
        );
        // Out of time before the first request.
        let mut meter = Meter::with_clock(&clock, Some(start), 1);
        assert_eq!(run(&mut meter, &clock, 10, Duration::from_millis(2)), 0);
        // Fast requests overshoot the deadline by about `TARGET`, not more.
        let begin = clock.now.get();
        let mut meter = Meter::with_clock(&clock, Some(begin + Duration::from_millis(50)), 1);
        let made = run(&mut meter, &clock, u64::MAX, ns(10));
        let over = clock.now.get() - begin - Duration::from_millis(50);
        assert!(over <= TARGET * 4, "{over:?} after {made} requests");
    }

    #[test]
    fn samples_are_drawn_at_random_not_in_step() {
        // 1 µs a request: a mean gap of 100 requests, drawn from 1..=199.
        let clock = FakeClock::new(Duration::ZERO);
        let mut meter = Meter::with_clock(&clock, None, 1);
        let mut gaps = Vec::new();
        let mut since = 0;
        for _ in 0..200_000 {
            assert!(meter.before());
            since += 1;
            if meter.pending.is_some() {
                gaps.push(since);
                since = 0;
            }
            clock.advance(Duration::from_micros(1));
            meter.after();
        }
        let late = &gaps[gaps.len() / 2..];
        let distinct: std::collections::HashSet<_> = late.iter().collect();
        assert!(distinct.len() > 50, "{late:?}");
        let mean = late.iter().sum::<u32>() as f64 / late.len() as f64;
        assert!((80.0..=120.0).contains(&mean), "{mean}");
    }

    #[test]
    fn the_reservoir_keeps_a_bounded_number_of_samples() {
        let clock = FakeClock::new(Duration::ZERO);
        let mut meter = Meter::with_clock(&clock, None, 1);
        meter.samples = vec![0; MAX_SAMPLES];
        meter.offered = MAX_SAMPLES as u64;
        run(&mut meter, &clock, 1000, Duration::from_millis(1));
        assert_eq!(meter.samples.len(), MAX_SAMPLES);
        assert_eq!(meter.offered, MAX_SAMPLES as u64 + 1000);
        assert!(meter.samples.contains(&1_000_000), "some were kept");
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        assert_eq!(Latency::of(Vec::new()), None);
        let one = Latency::of(vec![5]).unwrap();
        assert_eq!((one.p50, one.p99, one.max), (ns(5), ns(5), ns(5)));
        let hundred = Latency::of((1..=100).rev().collect()).unwrap();
        assert_eq!(hundred.samples, 100);
        assert_eq!(hundred.p50, ns(50));
        assert_eq!(hundred.p99, ns(99));
        assert_eq!(hundred.max, ns(100));
        let mut skewed = vec![10; 990];
        skewed.extend([1_000_000; 10]);
        let skewed = Latency::of(skewed).unwrap();
        assert_eq!((skewed.p50, skewed.p99), (ns(10), ns(10)));
        assert_eq!(skewed.max, ns(1_000_000));
    }

    #[test]
    fn rounds_run_until_the_floor_within_the_budget() {
        // No floor: one round, with the whole budget.
        let one = Rounds::new(None, Some(Duration::from_secs(5)));
        assert_eq!(one.next(0, false), Some(Some(Duration::from_secs(5))));
        assert_eq!(one.next(1, true), None);
        // A floor not reached yet: another round, with what is left of the budget.
        let more = Rounds::new(Some(Duration::from_secs(60)), Some(Duration::from_secs(30)));
        assert!(more.next(1, true).unwrap().unwrap() <= Duration::from_secs(30));
        assert_eq!(more.next(1, false), None, "a partial round ends the rounds");
        let unlimited = Rounds::new(Some(Duration::from_secs(60)), None);
        assert_eq!(unlimited.next(3, true), Some(None));
        // The budget spent: no other round, whatever the floor.
        let spent = Rounds::new(Some(Duration::from_secs(60)), Some(Duration::ZERO));
        assert_eq!(spent.next(0, true), Some(Some(Duration::ZERO)));
        assert_eq!(spent.next(1, true), None);
    }

    #[test]
    fn the_median_is_the_lower_middle() {
        assert_eq!(median_index(&[]), None);
        assert_eq!(median_index(&[ns(7)]), Some(0));
        assert_eq!(median_index(&[ns(9), ns(1), ns(5)]), Some(2));
        assert_eq!(median_index(&[ns(9), ns(1), ns(5), ns(3)]), Some(3));
    }

    fn ns(n: u64) -> Duration {
        Duration::from_nanos(n)
    }
}
