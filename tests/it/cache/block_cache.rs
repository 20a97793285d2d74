//! The block cache (`BlockCache`, `Cached`, feature `cache`): bytes equal the source's for any
//! range, a warm cache asks the source nothing, concurrent misses on a block make one request
//! (single-flight), errors are not cached, the byte bound holds; and the conformance sweep over
//! inputs, slices and clones reading through a small cache that evicts as it goes.
#![cfg(feature = "cache")]

use std::io::ErrorKind;
use std::sync::Arc;
use std::time::Duration;

use abi_testkit::SlowLink;
use abi_testkit::*;
use async_buffered_input::cache::{BlockCache, BlockCacheStats, Cached};
use async_buffered_input::source::{MemorySource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};

/// The source's bytes at `[offset, offset + len)`, cut at its end.
fn expected(data: &[u8], offset: u64, len: usize) -> &[u8] {
    let start = offset.min(data.len() as u64) as usize;
    let end = start.saturating_add(len).min(data.len());
    &data[start..end]
}

/// A cache of 4 KiB blocks over `data` from a [`Scripted`] source that holds every request until
/// it is opened, shared by the tasks of a test.
fn gated_cache(data: &[u8]) -> (Arc<Cached<Scripted>>, BlockCache) {
    let cache = BlockCache::with_block_size(1 << 20, 4096);
    let source = Cached::new(Scripted::new(data.to_vec()).gated(), cache.clone());
    (Arc::new(source), cache)
}

/// The blocks the log's requests of whole aligned blocks asked for, one entry per block (a
/// read over several missing blocks asks for them in one request), after checking that the
/// other requests are at most one per scan read (a random read that happens to start where
/// another ended is taken for a scan's, and read around the blocks).
#[track_caller]
fn aligned_requests(
    log: &[(u64, usize)],
    block_size: usize,
    stats: &BlockCacheStats,
) -> Vec<(u64, usize)> {
    let (aligned, around): (Vec<_>, Vec<_>) = log.iter().partition(|&&(offset, len)| {
        offset % block_size as u64 == 0 && len > 0 && len % block_size == 0
    });
    assert!(
        around.len() as u64 <= stats.scan_reads,
        "{} requests not of aligned blocks, {} scan reads: {around:?}",
        around.len(),
        stats.scan_reads
    );
    aligned
        .iter()
        .flat_map(|&(offset, len)| {
            (0..len / block_size).map(move |j| (offset + (j * block_size) as u64, block_size))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Bytes
// ---------------------------------------------------------------------------------------------

/// Random ranges (within a block, across several, over the short last block, past the end),
/// with a cache that holds everything and one that evicts: the bytes are the source's, every
/// request is of aligned blocks, and with room for everything no block is asked twice.
#[tokio::test]
async fn random_ranges_return_the_source_bytes() {
    const BLOCK: usize = 64;
    let data = pattern_vec(10 * 1024 + 23); // a short last block of 23 bytes
    let len = data.len() as u64;
    for capacity in [1 << 20, 8 * BLOCK as u64] {
        let cache = BlockCache::with_block_size(capacity, BLOCK);
        let source = Cached::new(Scripted::new(data.clone()), cache.clone());
        let mut rng = Rng::new(capacity);
        for i in 0..3000 {
            let offset = match rng.below(4) {
                0 => len - rng.below(3 * BLOCK as u64).min(len), // near the end
                1 => rng.below(len + 3 * BLOCK as u64),          // past the end too
                _ => rng.below(len),
            };
            let size = match rng.below(5) {
                0 => rng.below(2 * BLOCK as u64 + 1) as usize,
                1 => rng.below(12 * BLOCK as u64) as usize,
                2 => usize::MAX,
                _ => rng.below(BLOCK as u64 + 1) as usize,
            };
            let got = source.read_at(offset, size).await.unwrap();
            assert_bytes(
                &got,
                expected(&data, offset, size),
                offset,
                &format!("capacity {capacity}, read {i}: read_at({offset}, {size})"),
            );
        }
        let stats = cache.stats();
        let log = aligned_requests(&source.get_ref().log(), BLOCK, &stats);
        let blocks = data.len().div_ceil(BLOCK);
        assert_eq!(stats.misses, log.len() as u64, "{stats:?}");
        let (within, past): (Vec<(u64, usize)>, Vec<_>) = log.iter().partition(|(at, _)| *at < len);
        if capacity == 1 << 20 {
            // With room for all, every block once.
            assert_eq!(
                within.len(),
                blocks,
                "{} requests for {blocks} blocks",
                within.len()
            );
            assert_eq!(stats.evictions, 0, "{stats:?}");
        } else {
            assert!(stats.evictions > 0, "{stats:?}");
        }
        // Past the end: only until the short last block tells where the end is (at most one
        // read's worth of blocks in flight at once: a request for up to 64 blocks, then 16 at
        // once).
        let requests_past = source
            .get_ref()
            .log()
            .iter()
            .filter(|(at, _)| *at >= len)
            .count();
        assert!(
            requests_past <= 20 && past.len() <= 64 + 20,
            "{requests_past} requests for {} blocks past the end",
            past.len()
        );
        assert_eq!(source.len().await.unwrap(), len);
    }
}

/// Readers on many tasks of a multi-thread runtime, over a cache that evicts: every read
/// returns the source's bytes and every request is of aligned blocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_random_readers_get_the_source_bytes() {
    const BLOCK: usize = 100;
    let data = Arc::new(pattern_vec(20_000 + 37));
    let cache = BlockCache::with_block_size(20 * BLOCK as u64, BLOCK);
    let source = Arc::new(Cached::new(Scripted::new(data.to_vec()), cache.clone()));
    let tasks: Vec<_> = (0..8u64)
        .map(|t| {
            let (source, data) = (Arc::clone(&source), Arc::clone(&data));
            tokio::spawn(async move {
                let mut rng = Rng::new(t);
                for _ in 0..300 {
                    // Hot ranges (the first 3000 bytes) half of the time.
                    let span = if rng.below(2) == 0 { 3000 } else { 20_500 };
                    let offset = rng.below(span);
                    let size = rng.below(450) as usize;
                    let got = source.read_at(offset, size).await.unwrap();
                    assert_bytes(&got, expected(&data, offset, size), offset, "concurrent");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let stats = cache.stats();
    aligned_requests(&source.get_ref().log(), BLOCK, &stats);
    assert!(stats.hits > 0 && stats.evictions > 0, "{stats:?}");
}

/// A block is kept as the source returned it: a read in one block is a slice of the cached
/// block (no copy), the short last block weighs its length, and offsets past the end are empty
/// (asked once, then known from the length).
#[tokio::test]
async fn blocks_are_kept_as_returned() {
    let data = pattern_vec(1000);
    let cache = BlockCache::with_block_size(1 << 20, 256);
    let source = Cached::new(Scripted::new(data.clone()), cache.clone());

    let a = source.read_at(300, 10).await.unwrap();
    let b = source.read_at(305, 100).await.unwrap();
    assert_eq!(
        a.as_ptr().wrapping_add(5),
        b.as_ptr(),
        "slices of one block"
    );

    assert_eq!(cache.stats().bytes, 256);
    let tail = source.read_at(900, 500).await.unwrap(); // block 3: [768, 1000)
    assert_eq!(&tail[..], &data[900..]);
    assert_eq!(cache.stats().bytes, 256 + 232, "the last block weighs 232");

    let before = source.get_ref().requests();
    for (offset, len) in [(1000, 1), (5000, 100), (u64::MAX, usize::MAX)] {
        let past = source.read_at(offset, len).await.unwrap();
        assert!(past.is_empty(), "read_at({offset}, {len})");
    }
    assert_eq!(source.get_ref().requests(), before, "the end is known");

    // A fresh source over the same bytes: a read past the end asks once and caches nothing.
    let other = Cached::new(Scripted::new(data.clone()), cache.clone());
    assert!(other.read_at(2000, 10).await.unwrap().is_empty());
    assert_eq!(other.get_ref().log(), [(1792, 256)]);
    assert_eq!(cache.stats().blocks, 2, "nothing cached past the end");
}

/// `len` is asked of the inner source once, and `resource` is the inner source's.
#[tokio::test]
async fn length_is_asked_once() {
    let counting = CountingPositional::new(MemorySource::new(vec![1u8; 77]));
    let source = Cached::new(counting, BlockCache::new(1 << 20));
    assert_eq!(source.len().await.unwrap(), 77);
    assert_eq!(source.len().await.unwrap(), 77);
    assert_eq!(source.get_ref().length_requests(), 1);
    assert_eq!(source.resource(), None);
    assert_eq!(source.key(), None);

    let named = Cached::new(
        Scripted::new(vec![1; 5]).named("s3://bucket/seg_1.tim"),
        BlockCache::new(1 << 20),
    );
    assert_eq!(named.resource().as_deref(), Some("s3://bucket/seg_1.tim"));
    assert_eq!(named.key(), Some("s3://bucket/seg_1.tim"));
}

// ---------------------------------------------------------------------------------------------
// Sharing
// ---------------------------------------------------------------------------------------------

/// Inputs over one cached source (plain, with read-ahead, clones and slices): once the hot
/// blocks are in, reading them again makes no source request at all.
#[tokio::test]
async fn a_warm_cache_makes_no_requests() {
    let data = pattern_vec(50_000);
    let cache = BlockCache::with_block_size(1 << 20, 4096);
    let source = Arc::new(Cached::new(
        CountingPositional::new(MemorySource::new(data.clone())),
        cache.clone(),
    ));
    // The hot blocks: 0 to 4, bytes [0, 20 480); the reads of the warm inputs, and their
    // read-ahead, stay inside them.
    let hot = [(0u64, 3000usize), (5000, 9000), (15_000, 1000)];
    let mut first =
        AsyncBufferedInput::with_capacity(512, PositionalFetch::from_arc(Arc::clone(&source)));
    let mut buf = vec![0u8; 5 * 4096];
    first.read_bytes(&mut buf).await.unwrap();
    assert_bytes(&buf, &data[..5 * 4096], 0, "cold");
    let cold_requests = source.get_ref().requests();
    assert!(cold_requests > 0);

    let fetches = [
        PositionalFetch::from_arc(Arc::clone(&source)),
        PositionalFetch::from_arc(Arc::clone(&source)).with_read_ahead(ReadAhead::new(1000, 3)),
    ];
    for fetch in fetches {
        let mut input = AsyncBufferedInput::with_capacity(300, fetch);
        let mut clone = first.clone();
        let mut slice = first.slice(5000, 9000).await.unwrap();
        for &(at, n) in &hot {
            for reader in [0, 1] {
                let mut buf = vec![0u8; n];
                if reader == 0 {
                    input.seek_to(at);
                    input.read_bytes(&mut buf).await.unwrap();
                } else {
                    clone.seek_to(at);
                    clone.read_bytes(&mut buf).await.unwrap();
                }
                assert_bytes(&buf, &data[at as usize..at as usize + n], at, "warm");
            }
        }
        let mut buf = vec![0u8; 9000];
        slice.read_bytes(&mut buf).await.unwrap();
        assert_bytes(&buf, &data[5000..14_000], 5000, "warm slice");
    }
    assert_eq!(
        source.get_ref().requests(),
        cold_requests,
        "a warm cache asks the source nothing"
    );
    assert!(cache.stats().hits > 0);
}

/// Sources with the same key share blocks (two opens of one file); sources without a name do
/// not (each has a key of its own).
#[tokio::test]
async fn keys_decide_what_is_shared() {
    let data = pattern_vec(5000);
    let cache = BlockCache::with_block_size(1 << 20, 1024);

    let a = Cached::new(
        Scripted::new(data.clone()).named("/index/_0.cfs"),
        cache.clone(),
    );
    let b = Cached::new(
        Scripted::new(data.clone()).named("/index/_0.cfs"),
        cache.clone(),
    );
    assert_eq!(&a.read_at(100, 3000).await.unwrap()[..], &data[100..3100]);
    assert_eq!(&b.read_at(1500, 2000).await.unwrap()[..], &data[1500..3500]);
    assert_eq!(b.get_ref().requests(), 0, "b reads a's blocks");

    let c = Cached::with_key(Scripted::new(data.clone()), cache.clone(), "/index/_0.cfs");
    assert_eq!(&c.read_at(0, 5000).await.unwrap()[..], &data[..]);
    assert_eq!(
        c.get_ref().log(),
        [(4096, 1024)],
        "only block 4 was missing"
    );

    let d = Cached::new(Scripted::new(data.clone()), cache.clone());
    let e = Cached::new(Scripted::new(data.clone()), cache.clone());
    d.read_at(0, 10).await.unwrap();
    e.read_at(0, 10).await.unwrap();
    assert_eq!((d.get_ref().requests(), e.get_ref().requests()), (1, 1));
}

/// `try_read_at` copies cached blocks at once and asks the source nothing; a fetcher over the
/// cached source then serves a warm block with no request.
#[tokio::test]
async fn try_read_at_serves_what_the_cache_holds() {
    let data = pattern_vec(1000);
    let cache = BlockCache::with_block_size(1 << 20, 100);
    let source = Cached::new(Scripted::new(data.clone()), cache.clone());
    let mut buf = [0u8; 250];
    assert_eq!(source.try_read_at(0, &mut buf), 0);
    assert_eq!(cache.stats().hits, 0);
    source.read_at(150, 200).await.unwrap(); // blocks 1, 2, 3: one request
    assert_eq!(source.try_read_at(0, &mut buf), 0, "block 0 is not cached");
    assert_eq!(source.try_read_at(120, &mut buf), 250);
    assert_eq!(&buf[..], &data[120..370]);
    assert_eq!(
        source.try_read_at(355, &mut buf),
        45,
        "up to block 4, not cached"
    );
    assert_eq!(&buf[..45], &data[355..400]);
    // Where the read of 150..350 ended, a read that would take its run past a block is a
    // scan's: none of it here, its `read_at` serves it whole.
    assert_eq!(source.try_read_at(350, &mut buf), 0, "a scan's");
    assert_eq!(
        source.try_read_at(350, &mut buf[..50]),
        50,
        "all of it at hand"
    );
    assert_eq!(source.get_ref().requests(), 1);
}

// ---------------------------------------------------------------------------------------------
// Single-flight
// ---------------------------------------------------------------------------------------------

/// 64 tasks on a multi-thread runtime read one cold block while its request is held: one
/// request, and every task gets its bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_misses_make_one_request() {
    const READERS: u64 = 64;
    let data = pattern_vec(10_000);
    let (source, cache) = gated_cache(&data);
    let tasks: Vec<_> = (0..READERS)
        .map(|i| {
            let source = Arc::clone(&source);
            tokio::spawn(async move { source.read_at(4096 + i * 10, 100).await })
        })
        .collect();
    // Let the request start and the other readers line up behind it.
    while source.get_ref().requests() == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    source.get_ref().open();
    for (i, task) in tasks.into_iter().enumerate() {
        let at = 4096 + i as u64 * 10;
        let got = task.await.unwrap().unwrap();
        assert_bytes(&got, &data[at as usize..at as usize + 100], at, "reader");
    }
    assert_eq!(source.get_ref().log(), [(4096, 4096)], "one request");
    let stats = cache.stats();
    assert_eq!(stats.misses, 1, "{stats:?}");
    assert_eq!(stats.hits + stats.coalesced, READERS - 1, "{stats:?}");
}

/// The same over a slow link under paused time (a current-thread runtime: every reader lines up
/// before the request is answered): one request, 63 readers wait for it, and all are answered
/// when it is, after one round trip and one transfer.
#[tokio::test(start_paused = true)]
async fn concurrent_misses_over_a_slow_link_wait_for_one_request() {
    const READERS: u64 = 64;
    let data = pattern_vec(100_000);
    let cache = BlockCache::with_block_size(1 << 20, 10_000);
    let link = SlowLink::new(
        CountingPositional::new(MemorySource::new(data.clone())),
        Duration::from_millis(20),
        1_000_000, // 10 ms per block
    );
    let source = Arc::new(Cached::new(link, cache.clone()));
    let started = tokio::time::Instant::now();
    let tasks: Vec<_> = (0..READERS)
        .map(|i| {
            let source = Arc::clone(&source);
            tokio::spawn(async move {
                let got = source.read_at(50_000 + i * 100, 150).await;
                (got, tokio::time::Instant::now())
            })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        let at = 50_000 + i * 100;
        let (got, answered) = task.await.unwrap();
        assert_bytes(&got.unwrap(), &data[at..at + 150], at as u64, "reader");
        assert_eq!(answered - started, Duration::from_millis(30), "reader {i}");
    }
    assert_eq!(source.get_ref().get_ref().requests(), 1);
    let stats = cache.stats();
    assert_eq!(
        (stats.misses, stats.coalesced, stats.hits),
        (1, READERS - 1, 0),
        "{stats:?}"
    );
}

/// Several readers of ranges over several blocks at once, over a slow link: each block is
/// requested once, and the blocks of one read in one request (one round trip, not one per
/// block), the blocks another reader is loading waited for.
#[tokio::test(start_paused = true)]
async fn blocks_of_one_read_are_requested_at_once() {
    let data = pattern_vec(64 * 1024);
    let cache = BlockCache::with_block_size(1 << 20, 1024);
    let link = SlowLink::new(
        CountingPositional::new(MemorySource::new(data.clone())),
        Duration::from_millis(50),
        0,
    );
    let source = Arc::new(Cached::new(link, cache.clone()));
    let started = tokio::time::Instant::now();
    let tasks: Vec<_> = (0..4u64)
        .map(|i| {
            let source = Arc::clone(&source);
            tokio::spawn(async move { source.read_at(i * 2000, 10_000).await })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        let at = i * 2000;
        assert_bytes(
            &task.await.unwrap().unwrap(),
            &data[at..at + 10_000],
            at as u64,
            "reader",
        );
    }
    // The 10 blocks of each read take one round trip: the first reader's request asks for
    // blocks 0-9, each other's for the blocks after those already asked for.
    assert_eq!(started.elapsed(), Duration::from_millis(50));
    let blocks = (6000 + 10_000usize).div_ceil(1024) as u64;
    let counts = source.get_ref().get_ref();
    assert_eq!(counts.bytes(), blocks * 1024, "each block once");
    let requests = counts.requests();
    assert!(requests <= 4, "{requests} requests");
    // A read of 40 blocks: one request, one round trip.
    let started = tokio::time::Instant::now();
    let far = source.read_at(20 * 1024, 40 * 1024).await.unwrap();
    assert_eq!(&far[..], &data[20 * 1024..60 * 1024]);
    assert_eq!(started.elapsed(), Duration::from_millis(50));
    assert_eq!(counts.requests(), requests + 1);
}

/// A reader whose request others wait for is dropped (a read-ahead discarded): a waiting reader
/// then makes its own request and gets the bytes, and nothing is left half-cached.
#[tokio::test(start_paused = true)]
async fn a_dropped_loader_hands_over_to_a_waiter() {
    let data = pattern_vec(10_000);
    let (source, _) = gated_cache(&data);
    let loader = {
        let source = Arc::clone(&source);
        tokio::spawn(async move { source.read_at(0, 10).await })
    };
    tokio::time::sleep(Duration::from_millis(1)).await; // the loader's request is held
    let waiter = {
        let source = Arc::clone(&source);
        tokio::spawn(async move { source.read_at(100, 10).await })
    };
    tokio::time::sleep(Duration::from_millis(1)).await; // the waiter waits for it
    assert_eq!(source.get_ref().requests(), 1);
    loader.abort();
    assert!(loader.await.unwrap_err().is_cancelled());
    tokio::time::sleep(Duration::from_millis(1)).await;
    source.get_ref().open();
    assert_eq!(&waiter.await.unwrap().unwrap()[..], &data[100..110]);
    assert_eq!(source.get_ref().log(), [(0, 4096), (0, 4096)]);
    assert_eq!(&source.read_at(0, 10).await.unwrap()[..], &data[..10]);
    assert_eq!(
        source.get_ref().requests(),
        2,
        "the waiter's block is cached"
    );
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// A failed block request returns the source's error (kind and message), caches nothing, and
/// the next read of the block asks again; in a read of several blocks, too.
#[tokio::test]
async fn errors_are_returned_and_not_cached() {
    let data = pattern_vec(5000);
    let cache = BlockCache::with_block_size(1 << 20, 1000);
    let source = Cached::new(Scripted::new(data.clone()), cache.clone());

    source.get_ref().fail_next(1);
    let e = source.read_at(1500, 10).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionReset);
    assert!(e.to_string().contains("1000 bytes at 1000"), "{e}");
    assert_eq!(
        &source.read_at(1500, 10).await.unwrap()[..],
        &data[1500..1510]
    );
    assert_eq!(source.get_ref().log(), [(1000, 1000), (1000, 1000)]);

    source.get_ref().fail_next(1);
    let e = source.read_at(2500, 2000).await.unwrap_err(); // blocks 2, 3, 4
    assert_eq!(e.kind(), ErrorKind::ConnectionReset);
    assert_eq!(
        &source.read_at(2500, 2000).await.unwrap()[..],
        &data[2500..4500]
    );
    assert_eq!(cache.stats().blocks, 4, "blocks 1 to 4, each once");
}

/// Every reader waiting for a failing single-flight request gets the error (one request for
/// all), with the source's kind and message; the next read asks again and succeeds.
#[tokio::test(start_paused = true)]
async fn every_waiter_of_a_failed_request_gets_the_error() {
    const READERS: u64 = 64;
    let data = pattern_vec(10_000);
    let (source, _) = gated_cache(&data);
    source.get_ref().fail_next(1);
    let tasks: Vec<_> = (0..READERS)
        .map(|i| {
            let source = Arc::clone(&source);
            tokio::spawn(async move { source.read_at(i * 10, 100).await })
        })
        .collect();
    // Every reader runs up to its wait before paused time moves on.
    tokio::time::sleep(Duration::from_millis(1)).await;
    source.get_ref().open();
    for task in tasks {
        let e = task.await.unwrap().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ConnectionReset, "{e}");
        assert!(
            e.to_string()
                .contains("injected failure: read of 4096 bytes at 0"),
            "{e}"
        );
    }
    assert_eq!(source.get_ref().requests(), 1);
    assert_eq!(&source.read_at(0, 100).await.unwrap()[..], &data[..100]);
    assert_eq!(source.get_ref().requests(), 2);
}

// ---------------------------------------------------------------------------------------------
// The byte bound
// ---------------------------------------------------------------------------------------------

/// Reading far more than the capacity: the blocks held never weigh more than the capacity, and
/// the evictions are counted.
#[tokio::test]
async fn the_byte_bound_holds() {
    const BLOCK: usize = 1024;
    const CAPACITY: u64 = 16 * BLOCK as u64;
    let data = pattern_vec(1 << 20); // 64 times the capacity
    let cache = BlockCache::with_block_size(CAPACITY, BLOCK);
    let source = Cached::new(MemorySource::new(data.clone()), cache.clone());
    // Known, the length keeps reads from asking for blocks past the end (which are not kept).
    assert_eq!(source.len().await.unwrap(), data.len() as u64);
    let mut rng = Rng::new(7);
    for round in 0..4000 {
        let offset = rng.below(data.len() as u64);
        let size = rng.below(3 * BLOCK as u64) as usize;
        let got = source.read_at(offset, size).await.unwrap();
        assert_bytes(&got, expected(&data, offset, size), offset, "bound");
        // At every moment, not only after some maintenance.
        let stats = cache.stats();
        assert!(stats.bytes <= CAPACITY, "round {round}: {stats:?}");
    }
    let stats = cache.stats();
    assert!(stats.bytes <= CAPACITY, "{stats:?}");
    assert!(stats.blocks <= 16, "{stats:?}");
    // Every block loaded is held or was evicted (turned away counts as evicted).
    assert_eq!(stats.misses, stats.evictions + stats.blocks, "{stats:?}");
    assert!(stats.evictions > 1000, "{stats:?}");
}

/// Blocks read again survive a scan: in a full cache, a hot set read a few times, then a single
/// pass over 16 times the capacity of other blocks, then the hot set again: nearly all of it is
/// still held. (An LRU would have lost all of it.)
#[tokio::test]
async fn a_scan_does_not_flush_the_blocks_read_again() {
    const BLOCK: usize = 1024;
    const CAPACITY: u64 = 1024 * BLOCK as u64;
    const HOT: u64 = 64;
    let data = pattern_vec(20 << 20);
    let cache = BlockCache::with_block_size(CAPACITY, BLOCK);
    let source = Cached::new(MemorySource::new(data.clone()), cache.clone());
    assert_eq!(source.len().await.unwrap(), data.len() as u64);
    // The cache full of blocks read once, then the hot set, new to it, read three times. Its
    // first reads land in the small cold part and are pushed out before the second (which
    // finds their ghosts and keeps them as hot); the third finds them all.
    for b in 18_000..19_024 {
        source.read_at(b * BLOCK as u64, 10).await.unwrap();
    }
    let mut misses = Vec::new();
    for _ in 0..3 {
        let before = cache.stats().misses;
        for b in 0..HOT {
            source.read_at(b * BLOCK as u64, 10).await.unwrap();
        }
        misses.push(cache.stats().misses - before);
    }
    assert_eq!(misses[0], HOT, "{misses:?}");
    assert_eq!(misses[2], 0, "{misses:?}");
    for b in HOT..HOT + 16 * 1024 {
        let got = source.read_at(b * BLOCK as u64, BLOCK).await.unwrap();
        assert_bytes(&got, expected(&data, b * BLOCK as u64, BLOCK), b, "scan");
    }
    let before = cache.stats();
    assert!(before.bytes <= CAPACITY, "{before:?}");
    for b in 0..HOT {
        source.read_at(b * BLOCK as u64, 10).await.unwrap();
    }
    let lost = cache.stats().misses - before.misses;
    assert!(
        lost <= HOT / 8,
        "the scan evicted {lost} of the {HOT} hot blocks: {:?}",
        cache.stats()
    );
}

// ---------------------------------------------------------------------------------------------
// The public types
// ---------------------------------------------------------------------------------------------

#[test]
fn public_types_are_send_sync_and_debug() {
    fn send_sync<T: Send + Sync + std::fmt::Debug>() {}
    send_sync::<BlockCache>();
    send_sync::<Cached<MemorySource>>();
    send_sync::<BlockCacheStats>();
    let cache = BlockCache::new(1 << 20);
    assert_eq!(cache.block_size(), (64 * 1024));
    assert_eq!(cache.capacity(), 1 << 20);
    assert_eq!(cache.stats(), BlockCacheStats::default());
    let debug = format!("{:?}", Cached::new(MemorySource::new(vec![9u8; 3]), cache));
    assert!(
        debug.contains("Cached") && !debug.contains("[9, 9, 9]"),
        "{debug}"
    );
}

// ---------------------------------------------------------------------------------------------
// Transparency: the conformance sweep through a small cache
// ---------------------------------------------------------------------------------------------

/// A fetcher over `data` read through a cache of 4 KiB in blocks of `block` bytes (the sweep
/// reads up to 98 KB: blocks are evicted as it goes).
fn cached(data: Vec<u8>, block: usize) -> PositionalFetch<Cached<MemorySource>> {
    let cache = BlockCache::with_block_size(4096, block);
    PositionalFetch::new(Cached::new(MemorySource::new(data), cache))
}

conformance_tests!(positional cached_64, |data: Vec<u8>| cached(data, 64));
conformance_tests!(positional cached_100_read_ahead, |data: Vec<u8>| {
    cached(data, 100).with_read_ahead(ReadAhead::new(300, 3))
});
conformance_tests!(slice cached_slice, |data: Vec<u8>| cached(data, 64));
conformance_tests!(slice cached_slice_read_ahead, |data: Vec<u8>| {
    cached(data, 100).with_read_ahead(ReadAhead::new(300, 3))
});
conformance_tests!(clone cached_clone, |data: Vec<u8>| cached(data, 64));
conformance_tests!(clone cached_clone_read_ahead, |data: Vec<u8>| {
    cached(data, 100).with_read_ahead(ReadAhead::new(300, 3))
});
