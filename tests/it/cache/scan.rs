//! Scans through a cache (`Cached`'s "Scans"): a sequential scan several times the cache's size
//! leaves the lookups' hit rate where it was, returns the source's bytes, and asks the source
//! no more than the same scan without the cache; with a disk tier, it fills the disk tier.
#![cfg(feature = "cache")]

use std::sync::Arc;

use abi_testkit::*;
use async_buffered_input::cache::{BlockCache, BlockCacheStats, Cached};
use async_buffered_input::source::PositionalSource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};

const BLOCK: usize = 16 << 10;
/// 64 blocks of 16 KiB.
const CAPACITY: u64 = 1 << 20;
/// Five times the cache.
const FILE: usize = 5 << 20;

/// An input as `Directory::with_cache` makes it: a window of 8 KiB over the cached source,
/// with `read_ahead`.
fn input<S: PositionalSource>(
    source: &Arc<S>,
    read_ahead: ReadAhead,
) -> AsyncBufferedInput<PositionalFetch<S>> {
    let fetch = PositionalFetch::from_arc(Arc::clone(source)).with_read_ahead(read_ahead);
    AsyncBufferedInput::with_capacity(8192, fetch)
}

/// Term lookups: 1000 reads of 100 bytes at Zipf-distributed places among 96 blocks (more than
/// the cache holds), each by a fresh clone of `lookups` (a seek elsewhere), bytes checked. The
/// cache's counters over them.
async fn lookups<S: PositionalSource>(
    lookups: &AsyncBufferedInput<PositionalFetch<S>>,
    cache: &BlockCache,
    data: &[u8],
    rng: &mut Rng,
) -> BlockCacheStats {
    let zipf = Zipf::new(96, 1.0);
    let before = cache.stats();
    for _ in 0..1000 {
        let u = rng.below(1 << 30) as f64 / (1u64 << 30) as f64;
        // The hot blocks spread over the file, each read at a place of its own.
        let block = (zipf.rank(u) as u64 * 53) % (FILE / BLOCK) as u64;
        let at = block * BLOCK as u64 + 1000;
        let mut input = lookups.clone();
        input.seek_to(at);
        let mut buf = [0u8; 100];
        input.read_bytes(&mut buf).await.unwrap();
        assert_bytes(&buf, &data[at as usize..at as usize + 100], at, "lookup");
    }
    cache.stats() - before
}

/// Lookup hits over block lookups.
fn hit_rate(stats: &BlockCacheStats) -> f64 {
    let lookups = stats.hits + stats.misses + stats.coalesced;
    100.0 * stats.hits as f64 / lookups.max(1) as f64
}

/// Reads all of `input` in reads of 1000 bytes, checking every byte.
async fn scan<S: PositionalSource>(
    input: &mut AsyncBufferedInput<PositionalFetch<S>>,
    data: &[u8],
) {
    let mut buf = [0u8; 1000];
    let mut at = 0;
    while at < data.len() {
        let n = buf.len().min(data.len() - at);
        input.read_bytes(&mut buf[..n]).await.unwrap();
        assert_bytes(&buf[..n], &data[at..at + n], at as u64, "scan");
        at += n;
    }
    assert_eq!(input.position(), data.len() as u64);
}

/// The goal: after lookups warm the cache, a scan of a file five times its size passes
/// through it, and the same lookups hit the cache as often as before (within 5 points); the
/// scan evicts nothing and admits at most the first blocks of its run.
#[tokio::test]
async fn a_scan_leaves_the_lookups_hit_rate_in_place() {
    let data = pattern_vec(FILE);
    for read_ahead in [ReadAhead::default(), ReadAhead::new(64 << 10, 4)] {
        let cache = BlockCache::with_block_size(CAPACITY, BLOCK);
        let source = Arc::new(Cached::new(Scripted::new(data.clone()), cache.clone()));
        let reader = input(&source, read_ahead);
        let mut rng = Rng::new(32);
        for _ in 0..3 {
            lookups(&reader, &cache, &data, &mut rng).await;
        }
        // The same lookups before and after the scan: only the scan can tell them apart.
        let replay = rng.clone();
        let before = lookups(&reader, &cache, &data, &mut rng).await;
        let held = cache.stats();

        scan(&mut input(&source, read_ahead), &data).await;
        let scanned = cache.stats() - held;

        let after = lookups(&reader, &cache, &data, &mut replay.clone()).await;
        let (was, is) = (hit_rate(&before), hit_rate(&after));
        assert!(was > 50.0, "the lookups hit a warm cache: {before}");
        assert!(
            is >= was - 5.0,
            "{read_ahead:?}: lookups hit {was:.1}% before the scan, {is:.1}% after\nbefore: \
             {before}\nafter: {after}"
        );
        assert!(scanned.scan_reads > 0, "{scanned}");
        assert!(
            scanned.evictions <= 2,
            "the scan evicted {} blocks: {scanned}",
            scanned.evictions
        );
    }
}

/// The scan through a cache asks the source no more than the same scan without it: cold, and
/// with lookups' blocks cached here and there along its way (a read that finds cached blocks
/// in its middle still makes one request).
#[tokio::test]
async fn a_scan_asks_no_more_than_without_the_cache() {
    let data = pattern_vec(FILE);
    for read_ahead in [
        ReadAhead::default(),
        ReadAhead::new(64 << 10, 4),
        ReadAhead::new(100_000, 2),
    ] {
        let plain = Arc::new(Scripted::new(data.clone()));
        scan(&mut input(&plain, read_ahead), &data).await;
        let without = plain.requests();

        for warm in [false, true] {
            let cache = BlockCache::with_block_size(CAPACITY, BLOCK);
            let source = Arc::new(Cached::new(Scripted::new(data.clone()), cache.clone()));
            if warm {
                let reader = input(&source, read_ahead);
                lookups(&reader, &cache, &data, &mut Rng::new(7)).await;
            }
            let before = source.get_ref().requests();
            scan(&mut input(&source, read_ahead), &data).await;
            let with = source.get_ref().requests() - before;
            assert!(
                with <= without,
                "{read_ahead:?}, warm {warm}: {with} requests through the cache, {without} \
                 without: {}",
                cache.stats()
            );
        }
    }
}

/// Scans side by side (clones of one input, reading in turns) are each taken for a scan, and
/// a lookup reading on past its first block is cached up to a block from where it started.
#[tokio::test]
async fn interleaved_scans_and_long_lookups() {
    let data = pattern_vec(FILE);
    let cache = BlockCache::with_block_size(CAPACITY, BLOCK);
    let source = Arc::new(Cached::new(Scripted::new(data.clone()), cache.clone()));
    let first = input(&source, ReadAhead::new(32 << 10, 2));
    let mut scans: Vec<_> = (0..4)
        .map(|k| {
            let mut scan = first.clone();
            scan.seek_to(k * (FILE as u64 / 4));
            scan
        })
        .collect();
    let mut buf = [0u8; 4096];
    for _ in 0..(FILE / 4 / buf.len()) {
        for scan in &mut scans {
            let at = scan.position();
            scan.read_bytes(&mut buf).await.unwrap();
            assert_bytes(
                &buf,
                &data[at as usize..at as usize + buf.len()],
                at,
                "scan",
            );
        }
    }
    let stats = cache.stats();
    assert!(stats.scan_reads > 100, "{stats}");
    assert!(
        stats.blocks <= 4 * 3,
        "each scan admits at most its first blocks: {stats}"
    );

    // A long lookup: 200 KB read at once from a place of its own (straight into the buffer:
    // not a run), then on in small reads. Its first read is cached.
    let mut lookup = first.clone();
    lookup.seek_to(3 << 20);
    let mut long = vec![0u8; 200_000];
    lookup.read_bytes(&mut long).await.unwrap();
    assert_bytes(
        &long,
        &data[3 << 20..(3 << 20) + 200_000],
        3 << 20,
        "long lookup",
    );
    let requests = source.get_ref().requests();
    let mut again = first.clone();
    again.seek_to(3 << 20);
    again.read_bytes(&mut long).await.unwrap();
    assert_eq!(
        source.get_ref().requests(),
        requests,
        "read again from the cache"
    );
}

/// With a disk tier, a scan's blocks go to the disk tier (and not to memory): the next run
/// reads them from disk.
#[cfg(feature = "disk-cache")]
#[tokio::test]
async fn a_scan_fills_the_disk_tier_and_not_memory() {
    use async_buffered_input::cache::DiskTier;
    let data = pattern_vec(FILE / 4);
    let dir = tempfile::tempdir().unwrap();
    let blocks = (data.len() / BLOCK) as u64;
    for run in 0..2 {
        let disk = DiskTier::open(dir.path(), 4 << 20, BLOCK).unwrap();
        let cache = BlockCache::with_disk_tier(8 * BLOCK as u64, disk);
        let source = Arc::new(Cached::new(
            Scripted::new(data.clone()).named("test://scan.cfs"),
            cache.clone(),
        ));
        scan(&mut input(&source, ReadAhead::default()), &data).await;
        let stats = cache.stats();
        assert!(stats.scan_reads > 0, "{stats}");
        assert!(
            stats.blocks <= 3,
            "run {run}: a scan stays out of memory: {stats}"
        );
        assert_eq!(stats.disk_blocks, blocks, "run {run}: {stats}");
        if run == 1 {
            assert!(
                stats.disk_hits >= blocks - 2,
                "the second run reads from disk: {stats}"
            );
            assert!(source.get_ref().requests() <= 2, "{stats}");
        }
    }
}

/// A file of `len` bytes (at least 16) with a valid Lucene footer.
fn lucene_file(len: usize) -> Vec<u8> {
    use async_buffered_input::lucene::codec::FOOTER_MAGIC;
    let mut file = pattern_vec(len - 8);
    file[len - 16..len - 12].copy_from_slice(&FOOTER_MAGIC.to_be_bytes());
    file[len - 12..len - 8].copy_from_slice(&0u32.to_be_bytes());
    let crc = crc32fast::hash(&file);
    file.extend_from_slice(&u64::from(crc).to_be_bytes());
    file
}

/// A source over `file` as a remote store serves it: each request answered after 10 ms (so
/// the read-ahead grows as on a network), a stream in pieces of about 1 MB each 10 ms (larger
/// than the reads that take them, so a reader may stop reading it in a piece's middle).
fn remote(file: &[u8]) -> Scripted {
    use std::time::Duration;
    Scripted::new(file.to_vec())
        .delay(Duration::from_millis(10))
        .streaming(1_000_003, Duration::from_millis(10))
}

/// Verifies `source`'s CRC the way `verify_commit` does a file (`Directory::open`'s input:
/// the default window and read-ahead).
async fn verify<S: PositionalSource>(source: &Arc<S>, file: &[u8]) {
    use async_buffered_input::lucene::codec;
    let fetch = PositionalFetch::from_arc(Arc::clone(source)).with_read_ahead(ReadAhead::default());
    let mut input = AsyncBufferedInput::new(fetch);
    let crc = codec::checksum_entire_file(&mut input).await.unwrap();
    assert_eq!(
        u64::from(crc),
        u64::from_be_bytes(file[file.len() - 8..].try_into().unwrap())
    );
}

/// Issue 32: `lucene_index --cache` took 1.22x the time without, because a file's scan through
/// the cache was ranged chunks growing a round trip at a time where without the cache it is a
/// few chunks and one stream (a 2.7 MB file: 13 requests against 2). Verifying a file through
/// a cache (of half its size: what it holds does not matter) asks the source no more than
/// without it, whatever the file's size: one block, a few, or a scan that streams (24 and 48
/// MiB: a stream, and ranges tried in its place from where its reader stopped in a piece if
/// the rest would take the stream a quarter of a second). Requests
/// and streams both count. And the scan admits no more than the blocks of its first 256 KiB,
/// before its run is taken for a scan.
#[tokio::test(start_paused = true)]
async fn verifying_a_file_asks_no_more_than_without_the_cache() {
    for len in [1000, 100_000, 700_000, 3 << 20, 7 << 20, 24 << 20, 48 << 20] {
        let file = lucene_file(len);
        let plain = Arc::new(remote(&file));
        verify(&plain, &file).await;
        let without = (plain.requests(), plain.streams_opened());

        let cache = BlockCache::new(len as u64 / 2);
        let cached = Arc::new(Cached::new(remote(&file), cache.clone()));
        verify(&cached, &file).await;
        let source = cached.get_ref();
        let with = (source.requests(), source.streams_opened());
        assert!(
            with.0 + with.1 <= without.0 + without.1 && with.1 <= without.1,
            "{len} bytes: (requests, streams) {with:?} through the cache, {without:?} without: \
             {}",
            cache.stats()
        );
        let stats = cache.stats();
        assert!(stats.misses <= 4, "{len} bytes: {stats}");
    }
}
