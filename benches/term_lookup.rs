//! Term lookups over 100 files behind a simulated network link (issue 13 item 6): 64 concurrent
//! tasks each look up terms (seek to an offset, read 100–300 bytes) in hot regions chosen with
//! a Zipf skew, through
//!
//! - (a) tokio's `BufReader` (8 KiB), opened per lookup over a stream view of the file (the
//!   crate's `AsyncBufferedInput` with a 1-byte window, which hands each read straight to one
//!   request of the caller's size: the same requests a plain `AsyncRead` over the link makes);
//! - (b) `AsyncBufferedInput` (8 KiB window), a clone of the file's input per lookup, no cache;
//! - (c) the same over one shared `BlockCache` of 8 KiB blocks (`Cached::with_key` per file),
//!   first cold, then warm: a second pass making the same lookups.
//!
//! The link is one `SlowLink` (2 ms round trips, 100 MB/s shared by every request, real time)
//! over a `MemorySource` holding the 100 files of 4 MiB back to back; each file is a view of
//! its part, which copies the bytes it returns (as a network client allocates what it
//! receives) and counts the requests and bytes (the source requests below).
//!
//! Printed per configuration: lookups per second, p50/p99 lookup latency, source requests per
//! lookup, bytes fetched per byte used, peak memory (a counting global allocator: the most
//! bytes allocated at once during the pass, above what was allocated before it) against the
//! configuration's budget, and for the cache the goals of issue 13: cold source requests
//! against distinct blocks touched, warm source requests for the hot blocks, warm p99 against
//! p50. Every lookup's bytes are compared with the data; a wrong byte fails the run.
//!
//! `cargo bench --features cache --bench term_lookup` (about 30 s). Not criterion: criterion
//! times one closure, and these figures are per pass (requests, memory, latency percentiles).

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::io::{self, SeekFrom};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use abi_testkit::SlowLink;
use abi_testkit::{binary_size, splitmix64, Zipf};
use async_buffered_input::cache::{BlockCache, Cached};
use async_buffered_input::source::{MemorySource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::PositionalFetch;
use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncSeekExt, BufReader};

const FILES: usize = 100;
const FILE_LEN: u64 = 4 << 20;
/// A hot region: a term dictionary's block cluster, where a lookup lands.
const REGION: u64 = 64 << 10;
const REGIONS: usize = FILES * (FILE_LEN / REGION) as usize;
/// The Zipf exponent of the regions' popularity.
const ZIPF_S: f64 = 1.1;
const TASKS: usize = 64;
const LOOKUPS_PER_TASK: usize = 600;
const LOOKUP_MIN: usize = 100;
const LOOKUP_MAX: usize = 300;
const LATENCY: Duration = Duration::from_millis(2);
const BANDWIDTH: u64 = 100_000_000;
/// The window of every reader: `BufReader`'s default, the inputs' capacity.
const WINDOW: usize = 8 << 10;
/// The cache's blocks: one window each, so an aligned refill is one block.
const BLOCK: usize = WINDOW;
/// The cache's budget: room for every block the lookups touch (about 76 MiB), so that the warm
/// pass can be served from it.
const CACHE_BUDGET: u64 = 128 << 20;
const SEED: u64 = 0x7e57_1007;

// ----- peak memory: a counting allocator -----

/// The system allocator, counting the bytes allocated now and the most at once since
/// [`reset_peak`].
struct CountingAlloc;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn grew(by: usize) {
    let now = CURRENT.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments, which meet `System`'s
// contract as they meet ours; the counting touches only atomics.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is (see the impl).
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is (see the impl).
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is (see the impl).
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is (see the impl).
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

/// Starts a peak measurement; returns the bytes allocated now (the baseline).
fn reset_peak() -> usize {
    let now = CURRENT.load(Ordering::Relaxed);
    PEAK.store(now, Ordering::Relaxed);
    now
}

// ----- the files: views of one link, counted -----

/// What the link served, over every file.
#[derive(Default)]
struct LinkCounts {
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// File `index`: bytes `[base, base + FILE_LEN)` of the link, copied out of each answer.
struct FileView {
    link: Arc<SlowLink<MemorySource>>,
    base: u64,
    counts: Arc<LinkCounts>,
}

impl PositionalSource for FileView {
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let len = (len as u64).min(FILE_LEN.saturating_sub(offset)) as usize;
        if len == 0 {
            return Ok(Bytes::new());
        }
        self.counts.requests.fetch_add(1, Ordering::Relaxed);
        let data = self.link.read_at(self.base + offset, len).await?;
        self.counts
            .bytes
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(Bytes::copy_from_slice(&data))
    }

    async fn len(&self) -> io::Result<u64> {
        Ok(FILE_LEN)
    }
}

// ----- the lookups -----

/// One lookup: `len` bytes at `offset` of file `file`.
#[derive(Clone, Copy)]
struct Lookup {
    file: usize,
    offset: u64,
    len: usize,
}

/// Each task's lookups: a region by Zipf rank (ranks scattered over the files by a fixed
/// permutation), an offset in it, a length of 100–300 bytes.
fn lookups() -> Vec<Vec<Lookup>> {
    let zipf = Zipf::new(REGIONS, ZIPF_S);
    // 4099 is prime and does not divide REGIONS: `rank * 4099 % REGIONS` is a permutation.
    const SCATTER: usize = 4099;
    const { assert!(REGIONS % SCATTER != 0) };
    (0..TASKS)
        .map(|task| {
            (0..LOOKUPS_PER_TASK)
                .map(|k| {
                    let r = |salt: u64| {
                        splitmix64(SEED ^ splitmix64((task * 1_000_003 + k) as u64) ^ salt)
                    };
                    let u = (r(1) >> 11) as f64 / (1u64 << 53) as f64;
                    let region = zipf.rank(u) * SCATTER % REGIONS;
                    let len = LOOKUP_MIN + (r(2) % (LOOKUP_MAX - LOOKUP_MIN + 1) as u64) as usize;
                    let file = region / (FILE_LEN / REGION) as usize;
                    let start = (region as u64 % (FILE_LEN / REGION)) * REGION;
                    let offset = start + r(3) % (REGION - len as u64 + 1);
                    Lookup { file, offset, len }
                })
                .collect()
        })
        .collect()
}

/// The cache blocks the lookups read.
fn distinct_blocks(lookups: &[Vec<Lookup>]) -> usize {
    let mut blocks = HashSet::new();
    for l in lookups.iter().flatten() {
        let last = (l.offset + l.len as u64 - 1) / BLOCK as u64;
        for b in l.offset / BLOCK as u64..=last {
            blocks.insert((l.file, b));
        }
    }
    blocks.len()
}

// ----- the readers -----

/// Files opened for a configuration, as a task reads them.
trait Reader: Send + Sync + 'static {
    /// Reads lookup `l` into `buf` (`l.len` bytes).
    fn lookup(
        &self,
        l: Lookup,
        buf: &mut [u8],
    ) -> impl std::future::Future<Output = io::Result<()>> + Send;
}

/// (a): tokio's `BufReader` over a stream view of the file, per lookup.
struct BufReaders(Vec<Arc<FileView>>);

impl Reader for BufReaders {
    async fn lookup(&self, l: Lookup, buf: &mut [u8]) -> io::Result<()> {
        let stream =
            AsyncBufferedInput::with_capacity(1, PositionalFetch::from_arc(self.0[l.file].clone()));
        let mut reader = BufReader::with_capacity(WINDOW, stream.into_tokio_io());
        reader.seek(SeekFrom::Start(l.offset)).await?;
        reader.read_exact(buf).await?;
        Ok(())
    }
}

/// (b) and (c): a clone of the file's input per lookup.
struct Inputs<S>(Vec<AsyncBufferedInput<PositionalFetch<S>>>);

impl<S: PositionalSource> Reader for Inputs<S> {
    async fn lookup(&self, l: Lookup, buf: &mut [u8]) -> io::Result<()> {
        let mut input = self.0[l.file].clone();
        input.seek_to(l.offset);
        input.read_bytes(buf).await
    }
}

// ----- a pass -----

/// What one pass measured.
struct Pass {
    name: &'static str,
    lookups: usize,
    elapsed: Duration,
    p50: Duration,
    p99: Duration,
    requests: u64,
    bytes_fetched: u64,
    bytes_used: u64,
    peak: usize,
    budget: Option<usize>,
    wrong: usize,
}

impl Pass {
    fn rate(&self) -> f64 {
        self.lookups as f64 / self.elapsed.as_secs_f64()
    }
}

/// Runs every task's lookups through `reader` at once; checks every lookup's bytes. With `coop`
/// false, each task runs outside tokio's cooperative budget
/// ([`unconstrained`](tokio::task::coop::unconstrained)): a task then never yields while its
/// reads are ready, which separates the latency of a lookup from its waits for other tasks'
/// turns.
async fn pass<R: Reader>(
    name: &'static str,
    coop: bool,
    reader: Arc<R>,
    lookups: &Arc<Vec<Vec<Lookup>>>,
    data: &Bytes,
    counts: &LinkCounts,
    budget: Option<usize>,
) -> io::Result<Pass> {
    let requests0 = counts.requests.load(Ordering::Relaxed);
    let bytes0 = counts.bytes.load(Ordering::Relaxed);
    let baseline = reset_peak();
    let started = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (reader, lookups, data) = (reader.clone(), lookups.clone(), data.clone());
            let task = async move {
                let mut latencies = Vec::with_capacity(LOOKUPS_PER_TASK);
                let mut buf = [0u8; LOOKUP_MAX];
                let (mut wrong, mut used) = (0usize, 0u64);
                for &l in &lookups[task] {
                    let buf = &mut buf[..l.len];
                    let t = Instant::now();
                    reader.lookup(l, buf).await?;
                    latencies.push(t.elapsed());
                    let at = (l.file as u64 * FILE_LEN + l.offset) as usize;
                    wrong += usize::from(buf[..] != data[at..at + l.len]);
                    used += l.len as u64;
                }
                Ok::<_, io::Error>((latencies, wrong, used))
            };
            if coop {
                tokio::spawn(task)
            } else {
                tokio::spawn(tokio::task::coop::unconstrained(task))
            }
        })
        .collect();
    let mut latencies = Vec::with_capacity(TASKS * LOOKUPS_PER_TASK);
    let (mut wrong, mut used) = (0, 0);
    for task in tasks {
        let (l, w, u) = task.await.map_err(io::Error::other)??;
        latencies.extend(l);
        wrong += w;
        used += u;
    }
    let elapsed = started.elapsed();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(baseline);
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    Ok(Pass {
        name,
        lookups: latencies.len(),
        elapsed,
        p50: at(0.50),
        p99: at(0.99),
        requests: counts.requests.load(Ordering::Relaxed) - requests0,
        bytes_fetched: counts.bytes.load(Ordering::Relaxed) - bytes0,
        bytes_used: used,
        peak,
        budget,
        wrong,
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT MET"
    }
}

async fn run() -> io::Result<bool> {
    // The files' bytes: a 64-bit mix of each word's index, so no two places look alike.
    let words = FILES as u64 * FILE_LEN / 8;
    let mut all = Vec::with_capacity((FILES as u64 * FILE_LEN) as usize);
    for w in 0..words {
        all.extend_from_slice(&splitmix64(w).to_le_bytes());
    }
    let data = Bytes::from(all);
    let link = Arc::new(SlowLink::new(
        MemorySource::new(data.clone()),
        LATENCY,
        BANDWIDTH,
    ));
    let counts = Arc::new(LinkCounts::default());
    let files: Vec<Arc<FileView>> = (0..FILES)
        .map(|f| {
            Arc::new(FileView {
                link: link.clone(),
                base: f as u64 * FILE_LEN,
                counts: counts.clone(),
            })
        })
        .collect();
    let lookups = Arc::new(lookups());
    let blocks = distinct_blocks(&lookups);
    println!(
        "term_lookup: {FILES} files of {} MiB behind one link ({} ms, {} MB/s), {TASKS} tasks \
         x {LOOKUPS_PER_TASK} lookups of {LOOKUP_MIN}-{LOOKUP_MAX} B in {REGIONS} regions of \
         {} KiB (Zipf s = {ZIPF_S}); {} KiB windows, {} KiB cache blocks, cache budget {} MiB",
        FILE_LEN >> 20,
        LATENCY.as_millis(),
        BANDWIDTH / 1_000_000,
        REGION >> 10,
        WINDOW >> 10,
        BLOCK >> 10,
        CACHE_BUDGET >> 20
    );
    println!(
        "the lookups touch {blocks} distinct {} KiB blocks ({})",
        BLOCK >> 10,
        binary_size((blocks * BLOCK) as u64)
    );
    if (blocks * BLOCK) as u64 > CACHE_BUDGET {
        println!(
            "warning: the touched blocks do not fit in the cache budget; warm misses expected"
        );
    }

    let mut passes = Vec::new();
    let bufreaders = Arc::new(BufReaders(files.clone()));
    passes.push(
        pass(
            "tokio BufReader",
            true,
            bufreaders,
            &lookups,
            &data,
            &counts,
            None,
        )
        .await?,
    );

    let plain = Arc::new(Inputs(
        files
            .iter()
            .map(|f| {
                AsyncBufferedInput::with_capacity(WINDOW, PositionalFetch::from_arc(f.clone()))
            })
            .collect(),
    ));
    passes.push(
        pass(
            "AsyncBufferedInput",
            true,
            plain,
            &lookups,
            &data,
            &counts,
            None,
        )
        .await?,
    );

    let cache = BlockCache::with_block_size(CACHE_BUDGET, BLOCK);
    let cached = Arc::new(Inputs(
        files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let source = Cached::with_key(
                    FileView {
                        link: f.link.clone(),
                        base: f.base,
                        counts: f.counts.clone(),
                    },
                    cache.clone(),
                    format!("file-{i}"),
                );
                AsyncBufferedInput::with_capacity(WINDOW, PositionalFetch::new(source))
            })
            .collect(),
    ));
    // What the cache may add to the same readers without it: its capacity.
    let budget = Some(CACHE_BUDGET as usize + passes[1].peak);
    // A pass of the cached readers (`coop`: tasks yield their thread as tokio's budget says).
    let cached_pass =
        |name, coop| pass(name, coop, cached.clone(), &lookups, &data, &counts, budget);
    passes.push(cached_pass("+ BlockCache, cold", true).await?);
    let after_cold = cache.stats();
    passes.push(cached_pass("+ BlockCache, warm", true).await?);
    let after_warm = cache.stats();
    // The same warm lookups with no task yielding its thread while its reads are ready.
    passes.push(cached_pass("  warm, no coop", false).await?);

    println!();
    println!(
        "{:<20} {:>9} {:>7} {:>9} {:>9} {:>9} {:>10} {:>11} {:>9} {:>9}",
        "reader",
        "lookups/s",
        "vs BufR",
        "p50 ms",
        "p99 ms",
        "req/look",
        "fetch/used",
        "peak",
        "budget",
        "wrong"
    );
    let base = passes[0].rate();
    for p in &passes {
        println!(
            "{:<20} {:>9.0} {:>6.2}x {:>9.3} {:>9.3} {:>9.3} {:>10.1} {:>11} {:>9} {:>9}",
            p.name,
            p.rate(),
            p.rate() / base,
            ms(p.p50),
            ms(p.p99),
            p.requests as f64 / p.lookups as f64,
            p.bytes_fetched as f64 / p.bytes_used as f64,
            binary_size(p.peak as u64),
            p.budget.map_or("-".into(), |b| binary_size(b as u64)),
            p.wrong
        );
    }

    let (cold, warm) = (&passes[2], &passes[3]);
    println!();
    println!(
        "cache after cold: {} misses, {} hits, {} coalesced, {} evictions, {} held; after warm: {} misses, {} hits, {} evictions",
        after_cold.misses,
        after_cold.hits,
        after_cold.coalesced,
        after_cold.evictions,
        binary_size(after_cold.bytes),
        after_warm.misses - after_cold.misses,
        after_warm.hits - after_cold.hits,
        after_warm.evictions - after_cold.evictions,
    );
    let cold_ok = cold.requests <= blocks as u64;
    let warm_ok = warm.requests == 0;
    let p99_ok = warm.p99 <= 2 * warm.p50;
    let budgeted: Vec<&Pass> = passes.iter().filter(|p| p.budget.is_some()).collect();
    let memory_ok = budgeted.iter().all(|p| Some(p.peak) <= p.budget);
    let right = passes.iter().all(|p| p.wrong == 0);
    println!(
        "goal, cold: {} source requests for {blocks} distinct blocks touched: {}",
        cold.requests,
        met(cold_ok)
    );
    println!(
        "goal, warm: {} source requests for the {blocks} hot blocks (goal 0): {}",
        warm.requests,
        met(warm_ok)
    );
    println!(
        "goal, warm: p99 {:.3} ms vs p50 {:.3} ms ({:.1}x, goal at most 2x): {}",
        ms(warm.p99),
        ms(warm.p50),
        warm.p99.as_secs_f64() / warm.p50.as_secs_f64().max(1e-9),
        met(p99_ok)
    );
    let free = &passes[4];
    println!(
        "  the same, no task yielding while its reads are ready: p99 {:.3} ms vs p50 {:.3} ms \
         ({:.1}x)",
        ms(free.p99),
        ms(free.p50),
        free.p99.as_secs_f64() / free.p50.as_secs_f64().max(1e-9),
    );
    println!(
        "goal, memory: cache peaks {} within budgets (capacity + the uncached input's peak): {}",
        budgeted
            .iter()
            .map(|p| {
                let budget = binary_size(p.budget.unwrap_or(0) as u64);
                format!("{}/{budget}", binary_size(p.peak as u64))
            })
            .collect::<Vec<_>>()
            .join(", "),
        met(memory_ok)
    );
    println!(
        "every lookup's bytes right: {}",
        if right { "yes" } else { "NO" }
    );
    Ok(right)
}

fn main() -> ExitCode {
    // `cargo bench` passes `--bench` (and criterion's filters); a plain `cargo test --benches`
    // run passes neither and should not take half a minute.
    if !std::env::args().any(|a| a == "--bench") {
        println!("term_lookup: run with `cargo bench --features cache --bench term_lookup`");
        return ExitCode::SUCCESS;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    match rt.block_on(run()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("term_lookup: some lookups returned wrong bytes");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("term_lookup: {e}");
            ExitCode::FAILURE
        }
    }
}
