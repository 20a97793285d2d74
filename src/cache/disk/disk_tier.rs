use std::fmt;
use std::io::{self, ErrorKind};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::{Bytes, BytesMut};

use super::files::Files;
use super::index::{Index, Reserve};
use super::record::{self, DiskKey, HEADER, MAX_NAME};
use crate::stats::metrics;

/// A local-disk tier under a [`BlockCache`](crate::cache::BlockCache)'s memory: blocks read
/// from a source are written to files in a folder, and read back from them (instead of asking
/// the source) when memory no longer holds them, also by the next process that opens the folder.
///
/// Build a cache with one through
/// [`BlockCache::with_disk_tier`](crate::cache::BlockCache::with_disk_tier). Only blocks of
/// sources with a name go to disk (a [`Cached`](crate::cache::Cached) keyed by the source's
/// [`resource`](crate::source::PositionalSource::resource) or by
/// [`Cached::with_key`](crate::cache::Cached::with_key)); each is kept under that name, the
/// source's length and its block number, so a file of another length under the same name is
/// not served stale (use `with_key` with a version where a name can change content at the same
/// length).
///
/// # What it guarantees
///
/// - **Checksums**: every block is written with a CRC32 of its bytes and of its header (which
///   names the source, its length and the block's number). Every read checks both; a block
///   that fails is never served: it is dropped, counted
///   ([`disk_corrupt`](crate::cache::BlockCacheStats::disk_corrupt)) and read from the source.
/// - **Crashes**: a block is one positional write of header and bytes; a write cut short fails
///   a checksum. On opening, the tier reads every slot's header and keeps the blocks whose
///   headers check out; their bytes are checked when read.
/// - **Capacity**: the folder holds at most `capacity` bytes of region files at every moment.
///   It is cut into slots of one block plus a 552-byte header; a file never grows past its
///   slots, and a slot is taken (a block evicted first, CLOCK) before anything is written.
/// - **Open files**: at most 16 region files and a lock file, whatever the number of blocks.
/// - **One process**: the folder is locked while open (Linux: `flock`); a second open fails.
///
/// The files' I/O runs on tokio's blocking pool; [`open`](Self::open) itself blocks (it reads
/// every slot's header), so call it before the runtime or in `spawn_blocking`. Nothing is
/// `fsync`ed: it is a cache; after a power loss the checksums catch what the disk lost.
///
/// # Why not foyer
///
/// foyer's `HybridCache` (memory + disk, recovery, admission) was evaluated first
/// (2026-12-02): its current release (0.22) needs Rust 1.91, above this crate's 1.85, so 0.21
/// would be pinned; it adds 44 crates to the build, two of them C libraries (zstd, lz4), about
/// 2.4 minutes of CPU in a release build, where this tier adds none; and it would replace the
/// memory tier (quick_cache, with the shared [`MemoryBudget`](crate::MemoryBudget) and
/// single-flight loads) rather than sit under it. It checks an xxHash64 on every load and drops
/// an entry that fails, recovers after a restart and bounds its device, as this tier does;
/// this tier is about 1,000 lines with its unit tests, and `tests/it/cache/disk_cache.rs` pins down
/// each guarantee above.
///
/// # Examples
///
/// ```
/// use async_buffered_input::cache::{BlockCache, Cached, DiskTier};
/// use async_buffered_input::source::{MemorySource, PositionalSource};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let dir = tempfile::tempdir()?;
/// let data = vec![5u8; 100_000];
/// for run in 0..2 {
///     let disk = DiskTier::open(dir.path(), 1 << 20, 4096)?;
///     let cache = BlockCache::with_disk_tier(16 * 1024, disk);
///     let source = Cached::with_key(MemorySource::new(data.clone()), cache.clone(), "data-v1");
///     assert_eq!(source.read_at(50_000, 10).await?[..], [5; 10]);
///     let stats = cache.stats();
///     // The first run asks the source; the second finds the block on disk.
///     assert_eq!((stats.misses, stats.disk_hits), if run == 0 { (1, 0) } else { (0, 1) });
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct DiskTier {
    shared: Arc<Shared>,
}

struct Shared {
    files: Files,
    index: Mutex<Index>,
    block_size: usize,
    capacity: u64,
    hits: AtomicU64,
    writes: AtomicU64,
    corrupt: AtomicU64,
    evictions: AtomicU64,
    errors: AtomicU64,
}

/// What a disk tier did and holds, for [`BlockCacheStats`](crate::cache::BlockCacheStats).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DiskStats {
    pub(crate) hits: u64,
    pub(crate) writes: u64,
    pub(crate) corrupt: u64,
    pub(crate) evictions: u64,
    pub(crate) errors: u64,
    pub(crate) bytes: u64,
    pub(crate) blocks: u64,
}

impl DiskTier {
    /// The bytes a block takes on disk besides its own: its header and the room for its
    /// source's name.
    pub(crate) const SLOT_OVERHEAD: usize = HEADER + MAX_NAME;

    /// Opens the tier in `dir` (created if missing), holding at most `capacity` bytes of blocks
    /// of `block_size` bytes (the cache's block size), with the blocks a previous process left
    /// there if it used the same block size and capacity (else the old files are removed).
    /// Blocks: it reads the header of every slot.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `block_size` is 0 or `capacity` holds no slot (a block and
    /// 552 bytes); the file system's error, naming the folder, if
    /// it cannot be created, locked (another process has it open: `WouldBlock`) or read.
    pub fn open(dir: impl AsRef<Path>, capacity: u64, block_size: usize) -> io::Result<Self> {
        let dir = dir.as_ref();
        if block_size == 0 || block_size > u32::MAX as usize / 2 {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "disk tier {}: a block size of {block_size} bytes is not supported",
                    dir.display()
                ),
            ));
        }
        let slot_size = (block_size + Self::SLOT_OVERHEAD) as u64;
        let slots = (capacity / slot_size).min(u64::from(u32::MAX)) as u32;
        if slots == 0 {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "disk tier {}: a capacity of {capacity} bytes holds no block of {block_size} bytes ({slot_size} with its header)",
                    dir.display()
                ),
            ));
        }
        let files = Files::open(dir, slot_size, slots, block_size)?;
        let mut index = Index::new(slots);
        let mut buf = vec![0u8; HEADER + MAX_NAME];
        for slot in 0..slots {
            let n = files.read_slot(slot, &mut buf)?;
            if let Some(header) = record::decode_header(&buf[..n], block_size) {
                let len = header.record_len() as u32;
                index.recover(slot, header.key, len);
            }
        }
        Ok(Self {
            shared: Arc::new(Shared {
                files,
                index: Mutex::new(index),
                block_size,
                capacity,
                hits: AtomicU64::new(0),
                writes: AtomicU64::new(0),
                corrupt: AtomicU64::new(0),
                evictions: AtomicU64::new(0),
                errors: AtomicU64::new(0),
            }),
        })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        self.shared.files.dir()
    }

    /// The most bytes its files hold.
    pub fn capacity(&self) -> u64 {
        self.shared.capacity
    }

    /// The size of the blocks it holds.
    pub fn block_size(&self) -> usize {
        self.shared.block_size
    }

    /// How many blocks it can hold.
    #[cfg(feature = "test-util")]
    #[doc(hidden)] // a hook for this crate's tests, not part of the API
    pub fn slots(&self) -> u32 {
        self.shared.files.slots()
    }

    /// How many region files it has open (at most 16; one more file, its lock, is
    /// open too).
    #[cfg(feature = "test-util")]
    #[doc(hidden)] // a hook for this crate's tests, not part of the API
    pub fn region_files(&self) -> usize {
        self.shared.files.region_files()
    }

    // ----- for the cache -----

    /// The block under `key`, if the tier holds it and it checks out. A block that does not is
    /// dropped and counted; an I/O error is counted; both return `None`.
    ///
    /// Cancel safety: the read runs on the blocking pool and finishes its bookkeeping there,
    /// whether or not this future is still waiting.
    pub(crate) async fn get(&self, key: &DiskKey) -> Option<Bytes> {
        let (slot, record_len) = self.shared.index().pin(key)?;
        // A block in the page cache is read here, with no blocking-pool round trip; one that
        // is not, or that does not check out, is read (again) and handled on the pool.
        let mut buf = BytesMut::zeroed(record_len as usize);
        if self.shared.files.read_slot_now(slot, &mut buf) {
            if let Some(block) = record::decode(buf.freeze(), key, self.shared.block_size) {
                bump(&self.shared.hits);
                let wipe = self.shared.index().unpin(slot, false);
                if let Some(slot) = wipe {
                    // Another reader found it corrupt meanwhile, and this was the last read.
                    let shared = Arc::clone(&self.shared);
                    drop(tokio::task::spawn_blocking(move || shared.wipe(slot)));
                }
                return Some(block);
            }
        }
        let shared = Arc::clone(&self.shared);
        let key = key.clone();
        let read = tokio::task::spawn_blocking(move || shared.read_block(slot, record_len, &key));
        match read.await {
            Ok(Ok(block)) => Some(block),
            Ok(Err(ErrorKind::InvalidData | ErrorKind::UnexpectedEof)) => {
                metrics::disk_tier_corrupt_block();
                metrics::disk_tier_bytes(self.shared.index().bytes());
                None
            }
            _ => None,
        }
    }

    /// Writes `data` as the block under `key`, unless the tier holds it already, its name is
    /// too long, or every slot is busy. A slot is taken (a block evicted first) before the
    /// write, so the files never hold more than the capacity. Errors are counted, not returned:
    /// the block just is not on disk.
    ///
    /// Cancel safety: the write runs on the blocking pool and finishes there.
    pub(crate) async fn put(&self, key: &DiskKey, data: Bytes) {
        if data.len() > self.shared.block_size {
            return;
        }
        let record_len = HEADER + key.name.len() + data.len();
        if key.name.len() > MAX_NAME {
            return;
        }
        let slot = match self.shared.index().reserve(key, record_len as u32) {
            Reserve::Slot { slot, evicted } => {
                self.shared.evictions.fetch_add(evicted, Ordering::Relaxed);
                metrics::disk_tier_evictions(evicted);
                slot
            }
            Reserve::Present => return,
            Reserve::Busy => {
                bump(&self.shared.errors);
                return;
            }
        };
        let shared = Arc::clone(&self.shared);
        let key = key.clone();
        let write = tokio::task::spawn_blocking(move || shared.write_block(slot, &key, &data));
        let _ = write.await;
        metrics::disk_tier_bytes(self.shared.index().bytes());
    }

    /// What it did and holds.
    pub(crate) fn stats(&self) -> DiskStats {
        let s = &self.shared;
        let (bytes, blocks) = {
            let index = s.index();
            (index.bytes(), index.held())
        };
        DiskStats {
            hits: s.hits.load(Ordering::Relaxed),
            writes: s.writes.load(Ordering::Relaxed),
            corrupt: s.corrupt.load(Ordering::Relaxed),
            evictions: s.evictions.load(Ordering::Relaxed),
            errors: s.errors.load(Ordering::Relaxed),
            bytes,
            blocks,
        }
    }
}

impl Shared {
    fn index(&self) -> MutexGuard<'_, Index> {
        // The index is consistent after every step, so a panic elsewhere leaves it usable.
        self.index
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Reads and checks the pinned `slot`, unpins it, and drops the block if it failed: the
    /// block, or why not (`InvalidData` or `UnexpectedEof`: corrupt; else the read's error).
    fn read_block(&self, slot: u32, record_len: u32, key: &DiskKey) -> Result<Bytes, ErrorKind> {
        let mut buf = BytesMut::zeroed(record_len as usize);
        let outcome = match self.files.read_slot(slot, &mut buf) {
            Ok(n) if n == buf.len() => {
                record::decode(buf.freeze(), key, self.block_size).ok_or(ErrorKind::InvalidData)
            }
            Ok(_) => Err(ErrorKind::UnexpectedEof), // the file was cut: corrupt
            Err(e) => Err(e.kind()),
        };
        match outcome {
            Ok(_) => bump(&self.hits),
            Err(ErrorKind::InvalidData | ErrorKind::UnexpectedEof) => bump(&self.corrupt),
            Err(_) => bump(&self.errors),
        }
        let wipe = self.index().unpin(slot, outcome.is_err());
        if let Some(slot) = wipe {
            self.wipe(slot);
        }
        outcome
    }

    /// Makes the header of the dropped, reserved `slot` invalid, so that the next open does not
    /// find its block again, and frees the slot.
    fn wipe(&self, slot: u32) {
        let _ = self.files.write_slot(slot, &[0; 8]);
        self.index().release(slot);
    }

    /// Writes the block to the reserved `slot` and makes it findable, or frees the slot.
    fn write_block(&self, slot: u32, key: &DiskKey, data: &[u8]) {
        let written = match record::encode(key, data) {
            Some(record) => self.files.write_slot(slot, &record).is_ok(),
            None => false,
        };
        if written {
            bump(&self.writes);
            self.index().commit(slot, key.clone());
        } else {
            bump(&self.errors);
            self.index().release(slot);
        }
    }
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl fmt::Debug for DiskTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DiskTier")
            .field("dir", &self.dir())
            .field("capacity", &self.capacity())
            .field("block_size", &self.block_size())
            .field("slots", &self.shared.files.slots())
            .field("stats", &self.stats())
            .finish()
    }
}
