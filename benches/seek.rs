//! Issue 6, bench 2: seek-heavy reading, like a term dictionary or a skip list.
//!
//! A 64 KiB window over a 4 MiB in-memory source; each iteration does 1024 random seeks to
//! offsets inside the window (seeded xorshift), each followed by a 100-byte read.
//!
//! Contenders, all in one group:
//! - `ours/seek_to`: `AsyncBufferedInput::seek_to` + `read_bytes`. The window was loaded once
//!   before timing; the in-window seeks make zero underlying calls (asserted once, untimed).
//! - `tokio_bufreader/seek_start`: tokio `BufReader` (64 KiB) + `AsyncSeekExt::seek(Start)` +
//!   `read_exact`: its seek discards the buffer, so each read refills it.
//! - `std_bufreader/seek_relative`: synchronous `std::io::BufReader` (64 KiB) +
//!   `seek_relative`, which keeps the buffer for in-buffer targets, for reference.
//! - `floor/slice_copy`: copying 100 bytes out of a `&[u8]` at each offset, for reference.
//!
//! Group `seek_clustered`: clustered random reads, as lookups in a term index do: the 64 KiB
//! regions of the source in a seeded random order, and in each 64 random targets (in random
//! order), a 100-byte read at each; a fresh reader per pass for every contender. Ours refills
//! once per region (the refill fetches the window-sized block holding the target, aligned to
//! the window's size; checked, untimed, to be at most 1.1 refills per region); tokio's
//! `BufReader` refills at every seek.
//!
//! Timed by `support/clock.rs`: the bench thread's CPU time (`ABI_BENCH_CLOCK=wall` for wall
//! time). Run: `cargo bench --bench seek`.

#[path = "support/clock.rs"]
mod clock;

use std::hint::black_box;
use std::io::{BufRead, Cursor, Read, Seek, SeekFrom};
use std::time::Duration;

use abi_testkit::XorShift64;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::StreamFetch;
use clock::Clock;
use criterion::{BenchmarkId, Criterion, Throughput};
use tokio::io::{AsyncReadExt, AsyncSeekExt, BufReader};
use tokio::runtime::Runtime;

const DATA_LEN: usize = 4 << 20;
const WINDOW: usize = 64 << 10;
const READ: usize = 100;
const SEEKS: usize = 1024;

fn data() -> Vec<u8> {
    (0..DATA_LEN).map(|i| (i * 31 % 251) as u8).collect()
}

/// Seeded xorshift64: reproducible offsets without a dependency.
fn offsets(seed: u64) -> Vec<u64> {
    let mut x = XorShift64::new(seed);
    (0..SEEKS)
        .map(|_| x.next_u64() % (WINDOW - READ) as u64)
        .collect()
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("current-thread runtime")
}

async fn ours_pass(input: &mut AsyncBufferedInput<StreamFetch<Cursor<&[u8]>>>, offsets: &[u64]) {
    let mut buf = [0u8; READ];
    for &at in offsets {
        input.seek_to(at);
        input.read_bytes(&mut buf).await.unwrap();
        black_box(&buf);
    }
}

async fn tokio_pass(reader: &mut BufReader<Cursor<&[u8]>>, offsets: &[u64]) {
    let mut buf = [0u8; READ];
    for &at in offsets {
        reader.seek(SeekFrom::Start(at)).await.unwrap();
        reader.read_exact(&mut buf).await.unwrap();
        black_box(&buf);
    }
}

fn std_pass(reader: &mut std::io::BufReader<Cursor<&[u8]>>, offsets: &[u64]) {
    let mut buf = [0u8; READ];
    let mut pos = reader.stream_position().unwrap();
    for &at in offsets {
        reader.seek_relative(at as i64 - pos as i64).unwrap();
        reader.read_exact(&mut buf).unwrap();
        pos = at + READ as u64;
        black_box(&buf);
    }
}

fn slice_pass(data: &[u8], offsets: &[u64]) {
    let mut buf = [0u8; READ];
    for &at in offsets {
        let at = at as usize;
        buf.copy_from_slice(&data[at..at + READ]);
        black_box(&buf);
    }
}

fn seek_heavy(c: &mut Criterion<Clock>) {
    let data = data();
    let offsets = offsets(0x9E37_79B9_7F4A_7C15);
    let rt = runtime();

    // Ours: load the window once, then check (untimed) that a whole pass of in-window seeks
    // makes no underlying call.
    let mut ours = AsyncBufferedInput::with_capacity(WINDOW, Cursor::new(&data[..]));
    rt.block_on(async {
        let mut first = [0u8; READ];
        ours.read_bytes(&mut first).await.unwrap();
        assert_eq!(ours.window(), 0..WINDOW as u64);
        let before = ours.stats();
        ours_pass(&mut ours, &offsets).await;
        let pass = ours.stats() - before;
        assert_eq!(
            (pass.underlying_reads, pass.underlying_seeks),
            (0, 0),
            "in-window seeks read or seeked: {pass}"
        );
    });

    let mut tokio_reader = BufReader::with_capacity(WINDOW, Cursor::new(&data[..]));
    let mut std_reader = std::io::BufReader::with_capacity(WINDOW, Cursor::new(&data[..]));
    // Check the contenders read the same bytes.
    let expected: Vec<u8> = offsets
        .iter()
        .flat_map(|&at| data[at as usize..at as usize + READ].iter().copied())
        .collect();
    rt.block_on(async {
        let mut got = Vec::new();
        let mut buf = [0u8; READ];
        for &at in &offsets {
            ours.seek_to(at);
            ours.read_bytes(&mut buf).await.unwrap();
            got.extend_from_slice(&buf);
        }
        assert_eq!(got, expected);
        got.clear();
        for &at in &offsets {
            tokio_reader.seek(SeekFrom::Start(at)).await.unwrap();
            tokio_reader.read_exact(&mut buf).await.unwrap();
            got.extend_from_slice(&buf);
        }
        assert_eq!(got, expected);
    });
    // Load the std reader's buffer at offset 0 too, like ours.
    std_reader.fill_buf().unwrap();

    let mut group = c.benchmark_group("seek_in_window");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(SEEKS as u64));

    group.bench_function(BenchmarkId::new("ours", "seek_to"), |b| {
        b.iter(|| rt.block_on(ours_pass(&mut ours, &offsets)))
    });
    group.bench_function(BenchmarkId::new("tokio_bufreader", "seek_start"), |b| {
        b.iter(|| rt.block_on(tokio_pass(&mut tokio_reader, &offsets)))
    });
    group.bench_function(BenchmarkId::new("std_bufreader", "seek_relative"), |b| {
        b.iter(|| std_pass(&mut std_reader, &offsets))
    });
    group.bench_function(BenchmarkId::new("floor", "slice_copy"), |b| {
        b.iter(|| slice_pass(&data, &offsets))
    });
    group.finish();

    // Still zero underlying calls after all the timed passes: the window never moved.
    assert_eq!(ours.window(), 0..WINDOW as u64);
    assert_eq!(ours.stats().underlying_reads, 1);
}

/// The clustered targets: every region in a random order, 64 random targets in each.
fn clustered_offsets(seed: u64) -> Vec<u64> {
    let mut x = XorShift64::new(seed);
    let mut next = move || x.next_u64();
    let regions = DATA_LEN / WINDOW;
    let mut order: Vec<u64> = (0..regions as u64).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    order
        .into_iter()
        .flat_map(|r| {
            (0..64)
                .map(|_| r * WINDOW as u64 + next() % (WINDOW - READ) as u64)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn clustered(c: &mut Criterion<Clock>) {
    let data = data();
    let offsets = clustered_offsets(0x2545_F491_4F6C_DD1D);
    let regions = (DATA_LEN / WINDOW) as u64;
    let rt = runtime();
    // Untimed: the bytes, and at most 1.1 refills per region.
    rt.block_on(async {
        let mut ours = AsyncBufferedInput::with_capacity(WINDOW, Cursor::new(&data[..]));
        ours_pass(&mut ours, &offsets).await;
        let refills = ours.stats().underlying_reads;
        assert!(
            refills * 10 <= regions * 11,
            "{refills} refills for {regions} regions"
        );
        let mut buf = [0u8; READ];
        let mut tokio_reader = BufReader::with_capacity(WINDOW, Cursor::new(&data[..]));
        for &at in &offsets {
            ours.seek_to(at);
            ours.read_bytes(&mut buf).await.unwrap();
            assert_eq!(buf[..], data[at as usize..at as usize + READ]);
            tokio_reader.seek(SeekFrom::Start(at)).await.unwrap();
            tokio_reader.read_exact(&mut buf).await.unwrap();
            assert_eq!(buf[..], data[at as usize..at as usize + READ]);
        }
    });

    let mut group = c.benchmark_group("seek_clustered");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(offsets.len() as u64));
    group.bench_function(BenchmarkId::new("ours", "seek_to"), |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut ours = AsyncBufferedInput::with_capacity(WINDOW, Cursor::new(&data[..]));
                ours_pass(&mut ours, &offsets).await
            })
        })
    });
    group.bench_function(BenchmarkId::new("tokio_bufreader", "seek_start"), |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut reader = BufReader::with_capacity(WINDOW, Cursor::new(&data[..]));
                tokio_pass(&mut reader, &offsets).await
            })
        })
    });
    group.finish();
}

clock::clock_main!(seek_heavy, clustered);
