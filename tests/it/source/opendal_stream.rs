//! `OpendalSource`'s sequential reads from one stream, over a real HTTP server: OpenDAL's
//! WebDAV service reading from nginx (`PROPFIND` for the length, `GET` with `Range` for the
//! bytes) through the fault proxy, which logs every request and breaks the responses it is
//! told to. Each test starts its own nginx (`scripts/http-server.sh`; needs
//! `scripts/http-server.sh install`, as `.ci/run` does) and proxy, and stops them.
//!
//! What must hold, for an input with read-ahead over the source: a sequential pass is a few
//! ranged `GET`s (its first chunks) and then one stream to the end, not one `GET` per chunk;
//! every `read_at` is one ranged `GET` of exactly its range; a stream that is reset, cut short
//! or stalls mid-way leaves the rest of the pass to ranged `GET`s and no wrong byte; a read
//! dropped while it waits for the stream leaves the next reads right.
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

/// The file's length: more than any read-ahead chunk (4 MiB), and short enough that the
/// stream never runs the 8 MiB after which it is measured (and ranges may be tried).
const LEN: usize = 8_000_000;
/// Body bytes past which a response can only be the stream's: more than a chunk.
const STREAM_ONLY: u64 = 5_000_000;
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

/// The `GET`s of a stream: to the end of the file, longer than any chunk.
fn streams(proxy: &FaultProxy) -> Vec<Request> {
    gets(proxy)
        .into_iter()
        .filter(|r| matches!(r.range, Some((from, Some(to))) if to == LEN as u64 - 1 && to - from >= STREAM_ONLY))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sequential_pass_is_one_stream_after_its_first_chunks_and_without_streaming_ranged() {
    let served = served().await;
    let source = Arc::new(OpendalSource::from_uri(&served.uri).await.unwrap());
    read_all(Arc::clone(&source), &served.data).await;
    let all = gets(&served.proxy);
    let streamed = streams(&served.proxy);
    assert_eq!(streamed.len(), 1, "{all:?}");
    assert_eq!(source.streams_opened(), 1);
    // Before it, ranged chunks from 0 to where it starts, less than 1 MiB.
    let from = streamed[0].range.unwrap().0;
    assert!((256 << 10..1 << 20).contains(&from), "{all:?}");
    assert_eq!(
        all.len() - 1,
        all.iter().filter(|r| r.range.unwrap().0 < from).count()
    );

    let before = all.len();
    let ranged = Arc::new(
        OpendalSource::from_uri(&served.uri)
            .await
            .unwrap()
            .with_streaming(false),
    );
    read_all(Arc::clone(&ranged), &served.data).await;
    let ranged_gets = gets(&served.proxy).len() - before;
    assert!(ranged_gets > 4, "{ranged_gets} GETs without streaming");
    assert_eq!(
        streams(&served.proxy).len(),
        1,
        "no stream without streaming"
    );
    assert_eq!(ranged.streams_opened(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_at_is_one_ranged_get_of_exactly_its_range() {
    let served = served().await;
    let data = &served.data;
    let source = OpendalSource::from_uri(&served.uri).await.unwrap();
    for (at, len) in [
        (0u64, 1000usize),
        (1000, 5000),
        (2_000_000, 777),
        (6000, 4000),
    ] {
        let got = source.read_at(at, len).await.unwrap();
        assert_eq!(&got[..], &data[at as usize..at as usize + len]);
        let last = gets(&served.proxy).pop().unwrap();
        assert_eq!(last.range, Some((at, Some(at + len as u64 - 1))));
    }
    assert_eq!(gets(&served.proxy).len(), 4);
    assert_eq!(source.streams_opened(), 0);
}

/// The stream breaks mid-way (`kind`, after 5 MB of its body): the pass goes on from where the
/// stream stopped (a reset may lose bytes the client had not read yet: before the 5 MB), with ranged `GET`s (or OpenDAL's own request for the rest of the stream,
/// which it makes when a body breaks), and every byte is right.
async fn a_broken_stream_costs_requests_not_bytes(kind: FaultKind) {
    let served = served().await;
    served
        .proxy
        .inject(Fault::first_responses(1, kind, STREAM_ONLY));
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
    assert_eq!(source.streams_opened(), 1, "{:?}", gets(&served.proxy));
    let gets = gets(&served.proxy);
    let stream_at = gets.iter().position(|r| r.range == Some(hit)).unwrap();
    let after = &gets[stream_at + 1..];
    assert!(
        !after.is_empty() && after.iter().all(|r| r.range.unwrap().0 > hit.0),
        "ranged GETs from where the stream broke: {gets:?}"
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
async fn a_read_dropped_while_it_waits_for_the_stream_leaves_the_next_reads_right() {
    let served = served().await;
    let data = &served.data;
    // Past its first 5 MB, the stream's body stalls: the first read there is still waiting
    // after a second, and is dropped. (A stall, not a slow body: a stream that keeps bytes
    // coming slowly is measured within a tenth of a second and ranges are tried in its place,
    // so no read would wait.) The stream then fails after `OpendalSource::IO_TIMEOUT` (5 s),
    // and ranged reads serve the rest.
    served
        .proxy
        .inject(Fault::first_responses(1, FaultKind::Stall, STREAM_ONLY));
    let source = Arc::new(OpendalSource::from_uri(&served.uri).await.unwrap());
    let fetch =
        PositionalFetch::from_arc(Arc::clone(&source)).with_read_ahead(ReadAhead::default());
    let mut input = AsyncBufferedInput::with_capacity(64 << 10, fetch);
    // In reads smaller than the window, so that a stream serves them from its first chunks on,
    // until one waits a second (where the stream stalls: more than 5 MB in).
    let mut buf = vec![0u8; 60_000];
    let mut start = 0usize;
    loop {
        assert!(
            start + buf.len() <= LEN,
            "no read waited for the stalled stream"
        );
        let read = tokio::time::timeout(Duration::from_secs(1), input.read_bytes(&mut buf));
        if read.await.is_err() {
            break;
        }
        assert!(buf == data[start..start + buf.len()], "bytes at {start}");
        start += buf.len();
    }
    assert!(start > STREAM_ONLY as usize, "a read at {start} waited");
    assert_eq!(
        input.position(),
        start as u64,
        "a dropped read moves nothing"
    );
    served.proxy.pass_through();
    let mut rest = vec![0u8; LEN - start];
    tokio::time::timeout(HANG, input.read_bytes(&mut rest))
        .await
        .expect("the rest hangs")
        .unwrap();
    assert!(rest == data[start..], "the rest differs");
    assert_eq!(source.streams_opened(), 1);
}
