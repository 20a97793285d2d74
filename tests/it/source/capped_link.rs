//! Read-ahead against one stream over a link like S3's: nginx behind the fault proxy capping
//! each connection at 20 MB/s and holding each response 2 ms. One streaming `GET` cannot go
//! faster than the cap; `AsyncBufferedInput` over `PositionalFetch<ObjectStoreSource>` with the
//! default read-ahead reads the same file sequentially on several connections at once, and so
//! in clearly less time. Every byte is checked.
//!
//! What is asserted holds on a loaded machine: the stream's time has a lower bound set by the
//! cap (its bytes at 20 MB/s, less the proxy's 4 ms bucket), whatever the machine does; the
//! proxy must have carried at least two response bodies at once for the read-ahead; and the
//! read-ahead must take at most [`MARGIN`] of the stream's time (with four connections it takes
//! about a quarter, plus its first chunks and the tenth of a second that measures the stream).
//!
//! The test starts its own nginx (`scripts/http-server.sh`; needs `scripts/http-server.sh
//! install`) and proxies. It times reads, so it is `#[ignore]`d in a plain `cargo test` (where
//! dozens of tests share the cores) and `.ci/run` runs it on its own:
//!
//! ```text
//! cargo test --features object-store --test it -- --include-ignored --nocapture source::capped_link::
//! ```
#![cfg(feature = "object-store")]

use crate::fault_proxy;
use crate::servers;

use std::net::SocketAddr;
use std::num::NonZeroU64;
use std::time::{Duration, Instant};

use abi_testkit::{chain, pattern_vec};
use async_buffered_input::source::ObjectStoreSource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};
use fault_proxy::{Delay, FaultProxy};
use futures::StreamExt;
use object_store::ObjectStoreExt;
use servers::Nginx;

/// The file: 64 MiB, 3.4 s at the cap on one connection. Long enough for the read-ahead to
/// find out: it streams first (one connection), measures the stream over its first ~10 MiB,
/// then tries ranges, and keeps them when they move bytes faster (`PositionalFetch`).
const LEN: usize = 64 << 20;
/// The link: 20 MB/s per connection (10^6 bytes per MB), 2 ms per response.
const RATE: u64 = 20_000_000;
const LATENCY: Duration = Duration::from_millis(2);
/// The proxy's bucket: what may go at once on a connection before the cap holds.
const BUCKET: Duration = Duration::from_millis(4);
/// The most the read-ahead may take, as a share of one stream's time.
const MARGIN: f64 = 0.5;
/// The input's window and the size of each read.
const WINDOW: usize = 64 << 10;
/// A read still pending after this is a hang: the test fails instead of waiting forever.
const HANG: Duration = Duration::from_secs(60);

/// A proxy in front of `upstream` with the capped link.
async fn capped(upstream: SocketAddr) -> FaultProxy {
    let proxy = FaultProxy::start(upstream).await.unwrap();
    proxy.set_delay(Delay::fixed(LATENCY));
    proxy.set_rate_per_connection(NonZeroU64::new(RATE));
    proxy
}

async fn open(proxy: &FaultProxy) -> ObjectStoreSource {
    let url = format!("http://{}/capped.bin", proxy.addr());
    let source = ObjectStoreSource::from_url(&url)
        .await
        .unwrap_or_else(|e| panic!("open {url}: {}", chain(&e)));
    assert_eq!(source.length(), LEN as u64, "{url}: length");
    source
}

/// One `GET` of the whole file, its body consumed as it comes; returns its time.
async fn one_stream(proxy: &FaultProxy, data: &[u8]) -> Duration {
    let source = open(proxy).await;
    let started = Instant::now();
    let mut body = source
        .store()
        .get(source.location())
        .await
        .unwrap_or_else(|e| panic!("GET {}: {e}", source.url()))
        .into_stream();
    let mut at = 0;
    while let Some(chunk) = tokio::time::timeout(HANG, body.next())
        .await
        .expect("the stream hangs")
    {
        let chunk = chunk.unwrap_or_else(|e| panic!("the stream at {at}: {e}"));
        assert!(
            chunk[..] == data[at..at + chunk.len()],
            "the stream's bytes {at}..{} differ",
            at + chunk.len()
        );
        at += chunk.len();
    }
    assert_eq!(at, LEN, "the stream ended early");
    started.elapsed()
}

/// The whole file through `AsyncBufferedInput` with the default read-ahead, in reads of one
/// window each; returns its time.
async fn read_ahead(proxy: &FaultProxy, data: &[u8]) -> Duration {
    let source = open(proxy).await;
    let started = Instant::now();
    let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::default());
    let mut input = AsyncBufferedInput::with_capacity(WINDOW, fetch);
    let mut buf = vec![0u8; WINDOW];
    let mut at = 0;
    while at < LEN {
        let n = WINDOW.min(LEN - at);
        tokio::time::timeout(HANG, input.read_bytes(&mut buf[..n]))
            .await
            .expect("a read hangs")
            .unwrap_or_else(|e| panic!("the read of {n} at {at}: {}", chain(&e)));
        assert!(
            buf[..n] == data[at..at + n],
            "bytes {at}..{} differ",
            at + n
        );
        at += n;
    }
    assert_eq!(input.position(), LEN as u64);
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "times a 64 MiB read through a 20 MB/s link against nginx: .ci/run runs it on its own"]
async fn read_ahead_beats_one_stream_on_a_capped_link() {
    let data = pattern_vec(LEN);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("capped.bin"), &data).unwrap();
    let nginx = Nginx::serve(dir.path());
    let upstream: SocketAddr = nginx.url.trim_start_matches("http://").parse().unwrap();

    // A proxy each, so that each one's counters are its reader's alone.
    let stream_proxy = capped(upstream).await;
    let stream = one_stream(&stream_proxy, &data).await;
    let ahead_proxy = capped(upstream).await;
    let ahead = read_ahead(&ahead_proxy, &data).await;
    let (s, a) = (stream_proxy.stats(), ahead_proxy.stats());
    let ratio = ahead.as_secs_f64() / stream.as_secs_f64();
    eprintln!(
        "[capped link, {} MB/s per connection, {LATENCY:?}] one stream {:.3} s ({:.1} MB/s, {} \
         requests); read-ahead {:.3} s ({:.1} MB/s, {} requests on {} connections, up to {} at \
         once): {ratio:.2}x the stream's time",
        RATE / 1_000_000,
        stream.as_secs_f64(),
        LEN as f64 / stream.as_secs_f64() / 1e6,
        s.requests,
        ahead.as_secs_f64(),
        LEN as f64 / ahead.as_secs_f64() / 1e6,
        a.requests,
        a.connections,
        a.peak_bodies_in_flight,
    );

    // The cap holds: one connection moves at most 20 MB/s (the bound the comparison rests on).
    let floor = Duration::from_secs_f64(LEN as f64 / RATE as f64) - BUCKET;
    assert!(
        stream >= floor,
        "one stream took {stream:?}, under the cap's {floor:?}: the proxy did not cap it"
    );
    assert_eq!(s.peak_bodies_in_flight, 1, "one stream, one body: {s:?}");
    assert!(
        a.peak_bodies_in_flight >= 2,
        "the read-ahead never had two responses under way at once: {a:?}"
    );
    assert!(
        ratio <= MARGIN,
        "the read-ahead took {ahead:?}, {ratio:.2}x one stream's {stream:?} (at most {MARGIN}x \
         expected with several connections at 20 MB/s each): {a:?}"
    );
}
