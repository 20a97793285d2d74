//! Compile-time checks: auto traits of the inputs of both families (over a stream and over a
//! positional source), their fetchers, stats, errors and futures. These tests "fail" by not
//! compiling.

use std::io::Cursor;

use abi_testkit::SlowLink;
use async_buffered_input::interop::TokioIo;
use async_buffered_input::source::{FileSource, MemorySource};
use async_buffered_input::{AsyncBufferedInput, InputError, Stats};
use async_buffered_input::{Fetch, PositionalFetch, ReadAhead, StreamFetch};
use tokio::io::{AsyncBufRead, AsyncRead, AsyncSeek};

type FileStream = AsyncBufferedInput<StreamFetch<tokio::fs::File>>;
type CursorStream = AsyncBufferedInput<StreamFetch<Cursor<Vec<u8>>>>;
type FilePositional = AsyncBufferedInput<PositionalFetch<FileSource>>;
type MemoryPositional = AsyncBufferedInput<PositionalFetch<MemorySource>>;

/// Calls `$check::<T>()` for each input type above (the four are checked alike).
macro_rules! for_each_input {
    ($check:ident) => {
        $check::<FileStream>();
        $check::<CursorStream>();
        $check::<FilePositional>();
        $check::<MemoryPositional>();
    };
}

fn assert_send<T: Send>(_: &T) {}
fn assert_send_sync_unpin<T: Send + Sync + Unpin>() {}
fn assert_send_sync_copy<T: Send + Sync + Copy + 'static>() {}
fn assert_error_payload<T: std::error::Error + Send + Sync + 'static>() {}
/// `T` as tokio's I/O, owned (`into_tokio_io`) and borrowed (`tokio_io`).
fn assert_tokio_io<T>()
where
    TokioIo<T>: AsyncRead + AsyncBufRead + AsyncSeek + Unpin + Send + Sync,
    for<'a> TokioIo<&'a mut T>: AsyncRead + AsyncBufRead + AsyncSeek + Unpin + Send,
{
}
fn assert_clone<T: Clone>() {}

#[test]
fn inputs_are_send_sync_unpin() {
    for_each_input!(assert_send_sync_unpin);
    assert_send_sync_unpin::<AsyncBufferedInput<PositionalFetch<SlowLink<MemorySource>>>>();
}

#[test]
fn fetchers_are_send_sync_unpin() {
    assert_send_sync_unpin::<StreamFetch<tokio::fs::File>>();
    assert_send_sync_unpin::<StreamFetch<Cursor<Vec<u8>>>>();
    assert_send_sync_unpin::<PositionalFetch<FileSource>>();
    assert_send_sync_unpin::<PositionalFetch<MemorySource>>();
    assert_send_sync_copy::<ReadAhead>();
}

#[test]
fn inputs_as_tokio_io_implement_its_traits() {
    for_each_input!(assert_tokio_io);
}

#[test]
fn positional_inputs_and_fetchers_clone() {
    assert_clone::<FilePositional>();
    assert_clone::<MemoryPositional>();
    assert_clone::<PositionalFetch<FileSource>>();
}

#[test]
fn stats_is_send_sync_copy() {
    assert_send_sync_copy::<Stats>();
    let s = Stats::default();
    let t = s; // Copy
    assert_eq!(s, t);
}

#[test]
fn input_error_is_a_thread_safe_error() {
    assert_error_payload::<InputError>();
    assert_send_sync_unpin::<InputError>();
}

/// The futures of every async method are `Send` for any `Send` fetcher (so for both families,
/// checked below by instantiation).
fn futures_are_send<F: Fetch + Send>(input: &mut AsyncBufferedInput<F>) {
    {
        let mut buf = [0u8; 16];
        let fut = input.read_bytes(&mut buf);
        assert_send(&fut);
    }
    {
        let fut = input.read_byte();
        assert_send(&fut);
    }
    {
        let fut = input.read_bytes_owned(16);
        assert_send(&fut);
    }
    {
        let fut = input.length();
        assert_send(&fut);
    }
    // The typed reads (hand-written futures over the same core).
    assert_send(&input.read_string());
    assert_send(&input.read_vint());
    assert_send(&input.read_vlong());
    assert_send(&input.read_u32());
    assert_send(&input.read_i64_le());
    let mut values = [0u32; 4];
    assert_send(&input.read_u32_into(&mut values));
}

/// `slice` exists only over a positional source; its future is `Send` too.
fn slice_future_is_send<S: async_buffered_input::source::PositionalSource>(
    input: &AsyncBufferedInput<PositionalFetch<S>>,
) {
    assert_send(&input.slice(0, 1));
}

#[test]
fn futures_over_cursor_are_send() {
    let mut input = AsyncBufferedInput::new(Cursor::new(vec![1u8, 2, 3]));
    futures_are_send(&mut input);
}

#[test]
fn futures_over_memory_source_are_send() {
    let mut input = AsyncBufferedInput::new(PositionalFetch::new(MemorySource::new(vec![1u8, 2])));
    futures_are_send(&mut input);
    slice_future_is_send(&input);
}

#[tokio::test]
async fn futures_over_tokio_file_are_send() {
    let file = tokio::fs::File::from_std(tempfile_std());
    let mut input = AsyncBufferedInput::new(file);
    futures_are_send(&mut input);
    // And they can actually run on a multi-threaded runtime's worker.
    let handle = tokio::spawn(async move {
        let mut buf = [0u8; 3];
        input.read_bytes(&mut buf).await.map(|()| buf)
    });
    assert_eq!(handle.await.unwrap().unwrap(), [7, 8, 9]);
}

#[tokio::test]
async fn futures_over_file_source_are_send() {
    let source = FileSource::from_std(tempfile_std(), "send-sync.bin");
    let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::new(2, 2));
    let mut input = AsyncBufferedInput::with_capacity(1, fetch);
    futures_are_send(&mut input);
    slice_future_is_send(&input);
    // A clone runs on another worker while the original stays here.
    let mut clone = input.clone();
    let handle = tokio::spawn(async move {
        let mut buf = [0u8; 3];
        clone.read_bytes(&mut buf).await.map(|()| buf)
    });
    assert_eq!(handle.await.unwrap().unwrap(), [7, 8, 9]);
    assert_eq!(input.read_byte().await.unwrap(), 7);
}

fn tempfile_std() -> std::fs::File {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "async-buffered-input-send-sync-{}-{}.bin",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    ));
    std::fs::write(&path, [7u8, 8, 9, 10]).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    f
}
