//! The fuzz targets' machinery for `async-buffered-input`.
//!
//! A fuzz input is decoded by hand into a [`Case`](case::Case): a source family (a stream, a
//! positional source, with or without read-ahead), a window capacity, the source's faults
//! (short reads, `Pending`, injected errors, refused seeks), the data, and operations. The
//! [`harness`] runs the operations next to a model (the test kit's [`abi_testkit::model`]: its
//! reference decoder and the checks of an input's state) and checks every result, error and
//! position; the [`sources`] misbehave as told; [`drive`] makes every
//! hang a loud failure.
//!
//! - `decode` ([`decode`]): typed reads only (every `read_*`, strings, owned and bulk reads,
//!   `view()` decoders, `fill`), with seeks to read again elsewhere;
//! - `ops` ([`ops`]): every operation: the reads, `seek_to`, `skip_bytes`, tokio's
//!   `AsyncSeek`/`AsyncRead`/`AsyncBufRead`, `length`, futures dropped after a few polls,
//!   moves behind the input's back, clones and slices, checksums, `crc32_of`, `release`.

use std::alloc::{GlobalAlloc, Layout, System};

pub mod case;
pub mod count;
pub mod drive;
pub mod harness;
pub mod sources;

/// The `decode` target's body.
pub fn decode(case: &case::DecodeCase) {
    count::case();
    harness::run_case(&case.0);
}

/// The `ops` target's body.
pub fn ops(case: &case::OpsCase) {
    count::case();
    harness::run_case(&case.0);
}

/// The largest allocation a case may make: far above what a correct one needs (the data is at
/// most 256 KiB, windows and read-ahead chunks at most 64 KiB), far below what a corrupt length
/// would ask. Checked per allocation, because a huge zeroed `Vec` barely moves the RSS that
/// libFuzzer's `-rss_limit_mb` watches.
pub const MAX_ALLOCATION: usize = 32 << 20;

/// The system allocator, aborting (a crash libFuzzer saves) on an allocation over
/// [`MAX_ALLOCATION`].
struct Bounded;

impl Bounded {
    fn check(size: usize) {
        if size > MAX_ALLOCATION {
            eprintln!("unbounded allocation: {size} bytes asked, at most {MAX_ALLOCATION} allowed");
            std::process::abort();
        }
    }
}

// SAFETY: every call goes to `System` unchanged; `check` only reads the size.
unsafe impl GlobalAlloc for Bounded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::check(new_size);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Bounded = Bounded;
