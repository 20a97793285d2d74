//! The conformance sweep (`common::conformance_input`) against every family of input, one
//! `#[tokio::test]` per capacity in {1, 7, 8, 64, 1024, 8192}: streams (a `Cursor`, hostile
//! streams, a real `tokio::fs::File`), positional sources (memory, a local file with and without
//! page cache reads, a source only partly at hand, each with and without read-ahead, a simulated
//! slow link, OpenDAL's memory and fs services with feature `opendal`), slices and clones of
//! inputs over them; plus a few constructor checks.
//!
//! To add a source, add one line: `conformance_tests!(family name, |data: Vec<u8>| make(data));`

use crate::common;

use std::io::{Cursor, ErrorKind};
use std::time::Duration;

use abi_testkit::SlowLink;
use abi_testkit::*;
use async_buffered_input::source::{FileSource, MemorySource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};
use common::*;

// ----- streams -----

conformance_tests!(stream cursor, |data: Vec<u8>| std::io::Cursor::new(data));
conformance_tests!(stream hostile_short_pending, |data: Vec<u8>| {
    Hostile::new(data, HostileConfig::short_and_pending(0x5EED))
});
conformance_tests!(stream hostile_short_only, |data: Vec<u8>| {
    Hostile::new(
        data,
        HostileConfig {
            short_reads: true,
            seed: 99,
            ..Default::default()
        },
    )
});
conformance_tests!(stream tokio_file, |data: Vec<u8>| temp_tokio_file(data));

// ----- positional sources -----

/// A file holding `data` (written to cargo's `target/tmp` and unlinked at once; the open
/// handle keeps it readable).
fn file_source(data: Vec<u8>) -> FileSource {
    let (file, path) = temp_std_file(&data);
    FileSource::from_std(file, path)
}

fn memory(data: Vec<u8>) -> PositionalFetch<MemorySource> {
    PositionalFetch::new(MemorySource::new(data))
}

/// [`memory`] with read-ahead chunks of 100 bytes, 3 at a time.
fn memory_read_ahead(data: Vec<u8>) -> PositionalFetch<MemorySource> {
    memory(data).with_read_ahead(ReadAhead::new(100, 3))
}

/// [`file_source`] with read-ahead chunks of 4 KiB, 4 at a time.
fn file_read_ahead(data: Vec<u8>) -> PositionalFetch<FileSource> {
    PositionalFetch::new(file_source(data)).with_read_ahead(ReadAhead::new(4096, 4))
}

conformance_tests!(positional memory, memory);
conformance_tests!(positional memory_read_ahead, memory_read_ahead);
conformance_tests!(positional memory_read_ahead_depth_1, |data: Vec<u8>| {
    memory(data).with_read_ahead(ReadAhead::new(1, 1))
});
conformance_tests!(positional file, |data: Vec<u8>| PositionalFetch::new(
    file_source(data)
));
conformance_tests!(positional file_read_ahead, file_read_ahead);
conformance_tests!(positional file_read_ahead_small_chunks, |data: Vec<u8>| {
    PositionalFetch::new(file_source(data)).with_read_ahead(ReadAhead::new(77, 2))
});
conformance_tests!(positional file_blocking_pool, |data: Vec<u8>| {
    PositionalFetch::new(file_source(data).with_page_cache_reads(false))
});
conformance_tests!(positional file_blocking_pool_read_ahead, |data: Vec<u8>| {
    PositionalFetch::new(file_source(data).with_page_cache_reads(false))
        .with_read_ahead(ReadAhead::new(4096, 4))
});
conformance_tests!(positional partly_at_hand, |data: Vec<u8>| {
    PositionalFetch::new(PartlyAtHand::new(data, 1))
});
conformance_tests!(positional partly_at_hand_read_ahead, |data: Vec<u8>| {
    PositionalFetch::new(PartlyAtHand::new(data, 2)).with_read_ahead(ReadAhead::new(300, 3))
});
conformance_tests!(positional partly_at_hand_small_chunks, |data: Vec<u8>| {
    PositionalFetch::new(PartlyAtHand::new(data, 3)).with_read_ahead(ReadAhead::new(5, 2))
});
// A clone of a fetcher reads like the original.
conformance_tests!(positional memory_fetch_clone, |data: Vec<u8>| memory(data).clone());

// ----- slices and clones of inputs -----

conformance_tests!(slice memory_slice, memory);
conformance_tests!(slice memory_read_ahead_slice, memory_read_ahead);
conformance_tests!(slice file_read_ahead_slice, file_read_ahead);
conformance_tests!(slice partly_at_hand_slice, |data: Vec<u8>| {
    PositionalFetch::new(PartlyAtHand::new(data, 4)).with_read_ahead(ReadAhead::new(300, 3))
});
conformance_tests!(clone memory_clone, memory);
conformance_tests!(clone file_read_ahead_clone, file_read_ahead);

// ----- OpenDAL (feature `opendal`): its memory and fs services, no server needed -----

/// A file of a fresh OpenDAL memory operator holding `data`, opened with a `stat`. The write
/// and the `stat` run on a thread of their own (the conformance makers are not async).
#[cfg(feature = "opendal")]
fn opendal_memory(data: Vec<u8>) -> async_buffered_input::source::OpendalSource {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let operator = opendal::Operator::new(opendal::services::Memory::default()).unwrap();
            operator.write("dir/file.bin", data).await.unwrap();
            async_buffered_input::source::OpendalSource::open(operator, "dir/file.bin")
                .await
                .unwrap()
        })
    })
    .join()
    .unwrap()
}

/// A file holding `data` in cargo's `target/tmp`, through OpenDAL's fs service, with its length
/// given as a hint (no `stat`).
#[cfg(feature = "opendal")]
fn opendal_fs(data: Vec<u8>) -> async_buffered_input::source::OpendalSource {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("opendal-conformance");
    std::fs::create_dir_all(&dir).unwrap();
    let name = format!(
        "{}-{}.bin",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    );
    std::fs::write(dir.join(&name), &data).unwrap();
    let operator =
        opendal::Operator::new(opendal::services::Fs::default().root(dir.to_str().unwrap()))
            .unwrap();
    async_buffered_input::source::OpendalSource::with_length(operator, name, data.len() as u64)
}

/// [`opendal_fs`] with read-ahead chunks of 4 KiB, 4 at a time.
#[cfg(feature = "opendal")]
fn opendal_fs_read_ahead(
    data: Vec<u8>,
) -> PositionalFetch<async_buffered_input::source::OpendalSource> {
    PositionalFetch::new(opendal_fs(data)).with_read_ahead(ReadAhead::new(4096, 4))
}

#[cfg(feature = "opendal")]
conformance_tests!(positional opendal_memory, |data: Vec<u8>| PositionalFetch::new(
    opendal_memory(data)
));
#[cfg(feature = "opendal")]
conformance_tests!(positional opendal_memory_read_ahead, |data: Vec<u8>| {
    PositionalFetch::new(opendal_memory(data)).with_read_ahead(ReadAhead::new(300, 3))
});
#[cfg(feature = "opendal")]
conformance_tests!(positional opendal_fs_read_ahead, opendal_fs_read_ahead);
#[cfg(feature = "opendal")]
conformance_tests!(slice opendal_memory_read_ahead_slice, |data: Vec<u8>| {
    PositionalFetch::new(opendal_memory(data)).with_read_ahead(ReadAhead::new(100, 3))
});
#[cfg(feature = "opendal")]
conformance_tests!(clone opendal_fs_read_ahead_clone, opendal_fs_read_ahead);

// ----- a simulated slow link, under paused time -----

fn slow_link(
    data: Vec<u8>,
    read_ahead: Option<ReadAhead>,
) -> PositionalFetch<SlowLink<MemorySource>> {
    let link = SlowLink::new(
        MemorySource::new(data),
        Duration::from_millis(2),
        100_000_000,
    );
    let mut fetch = PositionalFetch::new(link);
    fetch.set_read_ahead(read_ahead);
    fetch
}

#[tokio::test(start_paused = true)]
async fn slow_link_under_paused_time() {
    for cap in CONFORMANCE_CAPACITIES {
        positional_conformance(&|data| slow_link(data, None), cap).await;
    }
}

#[tokio::test(start_paused = true)]
async fn slow_link_with_read_ahead_under_paused_time() {
    for cap in CONFORMANCE_CAPACITIES {
        positional_conformance(&|data| slow_link(data, Some(ReadAhead::new(1000, 4))), cap).await;
        slice_conformance(&|data| slow_link(data, Some(ReadAhead::new(1000, 4))), cap).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_read_ahead_on_a_multi_thread_runtime() {
    for cap in [7, 8192] {
        let make =
            |data| PositionalFetch::new(file_source(data)).with_read_ahead(ReadAhead::new(512, 3));
        positional_conformance(&make, cap).await;
        clone_conformance(&make, cap).await;
    }
}

// ----- constructors -----

#[test]
fn default_capacity_is_8_kib() {
    assert_eq!(8192, 8192);
    let input = AsyncBufferedInput::new(Cursor::new(pattern_vec(10)));
    assert_eq!(input.capacity(), 8192);
    assert_eq!(input.position(), 0);
    assert!(input.buffer().is_empty());
    assert_eq!(input.window(), 0..0, "fresh window");
    assert_eq!(input.stats(), async_buffered_input::Stats::default());
}

#[test]
#[should_panic]
fn with_capacity_zero_panics() {
    let _ = AsyncBufferedInput::with_capacity(0, Cursor::new(Vec::<u8>::new()));
}

#[test]
fn with_capacity_zero_panic_message_is_clear() {
    let payload = std::panic::catch_unwind(|| {
        AsyncBufferedInput::with_capacity(0, Cursor::new(Vec::<u8>::new()))
    })
    .expect_err("with_capacity(0) must panic");
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        msg.to_lowercase().contains("capacity"),
        "panic message should mention the capacity: {msg:?}"
    );
}

#[test]
fn try_with_capacity_zero_is_invalid_input() {
    let e = AsyncBufferedInput::try_with_capacity(0, Cursor::new(Vec::<u8>::new()))
        .expect_err("try_with_capacity(0) must fail");
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e:?}");
    let ok = AsyncBufferedInput::try_with_capacity(3, Cursor::new(Vec::<u8>::new()))
        .expect("try_with_capacity(3)");
    assert_eq!(ok.capacity(), 3);
}

#[tokio::test]
async fn skip_bytes_overflow_is_invalid_input_and_changes_nothing() {
    let data = pattern_vec(100);
    let mut input = AsyncBufferedInput::with_capacity(16, Cursor::new(data.clone()));
    input.seek_to(10);
    assert_eq!(input.read_byte().await.unwrap(), data[10]);
    let far = u64::MAX - 2;
    input.seek_to(far);
    assert_eq!(input.position(), far);
    let e = input.skip_bytes(5).expect_err("u64 overflow must fail");
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e:?}");
    assert_eq!(input.position(), far);
    input
        .skip_bytes(2)
        .expect("skip to u64::MAX is representable");
    assert_eq!(input.position(), u64::MAX);
    input.seek_to(11);
    assert_eq!(input.read_byte().await.unwrap(), data[11]);
    input.skip_bytes(3).unwrap();
    assert_eq!(input.position(), 15);
    assert_eq!(input.read_byte().await.unwrap(), data[15]);
}

#[tokio::test]
async fn empty_file() {
    let mut input = AsyncBufferedInput::with_capacity(8, Cursor::new(Vec::new()));
    assert_eq!(input.length().await.unwrap(), 0);
    let e = input.read_byte().await.expect_err("empty file");
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof);
    assert_eq!(input.position(), 0);
    let mut nothing = [0u8; 0];
    input.read_bytes(&mut nothing).await.expect("empty read");
    assert!(input.read_bytes_owned(0).await.unwrap().is_empty());
    let e = input.read_bytes_owned(1).await.expect_err("empty file");
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof);
    assert_eq!(input.position(), 0);
}

#[tokio::test]
async fn into_inner_and_get_ref_return_the_source() {
    let data = pattern_vec(50);
    let mut input = AsyncBufferedInput::with_capacity(8, Cursor::new(data.clone()));
    let mut buf = [0u8; 20];
    input.read_bytes(&mut buf).await.unwrap();
    assert_eq!(&buf[..], &data[..20]);
    assert_eq!(input.get_ref().get_ref(), &data);
    let inner = input.into_inner();
    assert_eq!(inner.into_inner(), data);
}

/// A huge `read_bytes_owned` (say, a corrupt length prefix) fails with `UnexpectedEof` and
/// changes nothing; it must not try to allocate the requested size first.
#[tokio::test]
async fn huge_read_bytes_owned_is_eof() {
    let data = pattern_vec(1000);
    let mut input = AsyncBufferedInput::with_capacity(64, Cursor::new(data.clone()));
    input.seek_to(10);
    let e = input
        .read_bytes_owned(1 << 40)
        .await
        .expect_err("1 TiB from a 1000-byte file");
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e:?}");
    assert_msg_mentions(&e, 10, "position", "huge read_bytes_owned");
    assert_eq!(input.position(), 10);
    assert_eq!(input.read_byte().await.unwrap(), data[10]);
}
