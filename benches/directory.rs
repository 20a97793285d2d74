//! What a `Directory` costs a read: inputs it opens (over a `DynSource`) against inputs built
//! directly over the concrete source, same window, same read-ahead, same bytes.
//!
//! - `window`: 4-byte reads through a 4 MiB page-cached local file, nearly all served from the
//!   window (a fetch every 2048 reads): the directory costs nothing per read;
//! - `fetch/*`: random 100-byte reads that each miss the window, so each is one fetch: the cost
//!   of `DynSource`'s boxed future per fetch, over memory (`MemorySource` vs
//!   `DynSource(MemorySource)`, the worst case: the fetch itself is almost free) and over
//!   `object_store`'s in-memory store (`ObjectStoreSource` vs a `Directory` on the store).
//!
//! `cargo bench --features object-store --bench directory`. Compare each pair's times: a ratio
//! near 1.0 is "no measurable cost".

use std::hint::black_box;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use abi_testkit::XorShift64;
use async_buffered_input::lucene::Directory;
use async_buffered_input::object_store::memory::InMemory;
use async_buffered_input::object_store::path::Path as StorePath;
use async_buffered_input::object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use async_buffered_input::source::{DynSource, FileSource, MemorySource, ObjectStoreSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::PositionalFetch;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const FILE_LEN: usize = 4 << 20;
const RANDOM_READS: usize = 1000;

fn data() -> Vec<u8> {
    let mut state = XorShift64::new(0x1234_5678_9abc_def0);
    (0..FILE_LEN).map(|_| state.next_u64() as u8).collect()
}

/// Offsets of `RANDOM_READS` 100-byte reads, each far from the one before.
fn offsets() -> Vec<u64> {
    let mut state = 42u64;
    (0..RANDOM_READS)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 20) % (FILE_LEN as u64 - 100)
        })
        .collect()
}

async fn sequential_u32<F: async_buffered_input::Fetch>(input: &mut AsyncBufferedInput<F>) {
    input.seek_to(0);
    let mut sum = 0u32;
    for _ in 0..FILE_LEN / 4 {
        sum = sum.wrapping_add(input.read_u32().await.unwrap());
    }
    black_box(sum);
}

async fn random_reads<F: async_buffered_input::Fetch>(
    input: &mut AsyncBufferedInput<F>,
    offsets: &[u64],
) {
    let mut buf = [0u8; 100];
    for &at in offsets {
        input.seek_to(at);
        input.read_bytes(&mut buf).await.unwrap();
        black_box(&buf);
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let bytes = data();
    let offsets = offsets();
    let folder = tempfile::tempdir().unwrap();
    std::fs::File::create(folder.path().join("f"))
        .and_then(|mut f| f.write_all(&bytes))
        .unwrap();

    let mut group = c.benchmark_group("window");
    group.throughput(Throughput::Bytes(FILE_LEN as u64));
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3));
    let (mut direct, mut opened) = rt.block_on(async {
        let source = FileSource::open(folder.path().join("f")).await.unwrap();
        let direct = AsyncBufferedInput::new(PositionalFetch::new(source));
        let dir = Directory::local(folder.path()).with_read_ahead(None);
        (direct, dir.open("f").await.unwrap())
    });
    group.bench_function("file direct", |b| {
        b.iter(|| rt.block_on(sequential_u32(&mut direct)))
    });
    group.bench_function("file directory", |b| {
        b.iter(|| rt.block_on(sequential_u32(&mut opened)))
    });
    group.finish();

    let mut group = c.benchmark_group("fetch");
    group.throughput(Throughput::Elements(RANDOM_READS as u64));
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3));
    let memory = MemorySource::new(bytes.clone());
    let mut direct = AsyncBufferedInput::new(PositionalFetch::new(memory.clone()));
    let mut boxed = AsyncBufferedInput::new(PositionalFetch::new(DynSource::new(memory)));
    group.bench_function("memory direct", |b| {
        b.iter(|| rt.block_on(random_reads(&mut direct, &offsets)))
    });
    group.bench_function("memory DynSource", |b| {
        b.iter(|| rt.block_on(random_reads(&mut boxed, &offsets)))
    });
    let (mut direct, mut opened) = rt.block_on(async {
        let store = Arc::new(InMemory::new());
        let path = StorePath::from("idx/f");
        store
            .put(&path, PutPayload::from(bytes.clone()))
            .await
            .unwrap();
        let store: Arc<dyn ObjectStore> = store;
        let source = ObjectStoreSource::with_length(
            Arc::clone(&store),
            path,
            "mem:///idx/f",
            FILE_LEN as u64,
        );
        let direct = AsyncBufferedInput::new(PositionalFetch::new(source));
        let dir = Directory::with_store(store, StorePath::from("idx"), "mem:///idx")
            .with_read_ahead(None);
        dir.list().await.unwrap();
        (direct, dir.open("f").await.unwrap())
    });
    group.bench_function("object store direct", |b| {
        b.iter(|| rt.block_on(random_reads(&mut direct, &offsets)))
    });
    group.bench_function("object store directory", |b| {
        b.iter(|| rt.block_on(random_reads(&mut opened, &offsets)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
