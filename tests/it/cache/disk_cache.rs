//! The disk tier under the block cache (`DiskTier`, feature `disk-cache`): every block read
//! from disk is checked (a flipped byte in every block: every byte served right, every corrupt
//! block counted); a process killed while writing leaves nothing served wrong; the capacity
//! holds after every insert; the next process finds the blocks; open files are bounded;
//! single-flight holds across both tiers.
#![cfg(feature = "disk-cache")]

use std::io::{BufRead, BufReader, ErrorKind};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use abi_testkit::SlowLink;
use abi_testkit::*;
use async_buffered_input::cache::{BlockCache, BlockCacheStats, Cached, DiskTier};
use async_buffered_input::source::{MemorySource, PositionalSource};

/// The name the test sources' blocks are kept under.
const NAME: &str = "test://segment_1.cfs";

/// A cached source of `data` under [`NAME`], counting its requests.
fn cached(data: &[u8], cache: &BlockCache) -> Cached<CountingPositional<MemorySource>> {
    let source = CountingPositional::new(MemorySource::new(data.to_vec()));
    Cached::with_key(source, cache.clone(), NAME)
}

/// Reads all of `data` through `source` in blocks of `bs`, checking every byte.
async fn read_all<S: PositionalSource>(source: &S, data: &[u8], bs: usize, ctx: &str) {
    for offset in (0..data.len()).step_by(bs) {
        let got = source.read_at(offset as u64, bs).await.unwrap();
        let end = (offset + bs).min(data.len());
        assert_bytes(&got, &data[offset..end], offset as u64, ctx);
    }
}

/// The region files of the tier in `dir`.
fn region_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("region-")
        })
        .collect();
    files.sort();
    files
}

/// The length of every region file, summed.
fn bytes_on_disk(dir: &Path) -> u64 {
    region_files(dir)
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

/// Flips one byte of every record in the tier's files (a byte of its data if `data_only`,
/// else anywhere in it, header included), chosen by `rng`; returns how many records.
fn flip_a_byte_in_every_block(dir: &Path, bs: usize, data_only: bool, rng: &mut Rng) -> u64 {
    let slot_size = (bs + 552) as u64;
    let mut records = 0;
    for path in region_files(dir) {
        let mut bytes = std::fs::read(&path).unwrap();
        let mut at = 0u64;
        while at < bytes.len() as u64 {
            let rec = &bytes[at as usize..];
            if rec.len() >= 40 && &rec[..8] == b"ABIDISK1" {
                let name_len = u16::from_le_bytes([rec[12], rec[13]]) as u64;
                let data_len = u32::from_le_bytes(rec[32..36].try_into().unwrap()) as u64;
                let from = if data_only { 40 + name_len } else { 0 };
                let target = at + from + rng.below(40 + name_len + data_len - from);
                bytes[target as usize] ^= 1 << rng.below(8);
                records += 1;
            }
            at += slot_size;
        }
        std::fs::write(&path, &bytes).unwrap();
    }
    records
}

/// A disk tier of `capacity` bytes in blocks of `block_size`, in a new temporary folder
/// (deleted when the guard is dropped).
fn new_tier(capacity: u64, block_size: usize) -> (tempfile::TempDir, DiskTier) {
    let dir = tempfile::tempdir().unwrap();
    let disk = DiskTier::open(dir.path(), capacity, block_size).unwrap();
    (dir, disk)
}

#[tokio::test]
async fn a_flipped_byte_in_every_block_is_caught_and_counted() {
    let bs = 4096;
    let data = pattern_vec(64 * bs + 1000); // 65 blocks, the last one short
    let blocks = 65;
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(20);
    for (round, data_only) in [(0, false), (1, true)] {
        let disk = DiskTier::open(dir.path(), 1 << 20, bs).unwrap();
        // Fresh memory tiers over one disk tier: every block lookup goes to disk.
        let first = BlockCache::with_disk_tier(bs as u64, disk.clone());
        read_all(&cached(&data, &first), &data, bs, "writing").await;
        let written = first.stats();
        assert_eq!(written.disk_blocks, blocks, "round {round}: {written}");

        let disk = if data_only {
            // Flipped while closed: the next open finds the headers valid, the data not.
            drop((first, disk));
            let flipped = flip_a_byte_in_every_block(dir.path(), bs, true, &mut rng);
            assert_eq!(flipped, blocks);
            DiskTier::open(dir.path(), 1 << 20, bs).unwrap()
        } else {
            // Flipped while open, anywhere in the record (the header is checked on every read
            // too).
            let flipped = flip_a_byte_in_every_block(dir.path(), bs, false, &mut rng);
            assert_eq!(flipped, blocks);
            disk
        };
        // The disk tier's counters are shared by every cache over it.
        let before = BlockCache::with_disk_tier(bs as u64, disk.clone()).stats();
        let second = BlockCache::with_disk_tier(bs as u64, disk.clone());
        let source = cached(&data, &second);
        read_all(&source, &data, bs, "corrupt").await;
        let stats = second.stats() - before;
        assert_eq!(stats.disk_corrupt, blocks, "round {round}: {stats}");
        assert_eq!(stats.disk_hits, 0, "round {round}: {stats}");
        assert_eq!(
            source.get_ref().requests(),
            blocks,
            "round {round}: every block refetched"
        );
        // Read again through a fresh memory tier: the rewritten blocks are right and served.
        let third = BlockCache::with_disk_tier(bs as u64, disk.clone());
        let source = cached(&data, &third);
        read_all(&source, &data, bs, "rewritten").await;
        let stats = third.stats();
        assert_eq!(stats.disk_hits, blocks, "round {round}: {stats}");
        assert_eq!(
            stats.disk_corrupt,
            before.disk_corrupt + blocks,
            "no new corruption"
        );
        assert_eq!(source.get_ref().requests(), 0);
    }
}

#[tokio::test]
async fn the_capacity_holds_after_every_insert() {
    let bs = 1000;
    let slot = (bs + 552) as u64;
    let capacity = 20 * slot + slot / 2; // 20 slots and a half
    let data = pattern_vec(200 * bs + 17);
    let (dir, disk) = new_tier(capacity, bs);
    assert_eq!(disk.slots(), 20);
    let cache = BlockCache::with_disk_tier(2 * bs as u64, disk);
    let source = Arc::new(cached(&data, &cache));
    let mut rng = Rng::new(7);
    let check = |cache: &BlockCache, ctx: &str| {
        let stats = cache.stats();
        let on_disk = bytes_on_disk(dir.path());
        assert!(stats.disk_bytes <= capacity, "{ctx}: {stats}");
        assert!(
            on_disk <= capacity,
            "{ctx}: {on_disk} bytes on disk > {capacity}"
        );
        assert!(stats.disk_blocks <= 20, "{ctx}: {stats}");
    };
    for i in 0..600 {
        let block = rng.below(201);
        let got = source.read_at(block * bs as u64, bs).await.unwrap();
        let start = (block as usize * bs).min(data.len());
        assert_bytes(
            &got,
            &data[start..(start + bs).min(data.len())],
            start as u64,
            "read",
        );
        check(&cache, &format!("read {i} of block {block}"));
    }
    // Concurrent readers, checked as each read completes.
    let mut tasks = Vec::new();
    for t in 0..8 {
        let source = Arc::clone(&source);
        tasks.push(tokio::spawn(async move {
            let mut rng = Rng::new(t);
            for _ in 0..100 {
                let block = rng.below(201);
                source.read_at(block * bs as u64, bs).await.unwrap();
            }
        }));
        check(&cache, "concurrent");
    }
    for task in tasks {
        task.await.unwrap();
        check(&cache, "concurrent");
    }
    let stats = cache.stats();
    assert!(
        stats.disk_evictions > 0,
        "the test made the tier evict: {stats}"
    );
    assert!(stats.disk_hits > 0, "{stats}");
}

#[tokio::test]
async fn the_next_process_finds_the_blocks() {
    let bs = 8192;
    let data = pattern_vec(100 * bs + 5);
    let dir = tempfile::tempdir().unwrap();
    {
        let disk = DiskTier::open(dir.path(), 4 << 20, bs).unwrap();
        let cache = BlockCache::with_disk_tier(4 * bs as u64, disk);
        let source = cached(&data, &cache);
        read_all(&source, &data, bs, "first run").await;
        assert_eq!(source.get_ref().requests(), 101);
        assert_eq!(cache.stats().disk_writes, 101);
    }
    let disk = DiskTier::open(dir.path(), 4 << 20, bs).unwrap();
    let cache = BlockCache::with_disk_tier(4 * bs as u64, disk);
    let source = cached(&data, &cache);
    read_all(&source, &data, bs, "second run").await;
    let stats = cache.stats();
    assert_eq!(source.get_ref().requests(), 0, "{stats}");
    assert_eq!(
        source.get_ref().length_requests(),
        1,
        "the length, for the key"
    );
    assert_eq!((stats.disk_hits, stats.disk_blocks), (101, 101), "{stats}");

    // The same name with another length: nothing stale is served.
    drop((source, cache));
    let changed: Vec<u8> = pattern_vec(100 * bs + 6).iter().map(|b| !b).collect();
    let source = cached(
        &changed,
        &BlockCache::with_disk_tier(4 * bs as u64, cache_disk(&dir, bs)),
    );
    read_all(&source, &changed, bs, "changed").await;
    assert_eq!(source.get_ref().requests(), 101);
}

/// Reopens the tier in `dir` (after the previous handles on it are gone).
fn cache_disk(dir: &tempfile::TempDir, bs: usize) -> DiskTier {
    DiskTier::open(dir.path(), 4 << 20, bs).unwrap()
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn one_process_at_a_time_and_bad_geometry_is_refused() {
    let (dir, disk) = new_tier(1 << 20, 4096);
    let err = DiskTier::open(dir.path(), 1 << 20, 4096).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WouldBlock, "{err}");
    assert!(
        err.to_string().contains(&dir.path().display().to_string()),
        "{err}"
    );
    drop(disk);
    let err = DiskTier::open(dir.path(), 4000, 4096).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("4000"), "{err}");
    let err = DiskTier::open(dir.path(), 1 << 20, 0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    // Another block size: the old files go, the new tier starts empty and works.
    let disk = DiskTier::open(dir.path(), 1 << 20, 1024).unwrap();
    assert_eq!(disk.block_size(), 1024);
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn open_files_are_bounded() {
    let bs = 512;
    let data = pattern_vec(2000 * bs);
    let (dir, disk) = new_tier(4 << 20, bs);
    assert_eq!(disk.region_files(), 16);
    let cache = BlockCache::with_disk_tier(8 * bs as u64, disk);
    let source = Arc::new(cached(&data, &cache));
    let open_in_dir = {
        let dir = dir.path().canonicalize().unwrap();
        move || {
            std::fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|target| target.starts_with(&dir))
                .count()
        }
    };
    let mut most = open_in_dir();
    for pass in 0..2 {
        let mut tasks = Vec::new();
        for t in 0..32u64 {
            let source = Arc::clone(&source);
            tasks.push(tokio::spawn(async move {
                let mut rng = Rng::new(t + pass * 100);
                for _ in 0..200 {
                    source
                        .read_at(rng.below(2000) * bs as u64, bs)
                        .await
                        .unwrap();
                }
            }));
        }
        while tasks.iter().any(|t| !t.is_finished()) {
            most = most.max(open_in_dir());
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        for task in tasks {
            task.await.unwrap();
        }
    }
    assert!(most <= 17, "{most} files open");
    assert_eq!(most, 17, "the region files and the lock are open");
    assert!(cache.stats().disk_hits > 0, "{}", cache.stats());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn single_flight_holds_across_both_tiers() {
    let bs = 4096;
    let data = pattern_vec(8 * bs);
    let (_dir, disk) = new_tier(1 << 20, bs);
    // A fresh memory tier over `disk`; 32 readers of one block at once, each checked; the
    // cache, and the source under it.
    let read_32 = |what: &'static str| {
        let data = data.clone();
        let cache = BlockCache::with_disk_tier(1 << 20, disk.clone());
        async move {
            // 20 ms per request, so every reader arrives while the first request is in flight.
            let link = SlowLink::new(
                MemorySource::new(data.clone()),
                Duration::from_millis(20),
                u64::MAX,
            );
            let source = Arc::new(Cached::with_key(
                CountingPositional::new(link),
                cache.clone(),
                NAME,
            ));
            source.len().await.unwrap();
            let readers: Vec<_> = (0..32)
                .map(|_| {
                    let source = Arc::clone(&source);
                    tokio::spawn(
                        async move { source.read_at(3 * bs as u64 + 10, 100).await.unwrap() },
                    )
                })
                .collect();
            for reader in readers {
                assert_bytes(
                    &reader.await.unwrap(),
                    &data[3 * bs + 10..3 * bs + 110],
                    0,
                    what,
                );
            }
            (cache, source)
        }
    };
    // Missing from both tiers: 32 readers, one source request, one disk write.
    let (cache, source) = read_32("miss").await;
    let stats = cache.stats();
    assert_eq!(source.get_ref().requests(), 1, "{stats}");
    assert_eq!((stats.misses, stats.disk_writes), (1, 1), "{stats}");
    assert_eq!(stats.hits + stats.coalesced, 31, "{stats}");

    // On disk only (a fresh memory tier): 32 readers, one disk read, no source request.
    let (cache, source) = read_32("disk").await;
    let stats = cache.stats();
    assert_eq!(source.get_ref().requests(), 0, "{stats}");
    assert_eq!(stats.disk_hits, 1, "one disk read: {stats}");
    assert_eq!(stats.hits + stats.coalesced, 31, "{stats}");
}

// ---------------------------------------------------------------------------------------------
// Killed while writing
// ---------------------------------------------------------------------------------------------

/// Set in the child process: the folder it writes blocks to until it is killed.
const CHILD_DIR: &str = "ABI_DISK_CACHE_CHILD_DIR";
const KILL_BS: usize = 256 * 1024;
const KILL_BLOCKS: usize = 48;

/// The bytes of the source the child writes: a pattern shifted by `generation` so that a
/// block of one length is never mistaken for another.
fn kill_data() -> Vec<u8> {
    pattern_vec(KILL_BLOCKS * KILL_BS - 3)
}

/// In the child (the env var set): writes blocks through a tier of 8 slots, evicting and
/// overwriting all the time, forever. In the parent: starts the child, kills it (SIGKILL) after
/// a random moment of writing, and checks that the next open serves every byte right; many
/// times.
#[test]
fn a_process_killed_while_writing_leaves_nothing_served_wrong() {
    let capacity = 8 * (KILL_BS + 552) as u64;
    if let Ok(dir) = std::env::var(CHILD_DIR) {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let disk = DiskTier::open(&dir, capacity, KILL_BS).unwrap();
            let cache = BlockCache::with_disk_tier(KILL_BS as u64, disk);
            let data = kill_data();
            let source = Arc::new(cached(&data, &cache));
            println!("writing");
            let mut rng = Rng::new(std::process::id() as u64);
            loop {
                let block = rng.below(KILL_BLOCKS as u64);
                source.read_at(block * KILL_BS as u64, 1).await.unwrap();
            }
        });
        unreachable!("the child is killed");
    }
    let dir = tempfile::tempdir().unwrap();
    let data = kill_data();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut rng = Rng::new(99);
    let mut total = BlockCacheStats::default();
    for run in 0..25 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                // This test's own name, as the test binary lists it.
                &format!(
                    "{}::a_process_killed_while_writing_leaves_nothing_served_wrong",
                    module_path!().split_once("::").unwrap().1
                ),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, dir.path())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let started = lines.any(|line| line.is_ok_and(|line| line.contains("writing")));
        assert!(started, "run {run}: the child did not start writing");
        std::thread::sleep(Duration::from_micros(rng.below(30_000)));
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        assert!(!status.success(), "run {run}: the child was killed");
        let stats = rt.block_on(async {
            let disk = DiskTier::open(dir.path(), capacity, KILL_BS).unwrap();
            let cache = BlockCache::with_disk_tier(KILL_BS as u64, disk);
            // A source that fails every read: only what the disk holds is served (and nothing
            // is written, so nothing the child left is evicted before it is checked).
            let source = Cached::with_key(
                Scripted::new(data.clone())
                    .fail_all()
                    .error(std::io::ErrorKind::Other, "unreachable"),
                cache.clone(),
                NAME,
            );
            for block in 0..KILL_BLOCKS {
                let offset = (block * KILL_BS) as u64;
                if let Ok(got) = source.read_at(offset, KILL_BS).await {
                    let end = (block * KILL_BS + KILL_BS).min(data.len());
                    assert_bytes(&got, &data[block * KILL_BS..end], offset, "after a kill");
                }
            }
            cache.stats()
        });
        total += stats;
    }
    eprintln!("after 25 kills: {total}");
    assert!(
        total.disk_hits >= 25 * 4,
        "the children left blocks to find: {total}"
    );
    // A corrupt block (a torn write) is asked of the source, and counted there too.
    assert_eq!(
        total.disk_hits + total.misses,
        25 * KILL_BLOCKS as u64,
        "{total}"
    );
}
