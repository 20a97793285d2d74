//! Long sequential runs served from one stream (`PositionalSource::read_stream`), and the
//! choice between the stream and ranged read-ahead by the rates each moves.

use std::sync::Arc;
use std::time::Duration;

use abi_testkit::{pattern, pattern_vec, Delay, Scripted};
use async_buffered_input::{AsyncBufferedInput, MemoryBudget, PositionalFetch, ReadAhead};

const K: usize = 1 << 10;
const M: usize = 1 << 20;

fn input(source: &Arc<Scripted>) -> AsyncBufferedInput<PositionalFetch<Scripted>> {
    let fetch = PositionalFetch::from_arc(Arc::clone(source)).with_read_ahead(ReadAhead::default());
    AsyncBufferedInput::with_capacity(64 * K, fetch)
}

/// [`input`], its read-ahead bounded by `budget`.
fn budgeted(
    source: &Arc<Scripted>,
    budget: &MemoryBudget,
) -> AsyncBufferedInput<PositionalFetch<Scripted>> {
    let fetch = PositionalFetch::from_arc(Arc::clone(source))
        .with_read_ahead(ReadAhead::default())
        .with_budget(budget.clone());
    AsyncBufferedInput::with_capacity(64 * K, fetch)
}

/// Reads `[at, at + len)` in reads of `step` bytes and checks every byte.
async fn read_checked(
    input: &mut AsyncBufferedInput<PositionalFetch<Scripted>>,
    at: u64,
    len: usize,
    step: usize,
) {
    input.seek_to(at);
    let mut buf = vec![0u8; step];
    let mut pos = at as usize;
    while pos < at as usize + len {
        let n = step.min(at as usize + len - pos);
        input.read_bytes(&mut buf[..n]).await.unwrap();
        let right = (0..n).all(|i| buf[i] == pattern((pos + i) as u64));
        assert!(right, "bytes at {pos}..{}", pos + n);
        pos += n;
    }
}

/// Bytes the source was asked for by ranged requests.
fn ranged_bytes(source: &Scripted) -> usize {
    source.log().iter().map(|&(_, n)| n).sum()
}

#[tokio::test]
async fn a_long_sequential_read_is_one_stream_after_a_few_ranged_chunks() {
    let source = Arc::new(Scripted::new(pattern_vec(16 * M)).streaming(64 * K, Delay::Ready));
    let mut input = input(&source);
    read_checked(&mut input, 0, 16 * M, 4 * K).await;
    assert_eq!(source.streams_opened(), 1);
    // Ranged requests up to where the stream opens (256 KiB), none past it, and in two: the
    // first window, then the way to the stream in one. Each ranged request may cost a server
    // far more than its bytes, and one past the stream would only delay it.
    let log = source.log();
    assert_eq!(log, [(0, 64 * K), (64 * K as u64, 192 * K)]);
    assert_eq!(source.streamed(), 16 * M as u64 - 256 * K as u64);
}

/// Bytes skipped inside the read-ahead's chunks are not handed out, so the run streams that
/// much further on: its chunks still reach the stream, with no window-sized requests one by
/// one between them.
#[tokio::test]
async fn a_skip_inside_the_chunks_still_leads_to_the_stream() {
    let source = Arc::new(Scripted::new(pattern_vec(8 * M)).streaming(64 * K, Delay::Ready));
    let fetch =
        PositionalFetch::from_arc(Arc::clone(&source)).with_read_ahead(ReadAhead::default());
    let mut input = AsyncBufferedInput::with_capacity(8 * K, fetch);
    read_checked(&mut input, 0, 16 * K, 8 * K).await; // a plain request, then chunks
    let skipped = source
        .log()
        .iter()
        .map(|&(at, n)| at + n as u64)
        .max()
        .unwrap()
        - 8 * K as u64;
    read_checked(&mut input, skipped, 2 * M, 8 * K).await;
    assert_eq!(source.streams_opened(), 1);
    let log = source.log();
    let small = log.iter().filter(|&&(_, n)| n <= 8 * K).count();
    assert!(small <= 1, "{small} window-sized requests: {log:?}");
}

/// A piece may keep alive a buffer far larger than its bytes (OpenDAL's FTP stream reads each
/// into a fresh 1 MiB buffer), so the stream takes one piece ahead of the consumer, not a
/// chunk's worth.
#[tokio::test]
async fn the_stream_takes_one_piece_ahead_of_the_consumer() {
    let piece = 4 * K;
    let source = Arc::new(Scripted::new(pattern_vec(8 * M)).streaming(piece, Delay::Ready));
    let mut input = input(&source);
    read_checked(&mut input, 0, 256 * K, 64 * K).await; // the ranged start
    assert_eq!(source.streams_opened(), 0);
    let mut read = 0;
    let mut buf = vec![0u8; 64 * K];
    for _ in 0..32 {
        input.read_bytes(&mut buf).await.unwrap();
        read += buf.len() as u64;
        let ahead = source.streamed() - read;
        assert!(
            ahead <= piece as u64,
            "{ahead} bytes taken ahead after {read}"
        );
    }
    assert_eq!(source.streams_opened(), 1);
}

#[tokio::test]
async fn after_a_streamed_scan_a_pass_from_its_start_streams_at_once_and_elsewhere_soon() {
    let source = Arc::new(Scripted::new(pattern_vec(16 * M)).streaming(64 * K, Delay::Ready));
    let mut input = input(&source);
    read_checked(&mut input, 0, 16 * M, 64 * K).await;
    let (ranged, streams) = (source.log().len(), source.streams_opened());
    assert_eq!(streams, 1);
    // The same scan again: a stream from its first fetch, no ranged request.
    read_checked(&mut input, 0, 16 * M, 64 * K).await;
    assert_eq!(source.streams_opened(), 2);
    assert_eq!(source.log().len(), ranged, "{:?}", &source.log()[ranged..]);
    // A scan from elsewhere: one ranged request (its first window), then a stream.
    read_checked(&mut input, M as u64, 15 * M, 64 * K).await;
    assert_eq!(source.streams_opened(), 3);
    assert_eq!(
        source.log().len() - ranged,
        1,
        "{:?}",
        &source.log()[ranged..]
    );
    // A lookup after that pass opens no stream unless it reads on past its first window.
    read_checked(&mut input, 5 * M as u64, 100, 100).await;
    read_checked(&mut input, 9 * M as u64, 100, 100).await;
    assert_eq!(source.streams_opened(), 3);
}

#[tokio::test]
async fn lookups_open_no_stream() {
    let source = Arc::new(Scripted::new(pattern_vec(8 * M)).streaming(64 * K, Delay::Ready));
    let mut input = input(&source);
    let mut at = 12_345u64;
    for _ in 0..300 {
        read_checked(&mut input, at, 300, 100).await;
        at = (at * 7 + 1_000_003) % (8 * M as u64 - 300);
    }
    assert_eq!(source.streams_opened(), 0);
}

/// A stream that stops after 1 MiB of an 8 MiB source (`stop` says how): the run goes on with
/// ranged reads, opens no second stream, and loses nothing; its length stays true.
async fn a_stream_that_stops(stop: impl FnOnce(Scripted) -> Scripted) -> Arc<Scripted> {
    let source = Arc::new(stop(
        Scripted::new(pattern_vec(8 * M)).streaming(64 * K, Delay::Ready),
    ));
    let mut input = input(&source);
    read_checked(&mut input, 0, 8 * M, 10 * K).await;
    assert_eq!(source.streams_opened(), 1, "the run opens no second stream");
    assert!(ranged_bytes(&source) >= 6 * M, "the rest was ranged");
    assert_eq!(
        input.length().await.unwrap(),
        8 * M as u64,
        "the length stays true"
    );
    // A new run may stream again.
    read_checked(&mut input, 0, 2 * M, 10 * K).await;
    assert_eq!(source.streams_opened(), 2);
    source
}

#[tokio::test]
async fn a_stream_that_fails_leaves_the_run_to_ranged_reads_and_loses_nothing() {
    a_stream_that_stops(|s| s.stream_fails_after(M as u64)).await;
}

#[tokio::test]
async fn a_stream_that_ends_early_without_an_error_leaves_the_rest_to_ranged_reads() {
    a_stream_that_stops(|s| s.stream_ends_after(M as u64)).await;
}

#[tokio::test]
async fn a_read_elsewhere_ends_the_stream_and_a_new_run_opens_another() {
    let source = Arc::new(Scripted::new(pattern_vec(16 * M)).streaming(64 * K, Delay::Ready));
    let mut input = input(&source);
    read_checked(&mut input, 0, 4 * M, 8 * K).await;
    read_checked(&mut input, 9 * M as u64, 4 * M, 8 * K).await;
    read_checked(&mut input, 100, 2 * M, 8 * K).await;
    assert_eq!(source.streams_opened(), 3);
}

#[tokio::test]
async fn without_budget_for_a_chunk_it_does_not_stream() {
    let source = Arc::new(Scripted::new(pattern_vec(4 * M)).streaming(64 * K, Delay::Ready));
    let mut input = budgeted(&source, &MemoryBudget::new(16 * K));
    read_checked(&mut input, 0, 4 * M, 8 * K).await;
    assert_eq!(source.streams_opened(), 0);
    assert_eq!(ranged_bytes(&source), 4 * M);
}

/// Without the budget for the way to the stream in one request, the run asks it in chunks,
/// within the budget, and still streams from there.
#[tokio::test]
async fn without_budget_for_the_way_to_the_stream_in_one_request_it_goes_in_chunks() {
    let source = Arc::new(Scripted::new(pattern_vec(8 * M)).streaming(64 * K, Delay::Ready));
    let budget = MemoryBudget::new(128 * K);
    let mut input = budgeted(&source, &budget);
    read_checked(&mut input, 0, 8 * M, 8 * K).await;
    let log = source.log();
    assert!(log.iter().all(|&(_, n)| n <= 64 * K), "{log:?}");
    assert_eq!(ranged_bytes(&source), 256 * K, "{log:?}");
    assert_eq!(source.streams_opened(), 1);
}

/// The way to the stream is asked at once only within the read-ahead's memory bound: with a
/// budget that has room, it takes the whole way (and reserves it); past the bound, chunks.
#[tokio::test]
async fn the_way_to_the_stream_at_once_stays_within_the_memory_bound() {
    for (read_ahead, at_once) in [
        (ReadAhead::default(), true),
        (ReadAhead::new(64 * K, 2), false), // 128 KiB: less than the way (192 KiB)
        (ReadAhead::new(4 * K, 2), false),
    ] {
        for budget in [None, Some(MemoryBudget::new(64 * M))] {
            let source =
                Arc::new(Scripted::new(pattern_vec(4 * M)).streaming(64 * K, Delay::Ready));
            let mut fetch =
                PositionalFetch::from_arc(Arc::clone(&source)).with_read_ahead(read_ahead);
            if let Some(budget) = &budget {
                fetch = fetch.with_budget(budget.clone());
            }
            let mut input = AsyncBufferedInput::with_capacity(64 * K, fetch);
            let mut buf = vec![0u8; 8 * K];
            let mut pos = 0;
            while pos < 4 * M {
                input.read_bytes(&mut buf).await.unwrap();
                let right = (0..buf.len()).all(|i| buf[i] == pattern((pos + i) as u64));
                assert!(right, "bytes at {pos}");
                pos += buf.len();
                if let Some(budget) = &budget {
                    let used = budget.used();
                    assert!(
                        used <= read_ahead.memory_bound(),
                        "{used} bytes reserved at {pos}"
                    );
                }
            }
            let log = source.log();
            let what = format!("{read_ahead:?}, budget {}: {log:?}", budget.is_some());
            let bound = read_ahead.memory_bound().max(64 * K); // the first window's request
            assert!(log.iter().all(|&(_, n)| n <= bound), "{what}");
            assert_eq!(log.contains(&(64 * K as u64, 192 * K)), at_once, "{what}");
            if !at_once {
                let chunk = read_ahead.chunk_size().max(4 * K); // or what a read lacks
                assert!(log[1..].iter().all(|&(_, n)| n <= chunk), "{what}");
            }
            assert_eq!(ranged_bytes(&source), 256 * K, "{what}");
            assert_eq!(source.streams_opened(), 1, "{what}");
        }
    }
}

/// A skip inside the way to the stream, once it is held, moves the point where the run
/// streams past it: nothing more is asked until it is handed out, within the memory bound.
#[tokio::test]
async fn a_skip_inside_the_way_to_the_stream_asks_nothing_more_until_it_is_handed_out() {
    let read_ahead = ReadAhead::new(64 * K, 4); // a memory bound of 256 KiB
    let source = Arc::new(Scripted::new(pattern_vec(8 * M)).streaming(64 * K, Delay::Ready));
    let budget = MemoryBudget::new(64 * M);
    let fetch = PositionalFetch::from_arc(Arc::clone(&source))
        .with_read_ahead(read_ahead)
        .with_budget(budget.clone());
    let mut input = AsyncBufferedInput::with_capacity(8 * K, fetch);
    read_checked(&mut input, 0, 16 * K, 8 * K).await; // a plain request, then the way
    assert!(
        source.log().contains(&(8 * K as u64, 248 * K)),
        "{:?}",
        source.log()
    );
    let asked = source.log().len();
    for at in [40 * K, 200 * K] {
        read_checked(&mut input, at as u64, 8 * K, 8 * K).await;
        assert_eq!(source.log().len(), asked, "{:?}", source.log());
        assert!(
            budget.used() <= read_ahead.memory_bound(),
            "{}",
            budget.used()
        );
    }
    read_checked(&mut input, 208 * K as u64, 4 * M, 8 * K).await;
    assert!(
        budget.used() <= read_ahead.memory_bound(),
        "{}",
        budget.used()
    );
    assert_eq!(source.streams_opened(), 1);
}

#[tokio::test]
async fn a_stream_holds_at_most_a_chunk_of_the_budget() {
    let source = Arc::new(Scripted::new(pattern_vec(8 * M)).streaming(64 * K, Delay::Ready));
    let budget = MemoryBudget::new(64 * M);
    let mut input = budgeted(&source, &budget);
    let mut buf = vec![0u8; 4 * K];
    for _ in 0..(4 * M / buf.len()) {
        input.read_bytes(&mut buf).await.unwrap();
    }
    assert_eq!(source.streams_opened(), 1);
    // One chunk of the read-ahead's largest shape (4 MiB), for the pieces it reads ahead.
    assert!(budget.used() <= 4 * M, "{} bytes reserved", budget.used());
}

/// The stream's next pieces are asked for while the consumer reads the last one, as a plain
/// loop over the stream does: a consumer that takes 1 ms over each 64 KiB and a stream that
/// takes 1 ms to bring each 64 KiB piece overlap, rather than take 2 ms a piece between them.
#[tokio::test(start_paused = true)]
async fn the_stream_brings_its_next_pieces_while_the_consumer_reads() {
    let source =
        Arc::new(Scripted::new(pattern_vec(8 * M)).streaming(64 * K, Duration::from_millis(1)));
    let mut input = input(&source);
    read_checked(&mut input, 0, M, 64 * K).await; // the ranged start, then the stream
    assert_eq!(source.streams_opened(), 1);
    let began = tokio::time::Instant::now();
    let mut buf = vec![0u8; 64 * K];
    for _ in 0..(7 * M / buf.len()) {
        input.read_bytes(&mut buf).await.unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await; // the consumer's work
    }
    let took = began.elapsed();
    // 112 pieces: about 112 ms when they overlap, 224 ms when they alternate.
    assert!(took < Duration::from_millis(150), "took {took:?}");
    assert_eq!(source.streams_opened(), 1);
}

/// A link where each connection is slow but many are not: the stream moves 64 KiB per 10 ms,
/// while a ranged request of any size takes 10 ms.
#[tokio::test(start_paused = true)]
async fn ranges_take_over_where_they_move_bytes_faster_than_the_stream() {
    let source = Arc::new(
        Scripted::new(pattern_vec(48 * M))
            .delay(Duration::from_millis(10))
            .streaming(64 * K, Duration::from_millis(10)),
    );
    let mut input = input(&source);
    read_checked(&mut input, 0, 48 * M, 256 * K).await;
    assert_eq!(source.streams_opened(), 1);
    // The stream is judged in a tenth of a second (its warm-up and 100 ms: about 1 MiB here).
    let ranged = ranged_bytes(&source);
    assert!(ranged >= 44 * M, "only {} MiB ranged", ranged / M);
    // The choice holds for the next run: no stream is tried again, and where the stream would
    // have opened, ranges go on at their largest shape (4 MiB chunks).
    let asked = source.log().len();
    read_checked(&mut input, 0, 16 * M, 64 * K).await;
    assert_eq!(source.streams_opened(), 1);
    let next_run = &source.log()[asked..];
    let first_large = next_run.iter().position(|&(_, n)| n == 4 * M);
    assert!(
        first_large.is_some_and(
            |i| next_run[i].0 <= M as u64 && next_run[i..].iter().all(|&(_, n)| n == 4 * M)
        ),
        "{next_run:?}"
    );
}

/// A short file: when the stream (100 MB/s) has been measured (100 ms to warm up, 100 ms
/// timed), the rest takes it less than a quarter of a second, and ranges are not tried however
/// much the stream keeps the consumer waiting: what a win could save is about what a lost
/// trial costs. The same link with a longer file tries them.
#[tokio::test(start_paused = true)]
async fn ranges_are_not_tried_where_too_little_is_left() {
    // (file, ranged requests' delay, stream piece, piece delay, tried)
    let cases = [
        (40 * M, 1000, M, 10, false), // 100 MB/s: 0.2 s left at the trial
        (80 * M, 1000, M, 10, true),  // 0.6 s left
        (16 * M, 20, M, 50, true),    // 20 MB/s, a capped link: 0.6 s left, and ranges win
    ];
    for (len, delay, piece, every, tried) in cases {
        let source = Arc::new(
            Scripted::new(pattern_vec(len))
                .delay(Duration::from_millis(delay))
                .streaming(piece, Duration::from_millis(every)),
        );
        let mut input = input(&source);
        assert_eq!(input.length().await.unwrap(), len as u64);
        read_checked(&mut input, 0, len, 256 * K).await;
        // Ranged: the chunks before the stream (under 1 MiB), and a trial's (12 MiB and more).
        let ranged = ranged_bytes(&source);
        assert_eq!(ranged > 4 * M, tried, "{len}: {} KiB ranged", ranged / K);
        assert_eq!(source.streams_opened(), 1, "{len}");
    }
}

/// A read a little back while ranges are on trial, inside what the stream on standby holds:
/// a new run, whose read-ahead asks its full depth of chunks; the stream on standby is ended
/// so that its chunk of the budget and theirs stay within the read-ahead's bound (the fetcher
/// asserts it after every fetch), and every byte is right.
#[tokio::test(start_paused = true)]
async fn a_read_back_during_a_trial_ends_the_stream_on_standby() {
    let source = Arc::new(
        Scripted::new(pattern_vec(80 * M))
            .delay(Duration::from_millis(50))
            .streaming(2 * M, Duration::from_millis(20)),
    );
    // Room for more than the bound: the bound, not the budget, must hold the fetcher back.
    let budget = MemoryBudget::new(64 * M);
    let fetch = PositionalFetch::from_arc(Arc::clone(&source))
        .with_read_ahead(ReadAhead::new(4 * M, 4))
        .with_budget(budget.clone());
    let mut input = AsyncBufferedInput::with_capacity(64 * K, fetch);
    assert_eq!(input.length().await.unwrap(), 80 * M as u64);
    let trial = |source: &Scripted| {
        source
            .log()
            .iter()
            .any(|&(at, n)| n == 4 * M && at > 8 * M as u64)
    };
    let mut at = 0;
    while !trial(&source) {
        read_checked(&mut input, at, 64 * K, 64 * K).await;
        at += 64 * K as u64;
        assert!(at < 40 * M as u64, "no trial of ranges");
    }
    // The trial's first ranged chunk, to its end (its three others are then asked; the
    // stream, in 2 MiB pieces, holds more than that chunk), then back 32 KiB and on.
    read_checked(&mut input, at, 4 * M - 64 * K, 64 * K).await;
    at += (4 * M - 64 * K) as u64;
    let back = at - 32 * K as u64;
    read_checked(&mut input, back, 80 * M - back as usize, 256 * K).await;
    assert!(budget.used() <= 16 * M);
}

/// A link where the one stream is fast and ranged requests are slow: ranges are tried once,
/// too late to be faster, and the stream, kept on standby beside them, serves again without
/// waiting for them (no second request).
#[tokio::test(start_paused = true)]
async fn the_stream_comes_back_where_ranges_are_no_faster() {
    let source = Arc::new(
        Scripted::new(pattern_vec(80 * M))
            .delay(Duration::from_millis(1000))
            .streaming(M, Duration::from_millis(10)),
    );
    let mut input = input(&source);
    let began = tokio::time::Instant::now();
    read_checked(&mut input, 0, 80 * M, 256 * K).await;
    let took = began.elapsed();
    assert_eq!(
        source.streams_opened(),
        1,
        "opened, kept beside the ranges on trial, serving again"
    );
    // A second for the first ranged chunks, 0.8 s of stream, and a trial that ends at its
    // deadline (the stream's latency and 12 MiB at the stream's rate over 1.25: 0.11 s), not
    // when its first chunk comes a second later.
    assert!(took < Duration::from_millis(2100), "took {took:?}");
    // Ranges for the trial, at their largest shape from the start less the stream's chunk:
    // the chunks before the first wait and up to the next (4 MiB x 3 each), those in flight
    // when it ended, and the ranged chunks before the first stream.
    let ranged = ranged_bytes(&source);
    assert!(ranged <= 34 * M, "{} MiB ranged", ranged / M);
}
