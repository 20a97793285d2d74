use std::io;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};
use bytes::Bytes;

use crate::error::source_error::SourceError;
use crate::source::forward::forward;
use crate::source::PositionalSource;

/// A [`PositionalSource`] wrapper that retries the requests of its inner source that fail with
/// an error that can succeed on retry (a connection reset or refused, a timeout, a body cut
/// short), waiting longer after each failure, a bounded number of times.
///
/// Off unless you wrap a source in it: without it, a failed request fails the read that needed
/// it (and a retry of that read asks only for what is missing). Errors that cannot succeed on
/// retry (`NotFound`, `PermissionDenied`, `InvalidInput`, `InvalidData`, ...) are returned at
/// once. After the last attempt, the last error is returned with its kind, saying how many
/// attempts were made.
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
///     .with_backoff(Duration::from_millis(20), Duration::from_secs(1));
/// assert_eq!(source.attempts(), 4);
/// let input = AsyncBufferedInput::new(PositionalFetch::new(source));
/// # let _ = input;
/// ```
#[derive(Debug)]
pub struct Retrying<S> {
    inner: S,
    policy: RetryPolicy,
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

impl<S> Retrying<S> {
    /// Wraps `inner`, retrying with the default policy: 3 attempts in all, waiting 50 ms then
    /// 100 ms (before jitter), at most 1 s.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            policy: RetryPolicy::default(),
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

    /// The most tries in all.
    pub fn attempts(&self) -> u32 {
        self.policy.attempts
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// Runs `attempt` until it succeeds, fails for good, or the attempts are spent.
    async fn retry<T, F>(&self, mut attempt: impl FnMut() -> F) -> io::Result<T>
    where
        F: std::future::Future<Output = io::Result<T>>,
    {
        let mut failures = 0;
        let mut waits = self.policy.waits(None);
        loop {
            match attempt().await {
                Ok(value) => return Ok(value),
                Err(e) if !crate::error::is_transient(e.kind()) => return Err(e),
                Err(e) => {
                    failures += 1;
                    let Some(wait) = waits.next().filter(|_| failures < self.policy.attempts)
                    else {
                        let context = format!("gave up after {failures} attempts");
                        return Err(SourceError::wrap(context, e));
                    };
                    tracing::debug!(failures, ?wait, error = %e, "retrying a request");
                    crate::stats::metrics::retry();
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }
}

impl<S: PositionalSource> PositionalSource for Retrying<S> {
    /// The inner source's bytes, retried as the policy says.
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        self.retry(|| self.inner.read_at(offset, len)).await
    }

    /// The inner source's length, retried as the policy says.
    async fn len(&self) -> io::Result<u64> {
        self.retry(|| self.inner.len()).await
    }

    forward!(inner =>
        /// The inner source's stream, not retried: a stream that fails leaves the reader to
        /// ranged reads, which are.
        read_stream,
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
