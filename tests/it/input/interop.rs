//! An input as `futures-io`'s `AsyncRead`/`AsyncBufRead`/`AsyncSeek` (through
//! `tokio_util::compat`), and as a `Stream` of `Bytes` chunks (`TokioIo` too): every byte,
//! every window size, positions after seeks, errors, and chunks that are the window's buffer.

use std::io::{ErrorKind, SeekFrom};

use async_buffered_input::interop::TokioIo;
use async_buffered_input::source::MemorySource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};
use bytes::Bytes;
use futures::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt};
use futures::stream::{FusedStream, StreamExt, TryStreamExt};
use tokio_util::compat::TokioAsyncReadCompatExt;

/// Byte `n` of the test data: not periodic at any small power of two.
fn data(len: usize) -> Vec<u8> {
    (0..len as u64)
        .map(|n| (n.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

fn positional(capacity: usize, data: &[u8]) -> AsyncBufferedInput<PositionalFetch<MemorySource>> {
    AsyncBufferedInput::with_capacity(
        capacity,
        PositionalFetch::new(MemorySource::new(data.to_vec())),
    )
}

const CAPACITIES: [usize; 5] = [1, 7, 64, 1000, 8192];

#[tokio::test]
async fn futures_io_reads_and_seeks_every_byte() {
    let data = data(5000);
    for capacity in CAPACITIES {
        let mut reader = positional(capacity, &data).into_tokio_io().compat();
        let mut head = [0u8; 10];
        reader.read_exact(&mut head).await.unwrap();
        assert_eq!(head[..], data[..10], "window {capacity}");
        assert_eq!(reader.seek(SeekFrom::Current(90)).await.unwrap(), 100);
        let mut part = vec![0u8; 1234];
        reader.read_exact(&mut part).await.unwrap();
        assert_eq!(part[..], data[100..1334], "window {capacity}");
        assert_eq!(reader.seek(SeekFrom::End(-100)).await.unwrap(), 4900);
        let mut tail = Vec::new();
        reader.read_to_end(&mut tail).await.unwrap();
        assert_eq!(tail[..], data[4900..], "window {capacity}");
        assert_eq!(reader.seek(SeekFrom::Start(3)).await.unwrap(), 3);
        let mut all = Vec::new();
        reader.read_to_end(&mut all).await.unwrap();
        assert_eq!(all[..], data[3..], "window {capacity}");
        let e = reader.seek(SeekFrom::Current(-10_000)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "window {capacity}: {e}");
        assert_eq!(
            reader.into_inner().into_inner().position(),
            5000,
            "window {capacity}"
        );
    }
}

#[tokio::test]
async fn futures_io_buf_read_reads_lines_over_a_stream_and_a_positional_source() {
    let text: Vec<u8> = (0..300)
        .flat_map(|i| format!("line {i} {}\n", "x".repeat(i % 37)).into_bytes())
        .collect();
    let expected: Vec<String> = String::from_utf8(text.clone())
        .unwrap()
        .lines()
        .map(|l| format!("{l}\n"))
        .collect();
    for capacity in CAPACITIES {
        let over_stream =
            AsyncBufferedInput::with_capacity(capacity, std::io::Cursor::new(text.clone()));
        let mut readers: [Box<dyn futures::io::AsyncBufRead + Unpin>; 2] = [
            Box::new(positional(capacity, &text).into_tokio_io().compat()),
            Box::new(over_stream.into_tokio_io().compat()),
        ];
        for reader in &mut readers {
            let mut lines = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).await.unwrap() == 0 {
                    break;
                }
                lines.push(line);
            }
            assert_eq!(lines, expected, "window {capacity}");
        }
    }
}

#[tokio::test]
async fn a_stream_yields_every_byte_from_the_position_in_bounded_chunks() {
    let data = data(20_000);
    for capacity in CAPACITIES {
        for max_chunk in [1, 3, 16, 64, 5000, usize::MAX] {
            for start in [0usize, 1, 4999, 19_999, 20_000] {
                let what = format!("window {capacity}, max_chunk {max_chunk}, from {start}");
                let mut input = positional(capacity, &data);
                input.seek_to(start as u64);
                let mut stream = input.into_stream(max_chunk);
                let mut got = Vec::new();
                while let Some(chunk) = stream.next().await {
                    let chunk = chunk.unwrap();
                    assert!(!chunk.is_empty(), "{what}");
                    assert!(
                        chunk.len() <= max_chunk.min(capacity),
                        "{what}: {}",
                        chunk.len()
                    );
                    got.extend_from_slice(&chunk);
                }
                assert!(stream.is_terminated(), "{what}");
                assert!(stream.next().await.is_none(), "{what}");
                assert!(got[..] == data[start..], "{what}");
                let input = stream.into_inner();
                assert_eq!(input.position(), 20_000, "{what}");
                let stats = input.stats();
                assert_eq!(stats.bytes_from_window, (20_000 - start) as u64, "{what}");
                // Each byte is fetched once (what the first refill fetched before `start` too).
                assert!(stats.bytes_from_source <= 20_000 - start as u64 + capacity as u64);
            }
        }
    }
}

#[tokio::test]
async fn a_stream_over_a_stream_source_and_with_read_ahead() {
    let data = data(100_000);
    let cursor = AsyncBufferedInput::with_capacity(4096, std::io::Cursor::new(data.clone()));
    let chunks: Vec<Bytes> = cursor.into_stream(usize::MAX).try_collect().await.unwrap();
    assert_eq!(chunks.concat(), data);

    let fetch = PositionalFetch::new(MemorySource::new(data.clone()))
        .with_read_ahead(ReadAhead::new(8192, 3));
    let ahead = AsyncBufferedInput::with_capacity(4096, fetch);
    let chunks: Vec<Bytes> = ahead.into_stream(1000).try_collect().await.unwrap();
    assert!(chunks.iter().all(|c| c.len() <= 1000));
    assert_eq!(chunks.concat(), data);
}

#[tokio::test]
async fn chunks_are_the_window_buffer_not_copies() {
    let data = data(1000);
    let mut stream = positional(64, &data).into_stream(32);
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first[..], data[..32]);
    // The window still holds the 32 bytes after the chunk, in the same buffer, right after it.
    let rest = stream.get_ref().buffer();
    assert_eq!(rest[..], data[32..64]);
    assert_eq!(first.as_ptr().wrapping_add(32), rest.as_ptr());
    let second = stream.next().await.unwrap().unwrap();
    assert_eq!(second.as_ptr(), first.as_ptr().wrapping_add(32));
    // The window is handed out: the next chunk is fetched into a new buffer.
    let third = stream.next().await.unwrap().unwrap();
    assert_eq!(third[..], data[64..96]);
    assert_eq!(stream.get_ref().stats().bytes_from_source, 128);
}

#[tokio::test]
async fn an_error_ends_the_stream_and_the_input_resumes_where_it_failed() {
    let data = data(1000);
    // Request 3 (from 0) fails.
    let source = abi_testkit::Scripted::new(data.clone())
        .fail_request(3)
        .error(ErrorKind::ConnectionReset, "injected reset");
    let input = AsyncBufferedInput::with_capacity(100, PositionalFetch::new(source));
    let mut stream: TokioIo<_> = input.into_stream(usize::MAX);
    let mut got = Vec::new();
    let e = loop {
        match stream.next().await.unwrap() {
            Ok(chunk) => got.extend_from_slice(&chunk),
            Err(e) => break e,
        }
    };
    assert_eq!(e.kind(), ErrorKind::ConnectionReset);
    assert!(
        e.to_string().contains("failed: injected reset: read of ")
            && e.to_string().ends_with(" at 300 (request 3)"),
        "{e}"
    );
    assert_eq!(got.len(), 300);
    assert!(stream.is_terminated());
    assert!(stream.next().await.is_none());
    let input = stream.into_inner();
    assert_eq!(input.position(), 300, "the failed chunk consumed nothing");
    let rest: Vec<Bytes> = input.into_stream(usize::MAX).try_collect().await.unwrap();
    got.extend_from_slice(&rest.concat());
    assert_eq!(got, data);
}

#[test]
fn a_stream_is_send_and_unpin() {
    fn send_unpin<T: Send + Unpin>() {}
    send_unpin::<TokioIo<AsyncBufferedInput<PositionalFetch<MemorySource>>>>();
}

#[tokio::test]
async fn tokio_reads_and_the_stream_share_one_position() {
    use tokio::io::AsyncReadExt;
    let data = data(10_000);
    let mut input = positional(1000, &data);
    // Borrowed: tokio's read, then the rest as chunks of whatever the window holds.
    let mut io = input.tokio_io();
    assert_eq!(io.max_chunk(), usize::MAX);
    let mut head = [0u8; 10];
    io.read_exact(&mut head).await.unwrap();
    assert_eq!(head[..], data[..10]);
    let chunks: Vec<Bytes> = (&mut io).try_collect().await.unwrap();
    assert!(chunks.iter().all(|c| c.len() <= 1000));
    assert_eq!(chunks.concat(), data[10..]);
    assert!(io.is_terminated());
    // The stream ended; tokio's reads go on serving (at the end: 0 bytes), and a seek of the
    // input moves both.
    assert_eq!(io.read(&mut head).await.unwrap(), 0);
    input.seek_to(5000);
    let mut owned = input.into_stream(100);
    assert_eq!(owned.max_chunk(), 100);
    let mut next = [0u8; 50];
    owned.read_exact(&mut next).await.unwrap();
    assert_eq!(next[..], data[5000..5050]);
    let chunk = owned.next().await.unwrap().unwrap();
    assert_eq!(chunk[..], data[5050..5150]);
    assert_eq!(owned.into_inner().position(), 5150);
}
