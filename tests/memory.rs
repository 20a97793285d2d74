//! What inputs and the values they hand out keep alive, measured by a counting allocator.
//!
//! The allocator counts the bytes live per thread (the tests run on a current-thread runtime,
//! so everything they measure allocates and frees on the test's thread), which keeps tests
//! running in parallel out of each other's numbers.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Cursor;

use async_buffered_input::AsyncBufferedInput;

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn add(n: isize) {
    // `try_with`: a thread being torn down has no counter left; its frees are not measured.
    let _ = LIVE.try_with(|live| live.set(live.get() + n));
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counter only observes.
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

/// Bytes live on this thread now.
fn live() -> isize {
    LIVE.with(Cell::get)
}

/// Finding 6 of the fault-injection report: 1,000 kept 4-byte values from `read_bytes_owned`
/// held 955 KB, because each shared (and so kept alive) the window buffer it came from. Small
/// results are copied now: what a result keeps alive is at most 4x its length.
#[tokio::test(flavor = "current_thread")]
async fn small_owned_reads_do_not_keep_their_windows_alive() {
    const CAPACITY: usize = 8192;
    const VALUES: usize = 1000;
    let data: Vec<u8> = (0..(VALUES * (CAPACITY + 4)) as u64)
        .map(|i| (i % 251) as u8)
        .collect();
    let mut kept = Vec::with_capacity(VALUES);
    let mut input = AsyncBufferedInput::with_capacity(CAPACITY, Cursor::new(&data[..]));
    let before = live();
    for i in 0..VALUES {
        // Each value from a window of its own.
        input.seek_to((i * (CAPACITY + 4)) as u64);
        kept.push(input.read_bytes_owned(4).await.unwrap());
    }
    drop(input);
    let held = live() - before;
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
    let before = live();
    let quarter = input.read_bytes_owned(CAPACITY / 4).await.unwrap();
    drop(input);
    let held = live() - before;
    assert!(
        held <= 4 * quarter.len() as isize + 64,
        "a {}-byte result holds {held} bytes",
        quarter.len()
    );
    assert_eq!(&quarter[..], &data[..CAPACITY / 4]);
}
