//! What a `PositionalFetch` holds and has in flight: private state, which the integration
//! tests (`tests/source_read_ahead.rs`) only see from the source's side (requests asked and
//! alive), not as chunks the fetcher keeps after they arrived.

use std::time::Duration;

use super::*;
use crate::source::{MemorySource, SlowLink};
use crate::AsyncBufferedInput;

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
