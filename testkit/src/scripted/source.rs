//! The scripted source.

use std::collections::BTreeMap;
use std::future::Future;
use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use async_buffered_input::source::{MemorySource, PositionalSource};
use bytes::Bytes;
use futures_core::stream::BoxStream;
use tokio::sync::watch;
use tokio::time::Instant;

use super::{Delay, ScriptedCounts, ScriptedRequest};

/// A test's positional source: bytes in memory (or any other source it wraps), with a script
/// for each request's delay and failure, an optional gate, and a log of what it was asked.
///
/// One type for every slow, failing, gated or logging source a test needs:
///
/// - **delay**: [`delay`](Self::delay) (the same for every request) or
///   [`delay_with`](Self::delay_with) (by request: its index, offset, length, whether it fails);
///   a [`Delay`] is ready, some yields, a sleep on tokio's clock, or forever;
/// - **failures**: [`fail_if`](Self::fail_if), [`fail_once_if`](Self::fail_once_if) and their
///   shorthands ([`fail_every`](Self::fail_every), [`fail_first`](Self::fail_first),
///   [`fail_request`](Self::fail_request), [`fail_all`](Self::fail_all)); while the test runs,
///   [`fail_next`](Self::fail_next) and [`set_down`](Self::set_down). A failure is an
///   [`io::Error`] of the kind and message set by [`error`](Self::error) (`ConnectionReset`,
///   "injected failure" unless told), whose text ends with what was asked: "…: read of 16
///   bytes at 4096 (request 3)"; or whatever [`error_with`](Self::error_with) makes. It is
///   returned after the delay, as a network answers;
/// - **gate**: made [`gated`](Self::gated), every request waits until [`open`](Self::open);
/// - **what it was asked**: [`log`](Self::log) (offset, length of each `read_at`, in order;
///   not kept if [`unlogged`](Self::unlogged), for tests that measure memory or run long),
///   [`requests`](Self::requests), and [`counts`](Self::counts) (failures, requests in
///   flight and the most at once, `len` calls, answers freed);
/// - **its answers**: slices of the bytes, or with [`fresh_buffers`](Self::fresh_buffers) each
///   in an allocation of its own (as a network source's), and with
///   [`counted_buffers`](Self::counted_buffers) their frees counted too.
///
/// A request is booked, its failure decided and its delay chosen when `read_at` is called; the
/// gate, the delay and the answer follow when the future is polled. Nothing is at hand
/// (`try_read_at` reads nothing) unless [`all_at_hand`](Scripted::all_at_hand); the length is
/// not known without a request (`known_len` is `None`).
///
/// # Examples
///
/// ```
/// use abi_testkit::{Delay, Scripted};
/// use async_buffered_input::source::PositionalSource;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let source = Scripted::new(vec![7u8; 100])
///     .fail_request(1)
///     .delay_with(|r| if r.fails { Delay::Yields(1) } else { Delay::Ready });
/// assert_eq!(source.read_at(0, 10).await.unwrap().len(), 10);
/// let e = source.read_at(95, 10).await.unwrap_err();
/// assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset);
/// assert_eq!(e.to_string(), "injected failure: read of 10 bytes at 95 (request 1)");
/// assert_eq!(source.log(), [(0, 10), (95, 10)]);
/// assert_eq!((source.requests(), source.counts().failures), (2, 1));
/// # }
/// ```
pub struct Scripted<S = MemorySource> {
    inner: S,
    name: Option<String>,
    delay: ByRequest<Delay>,
    rules: Vec<Rule>,
    kind: ErrorKind,
    message: String,
    error_with: Option<ByRequest<io::Error>>,
    length_is_a_request: bool,
    answers: Answers,
    /// The bytes `try_read_at` serves, if any.
    at_hand: Option<Bytes>,
    /// Open (`true`) unless made `gated` and not yet opened.
    gate: watch::Sender<bool>,
    fail_next: AtomicU64,
    down: AtomicBool,
    /// `None` if unlogged.
    log: Option<Mutex<Vec<(u64, usize, Instant)>>>,
    requests: AtomicU64,
    failures: AtomicU64,
    live: Arc<AtomicU64>,
    max_live: AtomicU64,
    length_requests: AtomicU64,
    buffers_freed: Arc<AtomicU64>,
    /// What `read_stream` serves, if it streams (see [`Scripted::streaming`]).
    stream: Option<StreamScript>,
    streams_opened: Arc<AtomicU64>,
    streamed: Arc<AtomicU64>,
}

/// How a streaming `Scripted` streams.
#[derive(Clone)]
struct StreamScript {
    data: Bytes,
    piece: usize,
    delay: Delay,
    fails_after: Option<u64>,
    ends_after: Option<u64>,
}

/// A part of the script: what it says of a request.
type ByRequest<T> = Box<dyn Fn(&ScriptedRequest) -> T + Send + Sync>;

/// How answers are handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answers {
    /// Slices of the inner source's answers.
    AsTheyCome,
    /// Each copied into an allocation of its own.
    Fresh,
    /// Each copied into an allocation of its own whose free is counted.
    FreshCounted,
}

/// A failure rule: which requests fail.
enum Rule {
    /// Every request the predicate accepts.
    If(ByRequest<bool>),
    /// The first request the predicate accepts, once.
    Once(ByRequest<bool>, AtomicBool),
}

impl Rule {
    fn fails(&self, request: &ScriptedRequest) -> bool {
        match self {
            Rule::If(pred) => pred(request),
            Rule::Once(pred, fired) => pred(request) && !fired.swap(true, SeqCst),
        }
    }
}

impl Scripted<MemorySource> {
    /// A source over `data` that answers every request at once, and never fails.
    pub fn new(data: impl Into<Bytes>) -> Self {
        Self::over(MemorySource::new(data))
    }

    /// Makes it stream (builder style): `read_stream` gives its bytes from the offset asked to
    /// the end in pieces of `piece` bytes, each after `delay` (on tokio's clock, as a link
    /// that moves `piece` bytes per `delay`). Streams are counted
    /// ([`streams_opened`](Self::streams_opened)), not logged as requests, and take no part
    /// in the failure rules (see [`stream_fails_after`](Self::stream_fails_after)).
    pub fn streaming(mut self, piece: usize, delay: impl Into<Delay>) -> Self {
        self.stream = Some(StreamScript {
            data: self.inner.bytes().clone(),
            piece: piece.max(1),
            delay: delay.into(),
            fails_after: None,
            ends_after: None,
        });
        self
    }

    /// Makes each stream (see [`streaming`](Self::streaming)) fail with a `ConnectionReset`
    /// item once it has given `bytes` bytes.
    ///
    /// # Panics
    ///
    /// If the source does not stream.
    pub fn stream_fails_after(mut self, bytes: u64) -> Self {
        self.stream
            .as_mut()
            .expect("a streaming source")
            .fails_after = Some(bytes);
        self
    }

    /// Makes each stream end cleanly (no error, as a connection closed early) once it has
    /// given `bytes` bytes, before the end of the data.
    ///
    /// # Panics
    ///
    /// If the source does not stream.
    pub fn stream_ends_after(mut self, bytes: u64) -> Self {
        self.stream.as_mut().expect("a streaming source").ends_after = Some(bytes);
        self
    }

    /// Makes every byte at hand: `try_read_at` copies what is asked (up to the end) without a
    /// request (builder style).
    pub fn all_at_hand(mut self) -> Self {
        self.at_hand = Some(self.inner.bytes().clone());
        self
    }
}

impl<S> Scripted<S> {
    /// A source over `inner` (whose bytes, errors and timing the script adds to), answering
    /// at once and failing never.
    pub fn over(inner: S) -> Self {
        Self {
            inner,
            name: None,
            delay: Box::new(|_| Delay::Ready),
            rules: Vec::new(),
            kind: ErrorKind::ConnectionReset,
            message: "injected failure".to_owned(),
            error_with: None,
            length_is_a_request: false,
            answers: Answers::AsTheyCome,
            at_hand: None,
            gate: watch::Sender::new(true),
            fail_next: AtomicU64::new(0),
            down: AtomicBool::new(false),
            log: Some(Mutex::new(Vec::new())),
            requests: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            live: Arc::new(AtomicU64::new(0)),
            max_live: AtomicU64::new(0),
            length_requests: AtomicU64::new(0),
            buffers_freed: Arc::new(AtomicU64::new(0)),
            stream: None,
            streams_opened: Arc::default(),
            streamed: Arc::default(),
        }
    }

    // ----- the script (builder style) -----

    /// Names the source: its `resource()` (and so its description).
    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }

    /// Every request waits `delay` (a [`Duration`](std::time::Duration) is a sleep).
    pub fn delay(self, delay: impl Into<Delay>) -> Self {
        let delay = delay.into();
        self.delay_with(move |_| delay)
    }

    /// Each request waits what `delay` says of it.
    pub fn delay_with(
        mut self,
        delay: impl Fn(&ScriptedRequest) -> Delay + Send + Sync + 'static,
    ) -> Self {
        self.delay = Box::new(delay);
        self
    }

    /// Fails every request `pred` accepts (besides those other rules fail).
    pub fn fail_if(
        mut self,
        pred: impl Fn(&ScriptedRequest) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.rules.push(Rule::If(Box::new(pred)));
        self
    }

    /// Fails the first request `pred` accepts, and no other.
    pub fn fail_once_if(
        mut self,
        pred: impl Fn(&ScriptedRequest) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.rules
            .push(Rule::Once(Box::new(pred), AtomicBool::new(false)));
        self
    }

    /// Fails every `n`-th request (indexes `n - 1`, `2n - 1`, …); never if `n == 0`.
    pub fn fail_every(self, n: u64) -> Self {
        self.fail_if(move |r| n > 0 && r.index % n == n - 1)
    }

    /// Fails the first `k` requests.
    pub fn fail_first(self, k: u64) -> Self {
        self.fail_if(move |r| r.index < k)
    }

    /// Fails request `index` (counted from 0).
    pub fn fail_request(self, index: u64) -> Self {
        self.fail_if(move |r| r.index == index)
    }

    /// Fails every request.
    pub fn fail_all(self) -> Self {
        self.fail_if(|_| true)
    }

    /// The kind and message of the failures (`ConnectionReset`, "injected failure" unless
    /// told); the text adds what was asked.
    pub fn error(mut self, kind: ErrorKind, message: &str) -> Self {
        self.kind = kind;
        self.message = message.to_owned();
        self
    }

    /// Makes each failure's error with `error` instead.
    pub fn error_with(
        mut self,
        error: impl Fn(&ScriptedRequest) -> io::Error + Send + Sync + 'static,
    ) -> Self {
        self.error_with = Some(Box::new(error));
        self
    }

    /// Makes `len` calls requests too: numbered with the reads, delayed and failed by the
    /// script, and counted in [`requests`](Self::requests) (not logged).
    pub fn length_is_a_request(mut self) -> Self {
        self.length_is_a_request = true;
        self
    }

    /// Hands out every answer in an allocation of its own, as a network source does (slices of
    /// one buffer would hide what a reader holds).
    pub fn fresh_buffers(mut self) -> Self {
        self.answers = Answers::Fresh;
        self
    }

    /// As [`fresh_buffers`](Self::fresh_buffers), and counts the answers freed (an owner of
    /// a few bytes more each).
    pub fn counted_buffers(mut self) -> Self {
        self.answers = Answers::FreshCounted;
        self
    }

    /// Keeps no [`log`](Self::log) (which grows by a request's offset and length each): for
    /// tests that measure memory, and benches.
    pub fn unlogged(mut self) -> Self {
        self.log = None;
        self
    }

    /// Holds every request until [`open`](Self::open).
    pub fn gated(self) -> Self {
        self.gate.send_replace(false);
        self
    }

    // ----- while the test runs -----

    /// Lets the requests held at the gate, and the next ones, through.
    pub fn open(&self) {
        self.gate.send_replace(true);
    }

    /// Holds the next requests at the gate.
    pub fn close(&self) {
        self.gate.send_replace(false);
    }

    /// Fails the next `k` requests (whatever the rules say).
    pub fn fail_next(&self, k: u64) {
        self.fail_next.store(k, SeqCst);
    }

    /// While `down`, every request fails.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, SeqCst);
    }

    // ----- what it was asked -----

    /// The `read_at` requests so far, as (offset, length), in the order they were made.
    ///
    /// # Panics
    ///
    /// If the source is [`unlogged`](Self::unlogged).
    pub fn log(&self) -> Vec<(u64, usize)> {
        let log = self.log.as_ref().expect("a log of an unlogged source");
        log.lock()
            .unwrap()
            .iter()
            .map(|&(at, n, _)| (at, n))
            .collect()
    }

    /// How many `read_at` requests asked for each offset.
    ///
    /// # Panics
    ///
    /// If the source is [`unlogged`](Self::unlogged).
    pub fn per_offset(&self) -> BTreeMap<u64, u64> {
        let mut counts = BTreeMap::new();
        for (offset, _) in self.log() {
            *counts.entry(offset).or_default() += 1;
        }
        counts
    }

    /// When each `read_at` request of the [`log`](Self::log) was made (tokio's clock).
    ///
    /// # Panics
    ///
    /// If the source is [`unlogged`](Self::unlogged).
    pub fn sent_at(&self) -> Vec<Instant> {
        let log = self.log.as_ref().expect("a log of an unlogged source");
        log.lock().unwrap().iter().map(|&(_, _, t)| t).collect()
    }

    /// Requests made so far (`read_at`; `len` too if it [is a request](Self::length_is_a_request)).
    pub fn requests(&self) -> u64 {
        self.requests.load(SeqCst)
    }

    /// Everything it counted so far: requests, failures, requests in flight and the most at
    /// once, `len` calls, answers freed.
    pub fn counts(&self) -> ScriptedCounts {
        ScriptedCounts {
            requests: self.requests.load(SeqCst),
            failures: self.failures.load(SeqCst),
            live: self.live.load(SeqCst),
            max_live: self.max_live.load(SeqCst),
            length_requests: self.length_requests.load(SeqCst),
            buffers_freed: self.buffers_freed.load(SeqCst),
        }
    }

    /// How many streams were opened (polled at least once) so far.
    pub fn streams_opened(&self) -> u64 {
        self.streams_opened.load(SeqCst)
    }

    /// How many bytes streams have given so far (pieces handed out, read or not).
    pub fn streamed(&self) -> u64 {
        self.streamed.load(SeqCst)
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    // ----- private helpers -----

    /// Books a request, decides whether it fails (and with what) and how long it waits.
    fn book(&self, offset: u64, len: usize, is_length: bool) -> (Option<io::Error>, Delay) {
        let index = self.requests.fetch_add(1, SeqCst);
        if let (false, Some(log)) = (is_length, &self.log) {
            log.lock().unwrap().push((offset, len, Instant::now()));
        }
        let mut request = ScriptedRequest {
            index,
            offset,
            len,
            is_length,
            fails: false,
            failures_before: self.failures.load(SeqCst),
        };
        let told = self
            .fail_next
            .fetch_update(SeqCst, SeqCst, |k| k.checked_sub(1))
            .is_ok();
        request.fails =
            told || self.down.load(SeqCst) || self.rules.iter().any(|rule| rule.fails(&request));
        let error = request.fails.then(|| {
            self.failures.fetch_add(1, SeqCst);
            match &self.error_with {
                Some(make) => make(&request),
                None if is_length => io::Error::new(
                    self.kind,
                    format!("{}: length request (request {index})", self.message),
                ),
                None => io::Error::new(
                    self.kind,
                    format!(
                        "{}: read of {len} bytes at {offset} (request {index})",
                        self.message
                    ),
                ),
            }
        });
        (error, (self.delay)(&request))
    }

    /// Books a request in flight until the guard drops.
    fn live_guard(&self) -> LiveGuard {
        let now = self.live.fetch_add(1, SeqCst) + 1;
        self.max_live.fetch_max(now, SeqCst);
        LiveGuard(Arc::clone(&self.live))
    }

    /// Waits at the gate (if closed) and for `delay`.
    fn wait(&self, delay: Delay) -> impl Future<Output = ()> + Send + 'static {
        let mut gate = self.gate.subscribe();
        async move {
            // The sender lives in `self`, which outlives the request.
            let _ = gate.wait_for(|open| *open).await;
            delay.wait().await;
        }
    }
}

/// Counts a request in flight while it lives.
struct LiveGuard(Arc<AtomicU64>);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// An answer in an allocation of its own, counted when freed.
struct FreshBuffer(Vec<u8>, Arc<AtomicU64>);

impl AsRef<[u8]> for FreshBuffer {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for FreshBuffer {
    fn drop(&mut self) {
        self.1.fetch_add(1, SeqCst);
    }
}

impl<S: PositionalSource> PositionalSource for Scripted<S> {
    fn read_at(&self, offset: u64, len: usize) -> impl Future<Output = io::Result<Bytes>> + Send {
        let (error, delay) = self.book(offset, len, false);
        let live = self.live_guard();
        let wait = self.wait(delay);
        let answers = self.answers;
        let freed = Arc::clone(&self.buffers_freed);
        async move {
            let _live = live;
            wait.await;
            if let Some(e) = error {
                return Err(e);
            }
            let bytes = self.inner.read_at(offset, len).await?;
            Ok(match answers {
                Answers::AsTheyCome => bytes,
                Answers::Fresh => Bytes::copy_from_slice(&bytes),
                Answers::FreshCounted => Bytes::from_owner(FreshBuffer(bytes.to_vec(), freed)),
            })
        }
    }

    fn len(&self) -> impl Future<Output = io::Result<u64>> + Send {
        self.length_requests.fetch_add(1, SeqCst);
        let (error, wait) = if self.length_is_a_request {
            let (error, delay) = self.book(0, 0, true);
            (error, Some(self.wait(delay)))
        } else {
            (None, None)
        };
        async move {
            if let Some(wait) = wait {
                wait.await;
            }
            match error {
                Some(e) => Err(e),
                None => self.inner.len().await,
            }
        }
    }

    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        let Some(data) = &self.at_hand else {
            return 0;
        };
        let start = offset.min(data.len() as u64) as usize;
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        n
    }

    fn read_stream(&self, offset: u64) -> Option<BoxStream<'static, io::Result<Bytes>>> {
        let script = self.stream.clone()?;
        let opened = Arc::clone(&self.streams_opened);
        let streamed = Arc::clone(&self.streamed);
        let start = offset.min(script.data.len() as u64) as usize;
        // (next offset, bytes given, whether it was polled yet)
        let state = (start, 0u64, false);
        Some(Box::pin(futures_util::stream::unfold(
            state,
            move |(at, given, polled)| {
                let script = script.clone();
                let opened = Arc::clone(&opened);
                let streamed = Arc::clone(&streamed);
                async move {
                    if !polled {
                        opened.fetch_add(1, SeqCst);
                    }
                    if at >= script.data.len() || script.ends_after.is_some_and(|end| given >= end)
                    {
                        return None;
                    }
                    script.delay.wait().await;
                    if script.fails_after.is_some_and(|after| given >= after) {
                        let e = io::Error::new(
                            ErrorKind::ConnectionReset,
                            format!("injected stream failure at {at}"),
                        );
                        // The stream ends after its error.
                        return Some((Err(e), (script.data.len(), given, true)));
                    }
                    let end = (at + script.piece).min(script.data.len());
                    let piece = script.data.slice(at..end);
                    let given = given + piece.len() as u64;
                    streamed.fetch_add(piece.len() as u64, SeqCst);
                    Some((Ok(piece), (end, given, true)))
                }
            },
        )))
    }

    fn resource(&self) -> Option<String> {
        self.name.clone()
    }
}

/// Shows the counts and the script's settings, not the bytes.
impl<S> std::fmt::Debug for Scripted<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripted")
            .field("name", &self.name)
            .field("rules", &self.rules.len())
            .field("counts", &self.counts())
            .field("open", &*self.gate.borrow())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn failures_delays_and_the_log_follow_the_script() {
        let source = Scripted::new(vec![1u8; 50])
            .fail_every(3)
            .fail_once_if(|r| r.offset >= 40)
            .delay_with(|r| Delay::Sleep(Duration::from_millis(r.index + 1)));
        let t0 = tokio::time::Instant::now();
        assert_eq!(source.read_at(0, 10).await.unwrap().len(), 10);
        assert_eq!(
            source.read_at(45, 10).await.unwrap_err().kind(),
            ErrorKind::ConnectionReset
        );
        assert!(source.read_at(45, 10).await.is_err(), "every third fails");
        assert_eq!(source.read_at(45, 10).await.unwrap().len(), 5, "once only");
        assert_eq!(t0.elapsed(), Duration::from_millis(1 + 2 + 3 + 4));
        assert_eq!(
            (
                source.requests(),
                source.counts().failures,
                source.counts().live
            ),
            (4, 2, 0)
        );
        source.fail_next(1);
        assert!(source.read_at(0, 1).await.is_err());
        source.set_down(true);
        assert!(source.read_at(0, 1).await.is_err());
        source.set_down(false);
        assert!(source.read_at(0, 1).await.is_ok());
        assert_eq!(source.log().len(), 7);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_gated_request_waits_and_fresh_buffers_are_counted() {
        let source = Arc::new(Scripted::new(vec![2u8; 10]).gated().counted_buffers());
        let task = {
            let source = Arc::clone(&source);
            tokio::spawn(async move { source.read_at(0, 4).await })
        };
        for _ in 0..5 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            (
                source.requests(),
                source.counts().live,
                source.counts().max_live
            ),
            (1, 1, 1)
        );
        source.open();
        let bytes = task.await.unwrap().unwrap();
        assert_eq!(bytes[..], [2u8; 4]);
        assert_eq!(source.counts().buffers_freed, 0);
        drop(bytes);
        assert_eq!(
            (source.counts().buffers_freed, source.counts().live),
            (1, 0)
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn length_requests_follow_the_script_when_asked() {
        let source = Scripted::new(vec![3u8; 10])
            .length_is_a_request()
            .fail_request(0);
        assert!(source.len().await.is_err());
        assert_eq!(source.len().await.unwrap(), 10);
        assert_eq!((source.requests(), source.counts().length_requests), (2, 2));
        assert!(source.log().is_empty());
        let mut buf = [0u8; 4];
        assert_eq!(source.try_read_at(0, &mut buf), 0, "nothing at hand");
        let source = Scripted::new(vec![3u8; 10]).all_at_hand();
        assert_eq!(source.try_read_at(8, &mut buf), 2);
        assert_eq!(source.requests(), 0);
    }
}
