//! What a `PositionalFetch` holds and has in flight: private state, which the integration
//! tests (`tests/it/source/read_ahead.rs`) only see from the source's side (requests asked and
//! alive), not as chunks the fetcher keeps after they arrived.

use std::time::Duration;

use super::*;
use crate::input::AsyncBufferedInput;
use crate::layer::SlowLink;
use crate::source::MemorySource;
use crate::ReadAhead;

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

/// Chunks requested or held (in flight, arrived and unconsumed, or being handed out), and the
/// bytes held.
fn chunks_and_bytes<S>(fetch: &PositionalFetch<S>) -> (usize, usize) {
    let held = usize::from(!fetch.ready.is_empty());
    (fetch.requests.len() + held, fetch.ready.len())
}

#[tokio::test(start_paused = true)]
async fn sequential_reads_keep_at_most_depth_chunks_of_at_most_chunk_size() {
    let len = 200_000;
    let data = data(len);
    // 3 ms round trips at 10 MB/s: the reader, which takes no time, is always ahead of the link,
    // so read-ahead keeps as many chunks as it may.
    let link = SlowLink::new(
        MemorySource::new(data.clone()),
        Duration::from_millis(3),
        10_000_000,
    );
    let ahead = ReadAhead::new(8192, 4);
    let fetch = PositionalFetch::new(link).with_read_ahead(ahead);
    let mut input = AsyncBufferedInput::with_capacity(1000, fetch);
    let mut buf = [0u8; 100];
    let mut most = 0;
    for pos in (0..len).step_by(100) {
        input.read_bytes(&mut buf).await.unwrap();
        assert_eq!(buf[..], data[pos..pos + 100]);
        let fetch = input.fetch();
        let (chunks, bytes) = chunks_and_bytes(fetch);
        assert!(
            chunks <= ahead.depth(),
            "{chunks} chunks after the read at {pos}: {fetch:?}"
        );
        assert!(
            bytes <= ahead.chunk_size(),
            "{bytes} bytes held after the read at {pos}: {fetch:?}"
        );
        assert!(
            fetch.spare.is_empty(),
            "a chunk buffer with nothing at hand"
        );
        most = most.max(chunks);
    }
    assert_eq!(most, ahead.depth(), "read-ahead never reached its depth");
}

#[tokio::test(start_paused = true)]
async fn a_fetch_elsewhere_keeps_no_request_done_or_not() {
    let data = data(1_000_000);
    // No bandwidth cap: the four chunks, requested together, arrive together.
    let link = SlowLink::new(
        MemorySource::new(data.clone()),
        Duration::from_millis(50),
        0,
    );
    let fetch = PositionalFetch::new(link).with_read_ahead(ReadAhead::new(10_000, 4));
    let mut input = AsyncBufferedInput::with_capacity(100, fetch);
    let mut buf = [0u8; 100];
    input.read_bytes(&mut buf).await.unwrap();
    input.read_bytes(&mut buf).await.unwrap(); // read-ahead starts; the first chunk is awaited
    assert_eq!(buf[..], data[100..200]);
    let fetch = input.fetch();
    assert_eq!(
        chunks_and_bytes(fetch),
        (4, 10_000 - 100),
        "one chunk held, three more requested: {fetch:?}"
    );
    assert_eq!(fetch.requests_in_flight(), 3, "{fetch:?}");

    input.seek_to(500_000);
    assert_eq!(input.read_byte().await.unwrap(), data[500_000]);
    let fetch = input.fetch();
    assert_eq!(fetch.requests_in_flight(), 0, "{fetch:?}");
    assert_eq!(fetch.ahead_at, None, "{fetch:?}");
    // The plain request's bytes beyond the window's 100 are not kept either.
    assert!(fetch.ready.is_empty(), "{fetch:?}");
}

#[tokio::test(start_paused = true)]
async fn changing_the_read_ahead_drops_what_it_holds() {
    let data = data(100_000);
    let link = SlowLink::new(MemorySource::new(data.clone()), Duration::from_millis(5), 0);
    let fetch = PositionalFetch::new(link).with_read_ahead(ReadAhead::new(1000, 3));
    let mut input = AsyncBufferedInput::with_capacity(10, fetch);
    let mut buf = [0u8; 10];
    input.read_bytes(&mut buf).await.unwrap();
    input.read_bytes(&mut buf).await.unwrap();
    assert_eq!(chunks_and_bytes(input.fetch()).0, 3, "{:?}", input.fetch());
    let ahead = input.fetch().read_ahead();
    input.fetch_mut().set_read_ahead(ahead);
    let fetch = input.fetch();
    assert_eq!(chunks_and_bytes(fetch), (0, 0), "{fetch:?}");
    assert_eq!(fetch.read_ahead(), ahead);
    // And the next read still gets the right bytes.
    input.read_bytes(&mut buf).await.unwrap();
    assert_eq!(buf[..], data[20..30]);
}

/// A source whose `fail`-th request (counted from 1) fails after 1 ms; every other request
/// answers after 10 ms (so requests after the failed one are still in flight when it fails).
#[derive(Debug)]
struct FailOne {
    data: MemorySource,
    fail: usize,
    requests: std::sync::atomic::AtomicUsize,
}

impl crate::source::PositionalSource for FailOne {
    async fn read_at(&self, offset: u64, len: usize) -> std::io::Result<bytes::Bytes> {
        let n = self
            .requests
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        if n == self.fail {
            tokio::time::sleep(Duration::from_millis(1)).await;
            return Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                format!("request {n} fails"),
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        self.data.read_at(offset, len).await
    }

    async fn len(&self) -> std::io::Result<u64> {
        self.data.len().await
    }
}

#[tokio::test(start_paused = true)]
async fn the_request_for_a_gap_a_failure_left_reserves_its_budget() {
    // Read-ahead of 4 chunks of 1000 bytes under a budget of exactly 4 chunks. The first chunk
    // fails while the three after it are in flight: those are kept, and the retry requests the
    // gap the failed one left. That request holds bytes ahead of need like any chunk: it must
    // reserve them, or the read-ahead holds more than the budget says.
    let data = data(100_000);
    let source = FailOne {
        data: MemorySource::new(data.clone()),
        fail: 2, // request 1 is the first read's plain request, 2 the first chunk
        requests: Default::default(),
    };
    let budget = crate::memory_budget::MemoryBudget::new(4000);
    let fetch = PositionalFetch::new(source)
        .with_read_ahead(ReadAhead::new(1000, 4))
        .with_budget(budget.clone());
    let mut input = AsyncBufferedInput::with_capacity(100, fetch);
    let mut buf = [0u8; 100];
    input.read_bytes(&mut buf).await.unwrap();
    input.read_bytes(&mut buf).await.unwrap_err();
    assert_eq!(input.fetch().requests_in_flight(), 3, "{:?}", input.fetch());
    input.read_bytes(&mut buf).await.unwrap();
    assert_eq!(buf[..], data[100..200]);
    let fetch = input.fetch();
    let held = fetch.requests.iter().map(|r| r.len).sum::<usize>() + fetch.ready.len();
    assert!(
        budget.used() >= held,
        "the read-ahead holds or awaits {held} bytes, {} reserved: {fetch:?}",
        budget.used()
    );
    assert!(budget.used() <= 4000);
}

/// The growth rule's slow and fast chunks are counted over the sequential run, across the
/// shapes it grows through, and set back with the shape by a read elsewhere: fast small chunks
/// outvote a few slow ones (a shared CPU), and once the slow ones win, each wait grows it.
#[test]
fn slow_and_fast_chunks_count_over_the_sequential_run() {
    let mut fetch =
        PositionalFetch::new(MemorySource::new(data(1000))).with_read_ahead(ReadAhead::default());
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let (fast, slow) = (Duration::from_micros(100), 2 * ReadAhead::SLOW_REQUEST);
    const K: usize = 1 << 10;
    // Up to 1 MiB in flight it grows at every wait, fast or slow.
    fetch.chunk_came(&mut cx, fast, true);
    fetch.chunk_came(&mut cx, fast, true);
    assert_eq!(fetch.shape, (256 * K, 4));
    // Past it only once the run's slow chunks outnumber its fast ones: the third slow one.
    fetch.chunk_came(&mut cx, slow, true);
    fetch.chunk_came(&mut cx, slow, true);
    assert_eq!(fetch.shape, (256 * K, 4), "2 slow against 2 fast");
    fetch.chunk_came(&mut cx, slow, false);
    assert_eq!(
        fetch.shape,
        (256 * K, 4),
        "a chunk nobody waited for says nothing"
    );
    fetch.chunk_came(&mut cx, slow, true);
    assert_eq!(fetch.shape, (1024 * K, 4));
    // The count carries on at the new shape: the next slow wait grows it again.
    fetch.chunk_came(&mut cx, slow, true);
    assert_eq!(fetch.shape, (4096 * K, 4));
    assert_eq!(fetch.waits, (4, 2));
    // A read elsewhere: the initial shape, and nothing counted.
    fetch.reset_shape(0);
    assert_eq!((fetch.shape, fetch.waits), ((64 * K, 2), (0, 0)));
}
