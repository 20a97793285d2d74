//! Compile-time checks: auto traits of the input, its stats, its errors and its futures. These
//! tests "fail" by not compiling.

use std::io::Cursor;

use async_buffered_input::{AsyncBufferedInput, InputError, Stats};
use tokio::io::{AsyncBufRead, AsyncRead, AsyncSeek};

fn assert_send<T: Send>(_: &T) {}
fn assert_send_sync_unpin<T: Send + Sync + Unpin>() {}
fn assert_send_sync_copy<T: Send + Sync + Copy + 'static>() {}
fn assert_error_payload<T: std::error::Error + Send + Sync + 'static>() {}
fn assert_tokio_io<T: AsyncRead + AsyncBufRead + AsyncSeek + Unpin>() {}

#[test]
fn input_is_send_sync_unpin() {
    assert_send_sync_unpin::<AsyncBufferedInput<tokio::fs::File>>();
    assert_send_sync_unpin::<AsyncBufferedInput<Cursor<Vec<u8>>>>();
}

#[test]
fn input_implements_tokio_io_traits() {
    assert_tokio_io::<AsyncBufferedInput<tokio::fs::File>>();
    assert_tokio_io::<AsyncBufferedInput<Cursor<Vec<u8>>>>();
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
}

/// The futures of every async method are `Send` for any `Send` source (so also for
/// `tokio::fs::File`, checked below by instantiation).
fn futures_are_send<R: AsyncRead + AsyncSeek + Unpin + Send>(input: &mut AsyncBufferedInput<R>) {
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

#[test]
fn futures_over_cursor_are_send() {
    let mut input = AsyncBufferedInput::new(Cursor::new(vec![1u8, 2, 3]));
    futures_are_send(&mut input);
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

fn tempfile_std() -> std::fs::File {
    let path = std::env::temp_dir().join(format!(
        "async-buffered-input-send-sync-{}.bin",
        std::process::id()
    ));
    std::fs::write(&path, [7u8, 8, 9, 10]).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    f
}
