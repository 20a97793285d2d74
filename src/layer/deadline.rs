use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;

use crate::error::source_error::SourceError;
use crate::source::forward::forward;
use crate::source::PositionalSource;
use crate::stats::metrics;

/// A [`PositionalSource`] wrapper that gives each request a deadline growing with its size,
/// `base + len / min_throughput`, and turns a request still unanswered at its deadline into an
/// [`io::ErrorKind::TimedOut`] error, which [`Retrying`](crate::layer::Retrying) retries.
///
/// A request to a store can stall: a connection that stopped moving, a server that never
/// answers. Without a deadline the read waits for the transport's own timeout, if there is one.
/// A deadline that grows with the size does not cut large reads on a slow link: with a base of
/// 2 s and 1 MiB/s, an 8 KiB read gets about 2 s, a 16 MiB read 18 s.
///
/// See [`Hedged`](crate::layer::Hedged) for where it goes among the other wrappers (innermost,
/// so that the wait for a limiter's turn does not count).
///
/// It serves no stream ([`read_stream`](crate::source::PositionalSource::read_stream) is
/// `None`): its deadlines are per request, and a stream has no size to set one by,
/// so sequential runs through it stay ranged.
///
/// # Examples
///
/// ```
/// use async_buffered_input::layer::{Deadline, Retrying};
/// use async_buffered_input::source::MemorySource;
/// use std::time::Duration;
///
/// let source = Retrying::new(Deadline::new(
///     MemorySource::new(vec![0u8; 100]),
///     Duration::from_secs(2),
///     1 << 20,
/// ));
/// assert_eq!(source.get_ref().deadlines_hit(), 0);
/// ```
#[derive(Debug)]
pub struct Deadline<S> {
    inner: S,
    base: Duration,
    // Bytes per second; at least 1.
    min_throughput: u64,
    requests: AtomicU64,
    deadlines_hit: AtomicU64,
}

impl<S> Deadline<S> {
    /// Wraps `inner`: a request for `len` bytes fails with `TimedOut` after `base + len /
    /// min_throughput` (bytes per second; 0 is taken as 1).
    pub fn new(inner: S, base: Duration, min_throughput: u64) -> Self {
        Self {
            inner,
            base,
            min_throughput: min_throughput.max(1),
            requests: AtomicU64::new(0),
            deadlines_hit: AtomicU64::new(0),
        }
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The deadline of a request for `len` bytes.
    pub fn deadline(&self, len: usize) -> Duration {
        let transfer_nanos =
            (len as u128 * 1_000_000_000).div_ceil(u128::from(self.min_throughput));
        let transfer = Duration::from_nanos(u64::try_from(transfer_nanos).unwrap_or(u64::MAX));
        self.base.saturating_add(transfer)
    }

    /// Requests sent through it so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Requests cut at their deadline so far (each became a `TimedOut` error).
    pub fn deadlines_hit(&self) -> u64 {
        self.deadlines_hit.load(Ordering::Relaxed)
    }

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

impl<S: PositionalSource> PositionalSource for Deadline<S> {
    /// The inner source's bytes, or `TimedOut` at the deadline.
    ///
    /// # Errors
    ///
    /// The inner source's; [`io::ErrorKind::TimedOut`] naming the offset, length, source and
    /// deadline if it has not answered by then.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops the request.
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let deadline = self.deadline(len);
        match tokio::time::timeout(deadline, self.inner.read_at(offset, len)).await {
            Ok(result) => result,
            Err(_) => Err(self.timed_out(
                format!(
                    "read of {len} bytes at offset {offset} from {} timed out",
                    self.inner.description()
                ),
                deadline,
            )),
        }
    }

    /// The inner source's length, or `TimedOut` after the base deadline.
    ///
    /// # Errors
    ///
    /// As [`read_at`](Self::read_at).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe.
    async fn len(&self) -> io::Result<u64> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let deadline = self.deadline(0);
        match tokio::time::timeout(deadline, self.inner.len()).await {
            Ok(result) => result,
            Err(_) => Err(self.timed_out(
                format!("length of {} timed out", self.inner.description()),
                deadline,
            )),
        }
    }

    forward!(inner =>
        /// The inner source's (no request).
        known_len,
        /// The inner source's (it never waits).
        try_read_at,
        resource, description, release_buffers
    );
}
