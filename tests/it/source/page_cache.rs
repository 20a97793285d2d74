//! `FileSource`'s page cache reads (`preadv2(RWF_NOWAIT)`, Linux) and how `PositionalFetch`
//! uses them: cached bytes are read at once, straight into the caller's buffer; bytes that are
//! not cached go to the blocking pool; and a reader that never waits still yields to other tasks.
//!
//! The files live in cargo's `target/tmp`, so these tests need the build folder on a disk-backed
//! file system (ext4, xfs, btrfs): tmpfs refuses `RWF_NOWAIT` reads and cannot evict, and the
//! tests then fail, saying so.
#![cfg(target_os = "linux")]

use crate::common;

use std::sync::Arc;

use abi_testkit::{pattern_vec, CountingPositional};
use async_buffered_input::source::{FileSource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};
use common::temp_std_file;

fn cached_file(data: &[u8]) -> FileSource {
    let (file, path) = temp_std_file(data);
    FileSource::from_std(file, path)
}

/// Reads the whole input in `request`-byte reads (the last one short) and returns the bytes.
async fn read_all<S: PositionalSource>(fetch: PositionalFetch<S>, request: usize) -> Vec<u8> {
    let mut input = AsyncBufferedInput::with_capacity(8192, fetch);
    let len = input.length().await.unwrap() as usize;
    let mut out = vec![0u8; len];
    for chunk in out.chunks_mut(request) {
        input.read_bytes(chunk).await.unwrap();
    }
    assert!(input.read_byte().await.is_err(), "read past the end");
    out
}

#[tokio::test]
async fn try_read_at_copies_cached_bytes() {
    let data = pattern_vec(100_000);
    let source = cached_file(&data);
    assert!(source.page_cache_reads());
    let mut buf = vec![0u8; 5000];
    let n = source.try_read_at(1234, &mut buf);
    assert_eq!(
        n,
        5000,
        "a freshly written file is in the page cache (unless {} is on tmpfs): {source:?}",
        env!("CARGO_TARGET_TMPDIR")
    );
    assert_eq!(buf, data[1234..6234]);
    // Cut at the end; nothing at or past it, nor for an empty buffer or a huge offset.
    assert_eq!(source.try_read_at(99_000, &mut buf), 1000);
    assert_eq!(buf[..1000], data[99_000..]);
    assert_eq!(source.try_read_at(100_000, &mut buf), 0);
    assert_eq!(source.try_read_at(u64::MAX, &mut buf), 0);
    assert_eq!(source.try_read_at(0, &mut []), 0);
    // A range ending past `i64::MAX` is the kernel's EINVAL: nothing read, and page cache reads
    // stay on (that error is about this read, not the file system).
    assert_eq!(source.try_read_at(i64::MAX as u64 - 10, &mut buf), 0);
    assert_eq!(source.try_read_at(i64::MAX as u64, &mut buf), 0);
    assert!(source.page_cache_reads(), "{source:?}");
    let mut input = AsyncBufferedInput::new(PositionalFetch::new(source.clone()));
    input.seek_to(i64::MAX as u64 - 100);
    assert_eq!(
        input.read_byte().await.unwrap_err().kind(),
        std::io::ErrorKind::UnexpectedEof
    );
    assert!(source.page_cache_reads(), "{source:?}");
    // Turned off, it never reads.
    let off = source.clone().with_page_cache_reads(false);
    assert!(!off.page_cache_reads());
    assert_eq!(off.try_read_at(0, &mut buf), 0);
    assert!(format!("{off:?}").contains("page_cache_reads: false"));
}

#[tokio::test]
async fn an_o_direct_file_gets_no_page_cache_reads() {
    // Its reads never come from the page cache, and RWF_NOWAIT does not stop a direct read from
    // waiting for the device, so the source leaves them off.
    use std::os::unix::fs::OpenOptionsExt;
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("abi-o-direct-{}.bin", std::process::id()));
    std::fs::write(&path, pattern_vec(8192)).unwrap();
    let direct = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .unwrap_or_else(|e| panic!("O_DIRECT open of {}: {e}", path.display()));
    std::fs::remove_file(&path).unwrap();
    let source = FileSource::from_std(direct, &path);
    assert!(!source.page_cache_reads(), "{source:?}");
    let mut buf = vec![0u8; 4096];
    assert_eq!(source.try_read_at(0, &mut buf), 0);
    // The same file opened normally has them on.
    assert!(cached_file(&pattern_vec(10)).page_cache_reads());
}

#[tokio::test]
async fn a_cached_file_is_read_without_requests_or_read_ahead() {
    let data = pattern_vec(3 << 20);
    for (ahead, request) in [
        (None, 100),
        (None, 65536),
        (None, 3 << 20), // more than one read at hand may take: several, each at most 1 MiB
        (Some(ReadAhead::new(256 << 10, 4)), 100),
        (Some(ReadAhead::new(256 << 10, 4)), 65536),
        (Some(ReadAhead::new(256 << 10, 4)), 1 << 20),
    ] {
        let counted = Arc::new(CountingPositional::new(cached_file(&data)));
        let mut fetch = PositionalFetch::from_arc(counted.clone());
        fetch.set_read_ahead(ahead);
        let got = read_all(fetch, request).await;
        assert!(got == data, "bytes differ ({ahead:?}, {request} B)");
        // Every read was a page cache read; only the end (where `try_read_at` says nothing)
        // asked `read_at`.
        let plain = counted.requests() - counted.immediate();
        assert!(plain <= 2, "{ahead:?}, {request} B: {counted:?}");
        assert_eq!(counted.bytes(), data.len() as u64, "{counted:?}");
        // With read-ahead, small reads are served from whole chunks read at once.
        if ahead.is_some() && request < 256 << 10 {
            assert!(
                counted.immediate() <= 13,
                "{ahead:?}, {request} B: {counted:?}"
            );
        }
    }
}

#[tokio::test]
async fn the_end_of_a_cached_file_costs_one_request_not_a_read_ahead() {
    // Page cache reads never come back short from a request, so the fetcher does not learn the
    // length from them; where they stop, one plain request finds the end (rather than `depth`
    // read-ahead chunks past it).
    use tokio::io::AsyncReadExt;
    let data = pattern_vec(3 << 20);
    for depth in [1, 4, 16] {
        let counted = Arc::new(CountingPositional::new(cached_file(&data)));
        let fetch = PositionalFetch::from_arc(counted.clone())
            .with_read_ahead(ReadAhead::new(256 << 10, depth));
        let mut input = AsyncBufferedInput::new(fetch);
        let mut got = Vec::new();
        input.tokio_io().read_to_end(&mut got).await.unwrap();
        assert!(got == data, "bytes differ (depth {depth})");
        let plain = counted.requests() - counted.immediate();
        assert_eq!(plain, 1, "depth {depth}: {counted:?}");
        assert_eq!(counted.live(), 0, "nothing left in flight: {counted:?}");
    }
}

#[tokio::test]
async fn one_huge_read_of_a_cached_file_lets_other_tasks_run() {
    // tokio's budget counts calls, not bytes: one 32 MiB read is 32 calls of 1 MiB, within one
    // budget. The reader yields every 4 MiB of page cache reads, so another task runs meanwhile.
    let data = pattern_vec(32 << 20);
    let mut input = AsyncBufferedInput::new(PositionalFetch::new(cached_file(&data)));
    let ticks = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let ticker = {
        let ticks = ticks.clone();
        tokio::spawn(async move {
            loop {
                ticks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::task::yield_now().await;
            }
        })
    };
    let mut buf = vec![0u8; data.len()];
    input.read_bytes(&mut buf).await.unwrap();
    let ran = ticks.load(std::sync::atomic::Ordering::SeqCst);
    ticker.abort();
    assert!(buf == data, "bytes differ");
    assert!(
        ran >= 4,
        "the other task ran {ran} times during a 32 MiB read"
    );
}

/// A file holding `data` with none of it in the page cache, and its (removed) path.
///
/// The bytes are written with `O_DIRECT` where the file system takes it (ext4, xfs, btrfs), so
/// they never enter the page cache; elsewhere they are written, synced and dropped with
/// `fadvise(DONTNEED)`. Eviction is best effort in the kernel (a page another CPU still holds a
/// reference to stays), so dropping is repeated until a read at hand of the file's last page
/// finds nothing. That probe starts the kernel's readahead only there, at the end, never
/// where the test reads first.
async fn uncached_file(data: &[u8]) -> FileSource {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    const PAGE: usize = 4096;
    assert!(
        data.len() >= PAGE && data.len() % PAGE == 0,
        "whole pages only"
    );
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "abi-uncached-{}-{}.bin",
        std::process::id(),
        data.len()
    ));
    let direct = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path);
    match direct {
        Ok(file) => {
            // O_DIRECT wants page-aligned memory: copy through an aligned 1 MiB window.
            let mut scratch = vec![0u8; (1 << 20) + PAGE];
            let skip = scratch.as_ptr().align_offset(PAGE);
            let aligned = &mut scratch[skip..skip + (1 << 20)];
            for (i, chunk) in data.chunks(1 << 20).enumerate() {
                aligned[..chunk.len()].copy_from_slice(chunk);
                file.write_all_at(&aligned[..chunk.len()], (i << 20) as u64)
                    .unwrap_or_else(|e| panic!("O_DIRECT write of {}: {e}", path.display()));
            }
            file.sync_all().unwrap();
        }
        Err(_) => {
            std::fs::write(&path, data).unwrap();
        }
    }
    let file = std::fs::File::open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    file.sync_all().unwrap();
    let advised = file.try_clone().unwrap();
    let source = FileSource::from_std(file, &path);
    let last = (data.len() - PAGE) as u64;
    let mut probe = [0u8; PAGE];
    for _ in 0..50 {
        rustix::fs::fadvise(&advised, 0, None, rustix::fs::Advice::DontNeed).unwrap();
        if source.try_read_at(last, &mut probe) == 0 {
            return source;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!(
        "the test file stays in the page cache after O_DIRECT writes and 50 fadvise(DONTNEED): \
         is {} on tmpfs?",
        env!("CARGO_TARGET_TMPDIR")
    );
}

#[tokio::test]
async fn an_evicted_file_goes_to_the_blocking_pool_then_reads_at_once() {
    let data = pattern_vec(4 << 20);
    let source = uncached_file(&data).await;

    let counted = Arc::new(CountingPositional::new(source));
    let fetch =
        PositionalFetch::from_arc(counted.clone()).with_read_ahead(ReadAhead::new(256 << 10, 4));
    let got = read_all(fetch, 100).await;
    assert!(got == data, "bytes differ");
    // At least the first fetch waits for the disk. How many more do depends on the kernel's own
    // readahead (`read_ahead_kb`, 8 MiB on some machines), which the first read may start for
    // the whole file, so that every later fetch finds its bytes at hand.
    let plain = counted.requests() - counted.immediate();
    assert!(
        plain >= 1,
        "no request went to the blocking pool: {counted:?}"
    );

    // Now cached: a second pass reads at once.
    let again = Arc::new(CountingPositional::new(counted.get_ref().clone()));
    let fetch = PositionalFetch::from_arc(again.clone());
    assert!(read_all(fetch, 65536).await == data, "bytes differ");
    assert!(again.immediate() >= 60, "{again:?}");
}

#[tokio::test]
async fn a_reader_that_never_waits_still_yields() {
    // On a one-thread runtime, another task only runs if the reading task yields. Page cache
    // reads spend the task's tokio budget, so the reader yields every so often although none of
    // its reads waits.
    let data = pattern_vec(1 << 20);
    let fetch = PositionalFetch::new(cached_file(&data));
    let mut input = AsyncBufferedInput::with_capacity(8192, fetch);
    let other = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = other.clone();
    tokio::spawn(async move { flag.store(true, std::sync::atomic::Ordering::SeqCst) });
    let mut buf = vec![0u8; 16384]; // larger than the window: every read reaches the source
    let mut reads = 0;
    while !other.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(reads < 10_000, "the other task never ran in {reads} reads");
        if input.position() + buf.len() as u64 > data.len() as u64 {
            input.seek_to(0);
        }
        input.read_bytes(&mut buf).await.unwrap();
        reads += 1;
    }
}

#[tokio::test]
#[ignore = "needs a FUSE mount (SSHFS) in ABI_FUSE_DIR; scripts/ci-sshfs-check.sh runs it"]
async fn a_file_system_without_nowait_reads_turns_them_off() {
    let dir = std::env::var_os("ABI_FUSE_DIR").expect("ABI_FUSE_DIR: a folder on a FUSE mount");
    let path = std::path::Path::new(&dir).join(format!("abi-nowait-{}.bin", std::process::id()));
    let data = pattern_vec(300_000);
    std::fs::write(&path, &data).unwrap();
    // Removes the file when the test ends, passed or failed.
    struct Remove<'a>(&'a std::path::Path);
    impl Drop for Remove<'_> {
        fn drop(&mut self) {
            let removed = std::fs::remove_file(self.0);
            if !std::thread::panicking() {
                removed.unwrap();
            }
        }
    }
    let _remove = Remove(&path);
    let source = FileSource::open(&path).await.unwrap();
    assert!(source.page_cache_reads(), "on before the first try");
    let mut buf = [0u8; 4096];
    assert_eq!(source.try_read_at(0, &mut buf), 0);
    assert!(
        !source.page_cache_reads(),
        "FUSE refuses RWF_NOWAIT, so the source stops trying: {source:?}"
    );
    let counted = Arc::new(CountingPositional::new(source.clone()));
    let fetch =
        PositionalFetch::from_arc(counted.clone()).with_read_ahead(ReadAhead::new(64 << 10, 4));
    assert!(read_all(fetch, 100).await == data, "bytes differ");
    assert_eq!(counted.immediate(), 0, "{counted:?}");
}
