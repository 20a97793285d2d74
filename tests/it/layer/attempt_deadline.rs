//! `Retrying`'s attempt deadline, on deterministic sources under tokio's paused clock: a
//! stalled attempt is abandoned and retried, the error says what was asked, the deadline grows
//! with the size, a hedged stack recovers from stalls, and streams are not served under a
//! deadline.

use std::io;
use std::time::Duration;

use abi_testkit::{pattern_vec, Delay, Scripted};
use async_buffered_input::layer::{is_transient, Hedged, Retrying};
use async_buffered_input::source::PositionalSource;
use async_buffered_input::{AsyncBufferedInput, PositionalFetch, ReadAhead, SourceError};

/// A source of 64 KiB whose n-th request (from 0) takes `latency(n)` (`None`: never answers).
fn stalling(latency: impl Fn(u64) -> Option<Duration> + Send + Sync + 'static) -> Scripted {
    Scripted::new(pattern_vec(1 << 16))
        .delay_with(move |r| latency(r.index).map_or(Delay::Forever, Delay::Sleep))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(start_paused = true)]
async fn a_stalled_attempt_hits_its_deadline_and_is_retried() {
    // The first request never answers; the second answers in 1 ms.
    let source = Retrying::new(stalling(|n| if n == 0 { None } else { Some(ms(1)) }))
        .with_attempts(3)
        .with_backoff(ms(10), ms(10))
        .with_attempt_deadline(ms(100), 1_000_000);
    assert_eq!(
        source.attempt_deadline(1000),
        Some(ms(101)),
        "base + 1000 B at 1 MB/s"
    );
    assert_eq!(
        Retrying::new(()).attempt_deadline(1000),
        None,
        "off by default"
    );
    let t0 = tokio::time::Instant::now();
    let data = source.read_at(0, 1000).await.unwrap();
    assert_eq!(data[..], pattern_vec(1000)[..]);
    // The deadline, the backoff (10 ms plus up to as much again: jitter), the second request.
    // Tokio's timer rounds a sleep up to the next millisecond, so the most is 20 ms.
    let took = t0.elapsed();
    assert!(
        took >= ms(101 + 10 + 1) && took <= ms(101 + 20 + 1),
        "deadline, backoff, second request: {took:?}"
    );
    assert_eq!(source.deadlines_hit(), 1);
    assert_eq!(source.requests(), 2);
    assert_eq!(
        source.get_ref().counts().live,
        0,
        "the stalled request was dropped"
    );
}

#[tokio::test(start_paused = true)]
async fn a_deadline_error_is_timed_out_and_says_what_was_asked() {
    let once = Retrying::new(stalling(|_| None).named("seg_1.cfs"))
        .with_attempts(1)
        .with_attempt_deadline(ms(50), 1 << 20);
    let err = once.read_at(4096, 100).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    assert!(is_transient(err.kind()));
    let message = err.to_string();
    assert!(message.contains("100 bytes at offset 4096"), "{message}");
    assert!(message.contains("seg_1.cfs"), "{message}");
    assert!(message.contains("gave up after 1 attempt:"), "{message}");
    // One line says why (the cause's text ends the message); the cause stays reachable with
    // its kind, and `source()` does not repeat it.
    assert!(message.contains("deadline of 50"), "{message}");
    assert!(std::error::Error::source(&err).is_none(), "{message}");
    let wrapped = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<SourceError>())
        .unwrap();
    assert_eq!(wrapped.cause().kind(), io::ErrorKind::TimedOut);
    assert_eq!(once.deadlines_hit(), 1);

    // Every attempt stalls: each hits the deadline, the last error says so.
    let down = Retrying::new(stalling(|_| None).named("seg_1.cfs"))
        .with_attempts(3)
        .with_backoff(ms(1), ms(1))
        .with_attempt_deadline(ms(50), 1 << 20);
    let err = down.read_at(4096, 100).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    let message = err.to_string();
    assert!(message.contains("gave up after 3 attempts"), "{message}");
    assert!(
        message.contains("100 bytes at offset 4096 from"),
        "{message}"
    );
    assert!(message.contains("seg_1.cfs"), "{message}");
    assert!(message.contains("deadline of 50"), "{message}");
    assert_eq!((down.deadlines_hit(), down.requests()), (3, 3));
    assert_eq!(down.get_ref().counts().live, 0);

    // A length request gets the base deadline.
    let length = Retrying::new(stalling(|_| None).length_is_a_request())
        .with_attempts(1)
        .with_attempt_deadline(ms(50), 1 << 20);
    let err = length.len().await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    assert!(err.to_string().contains("length of "), "{err}");
}

#[tokio::test(start_paused = true)]
async fn the_deadline_grows_with_the_size() {
    // 1 MB/s: 65 kB gets 50 ms + 65 ms, 100 B about 50 ms; requests answer in 110 ms.
    let source = Retrying::new(stalling(|_| Some(ms(110))))
        .with_attempts(1)
        .with_attempt_deadline(ms(50), 1_000_000);
    assert_eq!(
        source.read_at(0, 100).await.unwrap_err().kind(),
        io::ErrorKind::TimedOut
    );
    assert_eq!(source.read_at(0, 65_000).await.unwrap().len(), 65_000);
    assert_eq!(source.deadlines_hit(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_whole_stack_hedges_and_retries_stalls() {
    // Request 0 stalls forever, 1 (its hedge) too, 2 (the retry) answers in 2 ms: the first
    // attempt, both of its requests, is abandoned at its deadline.
    let stack = Retrying::new(
        Hedged::new(stalling(|n| if n < 2 { None } else { Some(ms(2)) }))
            .with_fixed_delay(ms(10))
            .with_budget(1.0),
    )
    .with_attempts(3)
    .with_backoff(ms(5), ms(5))
    .with_attempt_deadline(ms(100), 1 << 20);
    let data = stack.read_at(10, 10).await.unwrap();
    assert_eq!(data[..], pattern_vec(20)[10..]);
    assert_eq!(stack.deadlines_hit(), 1);
    let hedged = stack.get_ref();
    assert_eq!(hedged.hedges_fired(), 1);
    assert_eq!(hedged.get_ref().counts().live, 0);
}

#[tokio::test]
async fn with_a_deadline_it_serves_no_stream_without_one_the_inner_stream() {
    // A stream has no size to set a deadline by: with one, sequential runs stay ranged.
    const M: usize = 1 << 20;
    let data = pattern_vec(16 * M);
    for deadline in [None, Some(Duration::from_secs(5))] {
        let source =
            std::sync::Arc::new(Scripted::new(data.clone()).streaming(1 << 16, Delay::Ready));
        let mut retrying = Retrying::new(std::sync::Arc::clone(&source));
        if let Some(deadline) = deadline {
            retrying = retrying.with_attempt_deadline(deadline, 1 << 20);
        }
        assert_eq!(retrying.read_stream(0).is_some(), deadline.is_none());
        let fetch = PositionalFetch::new(retrying).with_read_ahead(ReadAhead::default());
        let mut input = AsyncBufferedInput::with_capacity(1 << 16, fetch);
        let mut buf = vec![0u8; 4096];
        for at in (0..16 * M).step_by(4096) {
            input.read_bytes(&mut buf).await.unwrap();
            assert!(buf[..] == data[at..at + 4096], "bytes at {at}");
        }
        let ranged: usize = source.log().iter().map(|&(_, n)| n).sum();
        if deadline.is_none() {
            // The inner source's stream, passed through: one, serving most of the run.
            assert_eq!(source.streams_opened(), 1, "{deadline:?}");
            assert!(ranged < 16 * M / 2, "{ranged} bytes ranged");
        } else {
            // Every byte from ranged requests, each under the deadline.
            assert_eq!(source.streams_opened(), 0, "{deadline:?}");
            assert!(ranged >= 16 * M, "{ranged} bytes ranged");
        }
    }
}
