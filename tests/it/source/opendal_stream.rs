//! `OpendalSource`'s sequential reads from one stream, over a real HTTP server: OpenDAL's
//! WebDAV service reading from nginx (`PROPFIND` for the length, `GET` with `Range` for the
//! bytes) through the fault proxy, which logs every request and breaks the responses it is
//! told to. Each test starts its own nginx (`scripts/http-server.sh`; needs
//! `scripts/http-server.sh install`, as `.ci/run` does) and proxy, and stops them.
//!
//! What must hold: a sequential pass is two `GET`s (its first read, then one stream to the end),
//! not one per chunk; a read elsewhere is a ranged `GET` of its own; a stream that is reset,
//! cut short or stalls mid-way costs one more request and no wrong byte; a read dropped while
//! it reads from the stream leaves the next reads right.
#![cfg(feature = "opendal")]

use crate::fault_proxy;
use crate::servers;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use abi_testkit::pattern_vec;
use async_buffered_input::source::{OpendalSource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};
use fault_proxy::{Fault, FaultKind, FaultProxy, Request};
use servers::Nginx;

/// The file's length: several read-ahead chunks.
const LEN: usize = 3_000_000;
/// A read still pending after this is a hang: the test fails instead of waiting forever.
const HANG: Duration = Duration::from_secs(40);

/// A served file, nginx, the proxy in front of it, and the file's bytes.
struct Served {
    data: Vec<u8>,
    proxy: FaultProxy,
    uri: String,
    _nginx: Nginx,
    _dir: tempfile::TempDir,
}

async fn served() -> Served {
    let data = pattern_vec(LEN);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("blob.bin"), &data).unwrap();
    let nginx = Nginx::serve(dir.path());
    let upstream: SocketAddr = nginx.url.trim_start_matches("http://").parse().unwrap();
    let proxy = FaultProxy::start(upstream).await.unwrap();
    let uri = format!("webdav://{}/blob.bin", proxy.addr());
    Served {
        data,
        proxy,
        uri,
        _nginx: nginx,
        _dir: dir,
    }
}

/// The `GET`s the proxy saw, in order.
fn gets(proxy: &FaultProxy) -> Vec<Request> {
    proxy
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET")
        .collect()
}

/// Reads the whole file through an input with the default read-ahead, in reads of 100 KB,
/// checking every byte.
async fn read_all(source: Arc<OpendalSource>, data: &[u8]) {
    let fetch = PositionalFetch::from_arc(source).with_read_ahead(ReadAhead::default());
    let mut input = AsyncBufferedInput::with_capacity(64 << 10, fetch);
    let mut at = 0;
    while at < data.len() {
        let n = 100_000.min(data.len() - at);
        let mut buf = vec![0u8; n];
        tokio::time::timeout(HANG, input.read_bytes(&mut buf))
            .await
            .expect("a read hangs")
            .unwrap_or_else(|e| panic!("read of {n} at {at}: {e}"));
        assert!(buf == data[at..at + n], "bytes {at}..{} differ", at + n);
        at += n;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sequential_pass_is_two_gets_and_without_streaming_one_per_chunk() {
    let served = served().await;
    let source = Arc::new(OpendalSource::from_uri(&served.uri).await.unwrap());
    read_all(Arc::clone(&source), &served.data).await;
    let streamed = gets(&served.proxy);
    assert_eq!(streamed.len(), 2, "{streamed:?}");
    assert_eq!(streamed[0].range.map(|r| r.0), Some(0), "{streamed:?}");
    // The stream: from where the first read ended to the end of the file.
    let (from, to) = streamed[1].range.unwrap();
    assert!(from > 0 && to == Some(LEN as u64 - 1), "{streamed:?}");
    assert_eq!(source.streams_opened(), 1);

    let before = served.proxy.requests().len();
    let ranged = Arc::new(
        OpendalSource::from_uri(&served.uri)
            .await
            .unwrap()
            .with_streaming(false),
    );
    read_all(ranged, &served.data).await;
    let ranged_gets = gets(&served.proxy).len() - streamed.len();
    assert!(
        ranged_gets > 4,
        "{ranged_gets} GETs without streaming ({} requests in all)",
        served.proxy.requests().len() - before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_elsewhere_is_one_ranged_get_and_the_stream_goes_on() {
    let served = served().await;
    let data = &served.data;
    let source = OpendalSource::from_uri(&served.uri).await.unwrap();
    assert_eq!(&source.read_at(0, 1000).await.unwrap()[..], &data[..1000]);
    assert_eq!(
        &source.read_at(1000, 5000).await.unwrap()[..],
        &data[1000..6000]
    );
    // A seek: one closed-range GET for exactly the read.
    let far = 2_000_000;
    assert_eq!(
        &source.read_at(far, 777).await.unwrap()[..],
        &data[far as usize..far as usize + 777]
    );
    let last = gets(&served.proxy).pop().unwrap();
    assert_eq!(last.range, Some((far, Some(far + 776))));
    // Back where the stream is: it goes on, with no request.
    let before = gets(&served.proxy).len();
    assert_eq!(
        &source.read_at(6000, 4000).await.unwrap()[..],
        &data[6000..10_000]
    );
    assert_eq!(gets(&served.proxy).len(), before);
    assert_eq!(source.streams_opened(), 1);
}

/// The stream breaks mid-way (`kind`, after 500 KB of its body): the read that meets it is made
/// ranged, the next reads open a new stream, every byte is right.
async fn a_broken_stream_costs_requests_not_bytes(kind: FaultKind) {
    let served = served().await;
    // Only the first response of more than 500 KB is faulted: the first read's (64 KiB) is
    // smaller, the stream (the rest of the file) larger.
    served
        .proxy
        .inject(Fault::first_responses(1, kind, 500_000));
    let source = Arc::new(OpendalSource::from_uri(&served.uri).await.unwrap());
    read_all(Arc::clone(&source), &served.data).await;
    let faulted = served.proxy.faulted();
    assert_eq!(faulted.len(), 1, "{faulted:?}");
    let hit = faulted[0].request.clone().unwrap().range.unwrap();
    assert_eq!(
        hit.1,
        Some(LEN as u64 - 1),
        "the stream was faulted: {faulted:?}"
    );
    assert_eq!(source.streams_opened(), 2, "{:?}", gets(&served.proxy));
    // A ranged GET stood in for the read that met the fault: a closed range inside the
    // stream's, after it (before or after the second stream: they run at once).
    let gets = gets(&served.proxy);
    let to_the_end = |r: &Request| r.range.unwrap().1 == Some(LEN as u64 - 1);
    let first_stream = gets.iter().position(to_the_end).unwrap();
    assert_eq!(gets.iter().filter(|r| to_the_end(r)).count(), 2, "{gets:?}");
    assert!(
        gets[first_stream + 1..]
            .iter()
            .any(|r| !to_the_end(r) && r.range.unwrap().0 >= hit.0),
        "no ranged GET after the stream: {gets:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_reset_mid_way_costs_requests_not_bytes() {
    a_broken_stream_costs_requests_not_bytes(FaultKind::Reset).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_short_mid_way_costs_requests_not_bytes() {
    a_broken_stream_costs_requests_not_bytes(FaultKind::Truncate).await;
}

/// A stalled stream fails after `OpendalSource::IO_TIMEOUT` (5 s), and then the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_stalls_mid_way_costs_requests_not_bytes() {
    a_broken_stream_costs_requests_not_bytes(FaultKind::Stall).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_dropped_while_it_reads_from_the_stream_leaves_the_next_reads_right() {
    let served = served().await;
    let data = &served.data;
    // The stream's body comes 1000 bytes a millisecond after its first 100 KB: a 1 MB read
    // from it is still reading after 50 ms.
    served.proxy.inject(Fault::first_responses(
        1,
        FaultKind::Drip {
            bytes: 1000,
            every: Duration::from_millis(1),
        },
        100_000,
    ));
    let source = OpendalSource::from_uri(&served.uri).await.unwrap();
    assert_eq!(
        &source.read_at(0, 65_536).await.unwrap()[..],
        &data[..65_536]
    );
    let dropped = tokio::time::timeout(Duration::from_millis(50), source.read_at(65_536, 1 << 20));
    assert!(dropped.await.is_err(), "the read finished within 50 ms");
    assert_eq!(source.streams_opened(), 1);
    served.proxy.pass_through();
    // The next read continues the dropped one: a new stream from where it starts.
    let next = 65_536 + (1 << 20);
    assert_eq!(
        &source.read_at(next, 300_000).await.unwrap()[..],
        &data[next as usize..next as usize + 300_000]
    );
    assert_eq!(source.streams_opened(), 2);
    // The dropped read asked again: ranged, right.
    assert_eq!(
        &source.read_at(65_536, 1 << 20).await.unwrap()[..],
        &data[65_536..next as usize]
    );
    // And the new stream goes on where it was.
    let at = next as usize + 300_000;
    assert_eq!(
        &source.read_at(at as u64, 10_000).await.unwrap()[..],
        &data[at..at + 10_000]
    );
    assert_eq!(source.streams_opened(), 2);
}
