//! Misbehaving sources: short reads, `Pending` between calls, an I/O error after partial data,
//! seeks that pend and seeks that fail. After every error: same `ErrorKind`, message naming the
//! position, `position()` unchanged, and the input keeps working once the source recovers.

use crate::common;

use std::io::{self, ErrorKind, SeekFrom};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use abi_testkit::*;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::StreamFetch;
use common::*;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt};

type Input = AsyncBufferedInput<StreamFetch<Hostile>>;

/// An input with a window of `cap` bytes over a [`Hostile`] stream of `data` that misbehaves
/// as `cfg` says, and the stream's log.
fn hostile_input(data: &[u8], cap: usize, cfg: HostileConfig) -> (Input, Arc<HostileLog>) {
    let source = Hostile::new(data.to_vec(), cfg);
    let log = source.log();
    (AsyncBufferedInput::with_capacity(cap, source), log)
}

/// The error of a `read_bytes` of `len` bytes, which must fail (`why` says why it should).
async fn read_bytes_err(input: &mut Input, len: usize, why: &str) -> io::Error {
    let mut buf = vec![0u8; len];
    input.read_bytes(&mut buf).await.expect_err(why)
}

/// After a failed operation: `e` is the source's error of `kind` naming the position `at`,
/// and the input is still at `at` with a window that holds `data`'s bytes.
#[track_caller]
fn assert_failed_at(
    input: &Input,
    data: &[u8],
    e: &io::Error,
    kind: ErrorKind,
    at: u64,
    ctx: &str,
) {
    assert_source_error(e, kind, at, ctx);
    check_window(input, data, at, ctx);
}

/// `AsyncSeekExt::seek` to `to`, which must succeed: the new position.
async fn seek(input: &mut Input, to: SeekFrom) -> u64 {
    AsyncSeekExt::seek(&mut input.tokio_io(), to).await.unwrap()
}

#[tokio::test]
async fn short_reads_fill_windows_and_direct_reads() {
    let data = pattern_vec(40_000);
    for cap in [1usize, 13, 64, 4096] {
        let cfg = HostileConfig {
            short_reads: true,
            seed: cap as u64,
            ..Default::default()
        };
        let (mut input, log) = hostile_input(&data, cap, cfg);
        let ctx = format!("cap {cap}");
        for n in [1usize, 5, cap, cap + 1, 3 * cap + 2, 100, 1000, 7] {
            read_ok(&mut input, &data, n, &ctx).await;
        }
        let rest = data.len() - input.position() as usize;
        read_ok(&mut input, &data, rest, &ctx).await;
        let s = input.stats();
        assert_eq!(
            s.bytes_from_source,
            log.delivered.load(Ordering::SeqCst),
            "{ctx}: {s:?}"
        );
        assert_eq!(
            s.bytes_from_window + s.bytes_direct,
            data.len() as u64,
            "{ctx}: {s:?}"
        );
        // Short reads of at most 13 bytes: at least len/13 source reads.
        assert!(
            s.underlying_reads >= (data.len() / 13) as u64,
            "{ctx}: {s:?}"
        );
    }
}

#[tokio::test]
async fn pending_between_calls_is_transparent() {
    let data = pattern_vec(30_000);
    let cfg = HostileConfig::pending();
    let (mut input, log) = hostile_input(&data, 1000, cfg);
    read_ok(&mut input, &data, 10, "pending").await;
    for (i, &expected) in data.iter().enumerate().take(2100).skip(10) {
        assert_eq!(
            input.read_byte().await.unwrap(),
            expected,
            "read_byte at {i}"
        );
    }
    read_ok(&mut input, &data, 5000, "pending direct").await;
    let owned = input.read_bytes_owned(999).await.unwrap();
    assert_bytes(&owned, &data[7100..8099], 7100, "read_bytes_owned");
    input.seek_to(20_000);
    read_ok(&mut input, &data, 1500, "pending after seek").await;
    assert_eq!(input.length().await.unwrap(), 30_000);
    read_ok(&mut input, &data, 10, "after length").await;
    assert_eq!(
        input.stats().underlying_seeks,
        log.seeks.load(Ordering::SeqCst),
        "a pending poll_complete must not start the seek again"
    );
}

/// Error exactly at a window refill: the read fails with the source's kind at the caller's
/// position, then the same read succeeds.
#[tokio::test]
async fn read_error_at_window_refill_then_recovery() {
    let data = pattern_vec(3000);
    let cfg = HostileConfig {
        fail_read_after: Some(1000),
        ..Default::default()
    };
    let (mut input, log) = hostile_input(&data, 64, cfg);
    read_ok(&mut input, &data, 1000, "direct read up to the error point").await;
    assert!(!log.read_error_fired.load(Ordering::SeqCst));
    let e = read_bytes_err(&mut input, 10, "the source fails at 1000").await;
    assert!(log.read_error_fired.load(Ordering::SeqCst));
    assert_failed_at(&input, &data, &e, HOSTILE_READ_ERROR, 1000, "refill error");
    read_ok(&mut input, &data, 10, "after recovery").await;
    read_ok(&mut input, &data, 1990, "to the end").await;
}

/// Error in the middle of a direct read (short reads, part of the data already delivered into
/// the caller's buffer): all or nothing, position unchanged, retry returns the right bytes.
#[tokio::test]
async fn read_error_in_the_middle_of_a_direct_read() {
    let data = pattern_vec(5000);
    let cfg = HostileConfig {
        short_reads: true,
        seed: 3,
        fail_read_after: Some(300),
        ..Default::default()
    };
    let (mut input, log) = hostile_input(&data, 64, cfg);
    input.seek_to(123);
    let e = read_bytes_err(&mut input, 2000, "the source fails after 300 bytes").await;
    assert!(log.read_error_fired.load(Ordering::SeqCst));
    assert_failed_at(
        &input,
        &data,
        &e,
        HOSTILE_READ_ERROR,
        123,
        "direct read error",
    );
    read_ok(&mut input, &data, 2000, "retry").await;
    assert_eq!(input.read_byte().await.unwrap(), data[2123]);
}

/// Error in the middle of a window refill with short reads, at a non-zero position.
#[tokio::test]
async fn read_error_in_the_middle_of_a_refill() {
    let data = pattern_vec(5000);
    let cfg = HostileConfig {
        short_reads: true,
        pending: true,
        seed: 11,
        fail_read_after: Some(5),
        ..Default::default()
    };
    let (mut input, _log) = hostile_input(&data, 1024, cfg);
    input.seek_to(777);
    let e = read_bytes_err(&mut input, 10, "fails after 5 bytes").await;
    assert_failed_at(&input, &data, &e, HOSTILE_READ_ERROR, 777, "refill error");
    read_ok(&mut input, &data, 10, "retry").await;
    read_ok(&mut input, &data, 2000, "more").await;
}

/// Every read flavour reports an error in the middle of its source reads the same way
/// (0: read_bytes, 1: read_byte, 2: read_bytes_owned, 3: AsyncRead, 4: AsyncBufRead).
async fn mid_read_error(method: u64) {
    let data = pattern_vec(4000);
    {
        let cfg = HostileConfig {
            short_reads: true,
            seed: method,
            fail_read_after: Some(40),
            ..Default::default()
        };
        let (mut input, log) = hostile_input(&data, 32, cfg);
        input.seek_to(2500);
        let ctx = format!("method {method}");
        // The source delivers 40 bytes from 2500, then fails once. Methods 0 and 2 ask for more
        // than that at once; the others drain until the error surfaces.
        let err = match method {
            0 => {
                let mut buf = [0u8; 200];
                input.read_bytes(&mut buf).await.err()
            }
            1 => {
                // Drain to the failure point byte by byte.
                let mut res = None;
                for _ in 0..64 {
                    let p = input.position();
                    match input.read_byte().await {
                        Ok(b) => assert_eq!(b, data[p as usize], "{ctx}"),
                        Err(e) => {
                            res = Some(e);
                            break;
                        }
                    }
                }
                res
            }
            2 => input.read_bytes_owned(200).await.err(),
            3 => {
                let mut res = None;
                for _ in 0..64 {
                    let p = input.position() as usize;
                    let mut buf = [0u8; 5];
                    match input.tokio_io().read(&mut buf).await {
                        Ok(k) => {
                            assert!(k > 0, "{ctx}");
                            assert_bytes(&buf[..k], &data[p..p + k], p as u64, &ctx);
                        }
                        Err(e) => {
                            res = Some(e);
                            break;
                        }
                    }
                }
                res
            }
            _ => {
                let mut res = None;
                for _ in 0..64 {
                    let p = input.position() as usize;
                    match input.tokio_io().fill_buf().await {
                        Ok(b) => {
                            assert!(!b.is_empty(), "{ctx}");
                            assert_bytes(b, &data[p..p + b.len()], p as u64, &ctx);
                            let n = b.len();
                            input.tokio_io().consume(n);
                        }
                        Err(e) => {
                            res = Some(e);
                            break;
                        }
                    }
                }
                res
            }
        };
        let e = err.unwrap_or_else(|| panic!("{ctx}: the injected error never surfaced"));
        assert!(log.read_error_fired.load(Ordering::SeqCst), "{ctx}");
        let at = input.position();
        assert_failed_at(&input, &data, &e, HOSTILE_READ_ERROR, at, &ctx);
        read_ok(&mut input, &data, 100, &format!("{ctx}: after recovery")).await;
    }
}

#[tokio::test]
async fn mid_read_error_read_bytes() {
    mid_read_error(0).await
}

#[tokio::test]
async fn mid_read_error_read_byte() {
    mid_read_error(1).await
}

#[tokio::test]
async fn mid_read_error_read_bytes_owned() {
    mid_read_error(2).await
}

#[tokio::test]
async fn mid_read_error_async_read() {
    mid_read_error(3).await
}

#[tokio::test]
async fn mid_read_error_fill_buf() {
    mid_read_error(4).await
}

#[tokio::test]
async fn seek_that_pends_completes() {
    let data = pattern_vec(50_000);
    let cfg = HostileConfig::pending();
    let (mut input, log) = hostile_input(&data, 256, cfg);
    for target in [40_000u64, 10, 30_000, 29_000, 0, 49_999] {
        input.seek_to(target);
        let n = (data.len() - target as usize).min(300);
        read_ok(&mut input, &data, n, &format!("seek_to({target})")).await;
    }
    assert_eq!(seek(&mut input, SeekFrom::End(-100)).await, 49_900);
    read_ok(&mut input, &data, 100, "after End(-100)").await;
    assert_eq!(
        input.stats().underlying_seeks,
        log.seeks.load(Ordering::SeqCst)
    );
}

/// The very first seek (to 0) fails in `start_seek`.
#[tokio::test]
async fn initial_seek_fails_in_start_seek_then_recovers() {
    let data = pattern_vec(1000);
    let cfg = HostileConfig::failing_seek(0, SeekFail::InStart);
    let (mut input, log) = hostile_input(&data, 64, cfg);
    let e = read_bytes_err(&mut input, 10, "initial seek fails").await;
    assert!(log.seek_error_fired.load(Ordering::SeqCst));
    assert_failed_at(&input, &data, &e, HOSTILE_SEEK_ERROR, 0, "initial seek");
    read_ok(&mut input, &data, 10, "after recovery").await;
    read_ok(&mut input, &data, 500, "more").await;
}

/// A later seek fails in `poll_complete` (pending mode on), at a distinctive position.
#[tokio::test]
async fn seek_fails_in_poll_complete_then_recovers() {
    let data = pattern_vec(20_000);
    let cfg = HostileConfig {
        pending: true,
        ..HostileConfig::failing_seek(1, SeekFail::InComplete)
    };
    let (mut input, log) = hostile_input(&data, 64, cfg);
    read_ok(&mut input, &data, 10, "first").await;
    input.seek_to(5003);
    let e = input.read_byte().await.expect_err("seek #1 fails");
    assert!(log.seek_error_fired.load(Ordering::SeqCst));
    assert_failed_at(&input, &data, &e, HOSTILE_SEEK_ERROR, 5003, "seek failure");
    read_ok(&mut input, &data, 200, "after recovery").await;
    // The window from before the failure is not corrupted either.
    input.seek_to(3);
    read_ok(&mut input, &data, 7, "back to the start").await;
}

/// A seek failure during a direct read's seek.
#[tokio::test]
async fn seek_fails_before_a_direct_read() {
    let data = pattern_vec(20_000);
    let cfg = HostileConfig {
        short_reads: true,
        ..HostileConfig::failing_seek(1, SeekFail::InStart)
    };
    let (mut input, _log) = hostile_input(&data, 64, cfg);
    read_ok(&mut input, &data, 10, "first").await;
    input.seek_to(12_345);
    let e = read_bytes_err(&mut input, 1000, "seek #1 fails").await;
    assert_failed_at(
        &input,
        &data,
        &e,
        HOSTILE_SEEK_ERROR,
        12_345,
        "direct read seek",
    );
    read_ok(&mut input, &data, 1000, "retry").await;
}

/// `length()` whose seek fails: error, then the next call asks again and succeeds; reading is
/// unaffected.
#[tokio::test]
async fn length_seek_fails_then_recovers() {
    let data = pattern_vec(7000);
    for fail in [SeekFail::InStart, SeekFail::InComplete] {
        let cfg = HostileConfig {
            pending: true,
            ..HostileConfig::failing_seek(1, fail)
        };
        let (mut input, _log) = hostile_input(&data, 100, cfg);
        read_ok(&mut input, &data, 150, "first").await;
        let e = input.length().await.expect_err("length's seek fails");
        assert_eq!(e.kind(), HOSTILE_SEEK_ERROR, "{fail:?}: {e:?}");
        check_window(&input, &data, 150, "after failed length");
        assert_eq!(input.length().await.unwrap(), 7000, "{fail:?}");
        read_ok(&mut input, &data, 100, "after length").await;
        read_ok(&mut input, &data, 1000, "after length").await;
        // SeekFrom::End via AsyncSeek, after the failure
        assert_eq!(seek(&mut input, SeekFrom::End(-7)).await, 6993);
        read_ok(&mut input, &data, 7, "tail").await;
    }
}

/// `AsyncSeekExt::seek(End)` on a fresh input needs the length; its failure leaves the position
/// unchanged.
#[tokio::test]
async fn async_seek_end_fails_then_recovers() {
    let data = pattern_vec(7000);
    let cfg = HostileConfig::failing_seek(0, SeekFail::InComplete);
    let (mut input, _log) = hostile_input(&data, 100, cfg);
    input.seek_to(42);
    let e = AsyncSeekExt::seek(&mut input.tokio_io(), SeekFrom::End(-5))
        .await
        .expect_err("End seek fails");
    assert_eq!(e.kind(), HOSTILE_SEEK_ERROR, "{e:?}");
    assert_eq!(input.position(), 42);
    read_ok(&mut input, &data, 8, "after failed End seek").await;
    assert_eq!(seek(&mut input, SeekFrom::End(-5)).await, 6995);
    read_ok(&mut input, &data, 5, "tail").await;
    let e = input.read_byte().await.expect_err("EOF");
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof);
}

/// The error at a clean refill boundary (caller position == source offset == 1000), through
/// every read method, including the small-request paths of `read_bytes_owned` and `read_byte`.
/// (0: read_bytes, 1: read_byte, 2: small read_bytes_owned, 3: read_bytes_owned of exactly the
/// capacity, 4: AsyncRead, 5: AsyncBufRead)
async fn refill_error(method: u64) {
    let data = pattern_vec(3000);
    {
        let cfg = HostileConfig {
            fail_read_after: Some(1000),
            ..Default::default()
        };
        let (mut input, log) = hostile_input(&data, 64, cfg);
        let ctx = format!("method {method}");
        read_ok(&mut input, &data, 1000, &ctx).await;
        assert!(!log.read_error_fired.load(Ordering::SeqCst), "{ctx}");
        let e = match method {
            0 => input.read_bytes(&mut [0u8; 10]).await.err(),
            1 => input.read_byte().await.err(),
            2 => input.read_bytes_owned(10).await.err(),
            3 => input.read_bytes_owned(64).await.err(),
            4 => input.tokio_io().read(&mut [0u8; 10]).await.err(),
            _ => input.tokio_io().fill_buf().await.err(),
        }
        .unwrap_or_else(|| panic!("{ctx}: the injected error must surface"));
        assert_failed_at(&input, &data, &e, HOSTILE_READ_ERROR, 1000, &ctx);
        read_ok(&mut input, &data, 100, &format!("{ctx}: after recovery")).await;
    }
}

#[tokio::test]
async fn refill_error_read_bytes() {
    refill_error(0).await
}

#[tokio::test]
async fn refill_error_read_byte() {
    refill_error(1).await
}

#[tokio::test]
async fn refill_error_small_read_bytes_owned() {
    refill_error(2).await
}

#[tokio::test]
async fn refill_error_read_bytes_owned_of_capacity() {
    refill_error(3).await
}

#[tokio::test]
async fn refill_error_async_read() {
    refill_error(4).await
}

#[tokio::test]
async fn refill_error_fill_buf() {
    refill_error(5).await
}

/// A failed `seek(End)` must not be resurrected by a later seek: tokio's `Seek` future calls
/// `poll_complete` before `start_seek`, and that must not complete the old, failed `End` seek.
#[tokio::test]
async fn failed_end_seek_is_not_applied_by_the_next_seek() {
    let data = pattern_vec(72);
    for fail in [SeekFail::InStart, SeekFail::InComplete] {
        let ctx = format!("{fail:?}");
        let cfg = HostileConfig::failing_seek(1, fail);
        let (mut input, _log) = hostile_input(&data, 3, cfg);
        read_ok(&mut input, &data, 4, &ctx).await;
        let e = AsyncSeekExt::seek(&mut input.tokio_io(), SeekFrom::End(0))
            .await
            .expect_err("the length seek fails");
        assert_eq!(e.kind(), HOSTILE_SEEK_ERROR, "{ctx}: {e:?}");
        assert_eq!(input.position(), 4, "{ctx}");
        assert_eq!(
            seek(&mut input, SeekFrom::Current(0)).await,
            4,
            "{ctx}: Current(0) after a failed End seek must report the unchanged position"
        );
        assert_eq!(input.position(), 4, "{ctx}");
        assert_eq!(seek(&mut input, SeekFrom::Current(2)).await, 6, "{ctx}");
        read_ok(&mut input, &data, 2, &ctx).await;
    }
}
