//! Cancellation: a read/length/seek future is polled until it is `Pending` on the source, then
//! dropped. The next operation must return exactly what the dropped one would have, at the same
//! position, whatever state the source was left in (a refill or direct read partly done, a seek
//! still in flight).
//!
//! A gated `Hostile` (see the test kit) behaves like `tokio::fs::File` with respect to in-flight seeks:
//! `start_seek` while a seek is in flight fails, so the input must finish (`poll_complete`) an
//! abandoned seek before starting another one.

use crate::common;

use std::io::SeekFrom;
use std::sync::atomic::Ordering;

use abi_testkit::*;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::StreamFetch;
use common::*;
use tokio::io::AsyncSeekExt;
use tokio_test::task::spawn;

type Input = AsyncBufferedInput<StreamFetch<Hostile>>;

fn gated(data: &[u8], cap: usize, max_read: usize) -> (Input, std::sync::Arc<GateCtl>) {
    let (src, ctl) = Hostile::gated(data.to_vec(), max_read);
    (AsyncBufferedInput::with_capacity(cap, src), ctl)
}

/// A gated input over `data` (window 64, reads of at most 13 bytes) that has read the sizes
/// `first` one after the other, then may deliver only `budget` more bytes; and the context
/// naming the budget.
async fn held_after(
    data: &[u8],
    first: &[usize],
    budget: u64,
) -> (Input, std::sync::Arc<GateCtl>, String) {
    let ctx = format!("budget {budget}");
    let (mut input, ctl) = gated(data, 64, 13);
    for &n in first {
        read_ok(&mut input, data, n, &ctx).await;
    }
    ctl.set_read_budget(budget);
    (input, ctl, ctx)
}

/// A gated input over `data` (window 64, whole reads) that has read its first 10 bytes, with
/// the completion of its seeks then held `Pending`.
async fn seeks_held_after_10(data: &[u8], ctx: &str) -> (Input, std::sync::Arc<GateCtl>) {
    let (mut input, ctl) = gated(data, 64, 1000);
    read_ok(&mut input, data, 10, ctx).await;
    ctl.close_seeks();
    (input, ctl)
}

/// Polls `read_bytes(n)` until it is stuck on the source, then drops it.
fn cancel_read_bytes(input: &mut Input, n: usize, ctx: &str) {
    let mut buf = vec![0u8; n];
    cancel_stuck(
        input.read_bytes(&mut buf),
        &format!("{ctx}: read_bytes({n}) should be stuck on the gated source"),
    );
}

/// Polls `future` until it is stuck on the source (it must be: `msg` otherwise), then drops
/// it.
#[track_caller]
fn cancel_stuck<F: std::future::Future>(future: F, msg: &str) {
    let mut fut = spawn(future);
    assert!(fut.poll_until_idle().is_pending(), "{msg}");
}

#[tokio::test]
async fn cancel_read_bytes_during_window_refill() {
    let data = pattern_vec(1000);
    // budget 0: nothing arrives; budget 5: part of the refill arrives before the gate closes.
    for budget in [0u64, 5] {
        let (mut input, ctl, ctx) = held_after(&data, &[10, 50], budget).await;
        cancel_read_bytes(&mut input, 30, &ctx);
        check_window(&input, &data, 60, &format!("{ctx}: after cancelled refill"));
        ctl.open_reads();
        read_ok(&mut input, &data, 30, &format!("{ctx}: after cancel")).await;
        read_ok(&mut input, &data, 500, &format!("{ctx}: more")).await;
        assert_eq!(input.read_byte().await.unwrap(), data[590]);
    }
}

#[tokio::test]
async fn cancel_read_byte_during_window_refill() {
    let data = pattern_vec(1000);
    // Budget 0 only: any byte that arrives would complete `read_byte`.
    for budget in [0u64] {
        let (mut input, ctl, ctx) = held_after(&data, &[64], budget).await;
        cancel_stuck(input.read_byte(), &ctx);
        check_window(&input, &data, 64, &ctx);
        ctl.open_reads();
        assert_eq!(input.read_byte().await.unwrap(), data[64], "{ctx}");
        assert_eq!(input.read_byte().await.unwrap(), data[65], "{ctx}");
        read_ok(&mut input, &data, 100, &ctx).await;
    }
}

#[tokio::test]
async fn cancel_read_bytes_owned_during_window_refill() {
    let data = pattern_vec(1000);
    for budget in [0u64, 7] {
        let (mut input, ctl, ctx) = held_after(&data, &[40], budget).await;
        cancel_stuck(input.read_bytes_owned(30), &ctx);
        check_window(&input, &data, 40, &ctx);
        ctl.open_reads();
        let b = input.read_bytes_owned(30).await.unwrap();
        assert_bytes(&b, &data[40..70], 40, &ctx);
        check_window(&input, &data, 70, &ctx);
    }
}

/// A direct (>= capacity) read cancelled after part of the data arrived into the caller's
/// buffer (short reads of at most 13 bytes, budget of 100 bytes).
#[tokio::test]
async fn cancel_direct_read_after_partial_data() {
    let data = pattern_vec(5000);
    for budget in [0u64, 1, 100] {
        let ctx = format!("budget {budget}");
        let (mut input, ctl) = gated(&data, 64, 13);
        read_ok(&mut input, &data, 10, &ctx).await;
        let reads_before = ctl.reads.load(Ordering::SeqCst);
        ctl.set_read_budget(budget);
        cancel_read_bytes(&mut input, 500, &ctx);
        if budget == 100 {
            assert!(
                ctl.reads.load(Ordering::SeqCst) >= reads_before + 8,
                "{ctx}: the direct read should have received 100 bytes in short reads"
            );
        }
        check_window(
            &input,
            &data,
            10,
            &format!("{ctx}: after cancelled direct read"),
        );
        ctl.open_reads();
        read_ok(&mut input, &data, 500, &format!("{ctx}: after cancel")).await;
        assert_eq!(input.read_byte().await.unwrap(), data[510], "{ctx}");
        read_ok(&mut input, &data, 64, &ctx).await;
    }
}

/// Cancel the same direct read twice in a row, at different progress points.
#[tokio::test]
async fn cancel_direct_read_repeatedly() {
    let data = pattern_vec(5000);
    let (mut input, ctl) = gated(&data, 64, 13);
    input.seek_to(1234);
    for budget in [50u64, 200, 0, 777] {
        ctl.set_read_budget(budget);
        cancel_read_bytes(&mut input, 1000, &format!("budget {budget}"));
        check_window(&input, &data, 1234, &format!("budget {budget}"));
    }
    ctl.open_reads();
    read_ok(&mut input, &data, 1000, "after repeated cancels").await;
}

/// The initial seek (to 0) is pending when the read is dropped.
#[tokio::test]
async fn cancel_during_initial_seek() {
    let data = pattern_vec(1000);
    let (mut input, ctl) = gated(&data, 64, 1000);
    ctl.close_seeks();
    cancel_read_bytes(&mut input, 10, "initial seek");
    check_window(&input, &data, 0, "after cancelled initial seek");
    ctl.open_seeks();
    read_ok(&mut input, &data, 10, "after cancel").await;
    read_ok(&mut input, &data, 100, "more").await;
}

/// A seek outside the window is pending when the read is dropped; then the caller reads at the
/// same position, or moves elsewhere first.
#[tokio::test]
async fn cancel_during_pending_seek() {
    let data = pattern_vec(3000);
    for then_elsewhere in [false, true] {
        let ctx = format!("then_elsewhere {then_elsewhere}");
        let (mut input, ctl) = seeks_held_after_10(&data, &ctx).await;
        input.seek_to(700);
        cancel_stuck(input.read_byte(), &format!("{ctx}: seek should pend"));
        check_window(&input, &data, 700, &ctx);
        // A second cancellation while the first seek is still in flight.
        cancel_stuck(
            input.read_bytes_owned(100),
            &format!("{ctx}: still pending"),
        );
        check_window(&input, &data, 700, &ctx);
        ctl.open_seeks();
        if then_elsewhere {
            input.seek_to(100);
            read_ok(&mut input, &data, 100, &ctx).await;
            input.seek_to(2000);
            read_ok(&mut input, &data, 300, &ctx).await;
        } else {
            assert_eq!(input.read_byte().await.unwrap(), data[700], "{ctx}");
            read_ok(&mut input, &data, 300, &ctx).await;
        }
        // The window from the start is gone or intact, but never wrong.
        input.seek_to(5);
        read_ok(&mut input, &data, 5, &ctx).await;
    }
}

/// `length()` dropped while its `End(0)` seek is in flight: the next `length()` works, and so
/// does the next read (the abandoned seek moves the source's cursor to the end).
#[tokio::test]
async fn cancel_length() {
    let data = pattern_vec(2000);
    for read_first in [false, true] {
        let ctx = format!("read_first {read_first}");
        let (mut input, ctl) = seeks_held_after_10(&data, &ctx).await;
        cancel_stuck(input.length(), &ctx);
        check_window(&input, &data, 10, &ctx);
        ctl.open_seeks();
        if read_first {
            // Out of the window: the source must be positioned again.
            read_ok(&mut input, &data, 100, &ctx).await;
            assert_eq!(input.length().await.unwrap(), 2000, "{ctx}");
        } else {
            assert_eq!(input.length().await.unwrap(), 2000, "{ctx}");
            read_ok(&mut input, &data, 100, &ctx).await;
        }
        read_ok(&mut input, &data, 1000, &ctx).await;
    }
}

/// `AsyncSeekExt::seek(End)` dropped while the length is being fetched.
#[tokio::test]
async fn cancel_async_seek_end() {
    let data = pattern_vec(2000);
    let (mut input, ctl) = seeks_held_after_10(&data, "first").await;
    cancel_stuck(
        input.tokio_io().seek(SeekFrom::End(-100)),
        "the End seek should be stuck",
    );
    check_window(&input, &data, 10, "after cancelled End seek");
    ctl.open_seeks();
    read_ok(&mut input, &data, 20, "in window").await;
    assert_eq!(
        input.tokio_io().seek(SeekFrom::End(-100)).await.unwrap(),
        1900
    );
    read_ok(&mut input, &data, 100, "tail").await;
}

/// With a real `tokio::fs::File` (whose operations run on the blocking pool, so the first poll
/// of a read or seek is normally `Pending`): drop a read after its first poll, then seek and
/// read elsewhere. tokio's File refuses `start_seek` while an operation is in flight, so this
/// fails unless the input completes abandoned operations first.
#[tokio::test]
async fn cancel_on_tokio_file_then_seek_elsewhere() {
    let data = pattern_vec(100_000);
    let mut input = AsyncBufferedInput::with_capacity(4096, temp_tokio_file(data.clone()));
    let mut pending_seen = 0;
    let mut rng = Rng::new(1);
    for round in 0..20 {
        let ctx = format!("round {round}");
        let p = rng.below(90_000);
        input.seek_to(p);
        let n = [10usize, 5000, 4096, 1][round % 4];
        {
            let mut buf = vec![0u8; n];
            let mut fut = spawn(input.read_bytes(&mut buf));
            match fut.poll() {
                std::task::Poll::Pending => pending_seen += 1,
                std::task::Poll::Ready(r) => {
                    r.unwrap_or_else(|e| panic!("{ctx}: {e:?}"));
                    drop(fut);
                    assert_bytes(&buf, &data[p as usize..p as usize + n], p, &ctx);
                    input.seek_to(p);
                }
            }
        }
        assert_eq!(input.position(), p, "{ctx}");
        // Elsewhere (out of any window), then back.
        let q = (p + 50_000) % 95_000;
        input.seek_to(q);
        let mut buf = vec![0u8; 300];
        input
            .read_bytes(&mut buf)
            .await
            .unwrap_or_else(|e| panic!("{ctx}: read at {q} after a cancelled read: {e:?}"));
        assert_bytes(&buf, &data[q as usize..q as usize + 300], q, &ctx);
        input.seek_to(p);
        let mut buf = vec![0u8; n];
        input
            .read_bytes(&mut buf)
            .await
            .unwrap_or_else(|e| panic!("{ctx}: read at {p}: {e:?}"));
        assert_bytes(&buf, &data[p as usize..p as usize + n], p, &ctx);
    }
    assert!(
        pending_seen > 0,
        "tokio::fs::File never returned Pending; test not exercised"
    );
}

/// Lucene's vint: 7 bits a byte, low first, high bit set on all but the last byte.
fn put_vint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    put_vint(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

#[tokio::test]
async fn cancel_typed_reads_mid_value() {
    // Each value straddles the 64-byte window's edge or is longer than the window, so each read
    // runs its slow path: a short string, a string longer than the window (length asked first,
    // then a read of its own), a vint, a big-endian u32.
    let short = "héllo, wörld";
    let long = "ж".repeat(150);
    let mut data = vec![0xAA; 60];
    put_string(&mut data, short);
    let long_at = data.len();
    data.resize(long_at + (128 - long_at % 64) - 2, 0xBB); // the next prefix straddles too
    let long_at = data.len();
    put_string(&mut data, &long);
    let vint_at = data.len();
    data.resize(vint_at + (64 - vint_at % 64) - 1, 0xCC);
    let vint_at = data.len();
    put_vint(&mut data, 300_000);
    let u32_at = data.len();
    data.resize(u32_at + (64 - u32_at % 64) - 2, 0xDD);
    let u32_at = data.len();
    data.extend_from_slice(&0xDEAD_BEEF_u32.to_be_bytes());
    let end = data.len() as u64;

    /// Seeks to `$at`, lets `$budget` bytes through, polls `$input.$read()` until it is stuck
    /// and drops it; then checks the position did not move and the read, asked again with the
    /// source open, returns `$expected`.
    macro_rules! cancel_then_read {
        ($input:ident, $ctl:ident, $ctx:ident, $at:expr, $budget:expr, $read:ident, $expected:expr) => {
            $input.seek_to($at as u64);
            $ctl.set_read_budget($budget);
            let stuck = spawn($input.$read()).poll_until_idle().is_pending();
            let what = concat!(stringify!($read), " at ", stringify!($at));
            assert!(
                stuck,
                "{}: {what} should be stuck on the gated source",
                $ctx
            );
            assert_eq!(
                $input.position(),
                $at as u64,
                "{}: after a cancelled {what}",
                $ctx
            );
            $ctl.open_reads();
            assert_eq!($input.$read().await.unwrap(), $expected, "{}: {what}", $ctx);
        };
    }

    // budget 0: nothing arrives; 1 (and 9 for the strings): part of what the read needs
    // arrives first. 9 bytes finish neither string (11 and 300 bytes missing) but would finish
    // the vint and the u32 (2 bytes missing each), so those get 0 and 1 only.
    for budget in [0u64, 1, 9] {
        let small = budget.min(1);
        let ctx = format!("budget {budget}");
        let (mut input, ctl) = gated(&data, 64, 13);
        read_ok(&mut input, &data, 60, &ctx).await;
        cancel_then_read!(input, ctl, ctx, 60, budget, read_string, short);
        cancel_then_read!(input, ctl, ctx, long_at, budget, read_string, long);
        cancel_then_read!(input, ctl, ctx, vint_at, small, read_vint, 300_000);
        cancel_then_read!(input, ctl, ctx, u32_at, small, read_u32, 0xDEAD_BEEF);
        assert_eq!(input.position(), end, "{ctx}");
    }
}
