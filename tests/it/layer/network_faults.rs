//! Network faults between `ObjectStoreSource` and real servers on 127.0.0.1: a fault-injecting
//! TCP proxy (`tests/fault_proxy/`) sits in front of nginx (HTTP) and the S3 server and resets,
//! stalls, truncates or slowly drips response bodies, while an `AsyncBufferedInput` with
//! read-ahead reads the 5 MB object in mixed sizes.
//!
//! Every fault must end in one of two ways: the read completes with exactly the right bytes
//! (`object_store` retried), or it fails within the documented time to fail of
//! `ObjectStoreSource` (a server that stops answering mid-read: about 5 s, at most 8 s), with
//! the position unchanged. Never wrong bytes, never a hang. Then, once the outage has lasted
//! [`OUTAGE_TAIL`] longer, the proxy passes everything again, and the *same* input reads the
//! same range, and the rest of the object, correctly.
//!
//! Times are asserted against the documented 8 s plus a 3 s margin for loaded CI machines
//! ([`CI_MARGIN`]); every read runs under a [`HANG`] timeout that fails the test loudly. Each
//! test prints one line with its outcome and times (see them with `--nocapture`);
//! `ABI_FAULTS_DEBUG=1` also prints every request the proxy saw and which it faulted.
//!
//! The server tests are `#[ignore]`d in a plain `cargo test`; `.ci/run` starts the servers and
//! runs them with `--include-ignored`. By hand, as in `tests/it/source/object_store.rs`:
//!
//! ```text
//! mkdir -p /tmp/abi-data && head -c 5000000 /dev/urandom > /tmp/abi-data/blob.bin
//! set -a; eval "$(scripts/http-server.sh up /tmp/abi-data)"; eval "$(scripts/s3-server.sh up /tmp/abi-s3)"; set +a
//! scripts/s3-server.sh upload /tmp/abi-data/blob.bin blob.bin
//! ABI_OBJECT_FILE=/tmp/abi-data/blob.bin ABI_HTTP_URL=$HTTP_URL ABI_S3_BUCKET=$S3_BUCKET \
//!   cargo test --features object-store --test it -- --include-ignored layer::network_faults:: --nocapture
//! ```
//!
//! The proxy's own tests (`proxy_*`) need no server and always run.
#![cfg(feature = "object-store")]

use crate::fault_proxy;

use std::io::{self, ErrorKind};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use abi_testkit::chain;
use async_buffered_input::source::ObjectStoreSource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};
use bytes::Bytes;
use fault_proxy::{read_head, Fault, FaultKind, FaultProxy, Faulted, Request};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// `ObjectStoreSource`'s documented time to fail for a server that stops answering mid-read:
/// 5 s per request, no retry started after 3 s, so "about 5 s (at most 8 s)".
const BOUND: Duration = Duration::from_secs(8);
/// Slack on top of [`BOUND`] for a loaded CI machine (2 shared cores, builds next door).
const CI_MARGIN: Duration = Duration::from_secs(3);
/// How long the fault stays on after the first failed read: longer than the retries of a
/// reset or truncated request take (about 0.3 s), so that every request started during the
/// outage has ended before the proxy passes again.
const OUTAGE_TAIL: Duration = Duration::from_secs(1);
/// A read still pending after this is a hang: the test fails instead of waiting forever.
const HANG: Duration = Duration::from_secs(40);

/// The window: smaller than most reads, so both the window path and direct reads run.
const CAPACITY: usize = 32 << 10;
/// Read in pass-through before the fault, so the fault strikes mid-way through a sequential
/// read with read-ahead chunks held and in flight.
const WARM_UP: usize = 200_000;
/// Read sizes, in turn: below, at and far above the window and the read-ahead chunk.
const SIZES: [usize; 5] = [8_191, 300_000, 1, 65_536, 777_777];
/// Where "mid-body" faults strike: well inside a read-ahead chunk.
const MID_BODY: u64 = 10_000;

fn read_ahead() -> ReadAhead {
    ReadAhead::new(128 << 10, 3)
}

type Input = AsyncBufferedInput<PositionalFetch<ObjectStoreSource>>;

// ---------------------------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------------------------

/// What a case must show, beyond "right bytes or an error within the bound, never wrong bytes,
/// and the same input recovers".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// Only that.
    Contract,
    /// Also that `object_store` retried a faulted request, asking again from where its body
    /// broke off.
    Retried,
    /// The reads complete (a single fault is retried), and the retry asks again from where the
    /// body broke off.
    RightBytesAfterRetry,
    /// The reads complete: a slow but steady server is no failure.
    RightBytes,
}

const RESET: FaultKind = FaultKind::Reset;
const STALL: FaultKind = FaultKind::Stall;
const TRUNCATE: FaultKind = FaultKind::Truncate;
/// 320 B/s: no 128 KiB chunk can arrive within the 5 s request timeout.
const SLOW_DRIP: FaultKind = FaultKind::Drip {
    bytes: 16,
    every: Duration::from_millis(50),
};
/// About 0.5 MB/s per connection, in 1 KiB pieces: slow and fragmented, but steady.
const STEADY_DRIP: FaultKind = FaultKind::Drip {
    bytes: 1024,
    every: Duration::from_millis(1),
};

/// One module per case, with a test per server: `reset_mid_body::http`, `reset_mid_body::s3`.
macro_rules! fault_cases {
    ($($(#[$doc:meta])* $name:ident: $fault:expr, $expect:expr;)*) => {$(
        $(#[$doc])*
        mod $name {
            use super::*;

            #[tokio::test]
            #[ignore = "needs nginx and an S3 server on 127.0.0.1: .ci/run starts them"]
            async fn http() {
                run(Server::Http, stringify!($name), $fault, $expect).await;
            }

            #[tokio::test]
            #[ignore = "needs nginx and an S3 server on 127.0.0.1: .ci/run starts them"]
            async fn s3() {
                run(Server::S3, stringify!($name), $fault, $expect).await;
            }
        }
    )*};
}

fault_cases! {
    /// Every response is reset after 10 000 body bytes: the retries are reset too.
    reset_mid_body: Fault::every_response(RESET, MID_BODY), Expect::Retried;
    /// Every response is reset right after its head.
    reset_after_headers: Fault::every_response(RESET, 0), Expect::Retried;
    /// One response is reset mid-body: `object_store` resumes it.
    reset_once: Fault::first_responses(1, RESET, MID_BODY), Expect::RightBytesAfterRetry;
    /// Every response stalls after 10 000 body bytes: the request timeout (5 s) ends it.
    stall_mid_body: Fault::every_response(STALL, MID_BODY), Expect::Contract;
    /// One response stalls mid-body; the 5 s timeout is past the 3 s in which retries start.
    stall_once: Fault::first_responses(1, STALL, MID_BODY), Expect::Contract;
    /// Every response ends cleanly after 10 000 body bytes: the retries are cut short too.
    truncate_mid_body: Fault::every_response(TRUNCATE, MID_BODY), Expect::Retried;
    /// One response ends cleanly mid-body: `object_store` resumes it.
    truncate_once: Fault::first_responses(1, TRUNCATE, MID_BODY), Expect::RightBytesAfterRetry;
    /// Every response drips at 320 B/s after 10 000 body bytes: the request timeout ends it.
    slow_drip_mid_body: Fault::every_response(SLOW_DRIP, MID_BODY), Expect::Contract;
    /// Every body arrives in 1 KiB pieces, 1 ms apart.
    steady_drip: Fault::every_response(STEADY_DRIP, 0), Expect::RightBytes;
}

// ---------------------------------------------------------------------------------------------
// The servers
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Server {
    Http,
    S3,
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "{name} is not set: this test needs the servers; see the top of tests/it/layer/network_faults.rs"
        )
    })
}

/// The object's name on the servers and its bytes (`ABI_OBJECT_FILE`).
fn object() -> (String, Vec<u8>) {
    let path = std::path::PathBuf::from(env("ABI_OBJECT_FILE"));
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    assert!(
        data.len() > 2 * WARM_UP + SIZES.iter().sum::<usize>(),
        "{} is too small to exercise read-ahead under faults",
        path.display()
    );
    (name, data)
}

/// `http://127.0.0.1:PORT[/...]` as a socket address.
fn socket_addr(url: &str) -> SocketAddr {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let host_port = rest.split('/').next().unwrap_or(rest);
    host_port
        .parse()
        .unwrap_or_else(|e| panic!("{url:?}: not http://IP:PORT: {e}"))
}

impl Server {
    fn upstream(self) -> SocketAddr {
        match self {
            Server::Http => socket_addr(&env("ABI_HTTP_URL")),
            Server::S3 => socket_addr(&env("AWS_ENDPOINT")),
        }
    }

    /// Opens the object through the proxy at `proxy`, with `ObjectStoreSource`'s documented
    /// timeouts and retries; returns the source and the URL its errors name.
    async fn open(self, proxy: SocketAddr, name: &str) -> (ObjectStoreSource, String) {
        match self {
            Server::Http => {
                let url = format!("http://{proxy}/{name}");
                let source = ObjectStoreSource::from_url(&url)
                    .await
                    .unwrap_or_else(|e| panic!("open {url}: {}", chain(&e)));
                (source, url)
            }
            Server::S3 => {
                // As `from_url("s3://...")` builds it (see tests/it/source/object_store.rs), with
                // the endpoint moved to the proxy; SigV4 signs the proxy's Host, which the
                // proxy forwards unchanged.
                let bucket = env("ABI_S3_BUCKET");
                let url = format!("s3://{bucket}/{name}");
                let store = object_store::aws::AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .with_endpoint(format!("http://{proxy}"))
                    .with_virtual_hosted_style_request(false)
                    .with_client_options(ObjectStoreSource::client_options())
                    .with_retry(ObjectStoreSource::retry_config())
                    .build()
                    .unwrap_or_else(|e| panic!("S3 store for {url} via {proxy}: {e}"));
                let source = ObjectStoreSource::open(
                    Arc::new(store),
                    object_store::path::Path::from(name),
                    url.clone(),
                )
                .await
                .unwrap_or_else(|e| panic!("open {url} via {proxy}: {}", chain(&e)));
                (source, url)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

/// `read_bytes_owned(len)`, timed, failing the test if it hangs.
async fn timed_read(input: &mut Input, len: usize, what: &str) -> (io::Result<Bytes>, Duration) {
    let at = input.position();
    let started = Instant::now();
    let result = tokio::time::timeout(HANG, input.read_bytes_owned(len)).await;
    let took = started.elapsed();
    match result {
        Ok(result) => (result, took),
        Err(_) => panic!(
            "{what}: HANG: a read of {len} bytes at {at} was still pending after {HANG:?} \
             (documented time to fail: {BOUND:?})"
        ),
    }
}

#[track_caller]
fn assert_bytes(got: &[u8], data: &[u8], at: usize, what: &str) {
    let want = &data[at..at + got.len()];
    if got != want {
        let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap();
        panic!(
            "{what}: WRONG BYTES in the read of {} at {at}: first difference at offset {}",
            got.len(),
            at + first
        );
    }
}

/// A read that failed under the fault.
#[derive(Debug)]
struct Failure {
    at: usize,
    len: usize,
    took: Duration,
    causes: String,
}

/// Opens the object through a proxy, reads [`WARM_UP`] bytes in pass-through, turns `fault`
/// on and reads on to the end or the first error, checking bytes, time and position; then
/// turns the fault off and reads the same range and the rest through the same input.
async fn run(server: Server, case: &str, fault: Fault, expect: Expect) {
    let what = format!("{server:?} {case}");
    let (name, data) = object();
    let proxy = FaultProxy::start(server.upstream()).await.unwrap();
    let (source, url) = server.open(proxy.addr(), &name).await;
    assert_eq!(source.length(), data.len() as u64, "{what}: length");
    let fetch = PositionalFetch::new(source).with_read_ahead(read_ahead());
    let mut input = AsyncBufferedInput::with_capacity(CAPACITY, fetch);

    let (warm, _) = timed_read(&mut input, WARM_UP, &what).await;
    let warm = warm.unwrap_or_else(|e| panic!("{what}: warm-up in pass-through: {}", chain(&e)));
    assert_bytes(&warm, &data, 0, &what);

    // The fault phase.
    proxy.inject(fault);
    let before = proxy.stats();
    let phase = Instant::now();
    let mut pos = WARM_UP;
    let mut slowest_ok = Duration::ZERO;
    let mut failure = None;
    for &size in SIZES.iter().cycle() {
        if pos == data.len() {
            break;
        }
        let len = size.min(data.len() - pos);
        let (result, took) = timed_read(&mut input, len, &what).await;
        match result {
            Ok(got) => {
                assert_eq!(got.len(), len, "{what}: read_bytes_owned({len}) length");
                assert_bytes(&got, &data, pos, &what);
                pos += len;
                assert_eq!(
                    input.position(),
                    pos as u64,
                    "{what}: position after a read"
                );
                slowest_ok = slowest_ok.max(took);
            }
            Err(e) => {
                let causes = chain(&e);
                assert!(
                    took <= BOUND + CI_MARGIN,
                    "{what}: TOO LATE: the read of {len} at {pos} failed after {took:?}, past \
                     the documented {BOUND:?} (+ {CI_MARGIN:?} CI margin): {causes}"
                );
                assert_eq!(
                    input.position(),
                    pos as u64,
                    "{what}: a failed read consumes nothing: {causes}"
                );
                assert!(
                    causes.contains(&url),
                    "{what}: the error names the URL {url}: {causes}"
                );
                failure = Some(Failure {
                    at: pos,
                    len,
                    took,
                    causes,
                });
                break;
            }
        }
    }
    let phase_took = phase.elapsed();
    if failure.is_some() {
        // The outage outlasts the first error, as real ones do: every request started during
        // it has ended (failed) before the server is back.
        tokio::time::sleep(OUTAGE_TAIL).await;
    }
    let during = proxy.stats();
    let faulted = proxy.faulted();
    let requests = proxy.requests();

    // Back to pass-through: the same input reads the same range, then the rest.
    proxy.pass_through();
    let (again_at, again_len) = match &failure {
        Some(f) => (f.at, f.len),
        None => {
            input.seek_to(WARM_UP as u64);
            (WARM_UP, data.len() - WARM_UP)
        }
    };
    let recovery = Instant::now();
    let watch = Watch {
        what: &what,
        proxy: &proxy,
        since: proxy.stats().requests as usize,
    };
    let (again, took) = timed_read(&mut input, again_len, &what).await;
    let again = again.unwrap_or_else(|e| watch.no_recovery(again_len, again_at, took, &e));
    assert_bytes(&again, &data, again_at, &what);
    let mut pos = again_at + again_len;
    while pos < data.len() {
        let len = (512 << 10).min(data.len() - pos);
        let (got, took) = timed_read(&mut input, len, &what).await;
        let got = got.unwrap_or_else(|e| watch.no_recovery(len, pos, took, &e));
        assert_bytes(&got, &data, pos, &what);
        pos += len;
    }
    assert_eq!(input.position(), data.len() as u64, "{what}: at the end");
    let end = input.read_byte().await.unwrap_err();
    assert_eq!(end.kind(), ErrorKind::UnexpectedEof, "{what}: past the end");
    let recovery_took = recovery.elapsed();

    let retried = retries(&faulted, &requests);
    let outcome = match &failure {
        Some(f) => format!(
            "read of {} at {} FAILED after {:.2} s: {}",
            f.len,
            f.at,
            f.took.as_secs_f64(),
            f.causes
        ),
        None => format!(
            "all reads RIGHT BYTES (slowest {:.2} s)",
            slowest_ok.as_secs_f64()
        ),
    };
    eprintln!(
        "[{what}] {outcome}; fault phase {:.2} s, {} requests on {} connections, {} faulted, \
         {} resumed by a retry; recovery {:.2} s, right bytes",
        phase_took.as_secs_f64(),
        during.requests - before.requests,
        during.connections - before.connections,
        during.faulted - before.faulted,
        retried.len(),
        recovery_took.as_secs_f64(),
    );

    if std::env::var_os("ABI_FAULTS_DEBUG").is_some() {
        let struck: Vec<Request> = faulted.iter().flat_map(|f| f.request.clone()).collect();
        eprintln!("[{what}] requests {}", ranges(&requests));
        eprintln!("[{what}] faulted {}", ranges(&struck));
    }
    // The fault must have struck, or the case proves nothing.
    assert!(
        during.faulted > before.faulted,
        "{what}: the fault never struck ({} requests in the fault phase): the case is vacuous",
        during.requests - before.requests
    );
    match expect {
        Expect::Contract => {}
        Expect::Retried => assert!(
            !retried.is_empty(),
            "{what}: object_store never retried a faulted request; faulted: {faulted:?}"
        ),
        Expect::RightBytesAfterRetry | Expect::RightBytes => {
            if let Some(f) = &failure {
                panic!(
                    "{what}: the read of {} at {} failed after {:?}, where it should have \
                     completed: {}",
                    f.len, f.at, f.took, f.causes
                );
            }
            if expect == Expect::RightBytesAfterRetry {
                assert!(
                    !retried.is_empty(),
                    "{what}: no retry resumed the faulted response; faulted: {faulted:?}"
                );
            }
        }
    }
}

/// What the recovery phase needs to explain a failure.
struct Watch<'a> {
    what: &'a str,
    proxy: &'a FaultProxy,
    /// The first request after the fault ended.
    since: usize,
}

impl Watch<'_> {
    /// Fails the test: after the fault ended, the same input could not read `len` at `at`.
    fn no_recovery(&self, len: usize, at: usize, took: Duration, e: &io::Error) -> ! {
        let struck: Vec<Request> = (self.proxy.faulted().into_iter())
            .flat_map(|f| f.request)
            .collect();
        panic!(
            "{}: NO RECOVERY: after the fault ended, the same input failed to read {len} at \
             {at}, after {took:?}: {}\n  requests the proxy saw since the fault ended: {}\n  \
             requests it faulted: {}",
            self.what,
            chain(e),
            ranges(&self.proxy.requests()[self.since..]),
            ranges(&struck),
        )
    }
}

/// `#id A-B` for each request, for messages.
fn ranges(requests: &[Request]) -> String {
    let each: Vec<String> = requests
        .iter()
        .map(|r| match r.range {
            Some((a, Some(b))) => format!("#{} {} {a}-{b}", r.id, r.method),
            Some((a, None)) => format!("#{} {} {a}-", r.id, r.method),
            None => format!("#{} {}", r.id, r.method),
        })
        .collect();
    format!("[{}]", each.join(", "))
}

/// The faulted requests that a later request asked again, for the same range or its tail
/// (starting no later than where the fault struck): `object_store`'s retries.
fn retries<'a>(faulted: &'a [Faulted], requests: &[Request]) -> Vec<&'a Faulted> {
    faulted
        .iter()
        .filter(|f| {
            let Some(Request {
                id,
                range: Some((start, end)),
                ..
            }) = &f.request
            else {
                return false;
            };
            let struck = start + f.fault.after_body_bytes;
            requests.iter().any(|r| {
                r.id > *id
                    && r.range
                        .is_some_and(|(s, e)| e == *end && (*start..=struck).contains(&s))
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The proxy's own tests: against a tiny origin in the test, no server needed
// ---------------------------------------------------------------------------------------------

const ORIGIN_BODY: usize = 100_000;

fn origin_byte(i: usize) -> u8 {
    (i % 251) as u8
}

/// An HTTP/1.1 origin on 127.0.0.1 that answers every request on a connection with a 206 of
/// [`ORIGIN_BODY`] bytes (no body for `HEAD`), keeping the connection open.
async fn origin() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let body: Vec<u8> = (0..ORIGIN_BODY).map(origin_byte).collect();
        while let Ok((mut conn, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while let Some(request) = read_head(&mut conn, &mut seen).await {
                    let head_request = request.starts_with("HEAD ");
                    let head = format!(
                        "HTTP/1.1 206 Partial Content\r\nContent-Length: {ORIGIN_BODY}\r\n\
                         Content-Range: bytes 0-{}/{ORIGIN_BODY}\r\nETag: \"x\"\r\n\r\n",
                        ORIGIN_BODY - 1
                    );
                    if conn.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    if !head_request && conn.write_all(&body).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// Sends one request and reads the response head; returns whatever body bytes came with it.
async fn request(conn: &mut TcpStream, method: &str) -> Vec<u8> {
    let request = format!("{method} /x HTTP/1.1\r\nHost: t\r\nRange: bytes=0-99999\r\n\r\n");
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    read_head(conn, &mut got)
        .await
        .expect("the connection closed inside a response head");
    got
}

/// Reads body bytes until `want` are there, the connection ends, or nothing comes for
/// `quiet`; returns them and how it ended.
async fn read_body(
    conn: &mut TcpStream,
    mut body: Vec<u8>,
    want: usize,
    quiet: Duration,
) -> (Vec<u8>, Result<&'static str, io::ErrorKind>) {
    let mut buf = [0u8; 8192];
    while body.len() < want {
        match tokio::time::timeout(quiet, conn.read(&mut buf)).await {
            Err(_) => return (body, Ok("quiet")),
            Ok(Ok(0)) => return (body, Ok("eof")),
            Ok(Ok(n)) => body.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => return (body, Err(e.kind())),
        }
    }
    (body, Ok("complete"))
}

fn assert_origin_bytes(body: &[u8]) {
    for (i, &b) in body.iter().enumerate() {
        assert_eq!(b, origin_byte(i), "body byte {i}");
    }
}

#[tokio::test]
async fn proxy_passes_through_and_follows_the_framing() {
    let proxy = FaultProxy::start(origin().await).await.unwrap();
    let mut conn = TcpStream::connect(proxy.addr()).await.unwrap();
    // HEAD has no body: the proxy must not count the next response's bytes as its body.
    proxy.inject(Fault::every_response(TRUNCATE, 1000));
    let body = request(&mut conn, "HEAD").await;
    assert!(body.is_empty());
    proxy.pass_through();
    for _ in 0..3 {
        let body = request(&mut conn, "GET").await;
        let (body, end) = read_body(&mut conn, body, ORIGIN_BODY, Duration::from_secs(5)).await;
        assert_eq!(end, Ok("complete"));
        assert_eq!(body.len(), ORIGIN_BODY);
        assert_origin_bytes(&body);
    }
    let stats = proxy.stats();
    assert_eq!(
        (
            stats.connections,
            stats.requests,
            stats.responses,
            stats.faulted
        ),
        (1, 4, 4, 0),
        "{stats:?}"
    );
    let requests = proxy.requests();
    assert_eq!(requests[0].method, "HEAD");
    assert_eq!(requests[3].range, Some((0, Some(99_999))));
}

#[tokio::test]
async fn proxy_faults_strike_after_the_chosen_body_bytes() {
    let proxy = FaultProxy::start(origin().await).await.unwrap();
    let quiet = Duration::from_millis(300);

    // Truncate: exactly 1000 body bytes, then a clean end.
    proxy.inject(Fault::every_response(TRUNCATE, 1000));
    let mut conn = TcpStream::connect(proxy.addr()).await.unwrap();
    let body = request(&mut conn, "GET").await;
    let (body, end) = read_body(&mut conn, body, ORIGIN_BODY, Duration::from_secs(5)).await;
    assert_eq!((body.len(), end), (1000, Ok("eof")));
    assert_origin_bytes(&body);

    // Reset: at most 1000 body bytes, then ECONNRESET.
    proxy.inject(Fault::every_response(RESET, 1000));
    let mut conn = TcpStream::connect(proxy.addr()).await.unwrap();
    let body = request(&mut conn, "GET").await;
    let (body, end) = read_body(&mut conn, body, ORIGIN_BODY, Duration::from_secs(5)).await;
    assert!(body.len() <= 1000, "{}", body.len());
    assert_eq!(end, Err(ErrorKind::ConnectionReset));
    assert_origin_bytes(&body);

    // Stall: 1000 body bytes, then nothing, with the connection still open.
    proxy.inject(Fault::every_response(STALL, 1000));
    let mut conn = TcpStream::connect(proxy.addr()).await.unwrap();
    let body = request(&mut conn, "GET").await;
    let (body, end) = read_body(&mut conn, body, ORIGIN_BODY, quiet).await;
    assert_eq!((body.len(), end), (1000, Ok("quiet")));

    // Drip: 1000 body bytes at once, then 10 at a time, 20 ms apart.
    proxy.inject(Fault::every_response(
        FaultKind::Drip {
            bytes: 10,
            every: Duration::from_millis(20),
        },
        1000,
    ));
    let mut conn = TcpStream::connect(proxy.addr()).await.unwrap();
    let body = request(&mut conn, "GET").await;
    let (body, _) = read_body(&mut conn, body, 1000, quiet).await;
    assert!((1000..=1010).contains(&body.len()), "{}", body.len());
    let started = Instant::now();
    let (body, end) = read_body(&mut conn, body, 1100, Duration::from_secs(5)).await;
    assert_eq!(end, Ok("complete"));
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "100 bytes in 10-byte drips took {:?}",
        started.elapsed()
    );
    assert_origin_bytes(&body);

    // Once, right after the head: only the first response is faulted.
    proxy.inject(Fault::first_responses(1, TRUNCATE, 0));
    let mut conn = TcpStream::connect(proxy.addr()).await.unwrap();
    let body = request(&mut conn, "GET").await;
    let (body, end) = read_body(&mut conn, body, ORIGIN_BODY, Duration::from_secs(5)).await;
    assert_eq!((body.len(), end), (0, Ok("eof")));
    let mut conn = TcpStream::connect(proxy.addr()).await.unwrap();
    let body = request(&mut conn, "GET").await;
    let (body, end) = read_body(&mut conn, body, ORIGIN_BODY, Duration::from_secs(5)).await;
    assert_eq!((body.len(), end), (ORIGIN_BODY, Ok("complete")));

    let stats = proxy.stats();
    assert_eq!((stats.connections, stats.faulted), (6, 5), "{stats:?}");
    assert!(proxy.faulted().iter().all(|f| f.request.is_some()));
}
