//! One `RequestLimiter` per store: every input, clone, slice, read-ahead request and cache fill
//! on it shares one bound on requests in flight; reads served from memory never wait for it.

use std::io;
use std::sync::Arc;

use abi_testkit::{Delay, Scripted};
use async_buffered_input::layer::{Limited, RequestLimiter};
use async_buffered_input::source::PositionalSource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};
use bytes::Bytes;

/// A source whose requests stay in flight for four yields (so that they overlap), counting how
/// many run at once and the most ever, and its requests (`len` calls too).
fn concurrency(len: usize) -> Scripted {
    Scripted::new(abi_testkit::pattern_vec(len))
        .length_is_a_request()
        .delay_with(|r| {
            if r.is_length {
                Delay::Ready
            } else {
                Delay::Yields(4)
            }
        })
}

const FILE: usize = 1 << 20;
const INPUTS: usize = 10_000;
const TASKS: usize = 64;

/// 10,000 inputs (a third of them clones, a third slices) read by 64 tasks with read-ahead over
/// one store behind `limiter`; returns the most requests the store saw at once.
async fn run(limiter: RequestLimiter) -> usize {
    let store = Arc::new(limiter.wrap(concurrency(FILE)));
    let expected = Arc::new(abi_testkit::pattern_vec(FILE));
    let root = AsyncBufferedInput::with_capacity(
        4096,
        PositionalFetch::from_arc(Arc::clone(&store)).with_read_ahead(ReadAhead::new(4096, 4)),
    );
    let mut inputs = Vec::with_capacity(INPUTS);
    for i in 0..INPUTS {
        let start = (i * 7919 % (FILE - 32 * 1024)) as u64;
        let input = match i % 3 {
            0 => AsyncBufferedInput::with_capacity(
                4096,
                PositionalFetch::from_arc(Arc::clone(&store))
                    .with_read_ahead(ReadAhead::new(4096, 4)),
            ),
            1 => root.clone(),
            _ => root.slice(0, FILE as u64).await.unwrap(),
        };
        inputs.push((start, input));
    }
    let mut tasks = tokio::task::JoinSet::new();
    let per_task = INPUTS / TASKS + 1;
    while !inputs.is_empty() {
        let mine: Vec<_> = inputs.drain(..per_task.min(inputs.len())).collect();
        let expected = Arc::clone(&expected);
        tasks.spawn(async move {
            for (start, mut input) in mine {
                input.seek_to(start);
                // Small sequential reads start read-ahead: several requests per input in
                // flight.
                let mut buf = vec![0u8; 100];
                for i in 0..160 {
                    input.read_bytes(&mut buf).await.unwrap();
                    let at = start as usize + i * buf.len();
                    assert_eq!(buf, expected[at..at + buf.len()], "bytes at {at}");
                }
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
    // Read-ahead left in flight by dropped inputs is aborted asynchronously.
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while limiter.in_flight() > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("every turn was given back");
    let source: &Limited<Scripted> = &store;
    assert_eq!(
        limiter.requests(),
        source.get_ref().requests(),
        "every request to the store took a turn"
    );
    // A turn is taken before the request starts and given back after it ends, so the
    // limiter's count encloses the store's at every moment (equal only by timing).
    assert!(
        limiter.max_in_flight() >= source.get_ref().counts().max_live as usize,
        "{limiter:?}"
    );
    source.get_ref().counts().max_live as usize
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_thousand_inputs_never_exceed_the_limit() {
    let limiter = RequestLimiter::new(32);
    let max = run(limiter.clone()).await;
    assert!(max <= 32, "{max} requests in flight with a limit of 32");
    assert!(limiter.waited() > 0, "the limit was reached: {limiter:?}");
}

/// The control: without a limit the same run has more than 32 requests in flight, so the test
/// above could fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_a_limit_the_same_run_exceeds_32() {
    let max = run(RequestLimiter::unlimited()).await;
    assert!(
        max > 32,
        "only {max} requests in flight at most: the test is too gentle"
    );
}

/// A source whose bytes are all at hand (`try_read_at`) and whose requests never end.
fn at_hand_only(data: Vec<u8>) -> Scripted {
    Scripted::new(data).all_at_hand().delay(Delay::Forever)
}

/// Takes `limiter`'s only turn with a request that never ends; the turn is held while the
/// returned task lives.
fn hold_the_only_turn(
    limiter: &RequestLimiter,
) -> tokio_test::task::Spawn<impl std::future::Future<Output = ()>> {
    let blocker = limiter.wrap(at_hand_only(vec![0u8; 1]));
    let mut held = tokio_test::task::spawn(async move {
        let _ = blocker.read_at(0, 1).await;
    });
    assert!(held.poll().is_pending());
    assert_eq!(limiter.in_flight(), 1);
    held
}

/// A limiter of one turn, and that turn, held (as [`hold_the_only_turn`]).
fn a_limiter_of_one_held() -> (
    RequestLimiter,
    tokio_test::task::Spawn<impl std::future::Future<Output = ()>>,
) {
    let limiter = RequestLimiter::new(1);
    let held = hold_the_only_turn(&limiter);
    (limiter, held)
}

/// Bytes at hand (`try_read_at`) are served while every turn is taken.
#[tokio::test]
async fn bytes_at_hand_never_wait() {
    let (limiter, _held) = a_limiter_of_one_held();
    let source = limiter.wrap(at_hand_only(abi_testkit::pattern_vec(100)));
    let mut buf = [0u8; 10];
    assert_eq!(source.try_read_at(5, &mut buf), 10);
    assert_eq!(buf[..], abi_testkit::pattern_vec(100)[5..15]);
    assert_eq!(limiter.requests(), 1, "only the held request took a turn");
}

#[cfg(feature = "cache")]
mod cached {
    use super::*;
    use async_buffered_input::cache::{BlockCache, Cached};

    /// Cache hits never take a turn: after one read fills the cache, a second read makes no
    /// request, even with every turn taken.
    #[tokio::test]
    async fn cache_hits_do_not_wait_for_a_turn() {
        let limiter = RequestLimiter::new(1);
        let cache = BlockCache::with_block_size(1 << 20, 4096);
        let store = Cached::with_key(limiter.wrap(concurrency(64 * 1024)), cache, "f");
        let first = store.read_at(0, 64 * 1024).await.unwrap();
        let after_fill = limiter.requests();
        assert!(after_fill > 0);

        let held = hold_the_only_turn(&limiter);
        let again = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            store.read_at(0, 64 * 1024),
        )
        .await
        .expect("a cache hit waited for a turn")
        .unwrap();
        drop(held);
        assert_eq!(again, first);
        assert_eq!(again[..], abi_testkit::pattern_vec(64 * 1024)[..]);
        assert_eq!(limiter.requests(), after_fill + 1, "no request for a hit");
    }
}

/// Near reads waiting for a turn share one request (`Limited`'s coalescing).
mod sharing {
    use super::*;

    /// What a request at an offset does.
    #[derive(Clone, Copy)]
    enum Answer {
        Now,
        Never,
        Fail,
    }

    /// A source that logs the ranges it was asked for, and answers each as `answer` says.
    fn recording(answer: fn(u64) -> Answer) -> Scripted {
        Scripted::new(abi_testkit::pattern_vec(FILE))
            .delay_with(move |r| match answer(r.offset) {
                Answer::Never => Delay::Forever,
                Answer::Now | Answer::Fail => Delay::Ready,
            })
            .fail_if(move |r| matches!(answer(r.offset), Answer::Fail))
            .error(io::ErrorKind::ConnectionReset, "boom")
    }

    /// Spawns a read of each range over `source`, and lets each run until it waits for a turn.
    async fn waiting_reads(
        source: &Arc<Limited<Scripted>>,
        ranges: &[(u64, usize)],
    ) -> Vec<tokio::task::JoinHandle<io::Result<Bytes>>> {
        let reads = ranges
            .iter()
            .map(|&(offset, len)| {
                let source = Arc::clone(source);
                tokio::spawn(async move { source.read_at(offset, len).await })
            })
            .collect();
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        reads
    }

    fn expected(offset: u64, len: usize) -> Vec<u8> {
        abi_testkit::pattern_vec(FILE)[offset as usize..offset as usize + len].to_vec()
    }

    #[tokio::test]
    async fn near_waiting_reads_share_one_request_far_ones_do_not() {
        let (limiter, held) = a_limiter_of_one_held();
        let source = Arc::new(limiter.wrap(recording(|_| Answer::Now)));
        // The first three fit in 128 KiB together; the last is 900 KB away.
        let ranges = [(0, 100), (1000, 100), (10_000, 4096), (900_000, 100)];
        let reads = waiting_reads(&source, &ranges).await;
        assert!(source.get_ref().log().is_empty(), "all wait for the turn");
        drop(held);
        for (read, &(offset, len)) in reads.into_iter().zip(&ranges) {
            let data = read.await.unwrap().unwrap();
            assert_eq!(data[..], expected(offset, len)[..], "read at {offset}");
        }
        assert_eq!(
            source.get_ref().log(),
            [(0, 14_096), (900_000, 100)],
            "one request for the near three, one for the far one"
        );
        assert_eq!(
            (limiter.coalesced(), limiter.requests()),
            (2, 3),
            "{limiter:?}"
        );
        assert!(limiter.max_in_flight() <= 1);
    }

    #[tokio::test]
    async fn a_read_that_finds_a_turn_free_goes_alone() {
        let limiter = RequestLimiter::new(4);
        let source = Arc::new(limiter.wrap(recording(|_| Answer::Now)));
        let (a, b) = tokio::join!(source.read_at(0, 100), source.read_at(100, 100));
        assert_eq!(a.unwrap()[..], expected(0, 100)[..]);
        assert_eq!(b.unwrap()[..], expected(100, 100)[..]);
        assert_eq!(source.get_ref().log(), [(0, 100), (100, 100)]);
        assert_eq!(limiter.coalesced(), 0);
    }

    #[tokio::test]
    async fn reads_taken_along_by_a_dropped_read_wait_for_a_turn_again() {
        let (limiter, held) = a_limiter_of_one_held();
        // The shared request (at 0) never answers; a request of its own at 500 does.
        let source = Arc::new(limiter.wrap(recording(|offset| {
            if offset == 0 {
                Answer::Never
            } else {
                Answer::Now
            }
        })));
        let mut reads = waiting_reads(&source, &[(0, 100), (500, 100)]).await;
        drop(held);
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        assert_eq!(source.get_ref().log(), [(0, 600)], "shared");
        assert_eq!(limiter.coalesced(), 1);
        let taken = reads.pop().unwrap();
        let leader = reads.pop().unwrap();
        leader.abort();
        assert!(leader.await.unwrap_err().is_cancelled());
        let data = tokio::time::timeout(std::time::Duration::from_secs(5), taken)
            .await
            .expect("the read taken along was lost with its leader")
            .unwrap()
            .unwrap();
        assert_eq!(data[..], expected(500, 100)[..]);
        assert_eq!(source.get_ref().log(), [(0, 600), (500, 100)]);
        assert_eq!(limiter.in_flight(), 0);
    }

    #[tokio::test]
    async fn a_failed_shared_request_fails_each_read_naming_its_range() {
        let (limiter, held) = a_limiter_of_one_held();
        let source = Arc::new(limiter.wrap(recording(|_| Answer::Fail)));
        let reads = waiting_reads(&source, &[(0, 100), (500, 100)]).await;
        drop(held);
        let mut errors = Vec::new();
        for read in reads {
            errors.push(read.await.unwrap().unwrap_err());
        }
        assert_eq!(source.get_ref().log(), [(0, 600)]);
        assert!(errors
            .iter()
            .all(|e| e.kind() == io::ErrorKind::ConnectionReset));
        assert_eq!(
            errors[0].to_string(),
            "boom: read of 600 bytes at 0 (request 0)",
            "the leader's error as it came"
        );
        let taken = errors[1].to_string();
        assert!(
            taken.contains("100 bytes at offset 500") && taken.contains("boom"),
            "{taken}"
        );
    }

    /// The slices at the edges: a read straddling the end gets what there is, one past the end
    /// and one of no bytes get none, overlapping reads get their own bytes, and a read taken
    /// along and then dropped leaves the others their answers.
    #[tokio::test]
    async fn shared_requests_slice_right_at_the_edges() {
        let (limiter, held) = a_limiter_of_one_held();
        let source = Arc::new(limiter.wrap(recording(|_| Answer::Now)));
        let end = FILE as u64;
        let ranges = [
            (end - 1000, 100),  // the leader
            (end - 50, 200),    // straddles the end
            (end + 10, 30),     // past the end
            (end - 500, 0),     // no bytes
            (end - 1050, 1000), // overlaps the leader
            (end - 700, 100),   // dropped once taken along
        ];
        let mut reads = waiting_reads(&source, &ranges).await;
        let dropped = reads.pop().unwrap();
        drop(held);
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        dropped.abort();
        let expect = |offset: u64, len: usize| {
            let from = (offset as usize).min(FILE);
            abi_testkit::pattern_vec(FILE)[from..(from + len).min(FILE)].to_vec()
        };
        for (read, &(offset, len)) in reads.into_iter().zip(&ranges) {
            let data = read.await.unwrap().unwrap();
            assert_eq!(data[..], expect(offset, len)[..], "read at {offset}");
        }
        assert_eq!(
            source.get_ref().log(),
            [(end - 1050, 1200)],
            "one request for all, to the furthest end asked"
        );
        assert_eq!(
            (limiter.coalesced(), limiter.in_flight()),
            (5, 0),
            "{limiter:?}"
        );
    }

    /// A small read taken along does not keep the shared request's whole buffer alive: a
    /// cache (or anything) keeping 100 bytes of it must not hold 64 KB it never counted.
    #[tokio::test]
    async fn a_small_part_does_not_pin_the_shared_buffer() {
        let (limiter, held) = a_limiter_of_one_held();
        let source =
            Arc::new(limiter.wrap(Scripted::new(abi_testkit::pattern_vec(FILE)).counted_buffers()));
        let ranges = [(0u64, 100usize), (64_000, 100)];
        let reads = ranges
            .iter()
            .map(|&(offset, len)| {
                let source = Arc::clone(&source);
                tokio::spawn(async move { source.read_at(offset, len).await })
            })
            .collect::<Vec<_>>();
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        drop(held);
        let mut answers = Vec::new();
        for read in reads {
            answers.push(read.await.unwrap().unwrap());
        }
        assert_eq!(limiter.coalesced(), 1, "the two shared a request");
        let kept = answers.pop().unwrap();
        drop(answers);
        assert_eq!(kept[..], expected(64_000, 100)[..]);
        assert_eq!(
            source.get_ref().counts().buffers_freed,
            1,
            "a 100-byte answer kept the shared 64,100-byte buffer alive"
        );
    }
}
