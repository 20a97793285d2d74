//! The clock of benches 1–3: the bench thread's CPU time by default, wall time on request.
//!
//! These benches run each contender on the bench thread alone (a current-thread runtime, an
//! in-memory source), so the thread's CPU time is the work done, and unlike wall time it does
//! not count the slices the scheduler gives to other processes. On a shared machine that is the
//! difference between a ratio and a guess. `ABI_BENCH_CLOCK=wall` measures wall time instead
//! (criterion's default); on an idle machine the two agree.

use std::time::Instant;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{Criterion, Throughput};

/// Thread CPU time (`CLOCK_THREAD_CPUTIME_ID`) or wall time, in nanoseconds.
pub struct Clock {
    wall: Option<Instant>,
}

impl Clock {
    pub fn from_env() -> Self {
        let wall = std::env::var("ABI_BENCH_CLOCK").is_ok_and(|v| v == "wall");
        Self {
            wall: wall.then(Instant::now),
        }
    }

    pub fn name(&self) -> &'static str {
        if self.wall.is_some() {
            "wall time"
        } else {
            "thread CPU time"
        }
    }

    fn now_ns(&self) -> u64 {
        match self.wall {
            Some(base) => base.elapsed().as_nanos() as u64,
            None => thread_cpu_ns(),
        }
    }
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID is supported on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A criterion configured with [`Clock::from_env`].
pub fn criterion() -> Criterion<Clock> {
    let clock = Clock::from_env();
    eprintln!("clock: {}", clock.name());
    Criterion::default().with_measurement(clock)
}

/// The bench's `main`: `criterion_group!` of `targets` with [`criterion`] as the config, then
/// `criterion_main!`.
macro_rules! clock_main {
    ($($target:path),+ $(,)?) => {
        criterion::criterion_group! {
            name = benches;
            config = $crate::clock::criterion();
            targets = $($target),+
        }
        criterion::criterion_main!(benches);
    };
}
pub(crate) use clock_main;

impl Measurement for Clock {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        self.now_ns()
    }

    fn end(&self, start: u64) -> u64 {
        self.now_ns().saturating_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &NanosFormatter
    }
}

/// Formats nanoseconds like criterion's own wall-time formatter.
struct NanosFormatter;

impl ValueFormatter for NanosFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical < 1e3 {
            (1.0, "ns")
        } else if typical < 1e6 {
            (1e-3, "µs")
        } else if typical < 1e9 {
            (1e-6, "ms")
        } else {
            (1e-9, "s")
        };
        for v in values {
            *v *= factor;
        }
        unit
    }

    fn scale_throughputs(
        &self,
        typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let (per_iter, binary) = match *throughput {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) => (n as f64, true),
            Throughput::Elements(n) | Throughput::Bits(n) => (n as f64, false),
            Throughput::ElementsAndBytes { elements, .. } => (elements as f64, false),
        };
        let per_second = per_iter * 1e9 / typical;
        let (denominator, unit) = match (binary, per_second) {
            (true, x) if x >= 1024f64.powi(3) => (1024f64.powi(3), "GiB/s"),
            (true, x) if x >= 1024f64.powi(2) => (1024f64.powi(2), "MiB/s"),
            (true, _) => (1024.0, "KiB/s"),
            (false, x) if x >= 1e9 => (1e9, "Gelem/s"),
            (false, x) if x >= 1e6 => (1e6, "Melem/s"),
            (false, _) => (1e3, "Kelem/s"),
        };
        for v in values {
            *v = per_iter * 1e9 / *v / denominator;
        }
        unit
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
