//! A fault-injecting TCP proxy for HTTP/1.1 on 127.0.0.1, for the network fault tests.
//!
//! [`FaultProxy::start`] listens on `127.0.0.1:0` and forwards every connection to one upstream
//! server. It follows the HTTP/1.1 framing in both directions (message heads, `Content-Length`
//! bodies, which responses answer a `HEAD`) so that it can log every request and break a
//! response after a chosen number of its body bytes:
//!
//! - [`FaultKind::Reset`]: a TCP reset (`SO_LINGER` 0, then close);
//! - [`FaultKind::Stall`]: forward nothing more on that connection, but keep it open until the
//!   client closes it;
//! - [`FaultKind::Truncate`]: close the connection cleanly (FIN) with the body cut short;
//! - [`FaultKind::Drip`]: forward the rest of that response a few bytes at a time.
//!
//! Independently of faults, [`FaultProxy::set_delay`] holds back every response head by a fixed
//! latency, and a seeded share of them (stragglers) by a further amount: a store whose requests
//! usually take 2 ms and one in a hundred 200 ms more ([`Delay`]).
//! [`FaultProxy::set_rate_per_connection`] caps the bytes each client connection receives per
//! second, each connection on its own (a token bucket per connection): a store such as S3,
//! where one connection moves 20-100 MB/s and more connections move more.
//! [`Stats::peak_bodies_in_flight`] then shows how many connections carried bytes at once. The
//! binary (`fault-proxy --help`) runs the proxy with a delay and a cap for the throughput
//! harness.
//!
//! [`FaultProxy::inject`] and [`FaultProxy::pass_through`] switch it at run time. The choice is
//! made per response when its head arrives, so a response already under way keeps its fate:
//! a stalled connection stays stalled until the client gives it up. Only 2xx responses with
//! more body bytes than the threshold (or a body that runs to the close) are faulted; a chunked
//! message ends the framing on its connection, and the rest of that connection is forwarded
//! untouched. Client-to-server bytes always pass.
//!
//! [`read_head`] reads a message head off a connection, for the small servers and clients
//! that tests put on either side of the proxy.

mod heads;
mod rate;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{ReadHalf, WriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

pub use heads::read_head;
use rate::TokenBucket;

/// What happens to a response once the fault's threshold is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Reset the connection: `SO_LINGER` 0, then close, so the client gets an RST.
    Reset,
    /// Forward nothing more and keep the connection open until the client closes it.
    Stall,
    /// Close the connection cleanly (FIN) with the body cut short.
    Truncate,
    /// Forward the rest of the response `bytes` at a time, one piece every `every`.
    Drip { bytes: usize, every: Duration },
}

/// A fault and where it strikes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    /// Body bytes forwarded untouched before the fault (0: right after the response head).
    pub after_body_bytes: u64,
    /// How many responses to fault; `None`: every one while the fault is on.
    pub responses: Option<u64>,
}

impl Fault {
    /// `kind` in every response with more than `after_body_bytes` body bytes.
    pub const fn every_response(kind: FaultKind, after_body_bytes: u64) -> Self {
        Self {
            kind,
            after_body_bytes,
            responses: None,
        }
    }

    /// `kind` in the first `n` responses with more than `after_body_bytes` body bytes only.
    pub const fn first_responses(n: u64, kind: FaultKind, after_body_bytes: u64) -> Self {
        Self {
            kind,
            after_body_bytes,
            responses: Some(n),
        }
    }
}

/// One request the proxy saw, in the order the requests arrived (over all connections).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// 0, 1, 2, ...: the arrival order.
    pub id: u64,
    pub method: String,
    /// `Range: bytes=A-B` as `(A, Some(B))` (`B` inclusive), `bytes=A-` as `(A, None)`.
    pub range: Option<(u64, Option<u64>)>,
}

/// A response the proxy faulted, with the request it answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Faulted {
    pub request: Option<Request>,
    pub fault: Fault,
}

/// Latency added to every response, and to a seeded share of them (stragglers) more.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Delay {
    /// Added to every final response, before its head is forwarded.
    pub latency: Duration,
    /// The share of responses (0..=1) that are stragglers.
    pub straggler_share: f64,
    /// Added to a straggler on top of `latency`.
    pub straggler_extra: Duration,
    /// Seeds the choice of stragglers (the n-th response's fate depends only on the seed).
    pub seed: u64,
}

impl Delay {
    /// `latency` on every response, no stragglers.
    pub const fn fixed(latency: Duration) -> Self {
        Self {
            latency,
            straggler_share: 0.0,
            straggler_extra: Duration::ZERO,
            seed: 0,
        }
    }

    /// `latency` on every response, and `extra` more on a `share` of them chosen by `seed`.
    pub const fn with_stragglers(
        latency: Duration,
        share: f64,
        extra: Duration,
        seed: u64,
    ) -> Self {
        Self {
            latency,
            straggler_share: share,
            straggler_extra: extra,
            seed,
        }
    }
}

/// Counters, for asserting retries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Client connections accepted.
    pub connections: u64,
    /// Request heads seen.
    pub requests: u64,
    /// Final (non-1xx) response heads seen.
    pub responses: u64,
    /// Responses faulted.
    pub faulted: u64,
    /// Responses held back by a [`Delay`].
    pub delayed: u64,
    /// Of those, stragglers (held back by `latency + straggler_extra`).
    pub stragglers: u64,
    /// The most response bodies on their way to clients at once, over all connections: a body
    /// counts from its response head to its last byte (or its connection's end); a chunked
    /// body, which the proxy does not follow, does not count. A connection carries one response
    /// at a time, so this is the most connections that carried bytes at once.
    pub peak_bodies_in_flight: u64,
}

/// The proxy: dropping it closes the listener and every connection.
#[derive(Debug)]
#[must_use = "dropping the proxy stops it"]
pub struct FaultProxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl FaultProxy {
    /// Listens on `127.0.0.1:0`, forwarding to `upstream`, in pass-through.
    pub async fn start(upstream: SocketAddr) -> std::io::Result<Self> {
        Self::start_on("127.0.0.1:0".parse().expect("a socket address"), upstream).await
    }

    /// Listens on `listen` (port 0: any free port), forwarding to `upstream`, in pass-through.
    pub async fn start_on(listen: SocketAddr, upstream: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let accept = tokio::spawn(accept_loop(listener, upstream, Arc::clone(&shared)));
        Ok(Self {
            addr,
            upstream,
            shared,
            accept,
        })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Faults responses whose head arrives from now on.
    pub fn inject(&self, fault: Fault) {
        *lock(&self.shared.mode) = Some(Active {
            fault,
            left: fault.responses,
        });
    }

    /// Forwards responses whose head arrives from now on untouched.
    pub fn pass_through(&self) {
        *lock(&self.shared.mode) = None;
    }

    /// Holds back response heads arriving from now on as `delay` says.
    pub fn set_delay(&self, delay: Delay) {
        *lock(&self.shared.delay) = Some(DelayState {
            delay,
            rng: delay.seed,
        });
    }

    /// Forwards response heads arriving from now on without delay.
    pub fn no_delay(&self) {
        *lock(&self.shared.delay) = None;
    }

    /// Caps every client connection at `rate` bytes per second of what the proxy forwards to
    /// it (response heads and bodies), each connection on its own token bucket; `None` lifts
    /// the cap. Applies from the next bytes forwarded, on every connection.
    ///
    /// The bucket holds 4 ms of bytes at the rate, and bytes leave in pieces of 1 ms: `N`
    /// bytes on one connection take at least `N / rate - 4 ms`, however they are asked for.
    /// The [`Delay`] comes on top: a response's head waits its latency, then its bytes flow at
    /// the rate.
    pub fn set_rate_per_connection(&self, rate: Option<NonZeroU64>) {
        self.shared
            .rate
            .store(rate.map_or(0, NonZeroU64::get), Ordering::Relaxed);
    }

    /// The cap set by [`set_rate_per_connection`](Self::set_rate_per_connection), in bytes per
    /// second.
    pub fn rate_per_connection(&self) -> Option<NonZeroU64> {
        self.shared.rate()
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        let log = lock(&self.shared.log);
        Stats {
            connections: log.connections,
            requests: log.requests.len() as u64,
            responses: log.responses,
            faulted: log.faulted.len() as u64,
            delayed: log.delayed,
            stragglers: log.stragglers,
            peak_bodies_in_flight: log.peak_bodies_in_flight,
        }
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.shared.log).requests.clone()
    }

    /// Every faulted response so far, in order.
    pub fn faulted(&self) -> Vec<Faulted> {
        lock(&self.shared.log).faulted.clone()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        // The accept task owns the connections' `JoinSet`: aborting it aborts them all.
        self.accept.abort();
    }
}

impl std::fmt::Display for FaultProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "proxy {} -> {}", self.addr, self.upstream)
    }
}

#[derive(Debug, Default)]
struct Shared {
    mode: Mutex<Option<Active>>,
    delay: Mutex<Option<DelayState>>,
    /// Bytes per second per client connection; 0: no cap.
    rate: AtomicU64,
    log: Mutex<Log>,
}

#[derive(Debug)]
struct DelayState {
    delay: Delay,
    /// splitmix64 state: one draw per delayed response.
    rng: u64,
}

impl DelayState {
    /// The next response's delay, and whether it is a straggler.
    fn next(&mut self) -> (Duration, bool) {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let draw = (z >> 11) as f64 / (1u64 << 53) as f64;
        if draw < self.delay.straggler_share {
            (self.delay.latency + self.delay.straggler_extra, true)
        } else {
            (self.delay.latency, false)
        }
    }
}

#[derive(Debug)]
struct Active {
    fault: Fault,
    /// Responses still to fault (`None`: unlimited).
    left: Option<u64>,
}

#[derive(Debug, Default)]
struct Log {
    connections: u64,
    requests: Vec<Request>,
    responses: u64,
    faulted: Vec<Faulted>,
    delayed: u64,
    stragglers: u64,
    /// Response bodies on their way to clients now, and the most at once so far.
    bodies_in_flight: u64,
    peak_bodies_in_flight: u64,
}

/// A poisoned lock only means another connection task panicked; the data is still usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn rate(&self) -> Option<NonZeroU64> {
        NonZeroU64::new(self.rate.load(Ordering::Relaxed))
    }

    /// A response body of this connection started (`true`) or ended (`false`).
    fn body_in_flight(&self, started: bool) {
        let mut log = lock(&self.log);
        if started {
            log.bodies_in_flight += 1;
            log.peak_bodies_in_flight = log.peak_bodies_in_flight.max(log.bodies_in_flight);
        } else {
            debug_assert!(log.bodies_in_flight > 0, "a body ended that never started");
            log.bodies_in_flight -= 1;
        }
    }

    /// The delay of the next final response head, if a delay is set.
    fn response_delay(&self) -> Option<Duration> {
        let (delay, straggler) = lock(&self.delay).as_mut()?.next();
        let mut log = lock(&self.log);
        log.delayed += 1;
        log.stragglers += u64::from(straggler);
        Some(delay)
    }

    fn log_request(&self, head: &Head) -> Request {
        let mut log = lock(&self.log);
        let request = Request {
            id: log.requests.len() as u64,
            method: head.start_line.split(' ').next().unwrap_or("").to_owned(),
            range: head.header("range").and_then(parse_range),
        };
        log.requests.push(request.clone());
        request
    }

    /// Decides the fate of a 2xx response with a body of `body` bytes (`None`: up to the close).
    fn arm(&self, request: Option<&Request>, body: Option<u64>) -> Option<Fault> {
        let mut mode = lock(&self.mode);
        let active = mode.as_mut()?;
        if body.is_some_and(|len| len <= active.fault.after_body_bytes) {
            return None; // the body ends before the fault would strike
        }
        if let Some(left) = &mut active.left {
            if *left == 0 {
                return None;
            }
            *left -= 1;
        }
        let fault = active.fault;
        drop(mode);
        lock(&self.log).faulted.push(Faulted {
            request: request.cloned(),
            fault,
        });
        Some(fault)
    }
}

/// `bytes=A-B` or `bytes=A-`.
fn parse_range(value: &str) -> Option<(u64, Option<u64>)> {
    let (first, last) = value.trim().strip_prefix("bytes=")?.split_once('-')?;
    let last = match last.trim() {
        "" => None,
        last => Some(last.parse().ok()?),
    };
    Some((first.trim().parse().ok()?, last))
}

async fn accept_loop(listener: TcpListener, upstream: SocketAddr, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((client, _)) => {
                    lock(&shared.log).connections += 1;
                    connections.spawn(serve(client, upstream, Arc::clone(&shared)));
                }
                // E.g. out of file descriptors: try again shortly.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// How a connection ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// Close both sides now.
    Close,
    /// Send the client an RST.
    Reset,
    /// Forward nothing more to the client; close once the client closes.
    Hold,
}

async fn serve(mut client: TcpStream, upstream: SocketAddr, shared: Arc<Shared>) {
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return; // the client sees its connection closed
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    // The requests forwarded and not yet answered, oldest first.
    let pending = Mutex::new(VecDeque::new());
    let ending = {
        let (client_read, client_write) = client.split();
        let (server_read, server_write) = server.split();
        let mut up = std::pin::pin!(forward_requests(
            client_read,
            server_write,
            &shared,
            &pending
        ));
        let down = forward_responses(server_read, client_write, &shared, &pending);
        let ending = tokio::select! {
            () = &mut up => Ending::Close,
            ending = down => ending,
        };
        if ending == Ending::Hold {
            up.await; // until the client closes
        }
        ending
    };
    if ending == Ending::Reset {
        let _ = client.set_zero_linger();
    }
    // Dropping `client` closes it: with a zero linger, as an RST.
}

/// Client to server, untouched, logging each request head. Returns when the client closes
/// (or fails); if the server stops taking bytes, the client's are read and dropped.
async fn forward_requests(
    mut from: ReadHalf<'_>,
    mut to: WriteHalf<'_>,
    shared: &Shared,
    pending: &Mutex<VecDeque<Request>>,
) {
    let mut buf = vec![0u8; 16 << 10];
    let mut framing = Framing::default();
    let mut server_open = true;
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut data = &buf[..n];
        while !data.is_empty() {
            let (taken, head) = framing.take_request(data);
            data = &data[taken..];
            if let Some(head) = head {
                // Queued before the server can see it, so it is there when the answer comes.
                let request = shared.log_request(&head);
                lock(pending).push_back(request);
            }
        }
        if server_open && to.write_all(&buf[..n]).await.is_err() {
            server_open = false;
        }
    }
    let _ = to.shutdown().await;
}

/// Server to client, applying the fault armed for each response.
async fn forward_responses(
    mut from: ReadHalf<'_>,
    mut to: WriteHalf<'_>,
    shared: &Shared,
    pending: &Mutex<VecDeque<Request>>,
) -> Ending {
    let mut buf = vec![0u8; 64 << 10];
    let mut framing = Framing::default();
    let mut link = Link {
        shared,
        bucket: TokenBucket::new(),
        in_body: false,
    };
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) => {
                let _ = to.shutdown().await;
                return Ending::Hold;
            }
            Ok(n) => n,
            Err(_) => return Ending::Close,
        };
        let mut data = &buf[..n];
        while !data.is_empty() {
            let step = framing.step_response(data, shared, pending);
            link.in_body(framing.in_body());
            if let Some(delay) = step.delay {
                tokio::time::sleep(delay).await;
            }
            if link
                .send(&mut to, &data[..step.forward], step.pace)
                .await
                .is_err()
            {
                return Ending::Close;
            }
            data = &data[step.forward..];
            match step.then {
                None => {}
                Some(FaultKind::Reset) => return Ending::Reset,
                Some(FaultKind::Truncate) => {
                    let _ = to.shutdown().await;
                    return Ending::Hold;
                }
                Some(FaultKind::Stall) => return Ending::Hold,
                Some(FaultKind::Drip { .. }) => unreachable!("a drip paces, it does not end"),
            }
        }
    }
}

/// The server-to-client side of one connection: its rate cap, and whether a response body is
/// on its way (counted in the proxy's bodies in flight until it ends, or the connection does).
struct Link<'a> {
    shared: &'a Shared,
    bucket: TokenBucket,
    in_body: bool,
}

impl Link<'_> {
    /// Notes whether a response body is on its way now.
    fn in_body(&mut self, now: bool) {
        if now != self.in_body {
            self.in_body = now;
            self.shared.body_in_flight(now);
        }
    }

    /// Writes `bytes`, `pace.0` at a time with `pace.1` between pieces if paced, and no faster
    /// than the proxy's rate per connection if one is set.
    async fn send(
        &mut self,
        to: &mut WriteHalf<'_>,
        mut bytes: &[u8],
        pace: Option<(usize, Duration)>,
    ) -> std::io::Result<()> {
        let (piece, every) = pace.unwrap_or((usize::MAX, Duration::ZERO));
        while !bytes.is_empty() {
            let mut n = piece.max(1).min(bytes.len());
            if let Some(rate) = self.shared.rate() {
                // Read again for every piece: a cap set or lifted applies at once.
                n = n.min(TokenBucket::piece(rate.get(), bytes.len()));
                if let Some(at) = self.bucket.reserve(Instant::now(), n, rate.get()) {
                    tokio::time::sleep_until(at.into()).await;
                }
            }
            to.write_all(&bytes[..n]).await?;
            bytes = &bytes[n..];
            if pace.is_some() {
                tokio::time::sleep(every).await;
            }
        }
        Ok(())
    }
}

impl Drop for Link<'_> {
    fn drop(&mut self) {
        self.in_body(false); // the connection ends: so does its body
    }
}

/// Where one direction of a connection is in the HTTP/1.1 framing.
#[derive(Debug)]
enum Framing {
    Head(HeadReader),
    Body {
        /// Body bytes still to come; `None`: up to the close.
        left: Option<u64>,
        /// Body bytes forwarded so far.
        sent: u64,
        /// The fault still to strike in this body.
        fault: Option<Fault>,
        /// Pacing for the rest of this body, once a drip struck.
        pace: Option<(usize, Duration)>,
    },
    /// Framing lost (chunked, or an oversized head): everything passes.
    Opaque,
}

impl Default for Framing {
    fn default() -> Self {
        Framing::Head(HeadReader::default())
    }
}

impl Framing {
    /// Inside a response body (or a message running to the close).
    fn in_body(&self) -> bool {
        matches!(self, Framing::Body { .. })
    }
}

/// What to do with the next bytes of a response.
struct Step {
    /// How many to forward.
    forward: usize,
    /// At what pace.
    pace: Option<(usize, Duration)>,
    /// What to do after forwarding them (never a drip: that becomes the pace).
    then: Option<FaultKind>,
    /// How long to wait before forwarding them (a final response head under a [`Delay`]).
    delay: Option<Duration>,
}

impl Framing {
    /// Consumes request bytes up to the end of a head or body; returns how many, and the head
    /// if one just ended.
    fn take_request(&mut self, data: &[u8]) -> (usize, Option<Head>) {
        match self {
            Framing::Opaque => (data.len(), None),
            Framing::Head(reader) => {
                let (taken, head) = reader.take(data);
                match head {
                    None if reader.oversized() => *self = Framing::Opaque,
                    None => {}
                    Some(ref head) => {
                        if head.chunked() {
                            *self = Framing::Opaque;
                        } else if let Some(len) = head.content_length().filter(|&len| len > 0) {
                            *self = Framing::Body {
                                left: Some(len),
                                sent: 0,
                                fault: None,
                                pace: None,
                            };
                        }
                    }
                }
                (taken, head)
            }
            Framing::Body { left, .. } => {
                let left_now = left.unwrap_or(u64::MAX);
                let taken = left_now.min(data.len() as u64);
                if left_now == taken {
                    *self = Framing::default();
                } else {
                    *left = Some(left_now - taken);
                }
                (taken as usize, None)
            }
        }
    }

    /// Consumes response bytes up to the end of a head, a body, or the point where a fault
    /// strikes.
    fn step_response(
        &mut self,
        data: &[u8],
        shared: &Shared,
        pending: &Mutex<VecDeque<Request>>,
    ) -> Step {
        let plain = |forward| Step {
            forward,
            pace: None,
            then: None,
            delay: None,
        };
        match self {
            Framing::Opaque => plain(data.len()),
            Framing::Head(reader) => {
                let (taken, head) = reader.take(data);
                let Some(head) = head else {
                    if reader.oversized() {
                        *self = Framing::Opaque;
                    }
                    return plain(taken);
                };
                let status = head.status();
                if (100..200).contains(&status) {
                    return plain(taken); // an interim response: the final one follows
                }
                let request = lock(pending).pop_front();
                lock(&shared.log).responses += 1;
                let delayed = |forward| Step {
                    delay: shared.response_delay(),
                    ..plain(forward)
                };
                let answers_head = request.as_ref().is_some_and(|r| r.method == "HEAD");
                let body = if answers_head || status == 204 || status == 304 {
                    Some(0)
                } else if head.chunked() {
                    *self = Framing::Opaque;
                    return delayed(taken);
                } else {
                    head.content_length() // `None`: the body runs to the close
                };
                if body == Some(0) {
                    return delayed(taken); // the next head follows
                }
                let fault = if (200..300).contains(&status) {
                    shared.arm(request.as_ref(), body)
                } else {
                    None
                };
                *self = Framing::Body {
                    left: body,
                    sent: 0,
                    fault,
                    pace: None,
                };
                delayed(taken)
            }
            Framing::Body {
                left,
                sent,
                fault,
                pace,
            } => {
                let left_now = left.unwrap_or(u64::MAX);
                let mut forward = left_now.min(data.len() as u64);
                let paced = *pace;
                let mut then = None;
                if let Some(f) = *fault {
                    if *sent + forward > f.after_body_bytes {
                        forward = f.after_body_bytes - *sent;
                        *fault = None;
                        match f.kind {
                            FaultKind::Drip { bytes, every } => *pace = Some((bytes, every)),
                            kind => then = Some(kind),
                        }
                    }
                }
                *sent += forward;
                if left.is_some() {
                    if left_now == forward {
                        *self = Framing::default();
                    } else {
                        *left = Some(left_now - forward);
                    }
                }
                Step {
                    forward: forward as usize,
                    pace: paced,
                    then,
                    delay: None,
                }
            }
        }
    }
}

/// Collects a message head up to its blank line.
#[derive(Debug, Default)]
struct HeadReader {
    buf: Vec<u8>,
}

impl HeadReader {
    /// Heads longer than this are not HTTP as the tests know it: give up the framing.
    const MAX: usize = 64 << 10;

    /// Takes bytes of `data` up to the end of the head; returns how many, and the head if it
    /// ended.
    fn take(&mut self, data: &[u8]) -> (usize, Option<Head>) {
        let had = self.buf.len();
        let from = had.saturating_sub(3);
        self.buf.extend_from_slice(data);
        let Some(at) = self.buf[from..].windows(4).position(|w| w == b"\r\n\r\n") else {
            return (data.len(), None);
        };
        let end = from + at + 4;
        let head = Head::parse(&self.buf[..end]);
        self.buf.clear();
        (end - had, Some(head))
    }

    fn oversized(&self) -> bool {
        self.buf.len() > Self::MAX
    }
}

/// A parsed message head: the start line and the headers (names in lower case).
#[derive(Debug)]
struct Head {
    start_line: String,
    headers: Vec<(String, String)>,
}

impl Head {
    fn parse(bytes: &[u8]) -> Self {
        let text = String::from_utf8_lossy(bytes);
        let mut lines = text.split("\r\n");
        let start_line = lines.next().unwrap_or("").to_owned();
        let headers = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
            .collect();
        Self {
            start_line,
            headers,
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The status code of a response head (0 if it has none).
    fn status(&self) -> u16 {
        self.start_line
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or(0)
    }

    fn content_length(&self) -> Option<u64> {
        self.header("content-length")?.parse().ok()
    }

    fn chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    }
}
