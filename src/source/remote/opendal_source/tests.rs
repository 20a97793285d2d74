//! `OpendalSource`'s unit tests, over OpenDAL's memory and fs services.

use std::error::Error as _;

use super::*;
use crate::error::source_error::SourceError;
use crate::source::remote::remote_common::fails_within;

async fn memory_with(path: &str, data: &[u8]) -> Operator {
    let operator = Operator::new(opendal::services::Memory::default()).unwrap();
    operator.write(path, data.to_vec()).await.unwrap();
    operator
}

#[tokio::test]
async fn reads_ranges_cut_at_the_length() {
    let data: Vec<u8> = (0..=255).collect();
    let source = OpendalSource::open(memory_with("d/f.bin", &data).await, "d/f.bin")
        .await
        .unwrap();
    assert_eq!(source.len().await.unwrap(), 256);
    assert_reads(&source, &data, 10, 5).await;
    assert_eq!(&source.read_at(250, 100).await.unwrap()[..], &data[250..]);
    assert!(source.read_at(256, 10).await.unwrap().is_empty());
    assert!(source.read_at(u64::MAX, 10).await.unwrap().is_empty());
    // The memory service names each operator by its address: distinct operators, distinct
    // names.
    let name = source.resource().unwrap();
    assert!(
        name.starts_with("memory://") && name.ends_with("/d/f.bin"),
        "{name}"
    );
    let mut buf = [0u8; 4];
    assert_eq!(source.try_read_at(0, &mut buf), 0, "no bytes at hand");
}

#[tokio::test]
async fn missing_files_and_directories_keep_their_kind_and_name_the_file() {
    let operator = memory_with("d/f.bin", b"abc").await;
    let e = OpendalSource::open(operator.clone(), "d/nope.bin")
        .await
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
    let msg = e.to_string();
    // One line says why: what was asked, then the cause's own text; the cause is behind
    // `SourceError::cause`, not `source()`, so a chain reporter prints it once.
    assert!(
        msg.starts_with("stat memory://") && msg.contains("/d/nope.bin: "),
        "{msg}"
    );
    assert!(e.source().is_none(), "{msg}");
    let wrapped = e.get_ref().and_then(|e| e.downcast_ref::<SourceError>());
    assert_eq!(
        wrapped.unwrap().cause().kind(),
        io::ErrorKind::NotFound,
        "{msg}"
    );
}

/// Over six bytes behind a length hint of 10, named `mem://hinted`: reads the first `first`
/// bytes, then `len` bytes at `at`, which must fail with `UnexpectedEof` naming the source and
/// the offset of the read. Returns the source.
async fn read_past_a_wrong_hint(first: usize, at: u64, len: usize) -> OpendalSource {
    let source = OpendalSource::with_length(memory_with("f", b"abcdef").await, "f", 10)
        .with_name("mem://hinted");
    assert_eq!(
        &source.read_at(0, first).await.unwrap()[..],
        &b"abcdef"[..first]
    );
    let e = source.read_at(at, len).await.unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("mem://hinted") && msg.contains(&format!("offset {at}")),
        "{msg}"
    );
    source
}

#[tokio::test]
async fn a_wrong_length_hint_is_unexpected_eof_naming_the_range() {
    read_past_a_wrong_hint(6, 4, 6).await;
}

/// 10,000 bytes, no two neighbouring runs alike (byte `i` is `i % 251`).
fn data() -> Vec<u8> {
    (0..10_000u32).map(|i| (i % 251) as u8).collect()
}

/// Reads `[at, at + len)` of `source` and checks it against `data`.
async fn assert_reads(source: &OpendalSource, data: &[u8], at: usize, len: usize) {
    let got = source.read_at(at as u64, len).await.unwrap();
    assert_eq!(&got[..], &data[at..at + len], "read of {len} at {at}");
}

/// What `source.read_stream(offset)` gives, all of it.
async fn streamed(source: &OpendalSource, offset: u64) -> io::Result<Vec<u8>> {
    use futures::StreamExt;
    let mut stream = source.read_stream(offset).expect("a streaming source");
    let mut all = Vec::new();
    while let Some(piece) = stream.next().await {
        all.extend_from_slice(&piece?);
    }
    Ok(all)
}

#[tokio::test]
async fn read_stream_gives_the_file_from_an_offset_to_its_end_and_opens_when_polled() {
    let data = data();
    let source = OpendalSource::open(memory_with("f", &data).await, "f")
        .await
        .unwrap();
    assert!(source.is_streaming());
    let unpolled = source.read_stream(5);
    drop(unpolled);
    assert_eq!(source.streams_opened(), 0, "not polled: no request");
    assert_eq!(streamed(&source, 1234).await.unwrap(), &data[1234..]);
    assert_eq!(streamed(&source, 0).await.unwrap(), data);
    assert!(streamed(&source, 10_000).await.unwrap().is_empty());
    assert!(streamed(&source, 20_000).await.unwrap().is_empty());
    assert_eq!(source.streams_opened(), 2, "nothing to stream past the end");
    // Reads stay ranged, and without streaming there is no stream.
    assert_eq!(&source.read_at(100, 50).await.unwrap()[..], &data[100..150]);
    let ranged = source.clone().with_streaming(false);
    assert!(!ranged.is_streaming() && ranged.read_stream(0).is_none());
}

#[tokio::test]
async fn a_sequential_pass_of_an_input_is_one_stream_after_its_first_chunks() {
    use crate::{AsyncBufferedInput, PositionalFetch, ReadAhead};
    let data: Vec<u8> = (0..(3 << 20) as u32).map(|i| (i % 251) as u8).collect();
    let source = std::sync::Arc::new(
        OpendalSource::open(memory_with("f", &data).await, "f")
            .await
            .unwrap(),
    );
    let fetch = PositionalFetch::from_arc(std::sync::Arc::clone(&source))
        .with_read_ahead(ReadAhead::default());
    let mut input = AsyncBufferedInput::with_capacity(64 << 10, fetch);
    let mut at = 0;
    let mut buf = vec![0u8; 10_000];
    while at < data.len() {
        let n = buf.len().min(data.len() - at);
        input.read_bytes(&mut buf[..n]).await.unwrap();
        assert!(buf[..n] == data[at..at + n], "bytes {at}..{}", at + n);
        at += n;
    }
    assert_eq!(source.streams_opened(), 1);
}

#[tokio::test]
async fn a_stream_past_the_real_end_fails_and_reads_there_fail() {
    // Six bytes behind a hint of 10: a ranged read past 6 fails, and so does the stream (the
    // fetcher then goes on with ranged reads, which report it).
    let source = read_past_a_wrong_hint(3, 3, 7).await;
    assert!(streamed(&source, 2).await.is_err());
}

#[tokio::test]
async fn bad_uris_are_invalid_input() {
    for uri in [
        "not a uri",
        "s3://bucket/key",
        "ftp://127.0.0.1:9/",
        "fs://host/tmp/x",
    ] {
        let e = OpendalSource::from_uri(uri).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{uri}: {e}");
        assert!(e.to_string().contains(uri), "{e}");
    }
}

#[tokio::test]
async fn a_local_file_through_the_fs_service() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a b.bin");
    std::fs::write(&file, b"0123456789").unwrap();
    let uri = format!("fs://{}", file.display()).replace(' ', "%20");
    let source = OpendalSource::from_uri(&uri).await.unwrap();
    assert_eq!(source.length(), 10);
    assert_eq!(&source.read_at(3, 4).await.unwrap()[..], b"3456");
    let e = OpendalSource::from_uri(&format!("fs://{}", dir.path().display()))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::IsADirectory, "{e}");
}

#[tokio::test]
async fn a_server_that_is_down_fails_fast_naming_the_uri_without_the_password() {
    // Port 9 (discard) on loopback: nothing listens there in a test environment.
    for (uri, shown) in [
        (
            "ftp://u:secret@127.0.0.1:9/x.bin",
            "ftp://u@127.0.0.1:9/x.bin",
        ),
        (
            "webdav://u:secret@127.0.0.1:9/x.bin",
            "webdav://u@127.0.0.1:9/x.bin",
        ),
    ] {
        let e = fails_within(5, OpendalSource::from_uri(uri)).await;
        let msg = e.to_string();
        assert!(msg.contains(shown) && !msg.contains("secret"), "{msg}");
        assert_ne!(e.kind(), io::ErrorKind::NotFound, "{e}");
    }
}
