//! A byte-checking model sweep of `AsyncBufferedInput` over every positional source, independent
//! of the shared conformance suite: random reads, seeks, skips and length queries at many window
//! sizes, each compared with a `Vec<u8>` model (bytes, `UnexpectedEof`, position).

use crate::common;

use std::io::ErrorKind;
use std::sync::atomic::Ordering;
use std::time::Duration;

use abi_testkit::SlowLink;
use abi_testkit::{pattern_vec, PartlyAtHand, Rng};
use async_buffered_input::source::{FileSource, MemorySource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};
use common::temp_std_file;

/// A file holding `data` (written to cargo's `target/tmp` and unlinked at once; the open
/// handle keeps it readable).
fn file_source(data: &[u8]) -> FileSource {
    let (file, path) = temp_std_file(data);
    FileSource::from_std(file, path)
}

const CAPACITIES: [usize; 6] = [1, 7, 8, 64, 1024, 8192];

/// Runs `ops` random operations on an input over `fetch` with a window of `cap` bytes,
/// checking each against `data`.
async fn sweep<S: PositionalSource>(
    fetch: PositionalFetch<S>,
    data: &[u8],
    cap: usize,
    seed: u64,
    ops: usize,
) {
    sweep_input(
        AsyncBufferedInput::with_capacity(cap, fetch),
        data,
        seed,
        ops,
    )
    .await;
}

/// Asserts that a read past the end failed with `UnexpectedEof`.
fn assert_eof<T: std::fmt::Debug>(result: std::io::Result<T>, ctx: &str) {
    assert_eq!(
        result.unwrap_err().kind(),
        ErrorKind::UnexpectedEof,
        "{ctx}"
    );
}

/// Runs `ops` random operations on `input` (at position 0), checking each against `data`.
async fn sweep_input<S: PositionalSource>(
    mut input: AsyncBufferedInput<PositionalFetch<S>>,
    data: &[u8],
    seed: u64,
    ops: usize,
) {
    assert_eq!(input.position(), 0);
    let len = data.len() as u64;
    let cap = input.capacity();
    let mut rng = Rng::new(seed);
    let mut pos = 0u64;
    let sizes = [
        1,
        cap.saturating_sub(1),
        cap,
        cap + 1,
        2 * cap + 3,
        10 * cap,
        13,
        100,
    ];
    for step in 0..ops {
        let ctx = format!("[cap {cap}, seed {seed}, step {step}, pos {pos}]");
        let size = if rng.below(4) == 0 {
            rng.below(3 * cap as u64 + 5) as usize
        } else {
            sizes[rng.below(sizes.len() as u64) as usize]
        };
        match rng.below(10) {
            // Mostly sequential reads, so read-ahead engages.
            0..=3 => {
                let mut buf = vec![0u8; size];
                let result = input.read_bytes(&mut buf).await;
                if pos + size as u64 <= len {
                    result.unwrap_or_else(|e| panic!("{ctx} read_bytes({size}): {e}"));
                    assert_eq!(
                        buf,
                        data[pos as usize..pos as usize + size],
                        "{ctx} read_bytes({size})"
                    );
                    pos += size as u64;
                } else {
                    let e = result.expect_err(&format!("{ctx} read_bytes({size}) past the end"));
                    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{ctx}: {e}");
                }
            }
            4 => {
                let result = input.read_byte().await;
                if pos < len {
                    assert_eq!(result.unwrap(), data[pos as usize], "{ctx} read_byte");
                    pos += 1;
                } else {
                    assert_eof(result, &ctx);
                }
            }
            5 => {
                let result = input.read_bytes_owned(size).await;
                if pos + size as u64 <= len {
                    let got =
                        result.unwrap_or_else(|e| panic!("{ctx} read_bytes_owned({size}): {e}"));
                    assert_eq!(&got[..], &data[pos as usize..pos as usize + size], "{ctx}");
                    pos += size as u64;
                } else {
                    assert_eof(result, &ctx);
                }
            }
            6 => {
                pos = rng.below(len + 2);
                input.seek_to(pos);
            }
            7 => {
                let n = rng.below(2 * cap as u64 + 1);
                input.skip_bytes(n).unwrap();
                pos += n;
            }
            8 => assert_eq!(input.length().await.unwrap(), len, "{ctx} length"),
            _ => {
                // Back to a recent position, as decoders do.
                pos = pos.saturating_sub(rng.below(cap as u64 + 1)).min(len);
                input.seek_to(pos);
            }
        }
        assert_eq!(input.position(), pos, "{ctx} position");
    }
    // Finally everything, in one read.
    input.seek_to(0);
    let all = input.read_bytes_owned(data.len()).await.unwrap();
    assert_eq!(&all[..], data, "whole file");
    assert_eq!(
        input.read_byte().await.unwrap_err().kind(),
        ErrorKind::UnexpectedEof
    );
}

fn configs() -> [Option<ReadAhead>; 4] {
    [
        None,
        Some(ReadAhead::new(1, 1)),
        Some(ReadAhead::new(100, 3)),
        Some(ReadAhead::new(4096, 4)),
    ]
}

/// `sweep` of a fresh fetch from `make` with each read-ahead of [`configs`] at each of `caps`,
/// the seed `step * i + cap` for the `i`-th read-ahead.
async fn sweep_configs<S: PositionalSource>(
    make: impl Fn() -> PositionalFetch<S>,
    data: &[u8],
    caps: &[usize],
    step: u64,
    ops: usize,
) {
    for (i, ahead) in configs().into_iter().enumerate() {
        for &cap in caps {
            let mut fetch = make();
            fetch.set_read_ahead(ahead);
            sweep(fetch, data, cap, step * i as u64 + cap as u64, ops).await;
        }
    }
}

#[tokio::test]
async fn memory_source() {
    let data = pattern_vec(50_000);
    let make = || PositionalFetch::new(MemorySource::new(data.clone()));
    sweep_configs(make, &data, &CAPACITIES, 1000, 400).await;
}

#[tokio::test]
async fn file_source_current_thread() {
    let data = pattern_vec(40_000);
    let source = std::sync::Arc::new(file_source(&data));
    let make = || PositionalFetch::from_arc(source.clone());
    sweep_configs(make, &data, &CAPACITIES, 2000, 200).await;
}

#[tokio::test]
async fn file_source_blocking_pool() {
    let data = pattern_vec(40_000);
    let source = std::sync::Arc::new(file_source(&data).with_page_cache_reads(false));
    let make = || PositionalFetch::from_arc(source.clone());
    sweep_configs(make, &data, &[1, 64, 8192], 2500, 200).await;
}

#[tokio::test]
async fn partly_at_hand_source() {
    let data = pattern_vec(50_000);
    for (i, ahead) in configs().into_iter().enumerate() {
        for cap in CAPACITIES {
            let source = std::sync::Arc::new(PartlyAtHand::new(data.clone(), i as u64));
            let mut fetch = PositionalFetch::from_arc(source.clone());
            fetch.set_read_ahead(ahead);
            sweep(fetch, &data, cap, 4000 * i as u64 + cap as u64, 400).await;
            // Both ways of reading were used.
            let immediate = source.immediate_bytes.load(Ordering::Relaxed);
            let requests = source.requests.load(Ordering::Relaxed);
            assert!(immediate > 0 && requests > 0, "{source:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_source_multi_thread() {
    let data = pattern_vec(40_000);
    let source = std::sync::Arc::new(file_source(&data));
    for ahead in [None, Some(ReadAhead::new(777, 4))] {
        for cap in [7, 8192] {
            let mut fetch = PositionalFetch::from_arc(source.clone());
            fetch.set_read_ahead(ahead);
            sweep(fetch, &data, cap, 77 + cap as u64, 300).await;
        }
    }
}

#[tokio::test(start_paused = true)]
async fn slow_link_under_paused_time() {
    let data = pattern_vec(30_000);
    let make = || {
        let link = SlowLink::new(
            MemorySource::new(data.clone()),
            Duration::from_millis(2),
            10_000_000,
        );
        PositionalFetch::new(link)
    };
    sweep_configs(make, &data, &[1, 8, 1024, 8192], 3000, 200).await;
}

/// Slices (and a slice of a slice) read as their own files, with read-ahead and with bytes at
/// hand, and never outside their range.
async fn slices_and_clones_of<S: PositionalSource>(make: impl Fn() -> S, data: &[u8]) {
    for ahead in [None, Some(ReadAhead::new(300, 2))] {
        let mut fetch = PositionalFetch::new(make());
        fetch.set_read_ahead(ahead);
        let input = AsyncBufferedInput::with_capacity(64, fetch);
        let slice = input.slice(1234, 10_000).await.unwrap();
        let inner = slice.slice(1000, 5000).await.unwrap();
        for cap in [1, 64] {
            for (view, bytes, seed) in [
                (&slice, &data[1234..11_234], 5),
                (&inner, &data[2234..7234], 9),
            ] {
                sweep(view.fetch().clone(), bytes, cap, seed + cap as u64, 300).await;
            }
        }
        // Clones of the slices themselves (same capacity, read-ahead and view).
        sweep_input(slice.clone(), &data[1234..11_234], 13, 300).await;
        sweep_input(inner.clone(), &data[2234..7234], 17, 300).await;
    }
}

#[tokio::test]
async fn slices_and_clones() {
    let data = pattern_vec(20_000);
    slices_and_clones_of(|| MemorySource::new(data.clone()), &data).await;
    slices_and_clones_of(|| PartlyAtHand::new(data.clone(), 7), &data).await;
    let file = std::sync::Arc::new(file_source(&data));
    slices_and_clones_of(|| FileSource::clone(&file), &data).await;
}

/// OpenDAL's memory service (feature `opendal`): every read-ahead configuration and window, and
/// slices and clones.
#[cfg(feature = "opendal")]
#[tokio::test]
async fn opendal_memory_source() {
    use async_buffered_input::source::OpendalSource;
    let data = pattern_vec(30_000);
    let operator = opendal::Operator::new(opendal::services::Memory::default()).unwrap();
    operator.write("a/b.bin", data.clone()).await.unwrap();
    let source = std::sync::Arc::new(OpendalSource::open(operator, "a/b.bin").await.unwrap());
    for (i, ahead) in configs().into_iter().enumerate() {
        for cap in CAPACITIES {
            let mut fetch = PositionalFetch::from_arc(source.clone());
            fetch.set_read_ahead(ahead);
            sweep(fetch, &data, cap, 6000 * i as u64 + cap as u64, 200).await;
        }
    }
    let data = pattern_vec(20_000);
    let operator = opendal::Operator::new(opendal::services::Memory::default()).unwrap();
    operator.write("s.bin", data.clone()).await.unwrap();
    let source = OpendalSource::open(operator, "s.bin").await.unwrap();
    slices_and_clones_of(|| source.clone(), &data).await;
}
