//! The throughput harness over real object stores on 127.0.0.1: every reader, the read-ahead one
//! included, reads the object served by nginx (HTTP) or SeaweedFS (S3), every cell is verified
//! against the object itself, and every complete cell reads the same bytes as the local copy.
//!
//! The tests are `#[ignore]`d in a plain `cargo test`; `.ci/run` starts the servers and runs them
//! with `--include-ignored`. By hand:
//!
//! ```text
//! mkdir -p /tmp/abi-data && head -c 5000000 /dev/urandom > /tmp/abi-data/blob.bin
//! set -a; eval "$(scripts/http-server.sh up /tmp/abi-data)"; eval "$(scripts/s3-server.sh up /tmp/abi-s3)"; set +a
//! scripts/s3-server.sh upload /tmp/abi-data/blob.bin blob.bin
//! ABI_OBJECT_FILE=/tmp/abi-data/blob.bin ABI_HTTP_URL=$HTTP_URL ABI_S3_BUCKET=$S3_BUCKET \
//!   cargo test -p throughput-harness --features object-store --test it -- --include-ignored object_store::
//! ```
//!
//! Variables, as in the library's `tests/it/source/object_store.rs`: `ABI_OBJECT_FILE` (a local
//! file; the servers serve it under its file name), `ABI_HTTP_URL` (nginx's base URL),
//! `ABI_S3_BUCKET` (the bucket holding it) with the `AWS_*` variables `scripts/s3-server.sh up`
//! prints. A test that needs one and does not find it fails.
#![cfg(feature = "object-store")]

use abi_testkit::assert_contains;
use std::time::Duration;

use async_buffered_input::ReadAhead;
use throughput_harness::{Checksum, Plan, ReaderKind, Report, Source, SourceReport};

const THIS: &str = "harness/tests/it/object_store.rs";

fn env(name: &str) -> String {
    abi_testkit::server_var(name, THIS)
}

/// The local copy of the object: its file name (the object's name on the servers) and bytes.
fn object_file() -> (String, Vec<u8>) {
    let (_, name, data) = abi_testkit::object_file(THIS);
    (name, data)
}

/// The base URL nginx serves at (`ABI_HTTP_URL`), without a trailing `/`.
fn http_base() -> String {
    env("ABI_HTTP_URL").trim_end_matches('/').to_owned()
}

/// The local copy of the object ([`object_file`]) and its URL on nginx.
fn http_object() -> (String, Vec<u8>, String) {
    let (name, data) = object_file();
    let url = format!("{}/{name}", http_base());
    (name, data, url)
}

/// Every reader at `sizes` over `url`, within generous budgets (a hung server fails the test
/// instead of hanging it).
async fn run_every_reader(url: &str, sizes: &[usize]) -> Report {
    let source = Source::from_url(url).unwrap();
    assert_eq!(source.label(), url);
    assert!(source.path().is_none() && source.has_positional());
    Plan::new(source)
        .sizes(sizes.iter().copied())
        .capacities([8192, 65536])
        .read_ahead(ReadAhead::new(256 << 10, 4))
        .budget(Duration::from_secs(120))
        .run()
        .await
        .unwrap_or_else(|e| panic!("harness over {url}: {e}"))
}

/// Every cell complete and verified, with the local copy's checksum; the read-ahead reader made
/// far fewer requests than the plain window.
fn assert_every_reader_read_the_object(report: &Report, data: &[u8], sizes: &[usize]) {
    println!("{report}");
    assert!(report.verified(), "{report}");
    let source: &SourceReport = &report.sources[0];
    assert_eq!(source.file_len, data.len() as u64);
    assert_eq!(source.cells.len(), sizes.len() * (4 * 2 + 1));
    for reader in ReaderKind::DEFAULT {
        assert!(
            source.cells.iter().any(|r| r.cell.reader == reader),
            "{reader} missing"
        );
    }
    let expected = Checksum::of(data);
    for r in &source.cells {
        assert!(r.complete, "{r}");
        assert_eq!(r.bytes, data.len() as u64, "{r}");
        assert_eq!(r.checksum, expected, "{r}: not the local copy's bytes");
        assert!(r.latency.is_some(), "{r:?}");
    }
    // The limit row: 1 MiB ranged GETs, one at a time, of the whole object.
    assert!(source.limit.complete);
    assert_eq!(source.limit.checksum, expected);
    assert_eq!(
        source.limit.underlying_reads,
        (data.len() as u64).div_ceil(1 << 20)
    );
    // The stream row: one GET of the whole object, its body consumed chunk by chunk.
    let stream = source.stream.as_ref().expect("object stores stream");
    assert!(stream.complete && stream.mismatch.is_none(), "{stream:?}");
    assert_eq!((stream.requests, stream.underlying_reads), (1, 1));
    assert_eq!(stream.checksum, expected);
    // Random bytes, not the harness's pattern: verified against the object itself.
    assert!(!source.limit.holds_pattern);
    assert!(source.reference_reads > 0);
    // One plain request for the first window (or request), 256 KiB chunks until the run has
    // gone 256 KiB, then one stream to the end (`PositionalFetch`'s streaming): a handful of
    // requests, not one per chunk.
    let chunks = (data.len() as u64).div_ceil(256 << 10);
    for r in source
        .cells
        .iter()
        .filter(|r| r.cell.reader == ReaderKind::BufferedReadAhead)
    {
        assert!(
            (2..=8).contains(&r.underlying_reads),
            "{r:?}: expected 2 to 8 requests (the first chunks, then a stream), not {chunks} chunks"
        );
        let buffered = source.baseline(r).unwrap();
        assert!(
            r.underlying_reads < buffered.underlying_reads,
            "{r:?} vs {buffered:?}"
        );
    }
}

/// Held by each test that GETs the object over HTTP, so that one test can count the GETs in
/// nginx's log while it runs.
static HTTP_OBJECT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The `GET`s of `/name` in nginx's access log so far (`HTTP_ACCESS_LOG`, which
/// `scripts/http-server.sh up` prints), if the log is known.
fn gets_in_access_log(name: &str) -> Option<u64> {
    let log = std::env::var("HTTP_ACCESS_LOG").ok()?;
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("read {log}: {e}"));
    let needle = format!("\"GET /{name} ");
    Some(text.lines().filter(|l| l.contains(&needle)).count() as u64)
}

#[tokio::test]
#[ignore = "needs an HTTP server on 127.0.0.1: run .ci/run"]
async fn every_reader_reads_the_same_bytes_over_http() {
    let _alone = HTTP_OBJECT.lock().await;
    let (name, data, url) = http_object();
    let sizes = [4096, 65536];
    let before = gets_in_access_log(&name);
    let report = run_every_reader(&url, &sizes).await;
    assert_every_reader_read_the_object(&report, &data, &sizes);
    // The counts are honest: every source read of every reader (timed or verifying), the
    // read-ahead reader's chunks included, every read of the limit row and every read made to
    // verify against, is one ranged GET that reached the server, and nothing else reached it.
    // (The other tests of this binary that GET this object over HTTP wait for `HTTP_OBJECT`.)
    if let (Some(before), Some(after)) = (before, gets_in_access_log(&name)) {
        let source = &report.sources[0];
        let cells: u64 = source
            .cells
            .iter()
            .map(|r| r.underlying_reads + r.verify_reads)
            .sum();
        // The stream row's reads are its GETs of the whole object, one per pass.
        let counted = cells
            + source
                .limit_rows()
                .map(|l| l.underlying_reads + l.verify_reads)
                .sum::<u64>()
            + source.reference_reads;
        assert_eq!(
            after - before,
            counted,
            "GETs in nginx's log vs source reads counted"
        );
    }
}

#[tokio::test]
#[ignore = "needs an HTTP server on 127.0.0.1: run .ci/run"]
async fn read_ahead_shapes_and_object_stores_buf_reader_over_http() {
    let _alone = HTTP_OBJECT.lock().await;
    let (_, data, url) = http_object();
    let fixed = ReadAhead::new(256 << 10, 4);
    let report = Plan::new(Source::from_url(&url).unwrap())
        .sizes([65536])
        .capacities([8192, 1 << 20])
        .readers([
            ReaderKind::BufferedReadAhead,
            ReaderKind::ObjectStoreBufReader,
        ])
        .read_aheads([ReadAhead::default(), fixed])
        .budget(Duration::from_secs(120))
        .run()
        .await
        .unwrap_or_else(|e| panic!("harness over {url}: {e}"));
    assert!(report.verified(), "{report}");
    let source = &report.sources[0];
    // Per window: the two shapes, then object_store's BufReader.
    let cells: Vec<_> = source
        .cells
        .iter()
        .map(|r| (r.cell.reader, r.cell.capacity, r.cell.read_ahead))
        .collect();
    let (ahead, theirs) = (
        ReaderKind::BufferedReadAhead,
        ReaderKind::ObjectStoreBufReader,
    );
    let mut expected = Vec::new();
    for window in [8192, 1 << 20] {
        expected.push((ahead, Some(window), Some(ReadAhead::default())));
        expected.push((ahead, Some(window), Some(fixed)));
        expected.push((theirs, Some(window), None));
    }
    assert_eq!(cells, expected);
    let checksum = Checksum::of(&data);
    for r in &source.cells {
        assert!(r.complete && r.error.is_none(), "{r}");
        assert_eq!(r.bytes, data.len() as u64, "{r}");
        assert_eq!(r.checksum, checksum, "{r}: not the local copy's bytes");
    }
    let table = report.to_string();
    assert_contains(&table, "AsyncBufferedInput+RA 256KiBx4 ");
    assert_contains(&table, "object_store BufReader  ");
    assert_contains(&table, "Read-ahead: adaptive at ");
}

#[tokio::test]
#[ignore = "needs an S3 server on 127.0.0.1: run .ci/run"]
async fn every_reader_reads_the_same_bytes_over_s3() {
    let (name, data) = object_file();
    let url = format!("s3://{}/{name}", env("ABI_S3_BUCKET"));
    env("AWS_ENDPOINT");
    let sizes = [65536];
    let report = run_every_reader(&url, &sizes).await;
    assert_every_reader_read_the_object(&report, &data, &sizes);
}

#[tokio::test]
#[ignore = "needs an HTTP server on 127.0.0.1: run .ci/run"]
async fn a_missing_object_is_named() {
    let url = format!("{}/no-such-object.bin", http_base());
    let err = Plan::new(Source::from_url(&url).unwrap())
        .run()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
    assert!(err.to_string().contains(&url), "{err}");
    // Among several sources, it is named with its place.
    let err = Plan::over([
        Source::memory(vec![1u8; 10]),
        Source::from_url(&url).unwrap(),
    ])
    .run()
    .await
    .unwrap_err();
    assert_eq!(err.to_string(), "source 2 of 2, http");
}
