//! Read-ahead, clones and slices of inputs over positional sources, and the `SlowLink` model.

use std::io::{ErrorKind, SeekFrom};
use std::sync::Arc;
use std::time::Duration;

use abi_testkit::SlowLink;
use abi_testkit::{chain, input_error, pattern_vec, Delay, Scripted};
use async_buffered_input::source::{MemorySource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};
use tokio::io::AsyncSeekExt;
use tokio::time::Instant;

/// A source of `len` pattern bytes whose n-th request (from 1) takes n × `delay` (tokio time):
/// later chunks are still in flight when earlier ones arrive.
fn probe(len: usize, delay: Duration) -> Arc<Scripted> {
    Arc::new(
        Scripted::new(pattern_vec(len))
            .delay_with(move |r| Delay::Sleep(delay * (r.index as u32 + 1))),
    )
}

fn input(
    probe: &Arc<Scripted>,
    cap: usize,
    ahead: Option<ReadAhead>,
) -> AsyncBufferedInput<PositionalFetch<Scripted>> {
    let mut fetch = PositionalFetch::from_arc(probe.clone());
    fetch.set_read_ahead(ahead);
    AsyncBufferedInput::with_capacity(cap, fetch)
}

/// An input with a window of 100 bytes over `probe`, reading ahead as `ahead` says, after its
/// first 100-byte read at 0.
async fn after_one_read(
    probe: &Arc<Scripted>,
    ahead: ReadAhead,
) -> AsyncBufferedInput<PositionalFetch<Scripted>> {
    let mut input = input(probe, 100, Some(ahead));
    input.read_bytes(&mut [0u8; 100]).await.unwrap();
    input
}

/// Lets spawned (and aborted) tasks run.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn read_ahead_starts_on_the_second_sequential_read() {
    let probe = probe(10_000, Duration::from_millis(1));
    let mut input = after_one_read(&probe, ReadAhead::new(1000, 3)).await;
    assert_eq!(probe.log(), [(0, 100)], "the first read is a plain request");
    let mut buf = [0u8; 100];
    input.read_bytes(&mut buf).await.unwrap();
    assert_eq!(
        probe.log(),
        [(0, 100), (100, 1000), (1100, 1000), (2100, 1000)]
    );
    assert_eq!(&buf[..], &pattern_vec(200)[100..]);
}

#[tokio::test(start_paused = true)]
async fn random_reads_never_read_ahead() {
    let probe = probe(100_000, Duration::from_millis(1));
    let mut input = input(&probe, 64, Some(ReadAhead::new(4096, 4)));
    for at in [50_000u64, 10, 90_000, 3000, 70_000] {
        input.seek_to(at);
        input.read_byte().await.unwrap();
    }
    assert!(
        probe.log().iter().all(|&(_, len)| len == 64),
        "{:?}",
        probe.log()
    );
}

#[tokio::test(start_paused = true)]
async fn sequential_read_requests_every_byte_once_and_stays_within_depth() {
    let len = 200_000;
    let probe = probe(len, Duration::from_millis(3));
    let ahead = ReadAhead::new(8192, 4);
    let mut input = input(&probe, 1000, Some(ahead));
    let data = pattern_vec(len);
    let mut buf = [0u8; 100];
    let mut pos = 0;
    // (What the fetcher holds and has in flight after each read is checked against the depth
    // by `fetch::positional_fetch::tests`; from here, the requests alive at the source are.)
    while pos + 100 <= len {
        input.read_bytes(&mut buf).await.unwrap();
        assert_eq!(buf[..], data[pos..pos + 100]);
        pos += 100;
        assert!(
            probe.counts().live as usize <= ahead.depth(),
            "{} alive: {:?}",
            probe.counts().live,
            input.fetch()
        );
    }
    assert!(
        probe.counts().max_live as usize <= ahead.depth(),
        "max live {}",
        probe.counts().max_live
    );
    // The requests tile the file: no byte was asked twice, none skipped.
    let mut log = probe.log();
    log.sort();
    let mut next = 0u64;
    for &(at, n) in &log {
        assert!(at >= next, "byte {at} requested twice: {log:?}");
        assert_eq!(at, next, "gap before {at}");
        next = at + n as u64;
    }
    assert!(next >= pos as u64);
}

#[tokio::test(start_paused = true)]
async fn a_seek_elsewhere_discards_and_cancels_read_ahead() {
    let probe = probe(1_000_000, Duration::from_millis(50));
    let mut input = after_one_read(&probe, ReadAhead::new(10_000, 4)).await;
    // Read-ahead starts; its first chunk is awaited.
    input.read_bytes(&mut [0u8; 100]).await.unwrap();
    settle().await;
    assert_eq!(
        probe.counts().live,
        3,
        "three more chunks in flight: {:?}",
        probe.log()
    );
    input.seek_to(500_000);
    input.read_byte().await.unwrap();
    settle().await;
    assert_eq!(
        probe.counts().live,
        0,
        "chunks in flight cancelled: {:?}",
        input.fetch()
    );
    // (That the fetcher keeps no request, done or not, is checked by
    // `fetch::positional_fetch::tests`.)
    assert_eq!(probe.log().last(), Some(&(500_000, 100)), "a plain request");
    // Sequential again: read-ahead resumes from there.
    input.seek_to(500_100);
    input.read_byte().await.unwrap();
    assert_eq!(probe.log().last(), Some(&(530_100, 10_000)));
}

#[tokio::test(start_paused = true)]
async fn a_forward_skip_inside_the_chunks_keeps_them() {
    let probe = probe(1_000_000, Duration::from_millis(5));
    let mut input = after_one_read(&probe, ReadAhead::new(10_000, 4)).await;
    input.read_bytes(&mut [0u8; 100]).await.unwrap();
    let asked = probe.log().len();
    input.seek_to(25_000); // inside the third chunk
    assert_eq!(
        input.read_byte().await.unwrap(),
        pattern_vec(25_001)[25_000]
    );
    let log = probe.log();
    assert!(
        log[asked..].iter().all(|&(at, _)| at >= 40_100),
        "re-requested: {log:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_the_input_aborts_requests_in_flight() {
    let probe = probe(1_000_000, Duration::from_secs(1));
    let mut input = input(&probe, 100, Some(ReadAhead::new(10_000, 4)));
    input.seek_to(0);
    let _ = tokio::time::timeout(Duration::from_millis(1), input.read_byte()).await;
    settle().await;
    assert_eq!(probe.counts().live, 1);
    drop(input);
    settle().await;
    assert_eq!(probe.counts().live, 0);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_read_reuses_its_request() {
    let probe = probe(10_000, Duration::from_millis(10));
    let mut input = input(&probe, 100, None);
    input.seek_to(5000);
    assert!(
        tokio::time::timeout(Duration::from_millis(5), input.read_byte())
            .await
            .is_err()
    );
    assert_eq!(input.position(), 5000);
    assert_eq!(input.read_byte().await.unwrap(), pattern_vec(5001)[5000]);
    assert_eq!(probe.log(), [(5000, 100)]);
}

#[tokio::test(start_paused = true)]
async fn errors_discard_and_the_next_read_retries() {
    let flaky =
        Arc::new(Scripted::new(pattern_vec(100_000)).error(ErrorKind::ConnectionReset, "flaky"));
    let fetch = PositionalFetch::from_arc(flaky.clone()).with_read_ahead(ReadAhead::new(1000, 2));
    let mut input = AsyncBufferedInput::with_capacity(64, fetch);
    let mut buf = vec![0u8; 64];
    input.read_bytes(&mut buf).await.unwrap();
    input.read_bytes(&mut buf).await.unwrap();
    flaky.set_down(true);
    input.seek_to(50_000);
    let e = input.read_bytes(&mut buf).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionReset);
    assert!(chain(&e).contains("bytes at 50000"), "{}", chain(&e));
    assert_eq!(input.position(), 50_000);
    flaky.set_down(false);
    input.read_bytes(&mut buf).await.unwrap();
    assert_eq!(buf[..], pattern_vec(50_064)[50_000..]);
}

// ----- clones and slices -----

fn memory_input(len: usize, cap: usize) -> AsyncBufferedInput<PositionalFetch<MemorySource>> {
    AsyncBufferedInput::with_capacity(
        cap,
        PositionalFetch::new(MemorySource::new(pattern_vec(len))),
    )
}

#[tokio::test]
async fn clones_are_independent() {
    let data = pattern_vec(5000);
    let mut a = memory_input(5000, 64);
    a.seek_to(1000);
    a.read_byte().await.unwrap();
    let mut b = a.clone();
    assert_eq!(b.position(), 1001);
    assert_eq!(b.capacity(), 64);
    assert_eq!(b.window(), 0..0, "fresh window");
    let mut buf = [0u8; 300];
    b.read_bytes(&mut buf).await.unwrap();
    assert_eq!(buf[..], data[1001..1301]);
    assert_eq!(a.position(), 1001);
    a.seek_to(10);
    assert_eq!(a.read_byte().await.unwrap(), data[10]);
    assert_eq!(b.read_byte().await.unwrap(), data[1301]);
}

#[tokio::test]
async fn slices_read_as_their_own_file_and_cannot_escape() {
    let data = pattern_vec(5000);
    let input = memory_input(5000, 16);
    let mut s = input.slice(1000, 100).await.unwrap();
    assert_eq!(s.position(), 0);
    assert_eq!(s.length().await.unwrap(), 100);
    assert_eq!(s.read_byte().await.unwrap(), data[1000]);
    let mut buf = [0u8; 100];
    let e = s.read_bytes(&mut buf).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof);
    let detail = input_error(&e);
    assert_eq!(detail.available(), Some(99));
    s.read_bytes(&mut buf[..99]).await.unwrap();
    assert_eq!(buf[..99], data[1001..1100]);
    assert!(s.read_byte().await.is_err());
    // A large direct read cannot go past the slice either.
    s.seek_to(0);
    let mut big = vec![0u8; 101];
    assert_eq!(
        s.read_bytes(&mut big).await.unwrap_err().kind(),
        ErrorKind::UnexpectedEof
    );
    assert_eq!(
        &s.read_bytes_owned(100).await.unwrap()[..],
        &data[1000..1100]
    );
    // SeekFrom::End is relative to the slice.
    assert_eq!(s.tokio_io().seek(SeekFrom::End(-10)).await.unwrap(), 90);
    assert_eq!(s.read_byte().await.unwrap(), data[1090]);
    // A slice of a slice is relative to its parent; a clone of a slice is that slice.
    let mut ss = s.slice(50, 20).await.unwrap();
    assert_eq!(ss.read_byte().await.unwrap(), data[1050]);
    assert_eq!(ss.length().await.unwrap(), 20);
    let mut c = ss.clone();
    c.seek_to(19);
    assert_eq!(c.read_byte().await.unwrap(), data[1069]);
    assert!(c.read_byte().await.is_err());
    // Empty slices, at the end too.
    let mut empty = input.slice(5000, 0).await.unwrap();
    assert_eq!(empty.length().await.unwrap(), 0);
    assert!(empty.read_byte().await.is_err());
}

#[tokio::test]
async fn out_of_range_slices_are_invalid_input_naming_the_range() {
    let input = memory_input(5000, 16);
    for (offset, len) in [
        (4990, 11),
        (5001, 0),
        (0, 5001),
        (u64::MAX, 2),
        (1, u64::MAX),
    ] {
        let e = input.slice(offset, len).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "slice({offset}, {len})");
        let msg = e.to_string();
        for n in [offset, len, 5000] {
            assert!(
                msg.contains(&n.to_string()),
                "slice({offset}, {len}): {msg}"
            );
        }
    }
    let s = input.slice(100, 50).await.unwrap();
    let e = s.slice(40, 11).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert_eq!(
        e.to_string(),
        "slice [100..150) of memory (5000 bytes): slice of 11 bytes at position 40: the input's \
         length is 50, so only 10 bytes are there"
    );
}

#[tokio::test(start_paused = true)]
async fn a_slice_asks_the_source_length_once_at_most() {
    let probe = probe(3000, Duration::from_millis(1));
    let input = input(&probe, 16, None);
    let mut s = input.slice(2990, 10).await.unwrap();
    let mut buf = [0u8; 10];
    s.read_bytes(&mut buf).await.unwrap();
    assert_eq!(buf[..], pattern_vec(3000)[2990..]);
    assert_eq!(probe.log(), [(2990, 10)], "a slice never asks past its end");
}

// ----- SlowLink -----

/// Reads `total` bytes sequentially in `request`-byte reads over a 2 ms / 100 MB/s link under
/// paused time; returns the simulated time taken.
async fn timed_read(total: usize, request: usize, ahead: Option<ReadAhead>) -> Duration {
    let link = SlowLink::new(
        MemorySource::new(vec![7u8; total]),
        Duration::from_millis(2),
        100_000_000,
    );
    let mut fetch = PositionalFetch::new(link);
    fetch.set_read_ahead(ahead);
    let mut input = AsyncBufferedInput::new(fetch);
    let mut buf = vec![0u8; request];
    let started = Instant::now();
    for _ in 0..total / request {
        input.read_bytes(&mut buf).await.unwrap();
    }
    started.elapsed()
}

#[tokio::test(start_paused = true)]
async fn slow_link_is_deterministic() {
    let a = timed_read(1 << 20, 100, Some(ReadAhead::default())).await;
    let b = timed_read(1 << 20, 100, Some(ReadAhead::default())).await;
    assert_eq!(a, b);
    // 8 KiB plain requests: each costs 2 ms + 8192 bytes at 100 MB/s, and waits for tokio's
    // timer, whose resolution is 1 ms.
    let plain = timed_read(1 << 20, 8192, None).await;
    let per_request = Duration::from_millis(2) + Duration::from_nanos(81_920);
    assert!(plain >= per_request * 128, "{plain:?}");
    assert!(
        plain <= (per_request + Duration::from_millis(1)) * 128,
        "{plain:?}"
    );
    assert_eq!(plain, timed_read(1 << 20, 8192, None).await);
}

#[tokio::test(start_paused = true)]
async fn read_ahead_meets_the_link_goals_in_simulated_time() {
    let total = 16 << 20;
    let mib = timed_read(total, 1 << 20, None).await;
    let plain = timed_read(total, 100, None).await;
    for request in [100, 8192] {
        let ahead = timed_read(total, request, Some(ReadAhead::default())).await;
        let vs_mib = mib.as_secs_f64() / ahead.as_secs_f64();
        let vs_plain = plain.as_secs_f64() / ahead.as_secs_f64();
        assert!(
            vs_mib >= 0.8,
            "{request}-byte reads: {vs_mib:.2} of 1 MiB requests ({ahead:?} vs {mib:?})"
        );
        assert!(
            vs_plain >= 4.0,
            "{request}-byte reads: only {vs_plain:.1}x without read-ahead"
        );
    }
}

// ----- Adaptive read-ahead -----

/// Reads `[from, from + total)` in 8 KiB reads; returns the requests it made.
async fn logged_run<S: PositionalSource>(
    input: &mut AsyncBufferedInput<PositionalFetch<Scripted<S>>>,
    from: u64,
    total: usize,
) -> Vec<(u64, usize)> {
    let start = input.fetch().source().log().len();
    input.seek_to(from);
    let mut buf = vec![0u8; 8192];
    for _ in 0..total / buf.len() {
        input.read_bytes(&mut buf).await.unwrap();
    }
    input.fetch().source().log()[start..].to_vec()
}

/// An input with the default read-ahead over `len` bytes behind a [`SlowLink`] of `latency`
/// per request and `bandwidth` bytes per second, its requests logged.
fn logged_link(
    len: usize,
    latency: Duration,
    bandwidth: u64,
) -> AsyncBufferedInput<PositionalFetch<Scripted<SlowLink<MemorySource>>>> {
    let link = SlowLink::new(MemorySource::new(pattern_vec(len)), latency, bandwidth);
    let fetch = PositionalFetch::new(Scripted::over(link)).with_read_ahead(ReadAhead::default());
    AsyncBufferedInput::new(fetch)
}

/// Over a link slower than the consumer, the default read-ahead starts with 64 KiB chunks 2
/// at a time, and grows by 4x in a few waits (the depth first, then the chunk size) to 4 MiB
/// chunks: the link's 2 ms make every request slow; a read elsewhere starts it small again.
#[tokio::test(start_paused = true)]
async fn adaptive_read_ahead_grows_over_a_slow_link_and_starts_small_after_a_seek() {
    let mut input = logged_link(64 << 20, Duration::from_millis(2), 1_000_000_000);
    let ahead = ReadAhead::default();

    for from in [0, 40 << 20] {
        let log = logged_run(&mut input, from, 16 << 20).await;
        // The first fetch is the window's refill, the next ones read ahead.
        let chunks: Vec<usize> = log[1..].iter().map(|&(_, len)| len).collect();
        assert_eq!(
            chunks[0],
            ahead.initial_chunk_size(),
            "from {from}: {log:?}"
        );
        assert!(
            chunks.windows(2).all(|w| w[0] <= w[1]),
            "from {from}: chunk sizes only grow in a sequential run: {chunks:?}"
        );
        assert_eq!(
            *chunks.last().unwrap(),
            ahead.chunk_size(),
            "from {from}: grows to its largest: {chunks:?}"
        );
        let mut ramp: Vec<usize> = chunks
            .iter()
            .copied()
            .filter(|&c| c < ahead.chunk_size())
            .collect();
        ramp.dedup();
        assert!(
            ramp.len() <= 4,
            "from {from}: {} sizes before the largest, a slow ramp: {chunks:?}",
            ramp.len()
        );
        let bytes: usize = chunks.iter().sum();
        assert!(bytes <= (16 << 20) + ahead.memory_bound(), "{bytes}");
    }
}

/// Over a link with little latency (100 us a request), the consumer still waits for chunks,
/// but requests are never slow: the default read-ahead grows to 1 MiB in flight (256 KiB x
/// 4) and no further, where larger chunks would only cost the caches (nginx on loopback).
#[tokio::test(start_paused = true)]
async fn adaptive_read_ahead_stops_at_a_mebibyte_in_flight_when_requests_are_quick() {
    let mut input = logged_link(32 << 20, Duration::from_micros(100), 100_000_000_000);
    let log = logged_run(&mut input, 0, 16 << 20).await;
    let chunks: Vec<usize> = log[1..].iter().map(|&(_, len)| len).collect();
    let largest = *chunks.iter().max().unwrap();
    assert_eq!(largest * 4, (1 << 20), "grows to 256 KiB x 4: {chunks:?}");
    assert!(
        chunks.iter().filter(|&&c| c == largest).count() > 40,
        "and stays there: {chunks:?}"
    );
    // The same source made slow (2 ms a request: more than `SLOW_REQUEST`) lets it grow on.
    let mut input = logged_link(32 << 20, 2 * Duration::from_millis(1), 100_000_000_000);
    let log = logged_run(&mut input, 0, 16 << 20).await;
    assert!(log.iter().any(|&(_, len)| len == (4 << 20)), "{log:?}");
}

/// Over a source that answers at once, the consumer never waits: read-ahead stays small.
#[tokio::test]
async fn adaptive_read_ahead_stays_small_when_the_source_keeps_up() {
    let fetch = PositionalFetch::new(Scripted::over(MemorySource::new(pattern_vec(8 << 20))))
        .with_read_ahead(ReadAhead::default());
    let mut input = AsyncBufferedInput::new(fetch);
    let log = logged_run(&mut input, 0, 8 << 20).await;
    assert!(log.len() > 100, "{}", log.len());
    assert!(log.iter().all(|&(_, len)| len <= (64 << 10)), "{log:?}");
}

/// A fixed read-ahead keeps its shape; an adaptive one in the simulated 2 ms link is at least
/// 0.8x the best fixed shape it can grow to (issue 13's goal, in simulated time).
#[tokio::test(start_paused = true)]
async fn adaptive_read_ahead_is_close_to_its_largest_fixed_shape_on_a_slow_link() {
    let total = 64 << 20;
    let largest = ReadAhead::new(4 << 20, 4);
    let fixed = timed_read(total, 8192, Some(largest)).await;
    let adaptive = timed_read(total, 8192, Some(ReadAhead::default())).await;
    let ratio = fixed.as_secs_f64() / adaptive.as_secs_f64();
    assert!(
        ratio >= 0.8,
        "adaptive {adaptive:?} vs fixed {fixed:?}: {ratio:.2}"
    );
}

/// An input that finds no budget for read-ahead reads on without it, one request per fetch;
/// it takes budget once some is given back, and gives back all it took.
#[tokio::test(start_paused = true)]
async fn without_budget_an_input_reads_on_without_read_ahead() {
    use async_buffered_input::MemoryBudget;
    let budget = MemoryBudget::new((64 << 10) * 2);
    let logged = |len| {
        PositionalFetch::new(Scripted::over(SlowLink::new(
            MemorySource::new(pattern_vec(len)),
            Duration::from_millis(2),
            1_000_000_000,
        )))
        .with_read_ahead(ReadAhead::default())
        .with_budget(budget.clone())
    };
    let mut first = AsyncBufferedInput::with_capacity(8192, logged(1 << 20));
    let mut second = AsyncBufferedInput::with_capacity(8192, logged(1 << 20));
    let log = logged_run(&mut first, 0, 64 << 10).await;
    assert!(log.iter().any(|&(_, len)| len > 8192), "{log:?}");
    assert_eq!(budget.used(), budget.limit(), "{budget:?}");
    // All taken: the second input reads with window-sized requests only, and does not wait.
    let log = logged_run(&mut second, 0, 64 << 10).await;
    assert!(log.iter().all(|&(_, len)| len <= 8192), "{log:?}");
    assert_eq!(log.len(), 8, "{log:?}");
    let mut buf = [0u8; 8192];
    second.read_bytes(&mut buf).await.unwrap();
    assert_eq!(&buf[..], &pattern_vec(72 << 10)[64 << 10..]);
    // Once the first gives its chunks back, the second reads ahead.
    first.release();
    assert_eq!(budget.used(), 0, "{budget:?}");
    let log = logged_run(&mut second, 72 << 10, 64 << 10).await;
    assert!(log.iter().any(|&(_, len)| len > 8192), "{log:?}");
    drop(second);
    assert_eq!(budget.used(), 0, "{budget:?}");
}
