//! What inputs and the values they hand out keep alive, measured by a counting allocator.
//!
//! The allocator counts the bytes live in the whole process and the highest count since the
//! last reset, so it sees what the blocking pool and spawned tasks allocate too; the tests
//! take turns (`ONE_AT_A_TIME`) so that they do not see each other's bytes. The other tests of
//! the binary run beside them, though: a test whose work stays on its own thread counts that
//! thread's bytes alone (`live_here`), which they cannot move.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Cursor;
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::ReadAhead;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    // The bytes this thread allocated less those it freed (a `const` `Cell`: no allocation and
    // no destructor, so the allocator may touch it).
    static HERE: Cell<isize> = const { Cell::new(0) };
}

fn add(n: isize) {
    let live = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(live, Relaxed);
    let _ = HERE.try_with(|here| here.set(here.get() + n));
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counters only observe.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Bytes live now, and resets the peak to it.
fn live() -> isize {
    let live = LIVE.load(Relaxed);
    PEAK.store(live, Relaxed);
    live
}

/// Bytes this thread allocated and did not free, for tests whose work runs on their own thread
/// alone (a current-thread runtime, no spawned or blocking work elsewhere).
fn live_here() -> isize {
    HERE.with(Cell::get)
}

/// The most bytes live since the last `live()`.
fn peak() -> isize {
    PEAK.load(Relaxed)
}

/// Finding 6 of the fault-injection report: 1,000 kept 4-byte values from `read_bytes_owned`
/// held 955 KB, because each shared (and so kept alive) the window buffer it came from. Small
/// results are copied now: what a result keeps alive is at most 4x its length.
#[tokio::test(flavor = "current_thread")]
async fn small_owned_reads_do_not_keep_their_windows_alive() {
    let _turn = ONE_AT_A_TIME.lock().await;
    const CAPACITY: usize = 8192;
    const VALUES: usize = 1000;
    let data: Vec<u8> = (0..(VALUES * (CAPACITY + 4)) as u64)
        .map(|i| (i % 251) as u8)
        .collect();
    let mut kept = Vec::with_capacity(VALUES);
    let mut input = AsyncBufferedInput::with_capacity(CAPACITY, Cursor::new(&data[..]));
    let before = live_here();
    for i in 0..VALUES {
        // Each value from a window of its own.
        input.seek_to((i * (CAPACITY + 4)) as u64);
        kept.push(input.read_bytes_owned(4).await.unwrap());
    }
    drop(input);
    let held = live_here() - before;
    assert!(
        held < 64 * 1024,
        "{VALUES} kept 4-byte values hold {held} bytes"
    );
    for (i, value) in kept.iter().enumerate() {
        let at = i * (CAPACITY + 4);
        assert_eq!(&value[..], &data[at..at + 4]);
    }

    // A result of a quarter of the window or more is shared, not copied: it keeps alive at
    // most four times its length of window buffer (plus the buffer's shared header, a few
    // words).
    let mut input = AsyncBufferedInput::with_capacity(CAPACITY, Cursor::new(&data[..]));
    let before = live_here();
    let quarter = input.read_bytes_owned(CAPACITY / 4).await.unwrap();
    drop(input);
    let held = live_here() - before;
    assert!(
        held <= 4 * quarter.len() as isize + 64,
        "a {}-byte result holds {held} bytes",
        quarter.len()
    );
    assert_eq!(&quarter[..], &data[..CAPACITY / 4]);
}

/// The documented bound: an input over a file with read-ahead holds at most its window and
/// the read-ahead's chunks while it reads; at the end it holds no chunks; `release` gives back
/// the window too. Over many inputs, that is what thousands of open segment files cost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_input_keeps_at_most_its_window_and_no_chunks_at_the_end() {
    let _turn = ONE_AT_A_TIME.lock().await;
    const FILES: usize = 20;
    const LEN: usize = 3 << 20;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data: Vec<u8> = (0..LEN as u64).map(|i| (i * 7 % 251) as u8).collect();
    let mut paths = Vec::new();
    for i in 0..FILES {
        let path = dir.path().join(format!("_{i}.fdt"));
        std::fs::write(&path, &data).unwrap();
        paths.push(path);
    }
    drop(data);
    let mut inputs = Vec::new();
    for path in &paths {
        inputs.push(AsyncBufferedInput::open(path).await.unwrap());
    }
    let read_ahead = inputs[0].fetch().read_ahead().expect("open reads ahead");
    let capacity = inputs[0].capacity();
    let bound = (capacity + read_ahead.memory_bound()) as isize;
    // Slack for what the runtime and the inputs' own structs allocate.
    let slack = 64 * 1024;

    let before = live();
    for input in &mut inputs {
        let mut buf = [0u8; 100];
        while input.position() < LEN as u64 {
            let n = buf.len().min(LEN - input.position() as usize);
            input.read_bytes(&mut buf[..n]).await.unwrap();
        }
    }
    let peak = peak() - before;
    let held = live() - before;
    assert!(
        held <= FILES as isize * capacity as isize + slack,
        "{FILES} inputs read to the end hold {held} bytes; their windows are {capacity} each"
    );
    // One input reads at a time: at most one input's bound in chunks on top of the windows.
    assert!(
        peak <= FILES as isize * capacity as isize + bound + slack,
        "peak {peak} bytes while reading; bound per input {bound}"
    );
    assert_eq!(read_ahead, ReadAhead::default());

    for input in &mut inputs {
        input.release();
    }
    let released = live() - before;
    assert!(released <= slack, "{released} bytes held after release");
    // A released input still reads.
    inputs[3].seek_to(10);
    assert_eq!(
        inputs[3].read_byte().await.unwrap(),
        70,
        "byte 10 is 10 * 7 % 251"
    );
}

/// A source that allocates every answer, as a network source does (a `MemorySource` hands out
/// slices of one buffer, which would hide what read-ahead holds), has nothing at hand, and
/// keeps no log (which would count as memory held).
fn allocating(data: Vec<u8>) -> abi_testkit::Scripted {
    abi_testkit::Scripted::new(data).fresh_buffers().unlogged()
}

/// Opens `n` inputs over `source` with the default read-ahead and `budget`, reads each one's
/// first 10,000 bytes in 1,000-byte reads (so each starts reading ahead) and leaves it open
/// there, one input after another. Returns the inputs, the most bytes live above `before`, and
/// how many requests went beyond what was asked (read-ahead chunks are 64 KiB at first).
async fn open_many(
    n: usize,
    source: &std::sync::Arc<abi_testkit::Scripted>,
    budget: Option<&async_buffered_input::MemoryBudget>,
) -> Vec<AsyncBufferedInput<async_buffered_input::PositionalFetch<abi_testkit::Scripted>>> {
    use async_buffered_input::PositionalFetch;
    let mut inputs = Vec::with_capacity(n);
    for _ in 0..n {
        let mut fetch =
            PositionalFetch::from_arc(source.clone()).with_read_ahead(ReadAhead::default());
        if let Some(budget) = budget {
            fetch = fetch.with_budget(budget.clone());
        }
        let mut input = AsyncBufferedInput::with_capacity(4096, fetch);
        let mut buf = [0u8; 1000];
        for i in 0..10u64 {
            input.read_bytes(&mut buf).await.unwrap();
            assert_eq!(buf[7], ((i * 1000 + 7) * 7 % 251) as u8);
        }
        if let Some(budget) = budget {
            assert!(budget.used() <= budget.limit(), "{budget:?}");
        }
        inputs.push(input);
    }
    inputs
}

/// Issue 13's memory goal: 10,000 inputs open, each having started to read ahead, hold at most
/// their windows and the budget; those that found no budget read on without read-ahead rather
/// than wait. Without a budget, the same inputs hold a read-ahead's first chunks each.
#[tokio::test(flavor = "current_thread")]
async fn ten_thousand_inputs_stay_within_their_windows_and_the_budget() {
    use async_buffered_input::MemoryBudget;
    let _turn = ONE_AT_A_TIME.lock().await;
    let data: Vec<u8> = (0..4u64 << 20).map(|i| (i * 7 % 251) as u8).collect();
    let source = std::sync::Arc::new(allocating(data));
    const CAPACITY: isize = 4096;
    // Slack for the inputs' own structs (a few hundred bytes each) and the Vec holding them.
    const PER_INPUT: isize = 2048;

    // Without a budget (fewer inputs, same shape): each holds its first read-ahead chunks.
    let control = 200;
    let before = live();
    let inputs = open_many(control, &source, None).await;
    let held = live() - before;
    let first_chunks = ((64 << 10) * 2) as isize;
    assert!(
        held >= control as isize * (CAPACITY + first_chunks / 2),
        "{control} inputs without a budget hold only {held} bytes: is read-ahead on?"
    );
    drop(inputs);

    let budget = MemoryBudget::new(64 << 20);
    let n = 10_000;
    let before = live();
    let mut inputs = open_many(n, &source, Some(&budget)).await;
    let peak = peak() - before;
    let held = live() - before;
    let bound = n as isize * (CAPACITY + PER_INPUT) + budget.limit() as isize;
    assert!(
        peak <= bound,
        "{n} inputs peaked at {peak} bytes; windows, structs and budget come to {bound}"
    );
    assert!(held <= bound, "{held}");
    // The budget was all taken, so the later inputs read without read-ahead: and still read.
    assert!(
        budget.used() + first_chunks as usize > budget.limit(),
        "{budget:?}: the budget was never full, the test shows nothing"
    );
    for input in inputs.iter_mut().rev().take(10) {
        let mut buf = vec![0u8; 100_000];
        input.read_bytes(&mut buf).await.unwrap();
        assert_eq!(buf[0], ((10_000u64) * 7 % 251) as u8);
    }
    // Reading to the end, or dropping, gives the budget back.
    inputs.truncate(n / 2);
    for input in &mut inputs {
        input.release();
    }
    drop(inputs);
    assert_eq!(budget.used(), 0, "{budget:?}");
}

/// Issue 13's memory goal with a shared block cache: 10,000 inputs over one cached source, the
/// read-ahead of every input and the cache's blocks drawing on one budget. What they hold
/// together stays under the windows, the budget and the cache's own bookkeeping; blocks read
/// while the budget is full reach their readers and are not kept; dropping the cache and the
/// inputs gives every byte back.
#[cfg(feature = "cache")]
#[tokio::test(flavor = "current_thread")]
async fn ten_thousand_inputs_and_a_block_cache_share_one_budget() {
    use async_buffered_input::cache::{BlockCache, Cached};

    use async_buffered_input::{MemoryBudget, PositionalFetch};
    use std::sync::Arc;
    let _turn = ONE_AT_A_TIME.lock().await;
    const LEN: u64 = 64 << 20;
    const BLOCK: usize = 4096;
    const CAPACITY: isize = 4096;
    // The inputs' structs and the Vec holding them, as in the test above.
    const PER_INPUT: isize = 2048;
    // The cache's own entry (key, slot, links, a ghost's share) for each block it keeps.
    const PER_BLOCK: isize = 512;
    let byte = |at: u64| (at * 7 % 251) as u8;
    let data: Vec<u8> = (0..LEN).map(byte).collect();
    let budget = MemoryBudget::new(32 << 20);
    // A capacity far over the budget: the budget is what bounds the blocks here.
    let cache = BlockCache::with_budget(1 << 30, BLOCK, &budget);
    let source = Arc::new(Cached::new(allocating(data), cache.clone()));

    let n = 10_000u64;
    let before = live();
    let mut inputs = Vec::with_capacity(n as usize);
    for i in 0..n {
        let fetch = PositionalFetch::from_arc(source.clone())
            .with_read_ahead(ReadAhead::default())
            .with_budget(budget.clone());
        let mut input = AsyncBufferedInput::with_capacity(CAPACITY as usize, fetch);
        // Each input at a block of its own, spread over the file.
        let start = i * (LEN - (1 << 20)) / n / BLOCK as u64 * BLOCK as u64;
        input.seek_to(start);
        let mut buf = [0u8; 1000];
        for k in 0..10u64 {
            input.read_bytes(&mut buf).await.unwrap();
            assert_eq!(buf[7], byte(start + k * 1000 + 7));
        }
        assert!(budget.used() <= budget.limit(), "{budget:?}");
        inputs.push(input);
    }
    let peak = peak() - before;
    let bound = n as isize * (CAPACITY + PER_INPUT)
        + budget.limit() as isize
        + (budget.limit() / BLOCK) as isize * PER_BLOCK;
    assert!(
        peak <= bound,
        "{n} inputs and the cache peaked at {peak} bytes; windows, structs, budget and the \
         cache's entries come to {bound}"
    );
    let stats = cache.stats();
    println!("peak {peak} bytes, bound {bound}; {budget:?}; {stats:?}");
    assert!(
        stats.unbudgeted > 0,
        "{stats:?}: the budget never ran out, the test shows nothing"
    );
    // Blocks the cache turned away still reached their readers, and still do.
    for input in inputs.iter_mut().rev().take(10) {
        let at = input.position();
        let mut buf = vec![0u8; 50_000];
        input.read_bytes(&mut buf).await.unwrap();
        assert_eq!(buf[49_999], byte(at + 49_999));
    }
    drop(inputs);
    assert!(budget.used() > 0, "the kept blocks hold budget");
    drop(source);
    drop(cache);
    assert_eq!(budget.used(), 0, "{budget:?}");
}

/// An input at its end holds no read-ahead chunks, whether its length was known or is only
/// found by reading: a request that came back short, or empty where the last fetch ended.
#[tokio::test(flavor = "current_thread")]
async fn at_the_end_no_chunks_even_when_the_length_was_not_known() {
    let _turn = ONE_AT_A_TIME.lock().await; // the others count what this allocates

    use async_buffered_input::{MemoryBudget, PositionalFetch};
    const CHUNK: usize = 4096;
    // Reads through the window (which refills past the end: that finds it), and reads straight
    // into the caller's buffer, which stop where they end.
    for (len, read) in [
        (3 * CHUNK, 100),
        (3 * CHUNK + 100, 100),
        (10 * CHUNK + 1, 100),
        (3 * CHUNK, 2048),
        (8 * CHUNK, CHUNK),
    ] {
        for past_the_end in [false, true] {
            let data: Vec<u8> = (0..len as u64).map(|i| (i * 7 % 251) as u8).collect();
            let source = std::sync::Arc::new(allocating(data));
            let budget = MemoryBudget::new(1 << 20);
            let fetch = PositionalFetch::from_arc(source)
                .with_read_ahead(ReadAhead::new(CHUNK, 4))
                .with_budget(budget.clone());
            let mut input = AsyncBufferedInput::with_capacity(1024, fetch);
            assert_eq!(input.known_length(), None);
            let mut buf = vec![0u8; read];
            while input.position() < len as u64 {
                let n = buf.len().min(len - input.position() as usize);
                input.read_bytes(&mut buf[..n]).await.unwrap();
            }
            if past_the_end {
                input.read_byte().await.unwrap_err();
            }
            assert_eq!(
                budget.used(),
                0,
                "{len} bytes read to the end {read} at a time (then past it: {past_the_end}): \
                 {:?}",
                input.fetch()
            );
        }
    }
}

/// What an open input keeps while idle in mid-file: its window and at most the read-ahead's
/// `memory_bound` in chunks; after `release`, no chunks (and no window), and it reads on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_input_keeps_its_bound_and_nothing_after_release() {
    let _turn = ONE_AT_A_TIME.lock().await; // the others count what this allocates

    use async_buffered_input::{MemoryBudget, PositionalFetch};
    let len = 1 << 20;
    let data: Vec<u8> = (0..len as u64).map(|i| (i * 7 % 251) as u8).collect();
    let source = std::sync::Arc::new(allocating(data));
    let budget = MemoryBudget::new(64 << 20);
    let read_ahead = ReadAhead::default();
    let fetch = PositionalFetch::from_arc(source)
        .with_read_ahead(read_ahead)
        .with_budget(budget.clone());
    let mut input = AsyncBufferedInput::new(fetch);
    let mut buf = [0u8; 1000];
    for _ in 0..300 {
        input.read_bytes(&mut buf).await.unwrap();
    }
    // Idle in mid-file: the chunks read ahead are kept, within the bound.
    let held = budget.used();
    assert!(held > 0, "reading ahead: {:?}", input.fetch());
    assert!(held <= read_ahead.memory_bound(), "{held} > the bound");
    assert!(input.window().end - input.window().start <= input.capacity() as u64);
    input.release();
    assert_eq!(
        budget.used(),
        0,
        "no chunks after release: {:?}",
        input.fetch()
    );
    assert_eq!(input.window(), input.window().start..input.window().start);
    // It reads on from where it was.
    input.read_bytes(&mut buf[..1]).await.unwrap();
    assert_eq!(buf[0], ((300_000u64 * 7) % 251) as u8);
}
