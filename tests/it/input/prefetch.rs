//! The prefetch hint (`AsyncBufferedInput::prefetch`): a prefetched range is read with no
//! further request, on inputs, slices and through a cache; reads elsewhere leave it; a failed
//! prefetch is retried by the read; dropping the input aborts it; hints are bounded.

use std::sync::Arc;
use std::time::Duration;

use abi_testkit::*;
use async_buffered_input::{AsyncBufferedInput, MemoryBudget, PositionalFetch, ReadAhead};

const LEN: usize = 200_000;

/// An input with a window of 4 KiB over `source`, with `read_ahead` (if any).
fn input_over(
    source: &Arc<Scripted>,
    read_ahead: Option<ReadAhead>,
) -> AsyncBufferedInput<PositionalFetch<Arc<Scripted>>> {
    let mut fetch = PositionalFetch::new(Arc::clone(source));
    fetch.set_read_ahead(read_ahead);
    AsyncBufferedInput::with_capacity(4096, fetch)
}

/// Reads `[at, at + len)` of `input` and checks the bytes.
async fn read_checked<F: async_buffered_input::Fetch>(
    input: &mut AsyncBufferedInput<F>,
    data: &[u8],
    at: u64,
    len: usize,
) {
    input.seek_to(at);
    let mut buf = vec![0u8; len];
    input.read_bytes(&mut buf).await.unwrap();
    assert_bytes(
        &buf,
        &data[at as usize..at as usize + len],
        at,
        "prefetched range",
    );
}

/// The goal: the hint starts the request at once (before anything awaits); the read
/// of the range, small (through the window) or large (straight into the buffer), makes no
/// request of its own, with and without read-ahead, over a slow source.
#[tokio::test(start_paused = true)]
async fn a_prefetched_range_is_read_with_no_further_request() {
    let data = pattern_vec(LEN);
    for read_ahead in [
        None,
        Some(ReadAhead::new(8192, 3)),
        Some(ReadAhead::default()),
    ] {
        for (at, len) in [
            (10_000u64, 100usize),
            (50_123, 3000),
            (100_000, 20_000),
            (LEN as u64 - 16, 16),
        ] {
            let source = Arc::new(Scripted::new(data.clone()).delay(Duration::from_millis(10)));
            let mut input = input_over(&source, read_ahead);
            input.prefetch(at, len as u64);
            assert_eq!(source.requests(), 1, "started at once");
            read_checked(&mut input, &data, at, len).await;
            assert_eq!(
                source.requests(),
                1,
                "{read_ahead:?}, [{at}, +{len}): {:?}",
                source.log()
            );
        }
    }
}

/// Footer and header together, as a Lucene reader opens a file: two hints, two requests in
/// flight at once, and the two reads wait only for them.
#[tokio::test(start_paused = true)]
async fn hints_overlap_their_round_trips() {
    let data = pattern_vec(LEN);
    let source = Arc::new(Scripted::new(data.clone()).delay(Duration::from_millis(10)));
    let mut input = input_over(&source, Some(ReadAhead::default()));
    let started = tokio::time::Instant::now();
    input.prefetch(LEN as u64 - 16, 16);
    input.prefetch(0, 40);
    read_checked(&mut input, &data, 0, 40).await;
    read_checked(&mut input, &data, LEN as u64 - 16, 16).await;
    assert_eq!(source.requests(), 2, "{:?}", source.log());
    assert_eq!(source.counts().max_live, 2);
    assert!(
        started.elapsed() < Duration::from_millis(15),
        "one round trip, not two"
    );
}

/// A slice's hint is in the slice's offsets; reads elsewhere and seeks leave the prefetched
/// range in place.
#[tokio::test]
async fn slices_and_reads_elsewhere() {
    let data = pattern_vec(LEN);
    let source = Arc::new(Scripted::new(data.clone()));
    let parent = input_over(&source, Some(ReadAhead::new(8192, 2)));
    let mut slice = parent.slice(30_000, 100_000).await.unwrap();
    slice.prefetch(50_000, 2000);
    let log = source.log();
    assert_eq!(log.len(), 1);
    assert!(
        log[0].0 <= 80_000 && log[0].0 + log[0].1 as u64 >= 82_000,
        "{log:?}"
    );
    // Elsewhere first: sequential reads with read-ahead, and a seek.
    let mut buf = vec![0u8; 30_000];
    slice.read_bytes(&mut buf).await.unwrap();
    assert_bytes(&buf, &data[30_000..60_000], 30_000, "elsewhere");
    let before = source.requests();
    read_checked(&mut slice, &data[30_000..], 50_000, 2000).await;
    assert_eq!(source.requests(), before, "{:?}", source.log());
}

/// A prefetch that fails is no error: the read of its range asks again, and succeeds; one that
/// fails again reports the error as any read does.
#[tokio::test]
async fn a_failed_prefetch_is_retried_by_the_read() {
    let data = pattern_vec(LEN);
    let source = Arc::new(Scripted::new(data.clone()).fail_request(0));
    let mut input = input_over(&source, None);
    input.prefetch(7000, 500);
    read_checked(&mut input, &data, 7000, 500).await;
    assert_eq!(source.requests(), 2);
    assert_eq!(source.counts().failures, 1);

    let source = Arc::new(Scripted::new(data.clone()).fail_first(2));
    let mut input = input_over(&source, None);
    input.prefetch(7000, 500);
    input.seek_to(7000);
    let mut buf = [0u8; 500];
    let e = input.read_bytes(&mut buf).await.unwrap_err();
    assert!(e.to_string().contains("injected failure"), "{e}");
    assert_eq!(input.position(), 7000);
    read_checked(&mut input, &data, 7000, 500).await;
}

/// Dropping the input aborts its prefetches in flight, and `release` drops them and gives
/// their budget back.
#[tokio::test]
async fn drop_aborts_and_release_gives_back() {
    let data = pattern_vec(LEN);
    let source = Arc::new(Scripted::new(data.clone()).gated());
    let budget = MemoryBudget::new(1 << 20);
    let fetch = PositionalFetch::new(Arc::clone(&source)).with_budget(budget.clone());
    let mut input = AsyncBufferedInput::with_capacity(4096, fetch);
    input.prefetch(0, 1000);
    input.prefetch(90_000, 1000);
    tokio::task::yield_now().await;
    assert_eq!(source.counts().live, 2);
    assert_eq!(budget.used(), 1000 + 90_000 % 4096 + 1000);
    input.release();
    assert_eq!(budget.used(), 0);
    input.prefetch(0, 1000);
    drop(input);
    assert_eq!(budget.used(), 0);
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(source.counts().live, 0, "aborted");
    assert_eq!(Arc::strong_count(&source), 1, "no task holds the source");
}

/// Hints are bounded: cut at the end and at 8 MiB, ignored when empty, past the end, beyond 16
/// ranges or 8 MiB held, or when the budget has no room; none of them panics.
#[tokio::test]
async fn hints_are_bounded() {
    let data = pattern_vec(LEN);
    let source = Arc::new(Scripted::new(data.clone()));
    let mut input = input_over(&source, None);
    for (at, len) in [
        (0, 0),
        (u64::MAX, 1),
        (u64::MAX - 10, u64::MAX),
        (5, u64::MAX),
    ] {
        input.prefetch(at, len);
    }
    // Length not known yet: the last one asks 8 MiB (the source ends before).
    let log = source.log();
    assert!(log.iter().all(|&(_, len)| len <= 8 << 20), "{log:?}");
    assert_eq!(input.length().await.unwrap(), LEN as u64);
    let before = source.requests();
    input.prefetch(LEN as u64, 10);
    input.prefetch(LEN as u64 + 5000, 10);
    assert_eq!(source.requests(), before, "past the end");
    input.prefetch(LEN as u64 - 10, 1000);
    assert_eq!(
        source.requests(),
        before,
        "held already (by the hint for 8 MiB at 0)"
    );
    input.release();
    input.prefetch(LEN as u64 - 10, 1000);
    let (at, len) = *source.log().last().unwrap();
    assert_eq!(at + len as u64, LEN as u64, "cut at the end");
    read_checked(&mut input, &data, LEN as u64 - 10, 10).await;
    assert_eq!(source.requests(), before + 1);

    let source = Arc::new(Scripted::new(data.clone()));
    let mut input = input_over(&source, None);
    for k in 0..40 {
        input.prefetch(k * 4096, 100);
    }
    assert_eq!(source.requests(), 16, "at most 16 ranges");

    let budget = MemoryBudget::new(6000);
    let source = Arc::new(Scripted::new(data.clone()));
    let fetch = PositionalFetch::new(Arc::clone(&source)).with_budget(budget.clone());
    let mut input = AsyncBufferedInput::with_capacity(4096, fetch);
    input.prefetch(8192, 7000);
    assert_eq!(
        (source.requests(), budget.used()),
        (0, 0),
        "no room: ignored"
    );
    input.prefetch(8192, 5000);
    assert_eq!((source.requests(), budget.used()), (1, 5000));
    read_checked(&mut input, &data, 8192, 5000).await;
    assert_eq!(budget.used(), 0, "read to its end: dropped");
    assert_eq!(source.requests(), 1);
}

/// Through a cache, a prefetch loads the blocks: another input over the cached source reads
/// them with no request.
#[cfg(feature = "cache")]
#[tokio::test]
async fn through_a_cache_the_blocks_are_loaded_for_every_input() {
    use async_buffered_input::cache::{BlockCache, Cached};
    let data = pattern_vec(LEN);
    let cache = BlockCache::with_block_size(1 << 20, 16 << 10);
    let source = Arc::new(Cached::new(Scripted::new(data.clone()), cache.clone()));
    let mut first =
        AsyncBufferedInput::with_capacity(4096, PositionalFetch::from_arc(Arc::clone(&source)));
    first.prefetch(70_000, 3000);
    tokio::task::yield_now().await;
    let requests = source.get_ref().requests();
    assert!(requests >= 1);
    let mut other =
        AsyncBufferedInput::with_capacity(4096, PositionalFetch::from_arc(Arc::clone(&source)));
    read_checked(&mut other, &data, 70_000, 3000).await;
    read_checked(&mut first, &data, 70_000, 3000).await;
    assert_eq!(source.get_ref().requests(), requests);
}
