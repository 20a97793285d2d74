//! The shape of the I/O the input performs on its source, observed through `Counting` over a
//! `std::io::Cursor` (which never short-reads) with the default 8 KiB window.

use std::io::{Cursor, SeekFrom};
use std::sync::Arc;

use abi_testkit::*;
use async_buffered_input::StreamFetch;
use async_buffered_input::{AsyncBufferedInput, Stats};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt};

use crate::common;
use common::read_ok;

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;
const WINDOW: usize = 8 * KIB;

type Input = AsyncBufferedInput<StreamFetch<Counting<Cursor<Vec<u8>>>>>;

fn counted(data: Vec<u8>) -> (Input, Arc<Counts>) {
    let (src, counts) = Counting::new(Cursor::new(data));
    let input = AsyncBufferedInput::new(src);
    assert_eq!(input.capacity(), WINDOW);
    (input, counts)
}

/// [`counted`] over [`pattern_vec`]`(len)`, after a first read of 100 bytes at 0; and the data.
async fn counted_after_100(len: usize) -> (Vec<u8>, Input, Arc<Counts>) {
    let data = pattern_vec(len);
    let (mut input, counts) = counted(data.clone());
    read_checked(&mut input, &data, 100).await;
    (data, input, counts)
}

/// Reads `n` bytes with `read_bytes` and checks them, the position and the window against
/// `data` (the tests' shared [`read_ok`]).
async fn read_checked(input: &mut Input, data: &[u8], n: usize) {
    read_ok(input, data, n, "io_shape").await;
}

/// Reads `n` bytes, which the window holds: the source saw nothing since `before` (`ctx` says
/// why), and at the end the stats and Counting agree.
async fn read_in_window(
    input: &mut Input,
    data: &[u8],
    n: usize,
    counts: &Counts,
    before: CountSnapshot,
    ctx: &str,
) {
    read_checked(input, data, n).await;
    assert_eq!(counts.snapshot(), before, "{ctx}");
    assert_stats_match(input, counts, "at the end");
}

/// Stats and Counting agree on reads, seeks and bytes.
#[track_caller]
fn assert_stats_match(input: &Input, counts: &Counts, ctx: &str) {
    let s = input.stats();
    let c = counts.snapshot();
    assert_eq!(
        s.underlying_reads, c.reads,
        "{ctx}: stats {s:?} vs counted {c:?}"
    );
    assert_eq!(
        s.underlying_seeks, c.seeks,
        "{ctx}: stats {s:?} vs counted {c:?}"
    );
    assert_eq!(
        s.bytes_from_source, c.bytes,
        "{ctx}: stats {s:?} vs counted {c:?}"
    );
}

/// After step `i` of a random sweep that handed `handed` bytes to the caller: stats and
/// Counting agree, and the window and direct bytes add up to what was handed. Returns the
/// stats.
#[track_caller]
fn assert_step(input: &Input, counts: &Counts, handed: u64, i: usize) -> Stats {
    assert_stats_match(input, counts, &format!("step {i}"));
    let s = input.stats();
    assert_eq!(
        s.bytes_from_window + s.bytes_direct,
        handed,
        "step {i}: window + direct bytes must equal the bytes handed to the caller ({s:?})"
    );
    s
}

/// (a) 100-byte requests over 1 MiB: about one underlying read per 8 KiB window, not one per
/// request, and a single (initial) seek.
#[tokio::test]
async fn a_small_sequential_reads_make_one_source_read_per_window() {
    let data = pattern_vec(MIB);
    let (mut input, counts) = counted(data.clone());
    let mut buf = [0u8; 100];
    let mut pos = 0usize;
    while pos + 100 <= MIB {
        input.read_bytes(&mut buf).await.unwrap();
        assert_bytes(&buf, &data[pos..pos + 100], pos as u64, "100-byte read");
        pos += 100;
        assert_eq!(input.position(), pos as u64);
    }
    let c = counts.snapshot();
    assert!(
        (128..=131).contains(&c.reads),
        "10485 reads of 100 bytes over 1 MiB with an 8 KiB window should make 128..=131 \
         underlying reads, made {} ({c:?})",
        c.reads
    );
    assert_eq!(
        c.seeks,
        1,
        "only the initial seek expected: {:?}",
        counts.seek_log()
    );
    assert_eq!(counts.seek_log(), vec![SeekFrom::Start(0)]);
    let s = input.stats();
    assert_stats_match(&input, &counts, "after the sweep");
    assert_eq!(s.bytes_direct, 0, "{s:?}");
    assert_eq!(s.bytes_from_window, pos as u64, "{s:?}");
}

/// (a') Byte-at-a-time reads also go through the window.
#[tokio::test]
async fn a_read_byte_sweep_makes_one_source_read_per_window() {
    let data = pattern_vec(64 * KIB);
    let (mut input, counts) = counted(data.clone());
    for (i, &expected) in data.iter().enumerate() {
        assert_eq!(
            input.read_byte().await.unwrap(),
            expected,
            "read_byte at {i}"
        );
    }
    let c = counts.snapshot();
    assert_eq!(
        c.reads, 8,
        "64 KiB byte by byte through an 8 KiB window: {c:?}"
    );
    assert_eq!(c.seeks, 1, "{c:?}");
    assert_stats_match(&input, &counts, "after the byte sweep");
    assert_eq!(input.stats().bytes_from_window, 64 * KIB as u64);
}

/// (b) After a partly consumed window, a 1 MiB request copies the rest of the window and reads
/// the remainder straight into the caller's buffer with ONE underlying read (Cursor never
/// short-reads) and no seek.
#[tokio::test]
async fn b_large_read_after_partial_window_is_one_direct_read() {
    let (data, mut input, counts) = counted_after_100(2 * MIB + 7).await;
    let c0 = counts.snapshot();
    assert_eq!((c0.reads, c0.seeks), (1, 1), "first small read: {c0:?}");
    assert_eq!(input.window(), 0..WINDOW as u64);
    let s0 = input.stats();

    read_checked(&mut input, &data, MIB).await;
    let c1 = counts.snapshot();
    let s1 = input.stats();
    assert_eq!(
        c1.reads - c0.reads,
        1,
        "a 1 MiB read after a partly consumed window must make exactly one underlying read: \
         before {c0:?}, after {c1:?}"
    );
    assert_eq!(
        c1.seeks - c0.seeks,
        0,
        "the source is already at the window's end, no seek needed: {:?}",
        counts.seek_log()
    );
    let remainder = (MIB - (WINDOW - 100)) as u64;
    assert_eq!(
        s1.bytes_direct - s0.bytes_direct,
        remainder,
        "bytes_direct must rise by the part not in the window: {s0:?} -> {s1:?}"
    );
    assert_eq!(
        s1.bytes_from_window - s0.bytes_from_window,
        (WINDOW - 100) as u64,
        "the rest of the window is copied: {s0:?} -> {s1:?}"
    );
    assert_eq!(
        c1.bytes - c0.bytes,
        remainder,
        "source bytes for the direct read"
    );
    assert_stats_match(&input, &counts, "after the direct read");

    // The input goes on correctly afterwards: one refill for the next small read.
    read_checked(&mut input, &data, 10).await;
    let c2 = counts.snapshot();
    assert_eq!(
        c2.reads - c1.reads,
        1,
        "one refill after the direct read: {c2:?}"
    );
    assert_eq!(
        c2.seeks, c1.seeks,
        "sequential after a direct read: no seek"
    );
    read_checked(&mut input, &data, WINDOW - 10).await;
    assert_eq!(
        counts.snapshot().reads,
        c2.reads,
        "rest of that window needs no I/O"
    );
    assert_stats_match(&input, &counts, "at the end");
}

/// (b') A large read exactly at an exhausted window: one direct read, nothing from the window.
#[tokio::test]
async fn b_large_read_at_window_boundary_is_one_direct_read() {
    let data = pattern_vec(MIB + 3 * WINDOW);
    let (mut input, counts) = counted(data.clone());
    read_checked(&mut input, &data, 10).await;
    read_checked(&mut input, &data, WINDOW - 10).await;
    assert!(input.buffer().is_empty());
    let c0 = counts.snapshot();
    let s0 = input.stats();
    read_checked(&mut input, &data, MIB).await;
    let c1 = counts.snapshot();
    let s1 = input.stats();
    assert_eq!(c1.reads - c0.reads, 1, "{c0:?} -> {c1:?}");
    assert_eq!(c1.seeks, c0.seeks, "{:?}", counts.seek_log());
    assert_eq!(s1.bytes_direct - s0.bytes_direct, MIB as u64);
    assert_eq!(s1.bytes_from_window, s0.bytes_from_window);
}

/// (c) `seek_to` inside the window, backward and forward, makes no underlying reads or seeks.
#[tokio::test]
async fn c_seek_to_inside_window_makes_no_io() {
    let (data, mut input, counts) = counted_after_100(64 * KIB).await;
    let w = input.window();
    assert_eq!(w, 0..WINDOW as u64);
    let c0 = counts.snapshot();

    input.seek_to(50); // backward
    assert_eq!(input.position(), 50);
    assert_bytes(
        input.buffer(),
        &data[50..WINDOW],
        50,
        "buffer() after seek_to(50)",
    );
    read_checked(&mut input, &data, 10).await;
    input.seek_to(5000); // forward
    read_checked(&mut input, &data, 100).await;
    input.seek_to(WINDOW as u64 - 1); // last byte of the window
    assert_eq!(input.read_byte().await.unwrap(), data[WINDOW - 1]);
    input.seek_to(3);
    read_checked(&mut input, &data, 200).await;
    input.skip_bytes(1000).unwrap();
    read_checked(&mut input, &data, 7).await;
    assert_eq!(
        counts.snapshot(),
        c0,
        "in-window seeks must not touch the source"
    );
    assert_eq!(input.window(), w, "the window is kept");

    // The whole window again, in one request of exactly `capacity` bytes.
    input.seek_to(0);
    read_checked(&mut input, &data, WINDOW).await;
    assert_eq!(
        counts.snapshot(),
        c0,
        "reading the whole (already buffered) window after seek_to(0) must not touch the source"
    );

    // `read_bytes_owned` inside the window needs no I/O either. (It may hand out the window's
    // bytes without copying and give up the part of the window before the request's end, so the
    // window's start is not checked after it.)
    input.seek_to(3);
    let owned = input.read_bytes_owned(200).await.unwrap();
    assert_bytes(&owned, &data[3..203], 3, "read_bytes_owned(200) at 3");
    assert_eq!(input.position(), 203);
    assert_eq!(
        input.window().end,
        w.end,
        "window end after read_bytes_owned"
    );
    read_in_window(
        &mut input,
        &data,
        1000,
        &counts,
        c0,
        "read_bytes_owned inside the window",
    )
    .await;
}

/// Seeking outside the window costs exactly one seek and one read at the next read.
#[tokio::test]
async fn seek_to_outside_window_costs_one_seek_and_one_read() {
    let (data, mut input, counts) = counted_after_100(256 * KIB).await;
    let c0 = counts.snapshot();
    input.seek_to(100_000);
    assert_eq!(counts.snapshot(), c0, "seek_to is lazy");
    assert_eq!(input.position(), 100_000);
    read_checked(&mut input, &data, 10).await;
    let c1 = counts.snapshot();
    assert_eq!(
        (c1.seeks - c0.seeks, c1.reads - c0.reads),
        (1, 1),
        "{c0:?} -> {c1:?}"
    );
    // A refill that does not continue the window fetches the window-sized block that holds
    // the target, aligned to the window's size.
    let block = 100_000 - 100_000 % WINDOW as u64;
    assert_eq!(counts.seek_log().last(), Some(&SeekFrom::Start(block)));
    read_in_window(&mut input, &data, 500, &counts, c1, "same window").await;
}

/// (d) `SeekFrom::Current(0)` and in-window `SeekFrom::Start`/`Current` through tokio's
/// `AsyncSeekExt::seek` keep the window: no I/O, and reading the window's bytes needs none.
#[tokio::test]
async fn d_async_seek_in_window_keeps_the_window() {
    let (data, mut input, counts) = counted_after_100(64 * KIB).await;
    let c0 = counts.snapshot();
    let w = input.window();

    assert_eq!(
        input.tokio_io().seek(SeekFrom::Current(0)).await.unwrap(),
        100
    );
    assert_eq!(input.position(), 100);
    assert_eq!(input.window(), w);
    read_checked(&mut input, &data, 100).await;

    assert_eq!(
        input.tokio_io().seek(SeekFrom::Start(3000)).await.unwrap(),
        3000
    );
    assert_eq!(input.position(), 3000);
    read_checked(&mut input, &data, 100).await;

    assert_eq!(
        input
            .tokio_io()
            .seek(SeekFrom::Current(-2000))
            .await
            .unwrap(),
        1100
    );
    read_checked(&mut input, &data, 50).await;
    assert_eq!(
        input.tokio_io().seek(SeekFrom::Start(10)).await.unwrap(),
        10
    );
    let mut small = [0u8; 30];
    let n = input.tokio_io().read(&mut small).await.unwrap();
    assert!(n > 0);
    assert_bytes(
        &small[..n],
        &data[10..10 + n],
        10,
        "AsyncReadExt::read after seek",
    );

    assert_eq!(
        counts.snapshot(),
        c0,
        "no I/O for in-window seeks through AsyncSeek"
    );
    assert_eq!(input.window(), w, "window kept");
    assert_stats_match(&input, &counts, "at the end");
}

/// (e) `stats()` agrees with what the source saw, and the bytes handed to the caller are
/// exactly `bytes_from_window + bytes_direct`.
#[tokio::test]
async fn e_stats_agree_with_the_source() {
    let data = pattern_vec(300 * KIB + 11);
    let (mut input, counts) = counted(data.clone());
    let mut handed = 0u64;
    let mut rng = Rng::new(7);
    for i in 0..300 {
        match i % 6 {
            0 => {
                let n = rng.below(3 * WINDOW as u64) as usize + 1;
                let p = rng.below((data.len() - n) as u64);
                input.seek_to(p);
                read_checked(&mut input, &data, n).await;
                handed += n as u64;
            }
            1 => {
                if (input.position() as usize) < data.len() {
                    let p = input.position() as usize;
                    assert_eq!(input.read_byte().await.unwrap(), data[p]);
                    handed += 1;
                }
            }
            2 => {
                let p = input.position() as usize;
                let n = (rng.below(200) as usize).min(data.len() - p);
                let b = input.read_bytes_owned(n).await.unwrap();
                assert_bytes(&b, &data[p..p + n], p as u64, "read_bytes_owned");
                handed += n as u64;
            }
            3 => {
                let p = input.position();
                input.seek_to(p.saturating_sub(rng.below(300)));
            }
            4 => {
                let _ = input.length().await.unwrap();
            }
            _ => {
                let p = input.position() as usize;
                let n = (rng.below(WINDOW as u64 + 10) as usize).min(data.len() - p);
                read_checked(&mut input, &data, n).await;
                handed += n as u64;
            }
        }
        let s = assert_step(&input, &counts, handed, i);
        assert!(s.bytes_direct <= s.bytes_from_source, "{s:?}");
    }

    // Reads at and past the end: both count the same reads (none at all past the length,
    // known since `length()` above).
    input.seek_to(data.len() as u64 - 5);
    let mut big = vec![0u8; 3 * WINDOW];
    assert!(input.read_bytes(&mut big).await.is_err());
    assert!(input.read_byte().await.is_ok());
    input.seek_to(data.len() as u64);
    assert!(input.read_byte().await.is_err());
    input.seek_to(data.len() as u64 + 100);
    assert!(input.read_bytes(&mut big[..10]).await.is_err());
    assert_stats_match(&input, &counts, "after EOF probes");
}

/// (e') The tokio `AsyncRead` and `AsyncBufRead` paths keep the stats consistent too.
#[tokio::test]
async fn e_stats_agree_with_the_source_through_async_read() {
    let data = pattern_vec(100 * KIB);
    let (mut input, counts) = counted(data.clone());
    let mut handed = 0u64;
    for (i, n) in [10usize, 5000, WINDOW, 3 * WINDOW, 1, 20_000, 77]
        .iter()
        .cycle()
        .take(40)
        .enumerate()
    {
        let p = input.position() as usize;
        let mut buf = vec![0u8; *n];
        let k = input.tokio_io().read(&mut buf).await.unwrap();
        assert!(k > 0 || p == data.len(), "step {i}");
        assert_bytes(
            &buf[..k],
            &data[p..p + k],
            p as u64,
            &format!("step {i}: read"),
        );
        handed += k as u64;
        if i % 3 == 0 {
            // AsyncBufRead: bytes count as handed out when consumed.
            let p = input.position() as usize;
            let got = input.tokio_io().fill_buf().await.unwrap().to_vec();
            assert_bytes(&got, &data[p..p + got.len()], p as u64, "fill_buf");
            let take = got.len() / 2;
            input.tokio_io().consume(take);
            handed += take as u64;
        }
        assert_step(&input, &counts, handed, i);
    }
}

/// (f) `length()` asks the source once (a seek to `End(0)`), then is cached; the input still
/// reads correctly although the source's cursor moved to the end; `SeekFrom::End` uses the
/// cached length.
#[tokio::test]
async fn f_length_is_asked_once_and_cached() {
    let data = pattern_vec(100_000);
    let (mut input, counts) = counted(data.clone());
    assert_eq!(input.length().await.unwrap(), 100_000);
    let c1 = counts.snapshot();
    assert_eq!(c1.seeks, 1, "{:?}", counts.seek_log());
    assert_eq!(c1.reads, 0);
    assert_eq!(counts.seek_log(), vec![SeekFrom::End(0)]);
    assert_eq!(input.length().await.unwrap(), 100_000);
    assert_eq!(input.length().await.unwrap(), 100_000);
    assert_eq!(counts.snapshot(), c1, "length() must be cached");
    assert_eq!(input.position(), 0, "length() does not move the position");

    read_checked(&mut input, &data, 10).await;
    assert_eq!(
        input.tokio_io().seek(SeekFrom::End(-10)).await.unwrap(),
        99_990
    );
    read_checked(&mut input, &data, 10).await;
    assert_eq!(input.length().await.unwrap(), 100_000);
    let ends = counts
        .seek_log()
        .iter()
        .filter(|s| matches!(s, SeekFrom::End(_)))
        .count();
    assert_eq!(
        ends,
        1,
        "only one End seek overall: {:?}",
        counts.seek_log()
    );
    assert_stats_match(&input, &counts, "at the end");
}

/// `length()` in the middle of sequential reading: the window stays valid and the next refill
/// seeks back to where it must.
#[tokio::test]
async fn f_length_mid_stream_then_continue() {
    let (data, mut input, counts) = counted_after_100(50_000).await;
    assert_eq!(input.length().await.unwrap(), 50_000);
    let c0 = counts.snapshot();
    read_checked(&mut input, &data, WINDOW - 100).await;
    assert_eq!(counts.snapshot(), c0, "the window survives length()");
    read_checked(&mut input, &data, 20_000).await;
    read_checked(&mut input, &data, 50_000 - 20_000 - WINDOW).await;
    assert_stats_match(&input, &counts, "at the end");
}

/// `get_mut()` forgets the source's cursor: the next source read is preceded by a seek.
#[tokio::test]
async fn get_mut_forces_a_seek_before_the_next_source_read() {
    let data = pattern_vec(64 * KIB);
    let (mut input, counts) = counted(data.clone());
    read_checked(&mut input, &data, WINDOW).await;
    let c0 = counts.snapshot();
    let _ = input.get_mut();
    read_checked(&mut input, &data, 100).await;
    let c1 = counts.snapshot();
    assert_eq!(c1.seeks - c0.seeks, 1, "{:?}", counts.seek_log());
    assert_eq!(c1.reads - c0.reads, 1);
    assert_eq!(
        counts.seek_log().last(),
        Some(&SeekFrom::Start(WINDOW as u64))
    );
    assert_stats_match(&input, &counts, "at the end");
}

/// Clustered random reads: targets in random order inside one capacity-aligned region cost one
/// refill for the region, those before the first target included (the refill fetches the
/// aligned block); a read that continues the last fetch is not realigned.
#[tokio::test]
async fn clustered_reads_in_one_aligned_block_cost_one_refill() {
    let data = pattern_vec(256 * KIB);
    let (mut input, counts) = counted(data.clone());
    let mut rng = Rng::new(13);
    for region in [3u64, 1, 2] {
        let c0 = counts.snapshot();
        let base = region * WINDOW as u64;
        for _ in 0..64 {
            input.seek_to(base + rng.below(WINDOW as u64 - 100));
            read_checked(&mut input, &data, 100).await;
        }
        let c1 = counts.snapshot();
        assert_eq!(c1.reads - c0.reads, 1, "region {region}: {c0:?} -> {c1:?}");
        assert_eq!(input.window(), base..base + WINDOW as u64);
    }
    // A target whose request crosses its block's end: the refill moves back only as far as it
    // must, so the window still holds the whole request.
    let at = 5 * WINDOW as u64 - 10;
    input.seek_to(at);
    read_checked(&mut input, &data, 50).await;
    assert_eq!(input.window(), at + 50 - WINDOW as u64..at + 50);
}
