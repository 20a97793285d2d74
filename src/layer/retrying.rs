use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};
use bytes::Bytes;
use futures_core::stream::BoxStream;

use crate::error::source_error::SourceError;
use crate::source::forward::forward;
use crate::source::PositionalSource;
use crate::stats::metrics;

/// A [`PositionalSource`] wrapper that retries the requests of its inner source that fail with
/// a transient error (a connection reset or refused, a timeout, a body cut short), waiting
/// longer after each failure, a bounded number of times; optionally with a deadline on each
/// attempt.
///
/// Off unless you wrap a source in it: without it, a failed request fails the read that needed
/// it (and a retry of that read asks only for what is missing). Errors that are not transient
/// (`NotFound`, `PermissionDenied`, `InvalidInput`, `InvalidData`, ...) are returned at once.
/// After the last attempt, the last error is returned with its kind, saying how many attempts
/// were made.
///
/// # Attempt deadline
///
/// A request to a store can stall: a connection that stopped moving, a server that never
/// answers. [`with_attempt_deadline`](Self::with_attempt_deadline) abandons an attempt still
/// unanswered after `base + len / min_throughput` (a deadline growing with the size, so that
/// large reads on a slow link are not cut: with 2 s and 1 MiB/s, an 8 KiB read gets about 2 s,
/// a 16 MiB read 18 s), as object_store's and the AWS SDKs' per-attempt timeouts do: the
/// attempt is dropped, counts as a transient failure ([`io::ErrorKind::TimedOut`]) and is
/// retried within the attempts and backoff. The error after the last attempt names the
/// deadline, the offset and length, and the source. The deadline covers the whole attempt:
/// the wait for a [`RequestLimiter`](crate::layer::RequestLimiter)'s turn and a hedge's
/// request included (see [`Hedged`](crate::layer::Hedged) for the order of the layers).
///
/// With a deadline it serves no stream ([`read_stream`](PositionalSource::read_stream) is
/// `None`): a stream has no size to set a deadline by, so sequential runs through it stay
/// ranged, each range under the deadline. Without one, the inner source's stream is passed
/// through, not retried (a stream that fails leaves the reader to ranged reads, which are).
///
/// Stores built by `ObjectStoreSource::from_url` retry on their own already (at most
/// twice, within 3 s); this wrapper is for sources that do not, and for a policy of your own.
///
/// # Examples
///
/// ```
/// use async_buffered_input::PositionalFetch;
/// use async_buffered_input::layer::Retrying;
/// use async_buffered_input::source::MemorySource;
/// use async_buffered_input::AsyncBufferedInput;
/// use std::time::Duration;
///
/// let source = Retrying::new(MemorySource::new(vec![0u8; 100]))
///     .with_attempts(4)
///     .with_backoff(Duration::from_millis(20), Duration::from_secs(1))
///     .with_attempt_deadline(Duration::from_secs(2), 1 << 20);
/// assert_eq!(source.attempts(), 4);
/// assert_eq!(source.attempt_deadline(0), Some(Duration::from_secs(2)));
/// assert_eq!(source.deadlines_hit(), 0);
/// let input = AsyncBufferedInput::new(PositionalFetch::new(source));
/// # let _ = input;
/// ```
#[derive(Debug)]
pub struct Retrying<S> {
    inner: S,
    policy: RetryPolicy,
    deadline: Option<AttemptDeadline>,
    requests: AtomicU64,
    deadlines_hit: AtomicU64,
}

/// How [`Retrying`] retries: at most `attempts` tries in all, waiting `first_backoff` after
/// the first failure and twice as long after each next one, at most `max_backoff`, each wait
/// with a random part added (jitter, up to as much again), so that inputs that failed
/// together do not retry in lockstep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RetryPolicy {
    // At least 1.
    attempts: u32,
    first_backoff: Duration,
    max_backoff: Duration,
}

impl RetryPolicy {
    /// The waits between the tries of one request: `first_backoff` doubling up to
    /// `max_backoff`, each with up to as much again added at random (backon's jitter); a
    /// `seed` makes the random part repeatable (tests).
    fn waits(&self, seed: Option<u64>) -> ExponentialBackoff {
        let builder = ExponentialBuilder::default()
            .with_min_delay(self.first_backoff)
            .with_max_delay(self.max_backoff)
            .with_factor(2.0)
            .with_max_times(self.attempts as usize - 1)
            .with_jitter();
        match seed {
            Some(seed) => builder.with_jitter_seed(seed).build(),
            None => builder.build(),
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 3,
            first_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(1),
        }
    }
}

/// The deadline of one attempt: `base + len / min_throughput`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct AttemptDeadline {
    base: Duration,
    // Bytes per second; at least 1.
    min_throughput: u64,
}

impl AttemptDeadline {
    /// The deadline of an attempt for `len` bytes.
    fn for_len(self, len: usize) -> Duration {
        let transfer_nanos =
            (len as u128 * 1_000_000_000).div_ceil(u128::from(self.min_throughput));
        let transfer = Duration::from_nanos(u64::try_from(transfer_nanos).unwrap_or(u64::MAX));
        self.base.saturating_add(transfer)
    }
}

impl<S> Retrying<S> {
    /// Wraps `inner`, retrying with the default policy: 3 attempts in all, waiting 50 ms then
    /// 100 ms (before jitter), at most 1 s; no attempt deadline.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            policy: RetryPolicy::default(),
            deadline: None,
            requests: AtomicU64::new(0),
            deadlines_hit: AtomicU64::new(0),
        }
    }

    /// At most `attempts` tries in all (1: no retry), builder style.
    ///
    /// # Panics
    ///
    /// If `attempts` is 0.
    #[must_use]
    pub fn with_attempts(mut self, attempts: u32) -> Self {
        assert!(attempts > 0, "Retrying needs at least 1 attempt");
        self.policy.attempts = attempts;
        self
    }

    /// Waits `first` after the first failure, doubling up to `max` (builder style); each wait
    /// gets a random part of up to as much again, so that inputs that failed together do not
    /// retry in lockstep.
    #[must_use]
    pub fn with_backoff(mut self, first: Duration, max: Duration) -> Self {
        self.policy.first_backoff = first;
        self.policy.max_backoff = max.max(first);
        self
    }

    /// Abandons an attempt for `len` bytes still unanswered after `base + len /
    /// min_throughput` (bytes per second; 0 is taken as 1), builder style: the attempt is
    /// dropped and counts as a transient `TimedOut` failure, retried as the policy says. A
    /// length request gets `base`. See [Attempt deadline](Self#attempt-deadline).
    #[must_use]
    pub fn with_attempt_deadline(mut self, base: Duration, min_throughput: u64) -> Self {
        self.deadline = Some(AttemptDeadline {
            base,
            min_throughput: min_throughput.max(1),
        });
        self
    }

    /// The most tries in all.
    pub fn attempts(&self) -> u32 {
        self.policy.attempts
    }

    /// The deadline of an attempt for `len` bytes; `None` without one.
    pub fn attempt_deadline(&self, len: usize) -> Option<Duration> {
        self.deadline.map(|d| d.for_len(len))
    }

    /// Attempts sent to the inner source so far, retries included.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Attempts abandoned at their deadline so far (each a `TimedOut` failure).
    pub fn deadlines_hit(&self) -> u64 {
        self.deadlines_hit.load(Ordering::Relaxed)
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// Runs `attempt` until it succeeds, fails for good, or the attempts are spent; each
    /// attempt under the deadline for `len` bytes, if there is one (`what` names the request
    /// in its `TimedOut` error).
    async fn retry<T, F>(
        &self,
        len: usize,
        what: impl Fn() -> String,
        mut attempt: impl FnMut() -> F,
    ) -> io::Result<T>
    where
        F: std::future::Future<Output = io::Result<T>>,
    {
        let mut failures = 0;
        let mut waits = self.policy.waits(None);
        loop {
            self.requests.fetch_add(1, Ordering::Relaxed);
            let result = match self.deadline {
                None => attempt().await,
                Some(deadline) => {
                    let deadline = deadline.for_len(len);
                    match tokio::time::timeout(deadline, attempt()).await {
                        Ok(result) => result,
                        Err(_) => Err(self.timed_out(what(), deadline)),
                    }
                }
            };
            match result {
                Ok(value) => return Ok(value),
                Err(e) if !crate::error::is_transient(e.kind()) => return Err(e),
                Err(e) => {
                    failures += 1;
                    let Some(wait) = waits.next().filter(|_| failures < self.policy.attempts)
                    else {
                        let plural = if failures == 1 { "" } else { "s" };
                        let context = format!("gave up after {failures} attempt{plural}");
                        return Err(SourceError::wrap(context, e));
                    };
                    tracing::debug!(failures, ?wait, error = %e, "retrying a request");
                    metrics::retry();
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    /// The `TimedOut` error of an attempt (`what`) abandoned at `deadline`, counted.
    fn timed_out(&self, what: String, deadline: Duration) -> io::Error {
        self.deadlines_hit.fetch_add(1, Ordering::Relaxed);
        metrics::deadline_hit();
        let cause = io::Error::new(
            io::ErrorKind::TimedOut,
            format!("no answer within the deadline of {deadline:?}"),
        );
        SourceError::wrap(what, cause)
    }
}

impl<S: PositionalSource> PositionalSource for Retrying<S> {
    /// The inner source's bytes, retried as the policy says, each attempt under the deadline
    /// if there is one.
    ///
    /// # Errors
    ///
    /// A non-transient error of the inner source at once; after the last attempt, the last
    /// error with its kind, saying how many attempts were made; an attempt past its deadline is
    /// [`io::ErrorKind::TimedOut`] naming the offset, length, source and deadline.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops the attempt in flight.
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let what = || {
            format!(
                "read of {len} bytes at offset {offset} from {} timed out",
                self.inner.description()
            )
        };
        self.retry(len, what, || self.inner.read_at(offset, len))
            .await
    }

    /// The inner source's length, retried as the policy says, each attempt under the base
    /// deadline if there is one.
    ///
    /// # Errors
    ///
    /// As [`read_at`](Self::read_at).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe.
    async fn len(&self) -> io::Result<u64> {
        let what = || format!("length of {} timed out", self.inner.description());
        self.retry(0, what, || self.inner.len()).await
    }

    /// Without an attempt deadline, the inner source's stream, not retried: a stream that
    /// fails leaves the reader to ranged reads, which are. With one, `None`: sequential runs
    /// stay ranged, each range under the deadline.
    fn read_stream(&self, offset: u64) -> Option<BoxStream<'static, io::Result<Bytes>>> {
        match self.deadline {
            None => self.inner.read_stream(offset),
            Some(_) => None,
        }
    }

    forward!(inner =>
        /// The inner source's (no request).
        known_len,
        /// The inner source's, not retried (it never fails: it gives 0).
        try_read_at,
        resource, description, release_buffers
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_maximum_with_jitter() {
        let policy = Retrying::new(())
            .with_attempts(7)
            .with_backoff(Duration::from_millis(10), Duration::from_millis(50))
            .policy;
        let base = [10, 20, 40, 50, 50, 50];
        let waits: Vec<_> = policy.waits(Some(1)).map(|w| w.as_micros()).collect();
        assert_eq!(
            waits.len(),
            base.len(),
            "one wait between each two of the 7 tries"
        );
        for (wait, base) in waits.iter().zip(base) {
            let base = base * 1000;
            assert!(
                (base..2 * base).contains(wait),
                "{wait} us for a {base} us step"
            );
        }
        let other: Vec<_> = policy.waits(Some(2)).map(|w| w.as_micros()).collect();
        assert_ne!(waits, other, "the random part differs between inputs");
    }
}
