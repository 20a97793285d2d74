//! Unit tests of `Cached`: ranges, slices of blocks, `try_read_at`, the budget, scans.

use super::*;
use crate::memory_budget::MemoryBudget;
use crate::source::MemorySource;

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[tokio::test]
async fn ranges_across_blocks_and_the_end() {
    let bytes = data(1000);
    let cache = BlockCache::with_block_size(1 << 20, 64);
    let source = Cached::new(MemorySource::new(bytes.clone()), cache.clone());
    for (offset, len) in [
        (0, 1),
        (0, 64),
        (63, 2),
        (10, 500),
        (960, 100),
        (999, 5),
        (1000, 1),
        (5000, 3),
    ] {
        let got = source.read_at(offset, len).await.unwrap();
        let start = (offset as usize).min(bytes.len());
        let end = (start + len).min(bytes.len());
        assert_eq!(&got[..], &bytes[start..end], "read_at({offset}, {len})");
    }
    assert_eq!(source.len().await.unwrap(), 1000);
}

#[tokio::test]
async fn one_block_is_a_slice_of_the_cached_block() {
    let cache = BlockCache::with_block_size(1 << 20, 64);
    let source = Cached::new(MemorySource::new(data(200)), cache);
    let a = source.read_at(70, 10).await.unwrap();
    let b = source.read_at(72, 10).await.unwrap();
    assert_eq!(a.as_ptr().wrapping_add(2), b.as_ptr());
}

#[tokio::test]
async fn try_read_at_serves_cached_blocks_only() {
    let cache = BlockCache::with_block_size(1 << 20, 64);
    let source = Cached::new(MemorySource::new(data(200)), cache.clone());
    let mut buf = [0u8; 100];
    assert_eq!(source.try_read_at(0, &mut buf), 0);
    source.read_at(0, 70).await.unwrap(); // blocks 0 and 1
    assert_eq!(source.try_read_at(10, &mut buf), 100);
    assert_eq!(&buf[..], &data(200)[10..110]);
    assert_eq!(source.try_read_at(100, &mut buf), 28); // block 2 is not cached
    source.read_at(195, 1).await.unwrap(); // block 3, short: the end
    assert_eq!(source.try_read_at(192, &mut buf), 8);
    assert_eq!(source.try_read_at(200, &mut buf), 0);
}

#[tokio::test]
async fn evicted_blocks_give_their_budget_back() {
    let budget = MemoryBudget::new(1 << 20);
    let cache = BlockCache::with_budget(2 * 64, 64, &budget);
    let source = Cached::new(MemorySource::new(data(64 * 8)), cache.clone());
    for block in 0..8u64 {
        source.read_at(block * 64, 64).await.unwrap();
        let stats = cache.stats();
        assert!(stats.bytes <= 128, "{stats:?}");
        assert_eq!(budget.used() as u64, stats.bytes, "{stats:?}");
    }
    assert_eq!(cache.stats().unbudgeted, 0);
}

/// Scan reads (each continuing the last) with blocks cached here and there: the bytes are the
/// source's, up to its end (a short last block, and an end the cache does not know yet), and
/// only the first read's blocks are admitted.
#[tokio::test]
async fn scan_reads_around_cached_blocks() {
    let bytes = data(1000); // blocks of 64: the last one 40 bytes
    for cached_blocks in [
        &[][..],
        &[0, 1, 3, 4, 9, 15][..],
        &[2, 5, 6, 7, 8, 10, 11, 12, 13, 14][..],
    ] {
        for step in [1usize, 63, 64, 65, 150, 999, 5000] {
            let cache = BlockCache::with_block_size(1 << 20, 64);
            let source = Cached::new(MemorySource::new(bytes.clone()), cache.clone());
            for &b in cached_blocks {
                source.read_at(b * 64 + 1, 1).await.unwrap(); // a lookup: block `b`
            }
            // Those and the blocks of the reads before the run passes four blocks (a lookup's,
            // not yet a scan: the first read, and those that end within 256 bytes) are held.
            let first_end = step.min(bytes.len()) as u64;
            let lookups_end = (1..)
                .map(|k| k * step as u64)
                .take_while(|&end| end <= 4 * 64)
                .last()
                .unwrap_or(0)
                .max(first_end);
            let first_reads = 0..=(lookups_end - 1) / 64;
            let held = first_reads.filter(|b| !cached_blocks.contains(b)).count() as u64
                + cached_blocks.len() as u64;
            let mut at = 0u64;
            loop {
                let got = source.read_at(at, step).await.unwrap();
                let start = (at as usize).min(bytes.len());
                let end = (start + step).min(bytes.len());
                assert_eq!(
                    &got[..],
                    &bytes[start..end],
                    "{cached_blocks:?}, step {step}, at {at}"
                );
                if got.is_empty() {
                    break;
                }
                at += got.len() as u64;
            }
            assert_eq!(at, 1000);
            let stats = cache.stats();
            assert_eq!(
                stats.blocks, held,
                "{cached_blocks:?}, step {step}: {stats:?}"
            );
            if step < 64 {
                assert!(stats.scan_reads > 0);
            }
        }
    }
}
