use std::fmt;
use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;

use crate::layer::hedge::hedge_policy::HedgeDelay;
use crate::layer::hedge::hedge_policy::HedgePolicy;
use crate::layer::hedge::latency_window::LatencyWindow;
use crate::source::forward::forward;
use crate::source::PositionalSource;
use crate::stats::metrics;

/// A [`PositionalSource`] wrapper that sends a second, identical request for a read its inner
/// source has not answered within a delay, keeps both alive, and returns whichever answers
/// first; the other is dropped.
///
/// One request in a hundred to an object store can take a hundred times the usual latency (a
/// slow disk, a busy node, a lost packet): those stragglers set the tail of everything built
/// on the reads. A hedge sent after the usual latency almost always answers in the usual
/// latency. Its policy says when (a delay learned from recent latencies, p95 by
/// default, or fixed) and how many (at most 5% of requests by default, so hedging cannot
/// double the load of a store that is slow because it is busy), keeping a small reserve for
/// the reads still unanswered at twice the delay, the stragglers:
///
/// - **Delay**: a request not answered within the delay gets a hedge. The default (or
///   [`with_learned_delay`](Self::with_learned_delay)) uses a quantile (p95) of the latencies
///   of the last requests (a window of 1000), never less than a floor (2 ms). Until 20 answers
///   were seen there is no delay yet: a read sent before then (the first wave of concurrent
///   reads on a new source) is hedged once there is one, if it is still unanswered and has
///   waited longer than it; [`with_fixed_delay`](Self::with_fixed_delay) uses one delay.
/// - **Budget** ([`with_budget`](Self::with_budget)): each request credits `budget` (default
///   0.05) hedges, at most 10 saved; a hedge spends one. A read slower than the delay is hedged
///   while more than 2 hedges are saved; one still unanswered at twice the delay may spend
///   those too. So when the store's usual tail alone takes the whole budget (a p95 delay asks
///   a hedge for 5% of reads), the stragglers, far slower than the rest, still get theirs. The
///   budget starts with the reserve of 2, so hedges never exceed `budget × requests + 2`,
///   however slow the store gets: hedging cannot double the load of a store that is slow
///   because it is overloaded.
///
/// If one of the two requests fails, the other is awaited; the read fails only if both do (with
/// the first request's error). [`len`](PositionalSource::len) is not hedged (an input asks it
/// once).
///
/// # Composing
///
/// From the outside in: `Cached<Retrying<Hedged<Limited<S>>>>`.
/// - [`Cached`](crate::cache::Cached) on top: hits never reach the store.
/// - [`Retrying`](crate::layer::Retrying) above `Hedged`: a retry is hedged too, and a read
///   is retried only when both of its requests failed. Its
///   [attempt deadline](crate::layer::Retrying::with_attempt_deadline) covers the attempt's
///   two requests and their waits for a turn: a stalled request is hedged first, and the
///   attempt is abandoned (both requests dropped) and retried only if neither answers in time.
/// - [`Limited`](crate::layer::Limited) below `Hedged`: every request, hedges included, takes
///   a turn from the store's [`RequestLimiter`](crate::layer::RequestLimiter). (The learned delay
///   then includes the wait for a turn; a store at its limit therefore looks slower, and the
///   budget is what keeps hedges from piling on.)
///
/// # Examples
///
/// ```
/// use async_buffered_input::layer::{Hedged, RequestLimiter, Retrying};
/// use async_buffered_input::source::MemorySource;
/// use std::time::Duration;
///
/// let limiter = RequestLimiter::for_remote();
/// let store = MemorySource::new(vec![0u8; 1000]); // an ObjectStoreSource in real life
/// let source = Retrying::new(Hedged::new(limiter.wrap(store)))
///     .with_attempt_deadline(Duration::from_secs(2), 1 << 20);
/// let fixed = Hedged::new(MemorySource::new(vec![0u8; 10]))
///     .with_fixed_delay(Duration::from_millis(20))
///     .with_budget(0.01);
/// # let _ = (source, fixed);
/// # let _ = source;
/// ```
pub struct Hedged<S> {
    inner: S,
    policy: HedgePolicy,
    latencies: Option<LatencyWindow>,
    // Hedges that may be sent, in millionths; at most `MAX_BURST` whole ones. Starts with the
    // reserve, so that stragglers among the first reads are hedged too.
    tokens: AtomicU64,
    requests: AtomicU64,
    hedges_fired: AtomicU64,
    hedges_won: AtomicU64,
    hedges_denied: AtomicU64,
}

/// `wait` after `from`, or about 30 years after it if that is past what an `Instant` holds (a
/// delay such as `Duration::MAX` means "never": adding it would panic).
fn later(from: Instant, wait: Duration) -> Instant {
    from.checked_add(wait)
        .unwrap_or_else(|| from + Duration::from_secs(86_400 * 365 * 30))
}

/// One hedge token in `tokens`' units.
const TOKEN: u64 = 1_000_000;

/// Hedges of the budget kept for reads still unanswered at twice the delay: a store whose
/// usual tail alone uses the whole budget at the delay (its p95 is a hedge for 5% of reads,
/// the default budget) leaves these for the stragglers, the reads hedging is for. The budget
/// starts with them (`HedgePolicy::RESERVE`).
const RESERVE: u64 = HedgePolicy::RESERVE as u64 * TOKEN;

impl<S> Hedged<S> {
    /// Wraps `inner`, hedging with the default policy: after the p95 of the last 1000
    /// latencies, at least 2 ms; at most 5% of requests.
    pub fn new(inner: S) -> Self {
        Self::with_policy(inner, HedgePolicy::default())
    }

    /// Hedges a request not answered after `delay` (builder style). `Duration::MAX` never
    /// hedges.
    #[must_use]
    pub fn with_fixed_delay(self, delay: Duration) -> Self {
        let policy = self.policy.fixed(delay);
        Self::with_policy(self.inner, policy)
    }

    /// Hedges a request not answered after the `quantile` (0..=1, e.g. 0.95) of the latencies
    /// of the last `window` requests, but never before `floor` (builder style).
    #[must_use]
    pub fn with_learned_delay(self, quantile: f64, floor: Duration, window: usize) -> Self {
        let policy = self.policy.learned(quantile, floor, window);
        Self::with_policy(self.inner, policy)
    }

    /// Hedges at most `share` (clamped to 0..=1) of the requests (builder style). 0 turns
    /// hedging off.
    #[must_use]
    pub fn with_budget(self, share: f64) -> Self {
        let policy = self.policy.with_budget(share);
        Self::with_policy(self.inner, policy)
    }

    /// The share of requests that may be hedged.
    pub fn budget(&self) -> f64 {
        self.policy.budget()
    }

    /// Wraps `inner`, hedging as `policy` says, with no request seen yet.
    fn with_policy(inner: S, policy: HedgePolicy) -> Self {
        let latencies = match policy.delay() {
            HedgeDelay::Fixed(_) => None,
            HedgeDelay::Learned {
                quantile, window, ..
            } => Some(LatencyWindow::new(quantile, window)),
        };
        Self {
            inner,
            policy,
            latencies,
            // A budget of 0 is hedging off: nothing, not even the reserve.
            tokens: AtomicU64::new(if policy.budget() > 0.0 { RESERVE } else { 0 }),
            requests: AtomicU64::new(0),
            hedges_fired: AtomicU64::new(0),
            hedges_won: AtomicU64::new(0),
            hedges_denied: AtomicU64::new(0),
        }
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// Reads asked of it so far (each is one request, plus one more if hedged).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Hedges sent so far: second requests for reads not answered within the delay.
    pub fn hedges_fired(&self) -> u64 {
        self.hedges_fired.load(Ordering::Relaxed)
    }

    /// Hedges that answered first so far (their first request was dropped).
    pub fn hedges_won(&self) -> u64 {
        self.hedges_won.load(Ordering::Relaxed)
    }

    /// Reads still unanswered at twice the delay that were not hedged because the budget was
    /// spent, the reserve too (many of them say the budget, or the delay, is too small for the
    /// store's tail).
    pub fn hedges_denied(&self) -> u64 {
        self.hedges_denied.load(Ordering::Relaxed)
    }

    /// The delay after which a request is hedged now; `None` while still learning.
    pub fn delay(&self) -> Option<Duration> {
        match self.policy.delay() {
            HedgeDelay::Fixed(delay) => Some(delay),
            HedgeDelay::Learned { floor, .. } => self
                .latencies
                .as_ref()
                .and_then(LatencyWindow::quantile)
                .map(|q| q.max(floor)),
        }
    }

    /// How often a read waiting while the delay is still being learned looks again: the
    /// learned delay's floor (no hedge goes out before it anyway), at least 1 ms.
    fn learning_check(&self) -> Duration {
        match self.policy.delay() {
            HedgeDelay::Learned { floor, .. } => floor.max(Duration::from_millis(1)),
            HedgeDelay::Fixed(delay) => delay.max(Duration::from_millis(1)),
        }
    }

    /// Credits the budget for one request.
    fn credit(&self) {
        let credit = (self.policy.budget() * TOKEN as f64) as u64;
        let cap = (HedgePolicy::MAX_BURST * TOKEN as f64) as u64;
        let _ = self
            .tokens
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                Some(t.saturating_add(credit).min(cap))
            });
    }

    /// Spends one hedge from the budget, if it has one more than `reserve` (in `tokens`'
    /// units).
    fn take_token(&self, reserve: u64) -> bool {
        self.tokens
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                (t >= TOKEN + reserve).then(|| t - TOKEN)
            })
            .is_ok()
    }

    /// Records the latency since `started` in the window the delay is learned from.
    fn record(&self, started: Instant) {
        if let Some(latencies) = &self.latencies {
            latencies.record(started.elapsed());
        }
    }

    /// `result`, with the latency since `started` recorded if it is a success.
    fn recorded(&self, started: Instant, result: io::Result<Bytes>) -> io::Result<Bytes> {
        if result.is_ok() {
            self.record(started);
        }
        result
    }
}

impl<S: PositionalSource> Hedged<S> {
    /// Runs `first`; if it has not answered after the delay and the budget allows, runs a second
    /// request from `again` too, and returns the first success (or, if both fail, the first
    /// request's error).
    async fn hedge<F>(&self, first: F, again: impl FnOnce() -> F) -> io::Result<Bytes>
    where
        F: Future<Output = io::Result<Bytes>>,
    {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.credit();
        let started = Instant::now();
        let mut first = pin!(first);
        // Wait for the answer until the delay has passed since `started`. While the delay is
        // still being learned (too few answers yet), look again every `learning_check`: a read
        // sent before then (the first wave of many concurrent reads on a new source) is
        // hedged as soon as the delay is known, if it is still waiting by then.
        let delay = loop {
            let (wake, learned) = match self.delay() {
                Some(delay) => (later(started, delay), Some(delay)),
                None => (later(Instant::now(), self.learning_check()), None),
            };
            tokio::select! {
                biased;
                result = &mut first => return self.recorded(started, result),
                () = tokio::time::sleep_until(wake) => {
                    if let Some(delay) = learned {
                        break delay;
                    }
                }
            }
        };
        // Past the delay: hedge if the budget has more than its reserve; otherwise wait until
        // twice the delay, when a read still unanswered (a straggler, most likely) may spend
        // the reserve too.
        if !self.take_token(RESERVE) {
            tokio::select! {
                biased;
                result = &mut first => return self.recorded(started, result),
                () = tokio::time::sleep_until(later(started, delay.saturating_mul(2))) => {}
            }
            if !self.take_token(0) {
                self.hedges_denied.fetch_add(1, Ordering::Relaxed);
                return self.recorded(started, first.await);
            }
        }
        self.hedges_fired.fetch_add(1, Ordering::Relaxed);
        metrics::hedge_fired();
        tracing::trace!(waited = ?started.elapsed(), "hedging a slow request");
        let hedge_started = Instant::now();
        let mut second = pin!(again());
        // Each is polled until it answers; a failure waits for the other. The first is done
        // once it has failed (an answer returns), so `first_error` says whether it still runs.
        let mut first_error: Option<io::Error> = None;
        let mut second_done = false;
        loop {
            tokio::select! {
                biased;
                result = &mut first, if first_error.is_none() => match result {
                    Ok(data) => {
                        self.record(started);
                        return Ok(data);
                    }
                    Err(e) => first_error = Some(e),
                },
                result = &mut second, if !second_done => {
                    second_done = true;
                    match result {
                        Ok(data) => {
                            self.record(hedge_started);
                            self.hedges_won.fetch_add(1, Ordering::Relaxed);
                            metrics::hedge_won();
                            return Ok(data);
                        }
                        Err(e) => {
                            if let Some(first) = first_error.take() {
                                return Err(first);
                            }
                            tracing::debug!(error = %e, "a hedge failed; waiting for the first request");
                        }
                    }
                }
                // Both failed; the first's error was kept (the second's is only logged).
                else => {
                    return Err(first_error.take().unwrap_or_else(|| {
                        io::Error::other("a hedged read failed with no error kept")
                    }))
                }
            }
        }
    }
}

impl<S: PositionalSource> PositionalSource for Hedged<S> {
    /// The inner source's bytes; hedged by a second request if the first is slow.
    ///
    /// # Errors
    ///
    /// The first request's error, when both requests failed (or only one was sent and it
    /// failed).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops both requests; only the counters and the budget
    /// remember it.
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        self.hedge(self.inner.read_at(offset, len), || {
            self.inner.read_at(offset, len)
        })
        .await
    }

    forward!(inner =>
        /// The inner source's stream, not hedged (one request: nothing to race).
        read_stream,
        /// The inner source's (no request).
        known_len,
        /// The inner source's length, not hedged.
        ///
        /// # Errors
        ///
        /// The inner source's.
        ///
        /// # Cancel safety
        ///
        /// The inner source's.
        len,
        /// The inner source's (it never waits, so there is nothing to hedge).
        try_read_at,
        resource, description, release_buffers
    );
}

impl<S: fmt::Debug> fmt::Debug for Hedged<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hedged")
            .field("inner", &self.inner)
            .field("policy", &self.policy)
            .field("requests", &self.requests())
            .field("hedges_fired", &self.hedges_fired())
            .field("hedges_won", &self.hedges_won())
            .field("hedges_denied", &self.hedges_denied())
            .field("delay", &self.delay())
            .finish()
    }
}
