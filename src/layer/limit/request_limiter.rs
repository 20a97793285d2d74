use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;

use crate::layer::Limited;

/// One bound on the requests in flight to a store, shared by every source wrapped in it.
///
/// Give each store one limiter and wrap its sources with [`wrap`](Self::wrap): every input,
/// clone, slice, read-ahead request and cache fill that reaches the store through a
/// [`Limited`] source then counts against the same bound, so thousands of inputs cannot open
/// thousands of connections. Requests beyond the bound queue in the order they asked (tokio's
/// [`Semaphore`] is fair, first in first out).
///
/// Only requests wait: put the limiter below the caches (`Cached<Limited<S>>`), so reads served
/// from memory or from a disk tier never wait for a permit, and below [`Hedged`], so hedges
/// count against the bound (see [`Hedged`] for the whole order).
///
/// Cloning is cheap (an [`Arc`]); clones share the bound and the counters
/// ([`requests`](Self::requests), [`in_flight`](Self::in_flight), ...).
///
/// # Default limits
///
/// [`for_remote`](Self::for_remote) gives 64 requests
/// in flight, for HTTP and S3-style stores (Lance bounds a process at 128; S3 serves thousands
/// of requests per second per prefix, but each costs a connection here). Local files need no
/// limiter at all ([`unlimited`](Self::unlimited) still counts requests).
///
/// [`Hedged`]: crate::layer::Hedged
///
/// # Examples
///
/// ```
/// use async_buffered_input::layer::RequestLimiter;
/// use async_buffered_input::source::{MemorySource, PositionalSource};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let limiter = RequestLimiter::new(16);
/// let a = limiter.wrap(MemorySource::new(vec![1u8; 100]));
/// let b = limiter.wrap(MemorySource::new(vec![2u8; 100]));
/// let (x, y) = tokio::join!(a.read_at(0, 10), b.read_at(0, 10));
/// assert_eq!((x?[0], y?[0]), (1, 2));
/// assert_eq!(limiter.requests(), 2);
/// assert!(limiter.max_in_flight() <= 16);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RequestLimiter {
    shared: Arc<Shared>,
}

struct Shared {
    // `None`: unlimited. Otherwise `limit` permits; a request holds one while it runs.
    semaphore: Option<Semaphore>,
    limit: Option<usize>,
    // Invariant: `in_flight <= max_in_flight`, and `in_flight <= limit` when limited.
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    requests: AtomicU64,
    waited: AtomicU64,
    wait_nanos: AtomicU64,
    coalesced: AtomicU64,
}

/// A request's turn: it holds a permit (if the limiter is bounded) and counts as in flight until
/// dropped.
pub(crate) struct Turn<'a> {
    shared: &'a Shared,
    _permit: Option<SemaphorePermit<'a>>,
}

impl RequestLimiter {
    /// The default bound for remote stores (HTTP, S3, GCS, Azure): 64 requests in flight.
    pub(crate) const REMOTE_DEFAULT: usize = 64;

    /// A limiter letting at most `limit` requests be in flight at once.
    ///
    /// # Panics
    ///
    /// If `limit` is 0 (nothing could ever run) or larger than tokio's
    /// [`Semaphore::MAX_PERMITS`] (use [`unlimited`](Self::unlimited)).
    pub fn new(limit: usize) -> Self {
        assert!(limit > 0, "a RequestLimiter needs a limit of at least 1");
        assert!(
            limit <= Semaphore::MAX_PERMITS,
            "a RequestLimiter's limit must be at most {} (use RequestLimiter::unlimited)",
            Semaphore::MAX_PERMITS
        );
        Self::build(Some(limit))
    }

    /// A limiter with 64 permits, for an HTTP or S3-style
    /// store.
    pub fn for_remote() -> Self {
        Self::new(Self::REMOTE_DEFAULT)
    }

    /// A limiter that never makes a request wait, but counts them (for local files, or to
    /// observe).
    pub fn unlimited() -> Self {
        Self::build(None)
    }

    fn build(limit: Option<usize>) -> Self {
        Self {
            shared: Arc::new(Shared {
                semaphore: limit.map(Semaphore::new),
                limit,
                in_flight: AtomicUsize::new(0),
                max_in_flight: AtomicUsize::new(0),
                requests: AtomicU64::new(0),
                waited: AtomicU64::new(0),
                wait_nanos: AtomicU64::new(0),
                coalesced: AtomicU64::new(0),
            }),
        }
    }

    /// The bound on requests in flight (`None`: unlimited).
    pub fn limit(&self) -> Option<usize> {
        self.shared.limit
    }

    /// Wraps `source` so that its requests count against this limiter.
    pub fn wrap<S>(&self, source: S) -> Limited<S> {
        Limited::new(source, self.clone())
    }

    /// Requests that hold a permit now.
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::Relaxed)
    }

    /// The most requests that held a permit at once so far.
    pub fn max_in_flight(&self) -> usize {
        self.shared.max_in_flight.load(Ordering::Relaxed)
    }

    /// Requests that were given a permit so far.
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::Relaxed)
    }

    /// Requests that had to wait for a permit so far (none was free when they asked).
    pub fn waited(&self) -> u64 {
        self.shared.waited.load(Ordering::Relaxed)
    }

    /// The time requests spent waiting for a permit so far, summed.
    pub fn total_wait(&self) -> Duration {
        Duration::from_nanos(self.shared.wait_nanos.load(Ordering::Relaxed))
    }

    /// Reads that waited for a permit and were answered by another waiting read's request
    /// instead, a near range taken along (see [`Limited`]): they made no request of their own
    /// and are not in [`requests`](Self::requests).
    pub fn coalesced(&self) -> u64 {
        self.shared.coalesced.load(Ordering::Relaxed)
    }

    /// Waits for a turn: a permit, when none is free, in the order requests asked.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a dropped wait leaves the queue (tokio's `acquire`), and a dropped
    /// [`Turn`] gives its permit back.
    pub(crate) async fn turn(&self) -> Turn<'_> {
        match self.try_turn() {
            Some(turn) => turn,
            None => {
                let permit = self.wait_permit().await;
                self.take(permit)
            }
        }
    }

    /// A turn if one is free now (always, unlimited).
    pub(crate) fn try_turn(&self) -> Option<Turn<'_>> {
        let shared = &*self.shared;
        let permit = match &shared.semaphore {
            None => None,
            Some(semaphore) => Some(semaphore.try_acquire().ok()?),
        };
        Some(self.start(permit))
    }

    /// Waits in line for a permit, not yet counted: [`take`](Self::take) makes it a turn (and
    /// counts it, with the wait); dropped, it goes to the next in line.
    ///
    /// # Cancel safety
    ///
    /// As [`turn`](Self::turn).
    pub(crate) async fn wait_permit(&self) -> Permit<'_> {
        let Some(semaphore) = &self.shared.semaphore else {
            return Permit {
                permit: None,
                waited: Duration::ZERO,
            };
        };
        let started = Instant::now();
        // The semaphore is never closed, so `acquire` cannot fail.
        let permit = semaphore
            .acquire()
            .await
            .expect("a RequestLimiter's semaphore is never closed");
        Permit {
            permit: Some(permit),
            waited: started.elapsed(),
        }
    }

    /// The turn of a request that waited for `permit`, counted with its wait.
    pub(crate) fn take<'a>(&'a self, permit: Permit<'a>) -> Turn<'a> {
        let shared = &*self.shared;
        if permit.permit.is_some() {
            shared.waited.fetch_add(1, Ordering::Relaxed);
            let nanos = u64::try_from(permit.waited.as_nanos()).unwrap_or(u64::MAX);
            shared.wait_nanos.fetch_add(nanos, Ordering::Relaxed);
            crate::stats::metrics::limiter_wait(permit.waited);
        }
        self.start(permit.permit)
    }

    /// A read answered by another read's request (see [`Limited`]): counted, it took no turn.
    pub(crate) fn count_coalesced(&self, reads: usize) {
        self.shared
            .coalesced
            .fetch_add(reads as u64, Ordering::Relaxed);
    }

    /// A request starts with `permit` (if bounded): counted as in flight until its turn ends.
    fn start<'a>(&'a self, permit: Option<SemaphorePermit<'a>>) -> Turn<'a> {
        let shared = &*self.shared;
        shared.requests.fetch_add(1, Ordering::Relaxed);
        let now = shared.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        shared.max_in_flight.fetch_max(now, Ordering::Relaxed);
        debug_assert!(shared.limit.is_none_or(|limit| now <= limit));
        crate::stats::metrics::limiter_in_flight(now);
        Turn {
            shared,
            _permit: permit,
        }
    }
}

/// A permit a request waited for, not yet counted as a turn (see
/// [`RequestLimiter::wait_permit`]).
pub(crate) struct Permit<'a> {
    permit: Option<SemaphorePermit<'a>>,
    waited: Duration,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let before = self.shared.in_flight.fetch_sub(1, Ordering::Relaxed);
        debug_assert!(before > 0, "a Turn ended that was never counted");
        crate::stats::metrics::limiter_in_flight(before - 1);
        // `_permit` is dropped after this, so `in_flight` never counts more than the permits out.
    }
}

impl fmt::Debug for RequestLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestLimiter")
            .field("limit", &self.limit())
            .field("in_flight", &self.in_flight())
            .field("max_in_flight", &self.max_in_flight())
            .field("requests", &self.requests())
            .field("waited", &self.waited())
            .field("total_wait", &self.total_wait())
            .field("coalesced", &self.coalesced())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_full_limiter_queues_and_times_the_wait() {
        let limiter = RequestLimiter::new(1);
        let first = limiter.turn().await;
        assert_eq!(limiter.in_flight(), 1);
        let waiting = {
            let limiter = limiter.clone();
            tokio::spawn(async move {
                let _turn = limiter.turn().await;
            })
        };
        tokio::time::sleep(Duration::from_millis(7)).await;
        assert_eq!(limiter.requests(), 1, "the second waits");
        drop(first);
        waiting.await.unwrap();
        assert_eq!(
            (limiter.requests(), limiter.waited(), limiter.in_flight()),
            (2, 1, 0)
        );
        assert_eq!(limiter.max_in_flight(), 1);
        assert_eq!(limiter.total_wait(), Duration::from_millis(7));
    }

    #[tokio::test]
    async fn a_dropped_wait_leaves_the_queue() {
        let limiter = RequestLimiter::new(1);
        let first = limiter.turn().await;
        {
            let wait = limiter.turn();
            tokio::pin!(wait);
            assert!(futures_poll_once(wait.as_mut()).await.is_none());
        }
        drop(first);
        let _again = limiter.turn().await;
        assert_eq!(limiter.in_flight(), 1);
    }

    #[test]
    #[should_panic(expected = "at least 1")]
    fn a_limit_of_zero_is_refused() {
        let _ = RequestLimiter::new(0);
    }

    #[tokio::test]
    async fn unlimited_counts_but_never_waits() {
        let limiter = RequestLimiter::unlimited();
        let turns: Vec<_> = futures_join_n(&limiter, 1000).await;
        assert_eq!(limiter.in_flight(), 1000);
        drop(turns);
        assert_eq!(
            (
                limiter.in_flight(),
                limiter.max_in_flight(),
                limiter.waited()
            ),
            (0, 1000, 0)
        );
        assert_eq!(limiter.limit(), None);
    }

    async fn futures_join_n(limiter: &RequestLimiter, n: usize) -> Vec<Turn<'_>> {
        let mut turns = Vec::with_capacity(n);
        for _ in 0..n {
            turns.push(limiter.turn().await);
        }
        turns
    }

    /// Polls `future` once; `Some` if it completed.
    async fn futures_poll_once<F: std::future::Future>(
        future: std::pin::Pin<&mut F>,
    ) -> Option<F::Output> {
        let mut future = Some(future);
        std::future::poll_fn(|cx| {
            let f = future.take().expect("polled once");
            std::task::Poll::Ready(match f.poll(cx) {
                std::task::Poll::Ready(v) => Some(v),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }
}
