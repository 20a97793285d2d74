//! Progress kept across retries, and the retry policy (`layer::Retrying`; its attempt
//! deadline: `attempt_deadline.rs`).
//!
//! Finding 7 of the fault-injection report: a long read over a positional source that fails
//! about 20% of requests, with small read-ahead chunks, effectively never completed, because
//! each attempt started over. A failed read keeps what it fetched (a bulk read, the values of
//! its steps before the failed one), within `MAX_KEPT_FOR_RETRY` and only for errors a retry
//! can get past, and read-ahead chunks that arrived after a failed one are kept, whether the
//! source answered at once or through a spawned request: a retry asks only for what is missing.

use std::io::ErrorKind;
use std::sync::Mutex;
use std::time::Duration;

use abi_testkit::*;
use async_buffered_input::layer::Retrying;
use async_buffered_input::source::{MemorySource, PositionalSource};
use async_buffered_input::{AsyncBufferedInput, InputError};
use async_buffered_input::{PositionalFetch, ReadAhead};

/// A source over `data` that fails a seeded `percent` of its requests with `kind` ("flaky: read
/// of … bytes at …").
fn flaky(data: Vec<u8>, percent: u64, kind: ErrorKind) -> Scripted {
    let rng = Mutex::new(Rng::new(20));
    Scripted::new(data)
        .fail_if(move |_| rng.lock().unwrap().below(100) < percent)
        .error(kind, "flaky")
}

/// The most requests `source` saw at one offset.
fn most_requests_at_one_offset(source: &Scripted) -> u64 {
    source.per_offset().values().copied().max().unwrap_or(0)
}

/// The length of the flaky tests' file, and their read-ahead chunk.
const LEN: usize = 1 << 20;
const CHUNK: usize = 4096;

/// The flaky tests' file (a pattern of [`LEN`] bytes) behind a [`flaky`] source failing 20% of its
/// requests, read through an 8 KiB window with read-ahead in 4 KiB chunks, after a header of
/// `header` bytes read (again and again until it comes), so that the long read that follows
/// continues a sequential one: read-ahead serves it.
async fn flaky_after_a_header(
    header: usize,
) -> (
    Vec<u8>,
    std::sync::Arc<Scripted>,
    AsyncBufferedInput<PositionalFetch<Scripted>>,
) {
    let data = pattern_vec(LEN);
    let source = std::sync::Arc::new(flaky(data.clone(), 20, ErrorKind::ConnectionReset));
    let fetch = PositionalFetch::from_arc(source.clone()).with_read_ahead(ReadAhead::new(CHUNK, 4));
    let mut input = AsyncBufferedInput::with_capacity(8192, fetch);
    let mut first = vec![0u8; header];
    while input.read_bytes(&mut first).await.is_err() {}
    (data, source, input)
}

/// Makes `call` (a read at `at` over [`flaky_after_a_header`]'s input) again until it succeeds;
/// checks that each failure is the source's, leaves the position at `at` and says so in its
/// payload, that there were some (the source fails a fifth of its requests) and not endless;
/// the attempts.
macro_rules! until_done {
    ($input:ident, $at:expr, $call:expr) => {{
        let mut attempts = 0;
        loop {
            attempts += 1;
            match $call.await {
                Ok(()) => break,
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::ConnectionReset, "{e}");
                    assert_eq!($input.position(), $at, "a failed read consumes nothing");
                    let payload = e.get_ref().and_then(|p| p.downcast_ref::<InputError>());
                    assert_eq!(payload.expect("an InputError").position(), $at, "{e}");
                    assert!(attempts < 1000, "no progress after {attempts} attempts");
                }
            }
        }
        assert!(
            attempts > 10,
            "the source failed reads: {attempts} attempts"
        );
        attempts
    }};
}

#[tokio::test]
async fn a_long_read_over_a_flaky_source_completes_by_retrying_it() {
    let (data, source, mut input) = flaky_after_a_header(10).await;
    let mut buf = vec![0u8; LEN - 10];
    let attempts = until_done!(input, 10, input.read_bytes(&mut buf));
    assert_bytes(&buf, &data[10..], 10, "the whole read");
    // Every byte fetched once: a retry reuses what its failed attempts fetched.
    let fetched = input.stats().bytes_from_source;
    assert!(
        fetched <= (LEN + 8192) as u64,
        "{fetched} bytes fetched for {LEN} in {attempts} attempts"
    );
    // Each chunk asked about 1.25 times (a fifth of the requests fail): the chunks fetched
    // after a failed one are kept, not asked again.
    let chunks = (LEN / CHUNK) as u64;
    assert!(
        source.requests() < chunks * 3 / 2,
        "{} requests for {chunks} chunks in {attempts} attempts",
        source.requests()
    );
    assert!(
        most_requests_at_one_offset(&source) < 10,
        "one offset requested {} times",
        most_requests_at_one_offset(&source)
    );
    assert_eq!(input.position(), LEN as u64);
}

#[tokio::test(start_paused = true)]
async fn a_retrying_source_completes_the_read_in_one_call() {
    let data = pattern_vec(LEN);
    let flaky = flaky(data.clone(), 20, ErrorKind::TimedOut);
    let source = std::sync::Arc::new(
        Retrying::new(flaky)
            .with_attempts(8)
            .with_backoff(Duration::from_millis(10), Duration::from_millis(80)),
    );
    let fetch = PositionalFetch::from_arc(source.clone()).with_read_ahead(ReadAhead::new(4096, 4));
    let mut input = AsyncBufferedInput::with_capacity(8192, fetch);
    let mut header = [0u8; 10];
    input
        .read_bytes(&mut header)
        .await
        .expect("retried to success");
    let mut buf = vec![0u8; LEN - 10];
    input
        .read_bytes(&mut buf)
        .await
        .expect("retried to success");
    assert_bytes(&buf, &data[10..], 10, "the whole read");
    assert!(
        source.get_ref().requests() > (LEN / 4096) as u64,
        "some requests failed and were retried"
    );
}

#[tokio::test(start_paused = true)]
async fn errors_that_cannot_succeed_are_not_retried_and_giving_up_says_so() {
    // Not transient: one attempt, the error as it was.
    let missing = Retrying::new(flaky(vec![1u8; 10], 100, ErrorKind::NotFound)).with_attempts(5);
    let e = missing.read_at(0, 5).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(missing.get_ref().requests(), 1);

    // Transient, always: every attempt, with the backoff between them, then the last error.
    let down = Retrying::new(flaky(vec![1u8; 10], 100, ErrorKind::ConnectionRefused))
        .with_attempts(4)
        .with_backoff(Duration::from_millis(100), Duration::from_millis(250));
    let started = tokio::time::Instant::now();
    let e = down.read_at(3, 5).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionRefused);
    assert_eq!(down.get_ref().requests(), 4);
    // 100, 200 and 250 ms, each with up to as much again added at random (jitter).
    let waited = started.elapsed();
    let least = Duration::from_millis(100 + 200 + 250);
    assert!(waited >= least && waited < 2 * least, "{waited:?}");
    assert!(e.to_string().contains("gave up after 4 attempts"), "{e}");
    assert!(
        chain(&e).contains("flaky: read of 5 bytes at 3"),
        "{}",
        chain(&e)
    );
}

#[tokio::test]
async fn a_long_bulk_read_over_a_flaky_source_completes_by_retrying_it() {
    // The window is larger than the bulk read's 4 KiB steps: each step refills the window.
    let (data, _, mut input) = flaky_after_a_header(8).await;
    let mut values = vec![0u32; (LEN - 8) / 4];
    let attempts = until_done!(input, 8, input.read_u32_into(&mut values));
    for (i, (&value, bytes)) in values.iter().zip(data[8..].chunks_exact(4)).enumerate() {
        let expected = u32::from_be_bytes(bytes.try_into().unwrap());
        assert_eq!(value, expected, "value {i} of {attempts} attempts");
    }
    assert_eq!(input.position(), LEN as u64);
    // A retry fetches only what its failed attempts had not: about every byte once.
    let fetched = input.stats().bytes_from_source;
    assert!(
        fetched <= (2 * LEN) as u64,
        "{fetched} bytes fetched for {LEN} in {attempts} attempts"
    );
    let stats = input.stats();
    assert_eq!(stats.bytes_from_window + stats.bytes_direct, LEN as u64);
}

/// A memory source that fails the first request at or past `fail_from` with `kind`.
fn fail_once_from(data: Vec<u8>, fail_from: u64, kind: ErrorKind) -> Scripted {
    Scripted::new(data)
        .fail_once_if(move |r| r.offset >= fail_from)
        .error(kind, "failing once")
}

#[tokio::test]
async fn a_failed_read_keeps_at_most_max_kept_for_retry_bytes() {
    const MAX: usize = 16 << 20; // what a failed read keeps for its retry, as documented
    const CHUNK: usize = 1 << 20;
    let len = MAX + 3 * CHUNK;
    let data = pattern_vec(len);
    let source = fail_once_from(
        data.clone(),
        (MAX + CHUNK) as u64,
        ErrorKind::ConnectionReset,
    );
    let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::new(CHUNK, 2));
    let mut input = AsyncBufferedInput::with_capacity(8192, fetch);
    let mut header = [0u8; 10];
    input.read_bytes(&mut header).await.unwrap();
    let mut buf = vec![0u8; len - 10];
    let e = input.read_bytes(&mut buf).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionReset, "{e}");
    let before = input.stats().bytes_from_source;
    input.read_bytes(&mut buf).await.unwrap();
    assert_bytes(&buf, &data[10..], 10, "the retry");
    // The failed attempt had fetched more than `MAX` bytes; `MAX` of them, counted from the
    // position, were kept: the retry fetched the rest.
    assert_eq!(
        input.stats().bytes_from_source - before,
        (len - 10 - MAX) as u64
    );
}

#[tokio::test]
async fn a_read_past_the_end_keeps_nothing() {
    const LEN: usize = 100_000;
    let data = pattern_vec(LEN);
    let mut input = AsyncBufferedInput::with_capacity(
        8192,
        PositionalFetch::new(MemorySource::new(data.clone())),
    );
    let mut buf = vec![0u8; LEN + 1];
    let e = input.read_bytes(&mut buf).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    let fetched = input.stats().bytes_from_source;
    assert_eq!(
        fetched, LEN as u64,
        "the failed read fetched everything there was"
    );
    // No retry can get past the end: what it fetched is not kept, and a read of what is there
    // fetches it again.
    input.read_bytes(&mut buf[..LEN]).await.unwrap();
    assert_bytes(&buf[..LEN], &data, 0, "the read after");
    assert_eq!(input.stats().bytes_from_source - fetched, LEN as u64);
}

#[tokio::test(start_paused = true)]
async fn spawned_chunks_that_arrived_after_a_failed_one_are_not_requested_again() {
    const LEN: usize = 64 << 10;
    const CAP: u64 = 1024;
    const CHUNK: u64 = 4096;
    let data = pattern_vec(LEN);
    // Requests take time, so that they run as spawned tasks: the first request at `CAP` (the
    // first read-ahead chunk: the window's first refill is a plain request for `[0, CAP)`, the
    // read after it, sequential, starts the read-ahead there) fails after 20 ms, every other
    // request succeeds after 1 ms.
    let source = std::sync::Arc::new(
        Scripted::new(data.clone())
            .fail_once_if(|r| r.offset == CAP)
            .error(ErrorKind::TimedOut, "slow failure")
            .delay_with(|r| Delay::Sleep(Duration::from_millis(if r.fails { 20 } else { 1 }))),
    );
    let fetch = PositionalFetch::from_arc(source.clone())
        .with_read_ahead(ReadAhead::new(CHUNK as usize, 4));
    let mut input = AsyncBufferedInput::with_capacity(CAP as usize, fetch);
    let mut header = [0u8; 10];
    input.read_bytes(&mut header).await.unwrap();
    let mut buf = vec![0u8; LEN - 10];
    let e = input.read_bytes(&mut buf).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TimedOut, "{e}");
    input.read_bytes(&mut buf).await.unwrap();
    assert_bytes(&buf, &data[10..], 10, "the retry");
    let per_offset = source.per_offset();
    assert_eq!(
        per_offset[&CAP], 2,
        "the failed chunk, asked again: {per_offset:?}"
    );
    // The three chunks after it had arrived (1 ms) when it failed (20 ms): kept, not asked
    // again.
    for k in 1..4 {
        let at = CAP + k * CHUNK;
        assert_eq!(per_offset[&at], 1, "the chunk at {at}: {per_offset:?}");
    }
    assert!(per_offset.values().all(|&n| n <= 2), "{per_offset:?}");
}

#[tokio::test]
async fn a_read_past_the_end_drops_what_a_failed_read_kept() {
    const LEN: usize = 25_000;
    let data = pattern_vec(LEN);
    let source = fail_once_from(data.clone(), 20_000, ErrorKind::ConnectionReset);
    let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::new(4096, 2));
    let mut input = AsyncBufferedInput::with_capacity(8192, fetch);
    let mut buf = vec![0u8; LEN];
    input.read_bytes(&mut buf[..10]).await.unwrap();
    // Straight into `buf`, in read-ahead chunks from 8192: the chunk at 20480 fails, and
    // `[10, 20480)` is kept.
    let e = input.read_bytes(&mut buf[..LEN - 10]).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionReset, "{e}");
    // Past the end by 5 bytes: the kept bytes, then a window refill for the last 4525.
    let e = input.read_bytes(&mut buf[..LEN - 5]).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    // Nothing is kept after that: the read of what is there fetches `[10, 20480)` again.
    let before = input.stats().bytes_from_source;
    input.read_bytes(&mut buf[..LEN - 10]).await.unwrap();
    assert_bytes(&buf[..LEN - 10], &data[10..], 10, "the read after");
    let fetched = input.stats().bytes_from_source - before;
    assert!(
        fetched >= 20_470,
        "{fetched} bytes fetched: kept ones were used"
    );
}

#[tokio::test]
async fn the_checksum_of_reads_retried_over_a_flaky_source_is_the_data_s() {
    const LEN: usize = 300_000;
    let data = pattern_vec(LEN);
    for capacity in [1000, 8192] {
        let source = flaky(data.clone(), 20, ErrorKind::ConnectionReset);
        let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::new(4096, 3));
        let mut input = AsyncBufferedInput::with_capacity(capacity, fetch);
        input.start_checksum();
        let mut values = vec![0u32; 30_000];
        let mut bytes = vec![0u8; 100_000];
        let mut longs = vec![0u64; 5000];
        // After each failure, the checksum so far: it goes back to the position, behind the
        // bytes the failed read folded and kept, which the retry must fold again.
        while input.read_u32_into(&mut values).await.is_err() {
            let _ = input.checksum().await;
        }
        while input.read_bytes(&mut bytes).await.is_err() {
            let _ = input.checksum().await;
        }
        while input.read_u64_le_into(&mut longs).await.is_err() {
            let _ = input.checksum().await;
        }
        let pos = input.position() as usize;
        assert_eq!(pos, 120_000 + 100_000 + 40_000);
        assert_bytes(&bytes, &data[120_000..220_000], 120_000, "read_bytes");
        let crc = loop {
            if let Ok(crc) = input.checksum().await {
                break crc;
            }
        };
        assert_eq!(crc, crc32fast::hash(&data[..pos]), "capacity {capacity}");
    }
}
