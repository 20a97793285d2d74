//! Sequential reads over a simulated link with 2 ms round trips and 100 MB/s
//! (`SlowLink<MemorySource>`, real time): 100-byte and 8 KiB requests with read-ahead and
//! without, against 1 MiB requests on the same link.
//!
//! `cargo bench --bench slow_link`.

use std::time::Duration;

use abi_testkit::SlowLink;
use async_buffered_input::source::MemorySource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

#[path = "support/sequential.rs"]
mod sequential;
use sequential::sum_first_bytes;

const LATENCY: Duration = Duration::from_millis(2);
const BANDWIDTH: u64 = 100_000_000;

async fn read_all(data: Bytes, len: usize, request: usize, ahead: Option<ReadAhead>) -> u64 {
    let link = SlowLink::new(MemorySource::new(data), LATENCY, BANDWIDTH);
    let mut fetch = PositionalFetch::new(link);
    fetch.set_read_ahead(ahead);
    let mut input = AsyncBufferedInput::new(fetch);
    sum_first_bytes(request, len, async |buf| input.read_bytes(buf).await).await
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let big = 16usize << 20;
    // Without read-ahead every 8 KiB costs a round trip: a smaller file keeps the run short.
    let small = 1usize << 20;
    let data = Bytes::from((0..big).map(|i| (i * 31 % 251) as u8).collect::<Vec<u8>>());
    let ahead = ReadAhead::new(256 << 10, 4);

    let mut group = c.benchmark_group("slow_link_2ms_100MBps");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Bytes(big as u64));
    group.bench_function(BenchmarkId::new("requests_1MiB", "16MiB"), |b| {
        b.iter(|| rt.block_on(read_all(data.clone(), big, 1 << 20, None)))
    });
    for request in [100usize, 8192] {
        group.throughput(Throughput::Bytes((big / request * request) as u64));
        group.bench_function(BenchmarkId::new("read_ahead_256KiBx4", request), |b| {
            b.iter(|| rt.block_on(read_all(data.clone(), big, request, Some(ahead))))
        });
        group.throughput(Throughput::Bytes((small / request * request) as u64));
        group.bench_function(BenchmarkId::new("no_read_ahead", request), |b| {
            b.iter(|| rt.block_on(read_all(data.clone(), small, request, None)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
