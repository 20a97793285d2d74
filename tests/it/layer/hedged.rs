//! `Hedged`, on deterministic sources under tokio's paused clock: a slow first request is
//! beaten by its hedge, the loser is dropped, hedges never exceed the budget, and dropped reads
//! leave nothing behind. (Deadlines, with `Retrying`: `retries.rs`.)

use std::sync::Mutex;
use std::time::Duration;

use abi_testkit::{Delay, Scripted};
use async_buffered_input::layer::Hedged;
use async_buffered_input::source::PositionalSource;
use tokio::time::Instant;

/// A source of 64 KiB whose n-th request (from 0) takes `latency(n)` (`None`: never answers).
fn scripted(latency: impl Fn(u64) -> Option<Duration> + Send + Sync + 'static) -> Scripted {
    Scripted::new(abi_testkit::pattern_vec(1 << 16))
        .delay_with(move |r| latency(r.index).map_or(Delay::Forever, Delay::Sleep))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn expected(offset: usize, len: usize) -> Vec<u8> {
    abi_testkit::pattern_vec(1 << 16)[offset..offset + len].to_vec()
}

/// A [`Scripted`] source (request `n` takes `latency(n)`) hedged after `delay_ms` with the
/// budget `budget`.
fn hedged_after(
    delay_ms: u64,
    budget: f64,
    latency: impl Fn(u64) -> Option<Duration> + Send + Sync + 'static,
) -> Hedged<Scripted> {
    Hedged::new(scripted(latency))
        .with_fixed_delay(ms(delay_ms))
        .with_budget(budget)
}

/// Reads `len` bytes at `at`, checks them, and returns how long the read took.
async fn timed_read(source: &Hedged<Scripted>, at: u64, len: usize) -> Duration {
    let t0 = Instant::now();
    let data = source.read_at(at, len).await.unwrap();
    assert_eq!(data[..], expected(at as usize, len)[..]);
    t0.elapsed()
}

/// [`hedged_after`] once it has answered `reads` reads of 10 bytes at 0, one after the other.
async fn hedged_after_reads(
    delay_ms: u64,
    budget: f64,
    latency: impl Fn(u64) -> Option<Duration> + Send + Sync + 'static,
    reads: usize,
) -> Hedged<Scripted> {
    let source = hedged_after(delay_ms, budget, latency);
    for _ in 0..reads {
        source.read_at(0, 10).await.unwrap();
    }
    source
}

#[tokio::test(start_paused = true)]
async fn a_slow_first_request_is_beaten_by_the_hedge_and_dropped() {
    // The first request takes 1 s, the hedge 5 ms; hedge after 10 ms.
    let source = hedged_after(10, 1.0, |n| Some(if n == 0 { ms(1000) } else { ms(5) }));
    assert_eq!(
        timed_read(&source, 100, 50).await,
        ms(15),
        "answered by the hedge: 10 ms delay + 5 ms"
    );
    assert_eq!(
        (
            source.requests(),
            source.hedges_fired(),
            source.hedges_won()
        ),
        (1, 1, 1)
    );
    assert_eq!(source.get_ref().requests(), 2);
    let live = source.get_ref().counts().live;
    assert_eq!(live, 0, "the slow first request was dropped");
    let sent_at = source.get_ref().sent_at();
    assert_eq!(
        sent_at[1] - sent_at[0],
        ms(10),
        "the hedge was sent after the delay"
    );
}

#[tokio::test(start_paused = true)]
async fn when_the_first_answers_first_the_hedge_is_dropped() {
    let source = hedged_after(10, 1.0, |n| Some(if n == 0 { ms(20) } else { ms(1000) }));
    assert_eq!(timed_read(&source, 0, 10).await, ms(20));
    assert_eq!((source.hedges_fired(), source.hedges_won()), (1, 0));
    let live = source.get_ref().counts().live;
    assert_eq!(live, 0, "the slow hedge was dropped");
}

#[tokio::test(start_paused = true)]
async fn a_fast_request_is_not_hedged() {
    let source = hedged_after_reads(10, 1.0, |_| Some(ms(3)), 10).await;
    assert_eq!(source.hedges_fired(), 0);
    assert_eq!(source.get_ref().requests(), 10);
}

#[tokio::test(start_paused = true)]
async fn hedges_never_exceed_the_budget() {
    // Every request is slow, so every one would be hedged without a budget. The budget starts
    // with the reserve (2), spent at twice the delay.
    let reserve = f64::from(2u32);
    let source = hedged_after(1, 0.05, |_| Some(ms(50)));
    for i in 1..=1000u64 {
        source.read_at(0, 10).await.unwrap();
        assert!(
            source.hedges_fired() as f64 <= 0.05 * i as f64 + reserve + 1e-9,
            "{} hedges after {i} requests",
            source.hedges_fired()
        );
    }
    assert_eq!(source.hedges_fired(), 52, "the budget is used");

    // The same with 1000 requests at once.
    let source = hedged_after(1, 0.05, |_| Some(ms(50)));
    let reads = (0..1000).map(|_| source.read_at(0, 10));
    for result in futures_join_all(reads).await {
        result.unwrap();
    }
    assert_eq!(source.requests(), 1000);
    assert!(source.hedges_fired() <= 52, "{source:?}");
    assert_eq!(source.get_ref().requests(), 1000 + source.hedges_fired());

    // A budget of 0 is no hedge at all, not even the reserve.
    let source = hedged_after_reads(1, 0.0, |_| Some(ms(50)), 10).await;
    assert_eq!(source.hedges_fired(), 0);
    assert_eq!(source.get_ref().requests(), 10);
}

/// A source whose first request for an offset takes `latency(offset)`, and any later one (a
/// hedge) 1 ms.
fn first_slow(latency: fn(u64) -> Duration) -> Scripted {
    let seen = Mutex::new(std::collections::HashSet::new());
    Scripted::new(abi_testkit::pattern_vec(1 << 16)).delay_with(move |r| {
        let first = seen.lock().unwrap().insert(r.offset);
        Delay::Sleep(if first { latency(r.offset) } else { ms(1) })
    })
}

#[tokio::test(start_paused = true)]
async fn a_straggler_gets_the_reserve_when_the_usual_tail_took_the_rest() {
    // Read i: every 10th is slow enough for the 3 ms delay (5 ms: the usual tail, twice what a
    // 5% budget pays for), every 100th a straggler (200 ms), the rest 1 ms; hedges 1 ms. At the
    // delay, reads hedge only while more than the reserve is saved, so the tail never takes
    // the reserve; a straggler, still unanswered at twice the delay (6 ms), takes it. (Without
    // the reserve the tail takes every hedge as soon as it is earned, and stragglers wait.)
    let source = Hedged::new(first_slow(|i| match i {
        i if i % 100 == 99 => ms(200),
        i if i % 10 == 9 => ms(5),
        _ => ms(1),
    }))
    .with_fixed_delay(ms(3))
    .with_budget(0.05);
    // 1000 reads, read i starting at i / 10 ms: about 10 in flight at a time.
    let reads = (0..1000u64).map(|i| {
        let source = &source;
        async move {
            tokio::time::sleep(ms(i / 10)).await;
            let t0 = Instant::now();
            let data = source.read_at(i, 10).await.unwrap();
            assert_eq!(data[..], expected(i as usize, 10)[..]);
            t0.elapsed()
        }
    });
    let slowest = futures_join_all(reads).await.into_iter().max().unwrap();
    assert!(
        slowest <= ms(8),
        "a straggler waited {slowest:?} (not hedged): {source:?}"
    );
    assert_eq!(source.hedges_denied(), 0, "{source:?}");
    assert!(
        source.hedges_fired() as f64 <= 0.05 * 1000.0 + 2.0,
        "{source:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_learned_delay_follows_recent_latencies() {
    // 2 ms usually, 200 ms for every 50th request.
    let source = Hedged::new(scripted(|n| {
        Some(if n % 50 == 49 { ms(200) } else { ms(2) })
    }));
    assert_eq!(source.delay(), None, "nothing learned yet");
    let mut slowest = Duration::ZERO;
    for _ in 0..500 {
        let t0 = Instant::now();
        source.read_at(0, 10).await.unwrap();
        slowest = slowest.max(t0.elapsed());
    }
    // The p95 of the latencies is 2 ms (the floor).
    assert_eq!(source.delay(), Some(ms(2)), "{source:?}");
    assert_eq!(
        source.hedges_won(),
        10,
        "the 10 stragglers were hedged: {source:?}"
    );
    assert!(source.hedges_fired() as f64 <= 0.05 * 500.0);
    // Later stragglers take ~4 ms too.
    let t0 = Instant::now();
    for _ in 0..50 {
        let t = Instant::now();
        source.read_at(0, 10).await.unwrap();
        assert!(t.elapsed() <= ms(5), "a read took {:?}", t.elapsed());
    }
    assert!(t0.elapsed() < ms(250));
    // Every straggler came after 20 answers, so each was hedged.
    assert!(slowest <= ms(5), "a straggler was not hedged: {slowest:?}");
}

#[tokio::test(start_paused = true)]
async fn a_read_sent_while_the_delay_is_learned_is_hedged_once_it_is() {
    // 64 reads at once on a new source, as 64 tasks start: read 5 takes 1 s, every other
    // request (its hedge too) 2 ms. When they are sent nothing is learned yet; once the others
    // have answered, the delay is known (2 ms, the floor) and the straggler, waiting longer
    // than that, is hedged.
    let source = Hedged::new(scripted(|n| Some(if n == 5 { ms(1000) } else { ms(2) })));
    let t0 = Instant::now();
    let reads = (0..64u64).map(|i| {
        let source = &source;
        async move {
            let data = source.read_at(i * 10, 10).await;
            (data, t0.elapsed())
        }
    });
    let results = futures_join_all(reads).await;
    for (i, (data, took)) in results.into_iter().enumerate() {
        assert_eq!(data.unwrap()[..], expected(i * 10, 10)[..]);
        assert!(took <= ms(8), "read {i} took {took:?}");
    }
    assert_eq!(source.delay(), Some(ms(2)), "{source:?}");
    assert_eq!(
        (
            source.hedges_fired(),
            source.hedges_won(),
            source.hedges_denied()
        ),
        (1, 1, 0),
        "{source:?}"
    );
    let live = source.get_ref().counts().live;
    assert_eq!(live, 0, "the straggler was dropped");
}

#[tokio::test(start_paused = true)]
async fn a_slow_read_the_budget_cannot_pay_for_is_counted() {
    // Every request takes 50 ms against a 1 ms delay, with a budget of 5%: the first two
    // reads spend the reserve (at twice the delay), the third finds nothing saved (0.15
    // hedges), is not hedged, and says so.
    let source = hedged_after_reads(1, 0.05, |_| Some(ms(50)), 3).await;
    assert_eq!(
        (source.hedges_fired(), source.hedges_denied()),
        (2, 1),
        "{source:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn one_failed_request_waits_for_the_other() {
    // The first fails at 20 ms, after the hedge was sent (10 ms); the hedge answers at 40 ms.
    let source =
        Hedged::new(scripted(|n| Some(if n == 0 { ms(20) } else { ms(30) })).fail_request(0))
            .with_fixed_delay(ms(10))
            .with_budget(1.0);
    let t0 = Instant::now();
    let data = source.read_at(0, 10).await.unwrap();
    assert_eq!(data[..], expected(0, 10)[..]);
    assert_eq!(t0.elapsed(), ms(40));
    assert_eq!(source.hedges_won(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_dropped_hedged_read_drops_both_requests() {
    let source = hedged_after(10, 1.0, |n| Some(if n < 2 { ms(1000) } else { ms(1) }));
    {
        let read = source.read_at(0, 10);
        // Run it past the hedge delay, then drop it.
        let result = tokio::time::timeout(ms(15), read).await;
        assert!(result.is_err());
        assert_eq!(source.get_ref().requests(), 2, "the hedge was sent");
    }
    let live = source.get_ref().counts().live;
    assert_eq!(live, 0, "both requests were dropped");
    let data = source.read_at(20, 10).await.unwrap();
    assert_eq!(data[..], expected(20, 10)[..]);
}

/// Joins futures without a `futures` dependency: spawns nothing, polls them all in turn.
async fn futures_join_all<F: std::future::Future>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output> {
    let mut futures: Vec<_> = futures.map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *output = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().map(|o| o.unwrap()).collect()
}

#[tokio::test(start_paused = true)]
async fn a_delay_too_long_to_add_to_an_instant_never_hedges_and_does_not_panic() {
    // `with_fixed_delay(Duration::MAX)` (or a learned floor as long) is a way to say "never
    // hedge": the read waits for its answer, with no hedge, rather than panicking on an
    // instant's overflow.
    for (policy, source) in [
        (
            "fixed MAX",
            Hedged::new(scripted(|_| Some(ms(30)))).with_fixed_delay(Duration::MAX),
        ),
        (
            "fixed MAX / 2 + 1 ms",
            Hedged::new(scripted(|_| Some(ms(30)))).with_fixed_delay(Duration::MAX / 2 + ms(1)),
        ),
        (
            "learned, floor MAX",
            Hedged::new(scripted(|_| Some(ms(30)))).with_learned_delay(0.95, Duration::MAX, 1000),
        ),
    ] {
        let source = source.with_budget(1.0);
        let data = source.read_at(100, 50).await.unwrap();
        assert_eq!(data[..], expected(100, 50)[..], "{policy}");
        assert_eq!(source.hedges_fired(), 0, "{policy}");
    }
}
