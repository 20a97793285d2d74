//! Issue 6, bench 1: sequential reads from an in-memory source.
//!
//! Each iteration reads a 4 MiB buffer from start to end in requests of one size, with a fresh
//! reader (8 KiB window everywhere) built inside the timed pass, so every contender pays the same
//! set-up: one 8 KiB allocation. Async contenders run the whole pass in one `block_on` on a
//! current-thread runtime, so the runtime's cost is amortized equally.
//!
//! Contenders, all in one group per request size:
//! - `ours/read_bytes`, `ours/read_byte` (size 1 only): `AsyncBufferedInput`;
//! - `ours/positional`: `AsyncBufferedInput` over the same bytes as a positional
//!   `MemorySource` (no read-ahead), `read_bytes`;
//! - `tokio_bufreader/read_exact`: tokio `BufReader` + `AsyncReadExt::read_exact`;
//! - `tokio_bufreader/byte_loop`: `read_u8` per byte over tokio `BufReader` (the pre-LUCENE-695
//!   shape); it reads only the first 1 MiB, with its throughput set to match;
//! - `std_bufreader/read_exact`: synchronous `std::io::BufReader` (the same two copies, no async);
//! - `std_bufreader/read_exact_awaited`: the same `std::io::BufReader` behind one always-ready
//!   `.await` per request, for reference: what the `.await` alone costs a loop;
//! - `floor/slice_copy`: `read_exact` from a `&[u8]` (one copy), for reference.
//!
//! A second group, `read_ahead_chunks/{size}`, reads the same bytes through read-ahead chunks
//! (4 MiB x 4) with a 64 KiB window, over a source that has no bytes at hand (every fetch is a
//! request, answered at once): the path of a remote source, without the network. Its
//! contenders: `ours/read_bytes`, and `floor/slice_copy`.
//!
//! Timed by `support/clock.rs`: the bench thread's CPU time (`ABI_BENCH_CLOCK=wall` for wall
//! time). Run: `cargo bench --bench in_memory` (filter with e.g. `-- sequential/8/`).

#[path = "support/clock.rs"]
mod clock;

use std::future::poll_fn;
use std::hint::black_box;
use std::io::{Cursor, Read};
use std::task::Poll;
use std::time::Duration;

use async_buffered_input::source::MemorySource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{Fetch, PositionalFetch, ReadAhead};
use clock::Clock;
use criterion::{BenchmarkId, Criterion, Throughput};
use tokio::io::{AsyncReadExt, BufReader};
use tokio::runtime::Runtime;

const DATA_LEN: usize = 4 << 20;
const BYTE_LOOP_LEN: usize = 1 << 20;
const WINDOW: usize = 8192;
const SIZES: [usize; 6] = [1, 8, 100, 1000, 8192, 65536];

fn data() -> Vec<u8> {
    (0..DATA_LEN).map(|i| (i * 31 % 251) as u8).collect()
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("current-thread runtime")
}

/// The number of whole requests of `size` in `len` bytes, and the bytes they cover.
fn requests(len: usize, size: usize) -> (usize, u64) {
    let n = len / size;
    (n, (n * size) as u64)
}

/// `read_bytes` of `size` from `input` in every whole request of `size` in `len` bytes.
async fn read_bytes_loop<F: Fetch>(mut input: AsyncBufferedInput<F>, len: usize, size: usize) {
    let mut buf = vec![0u8; size];
    for _ in 0..requests(len, size).0 {
        input.read_bytes(&mut buf).await.unwrap();
        black_box(&buf);
    }
}

async fn ours_read_bytes(data: &[u8], size: usize) {
    let input = AsyncBufferedInput::with_capacity(WINDOW, Cursor::new(data));
    read_bytes_loop(input, data.len(), size).await;
}

async fn ours_positional(data: &bytes::Bytes, size: usize) {
    let fetch = PositionalFetch::new(MemorySource::new(data.clone()));
    let input = AsyncBufferedInput::with_capacity(WINDOW, fetch);
    read_bytes_loop(input, data.len(), size).await;
}

/// `read_bytes` of `size` through a 64 KiB window over read-ahead chunks of a source that
/// answers every request at once and has nothing at hand.
async fn ours_read_ahead(source: &std::sync::Arc<abi_testkit::Scripted>, size: usize) {
    let fetch =
        PositionalFetch::from_arc(source.clone()).with_read_ahead(ReadAhead::new(4 << 20, 4));
    let input = AsyncBufferedInput::with_capacity(64 << 10, fetch);
    read_bytes_loop(input, DATA_LEN, size).await;
}

async fn ours_read_byte(data: &[u8]) {
    let mut input = AsyncBufferedInput::with_capacity(WINDOW, Cursor::new(data));
    for _ in 0..data.len() {
        black_box(input.read_byte().await.unwrap());
    }
}

async fn tokio_read_exact(data: &[u8], size: usize) {
    let mut reader = BufReader::with_capacity(WINDOW, Cursor::new(data));
    let mut buf = vec![0u8; size];
    for _ in 0..requests(data.len(), size).0 {
        reader.read_exact(&mut buf).await.unwrap();
        black_box(&buf);
    }
}

async fn tokio_byte_loop(data: &[u8], size: usize) {
    let mut reader = BufReader::with_capacity(WINDOW, Cursor::new(data));
    let mut buf = vec![0u8; size];
    for _ in 0..requests(data.len(), size).0 {
        for b in buf.iter_mut() {
            *b = reader.read_u8().await.unwrap();
        }
        black_box(&buf);
    }
}

fn std_read_exact(data: &[u8], size: usize) {
    let mut reader = std::io::BufReader::with_capacity(WINDOW, Cursor::new(data));
    let mut buf = vec![0u8; size];
    for _ in 0..requests(data.len(), size).0 {
        reader.read_exact(&mut buf).unwrap();
        black_box(&buf);
    }
}

/// std's `BufReader` behind one `.await` per request: the same two copies as `std_read_exact`,
/// plus what any `.await` in a loop costs (the loop's state lives in the future's frame, not in
/// registers). The cheapest an async read API can be; reported for reference.
async fn std_awaited(data: &[u8], size: usize) {
    let mut reader = std::io::BufReader::with_capacity(WINDOW, Cursor::new(data));
    let mut buf = vec![0u8; size];
    for _ in 0..requests(data.len(), size).0 {
        poll_fn(|_| Poll::Ready(reader.read_exact(&mut buf)))
            .await
            .unwrap();
        black_box(&buf);
    }
}

fn slice_copy(data: &[u8], size: usize) {
    let mut reader: &[u8] = data;
    let mut buf = vec![0u8; size];
    for _ in 0..requests(data.len(), size).0 {
        Read::read_exact(&mut reader, &mut buf).unwrap();
        black_box(&buf);
    }
}

fn sequential(c: &mut Criterion<Clock>) {
    let data = data();
    let shared = bytes::Bytes::copy_from_slice(&data);
    let rt = runtime();
    for size in SIZES {
        let mut group = c.benchmark_group(format!("sequential/{size}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(2));
        let (_, bytes) = requests(DATA_LEN, size);
        group.throughput(Throughput::Bytes(bytes));

        group.bench_function(BenchmarkId::new("ours", "read_bytes"), |b| {
            b.iter(|| rt.block_on(ours_read_bytes(&data, size)))
        });
        group.bench_function(BenchmarkId::new("ours", "positional"), |b| {
            b.iter(|| rt.block_on(ours_positional(&shared, size)))
        });
        if size == 1 {
            group.bench_function(BenchmarkId::new("ours", "read_byte"), |b| {
                b.iter(|| rt.block_on(ours_read_byte(&data)))
            });
        }
        group.bench_function(BenchmarkId::new("tokio_bufreader", "read_exact"), |b| {
            b.iter(|| rt.block_on(tokio_read_exact(&data, size)))
        });
        group.bench_function(BenchmarkId::new("std_bufreader", "read_exact"), |b| {
            b.iter(|| std_read_exact(&data, size))
        });
        group.bench_function(
            BenchmarkId::new("std_bufreader", "read_exact_awaited"),
            |b| b.iter(|| rt.block_on(std_awaited(&data, size))),
        );
        group.bench_function(BenchmarkId::new("floor", "slice_copy"), |b| {
            b.iter(|| slice_copy(&data, size))
        });

        // The byte loop costs the same per byte at every size: read a quarter of the data.
        let (_, loop_bytes) = requests(BYTE_LOOP_LEN, size);
        group.throughput(Throughput::Bytes(loop_bytes));
        let head = &data[..BYTE_LOOP_LEN];
        group.bench_function(BenchmarkId::new("tokio_bufreader", "byte_loop"), |b| {
            b.iter(|| rt.block_on(tokio_byte_loop(head, size)))
        });
        group.finish();
    }
}

fn read_ahead_chunks(c: &mut Criterion<Clock>) {
    let data = data();
    let source = std::sync::Arc::new(abi_testkit::Scripted::new(data.clone()).unlogged());
    let rt = runtime();
    for size in [100, 4096, 8192, 16384] {
        let mut group = c.benchmark_group(format!("read_ahead_chunks/{size}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(2));
        group.throughput(Throughput::Bytes(requests(DATA_LEN, size).1));
        group.bench_function(BenchmarkId::new("ours", "read_bytes"), |b| {
            b.iter(|| rt.block_on(ours_read_ahead(&source, size)))
        });
        group.bench_function(BenchmarkId::new("floor", "slice_copy"), |b| {
            b.iter(|| slice_copy(&data, size))
        });
        group.finish();
    }
}

clock::clock_main!(sequential, read_ahead_chunks);
