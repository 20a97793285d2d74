//! Hedged reads over a real HTTP server (nginx) behind the fault proxy's straggler mode: 2 ms
//! per request, and 2% of requests 200 ms more. Every byte is right, the hedges stay within the
//! budget, and the proxy's stragglers were there to hedge. (How much hedging shortens the tail
//! is measured by the harness, not asserted here: timing on a shared CI machine is noise.)
//!
//! Needs nginx on 127.0.0.1 serving a file of at least 1 MB (`.ci/run` starts it):
//!
//! ```text
//! mkdir -p /tmp/abi-data && head -c 5000000 /dev/urandom > /tmp/abi-data/blob.bin
//! set -a; eval "$(scripts/http-server.sh up /tmp/abi-data)"; set +a
//! ABI_OBJECT_FILE=/tmp/abi-data/blob.bin ABI_HTTP_URL=$HTTP_URL \
//!   cargo test --features object-store --test it -- --include-ignored layer::stragglers:: --nocapture
//! ```
#![cfg(feature = "object-store")]

use crate::fault_proxy;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_buffered_input::layer::Hedged;
use async_buffered_input::source::{ObjectStoreSource, PositionalSource};
use fault_proxy::{Delay, FaultProxy};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: see this file's docs"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx on 127.0.0.1: .ci/run starts it (ABI_HTTP_URL, ABI_OBJECT_FILE)"]
async fn hedges_answer_stragglers_within_the_budget() {
    let file = env("ABI_OBJECT_FILE");
    let data = std::fs::read(&file).unwrap();
    let name = std::path::Path::new(&file)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let base = env("ABI_HTTP_URL");
    let upstream = base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let proxy = FaultProxy::start(upstream).await.unwrap();
    proxy.set_delay(Delay::with_stragglers(
        Duration::from_millis(2),
        0.02,
        Duration::from_millis(200),
        42,
    ));
    let url = format!("http://{}/{name}", proxy.addr());
    let source = Arc::new(Hedged::new(
        ObjectStoreSource::from_url(&url).await.unwrap(),
    ));
    // 16 tasks, 100 lookups each of 100 bytes at spread offsets.
    let mut tasks = tokio::task::JoinSet::new();
    for task in 0..16u64 {
        let source = Arc::clone(&source);
        let data_len = data.len() as u64;
        tasks.spawn(async move {
            let mut slow = 0;
            let mut got = Vec::new();
            for i in 0..100u64 {
                let offset = (task * 7_919 + i * 104_729) * 31 % (data_len - 100);
                let t0 = Instant::now();
                let bytes = source.read_at(offset, 100).await.unwrap();
                if t0.elapsed() >= Duration::from_millis(150) {
                    slow += 1;
                }
                got.push((offset, bytes));
            }
            (slow, got)
        });
    }
    let mut slow = 0;
    while let Some(done) = tasks.join_next().await {
        let (s, got) = done.unwrap();
        slow += s;
        for (offset, bytes) in got {
            let at = offset as usize;
            assert_eq!(bytes[..], data[at..at + 100], "bytes at {offset}");
        }
    }
    let proxied = proxy.stats();
    println!("{source:?}, {proxied:?}, {slow} reads took 150 ms or more");
    assert_eq!(source.requests(), 1600);
    // The budget: 5% of the reads, and the reserve it starts with.
    let budget = 0.05 * 1600.0 + f64::from(2u32);
    assert!(source.hedges_fired() as f64 <= budget, "{source:?}");
    assert!(proxied.stragglers >= 10, "{proxied:?}");
    assert!(source.delay().is_some(), "a delay was learned: {source:?}");
    assert!(source.hedges_won() <= source.hedges_fired());
    // Every read reached the server; beyond them, only the HEAD and the hedges did.
    assert!(proxied.requests > source.requests(), "{proxied:?}");
    assert!(
        proxied.requests <= source.requests() + source.hedges_fired() + 1,
        "{proxied:?} {source:?}"
    );
}
