//! A page-cached local file read sequentially in 100-byte and 64 KiB requests: ours over
//! `PositionalFetch<FileSource>` with and without read-ahead (page cache reads on, the
//! default), and with read-ahead but page cache reads off (every read on the blocking pool),
//! against tokio's `BufReader` over
//! `tokio::fs::File`, std's synchronous `BufReader<File>` (same 8 KiB window), and a 1 MiB
//! `File::read` loop (the `dd bs=1M` stand-in). Read-ahead runs both as 256 KiB x 4 and as
//! `ReadAhead::default()`.
//!
//! `cargo bench --bench local_file`; `ABI_BENCH_MIB` sets the file size (default 64),
//! `ABI_BENCH_READ_AHEAD=64x8,1024x4` adds read-ahead configurations (chunk KiB x depth), each
//! with page cache reads on and off.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use abi_testkit::XorShift64;
use async_buffered_input::source::FileSource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tokio::io::AsyncReadExt;

#[path = "support/sequential.rs"]
mod sequential;
use sequential::sum_first_bytes;

const WINDOW: usize = 8192;

fn file_len() -> usize {
    std::env::var("ABI_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(64)
        << 20
}

/// More read-ahead configurations to compare, from `ABI_BENCH_READ_AHEAD` (e.g. `64x8,1024x4`:
/// chunk KiB x depth).
fn extra_read_ahead() -> Vec<(usize, usize)> {
    let spec = std::env::var("ABI_BENCH_READ_AHEAD").unwrap_or_default();
    spec.split(',')
        .filter_map(|item| {
            let (chunk, depth) = item.trim().split_once('x')?;
            Some((chunk.parse::<usize>().ok()? << 10, depth.parse().ok()?))
        })
        .filter(|&(chunk, depth)| chunk > 0 && depth > 0)
        .collect()
}

fn make_file(len: usize) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    let mut state = XorShift64::new(0x1234_5678_9abc_def0);
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        for b in chunk.iter_mut() {
            *b = state.next_u64() as u8;
        }
        let n = left.min(chunk.len());
        file.write_all(&chunk[..n]).expect("write");
        left -= n;
    }
    file.flush().expect("flush");
    // Warm the page cache.
    let mut sink = vec![0u8; 1 << 20];
    let mut f = std::fs::File::open(file.path()).expect("open");
    while f.read(&mut sink).expect("read") > 0 {}
    file
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

async fn ours(
    source: Arc<FileSource>,
    ahead: Option<ReadAhead>,
    request: usize,
    len: usize,
) -> u64 {
    let mut fetch = PositionalFetch::from_arc(source);
    fetch.set_read_ahead(ahead);
    let mut input = AsyncBufferedInput::with_capacity(WINDOW, fetch);
    sum_first_bytes(request, len, async |buf| input.read_bytes(buf).await).await
}

async fn tokio_buf_reader(path: &std::path::Path, request: usize, len: usize) -> u64 {
    let file = tokio::fs::File::open(path).await.expect("open");
    let mut input = tokio::io::BufReader::with_capacity(WINDOW, file);
    sum_first_bytes(request, len, async |buf| {
        input.read_exact(buf).await.map(drop)
    })
    .await
}

fn std_buf_reader(path: &std::path::Path, request: usize, len: usize) -> u64 {
    let file = std::fs::File::open(path).expect("open");
    let mut input = std::io::BufReader::with_capacity(WINDOW, file);
    let mut buf = vec![0u8; request];
    let mut sum = 0u64;
    for _ in 0..len / request {
        input.read_exact(&mut buf).expect("read");
        sum += u64::from(buf[0]);
    }
    sum
}

fn dd_1mib(path: &std::path::Path) -> u64 {
    let mut file = std::fs::File::open(path).expect("open");
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buf).expect("read");
        if n == 0 {
            return total;
        }
        total += n as u64;
    }
}

fn bench(c: &mut Criterion) {
    let len = file_len();
    let file = make_file(len);
    let path = file.path().to_path_buf();
    let rt = runtime();
    let source = Arc::new(rt.block_on(FileSource::open(&path)).expect("open"));
    let blocking = Arc::new(FileSource::clone(&source).with_page_cache_reads(false));
    let ahead = ReadAhead::new(256 << 10, 4);

    for request in [100usize, 64 << 10] {
        let mut group = c.benchmark_group(format!("local_file/{request}B"));
        group.sample_size(10);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(3));
        group.throughput(Throughput::Bytes((len / request * request) as u64));
        group.bench_function(BenchmarkId::new("ours_read_ahead_256KiBx4", request), |b| {
            b.iter(|| rt.block_on(ours(source.clone(), Some(ahead), request, len)))
        });
        group.bench_function(
            BenchmarkId::new("ours_blocking_pool_256KiBx4", request),
            |b| b.iter(|| rt.block_on(ours(blocking.clone(), Some(ahead), request, len))),
        );
        // The default shape (adaptive since the read-ahead learned to grow).
        let default = ReadAhead::default();
        group.bench_function(BenchmarkId::new("ours_read_ahead_default", request), |b| {
            b.iter(|| rt.block_on(ours(source.clone(), Some(default), request, len)))
        });
        group.bench_function(
            BenchmarkId::new("ours_blocking_pool_default", request),
            |b| b.iter(|| rt.block_on(ours(blocking.clone(), Some(default), request, len))),
        );
        for (chunk, depth) in extra_read_ahead() {
            for (name, source) in [("read_ahead", &source), ("blocking_pool", &blocking)] {
                let id = format!("ours_{name}_{}KiBx{depth}", chunk >> 10);
                group.bench_function(BenchmarkId::new(id, request), |b| {
                    b.iter(|| {
                        rt.block_on(ours(
                            source.clone(),
                            Some(ReadAhead::new(chunk, depth)),
                            request,
                            len,
                        ))
                    })
                });
            }
        }
        group.bench_function(BenchmarkId::new("ours_no_read_ahead", request), |b| {
            b.iter(|| rt.block_on(ours(source.clone(), None, request, len)))
        });
        group.bench_function(BenchmarkId::new("tokio_bufreader_file", request), |b| {
            b.iter(|| rt.block_on(tokio_buf_reader(&path, request, len)))
        });
        group.bench_function(BenchmarkId::new("std_bufreader_file", request), |b| {
            b.iter(|| std_buf_reader(&path, request, len))
        });
        group.bench_function(BenchmarkId::new("std_read_1MiB_dd", request), |b| {
            b.iter(|| dd_1mib(&path))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
