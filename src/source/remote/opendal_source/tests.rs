//! `OpendalSource`'s unit tests, over OpenDAL's memory and fs services.

use super::*;
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
/// A source over [`data`] in OpenDAL's memory service, streaming (the default).
async fn source_over_data() -> (Vec<u8>, OpendalSource) {
    let data = data();
    let source = OpendalSource::open(memory_with("f", &data).await, "f")
        .await
        .unwrap();
    (data, source)
}

/// [`source_over_data`] after two sequential reads from 0: one stream, now at 200.
async fn streaming_at_200() -> (Vec<u8>, OpendalSource) {
    let (data, source) = source_over_data().await;
    source.read_at(0, 100).await.unwrap();
    source.read_at(100, 100).await.unwrap();
    assert_eq!(source.streams_opened(), 1);
    (data, source)
}

/// Reads `[at, at + len)` of `source` and checks it against `data`.
async fn assert_reads(source: &OpendalSource, data: &[u8], at: usize, len: usize) {
    let got = source.read_at(at as u64, len).await.unwrap();
    assert_eq!(&got[..], &data[at..at + len], "read of {len} at {at}");
}

fn data() -> Vec<u8> {
    (0..10_000u32).map(|i| (i % 251) as u8).collect()
}

#[tokio::test]
async fn reads_that_continue_each_other_are_served_from_one_stream() {
    let (data, source) = source_over_data().await;
    assert!(source.is_streaming());
    assert_eq!(&source.read_at(0, 100).await.unwrap()[..], &data[..100]);
    assert_eq!(source.streams_opened(), 0, "a first read is ranged");
    let mut at = 100;
    for len in [1, 7, 300, 4096, 2000] {
        let bytes = source.read_at(at, len).await.unwrap();
        assert_eq!(
            &bytes[..],
            &data[at as usize..at as usize + len],
            "{at}+{len}"
        );
        at += len as u64;
    }
    assert_eq!(
        source.streams_opened(),
        1,
        "one stream for every read after the first"
    );
    // Past the end: cut at the length, from the same stream, which then ends.
    let rest = source.read_at(at, 1 << 20).await.unwrap();
    assert_eq!(&rest[..], &data[at as usize..]);
    assert_eq!(source.streams_opened(), 1);
    assert!(source.read_at(10_000, 5).await.unwrap().is_empty());
    // Without streaming, every read is ranged.
    let ranged = source.clone().with_streaming(false);
    assert!(!ranged.is_streaming());
    for at in [0, 100, 200] {
        assert_eq!(
            &ranged.read_at(at, 100).await.unwrap()[..],
            &data[at as usize..][..100]
        );
    }
    assert_eq!(ranged.streams_opened(), 0);
}

#[tokio::test]
async fn a_read_elsewhere_is_ranged_and_sequential_reads_there_open_a_new_stream() {
    let (data, source) = streaming_at_200().await;
    // A seek: ranged, the stream stays at 200.
    assert_reads(&source, &data, 5000, 10).await;
    assert_eq!(source.streams_opened(), 1);
    // Back where the stream is: it continues the stream, no new one.
    assert_reads(&source, &data, 200, 50).await;
    assert_eq!(source.streams_opened(), 1);
    // Sequential again elsewhere: a new stream there (the old one is dropped).
    source.read_at(7000, 10).await.unwrap();
    assert_reads(&source, &data, 7010, 990).await;
    assert_eq!(source.streams_opened(), 2);
    // The old stream's place is neither the last read's end nor the stream's: ranged.
    assert_reads(&source, &data, 250, 50).await;
    assert_eq!(source.streams_opened(), 2);
    assert_reads(&source, &data, 8000, 10).await;
    assert_eq!(source.streams_opened(), 2, "the stream at 8000 goes on");
}

#[tokio::test]
async fn reads_in_flight_at_once_take_their_turns_and_out_of_order_ones_go_ranged() {
    let (data, source) = source_over_data().await;
    source.read_at(0, 100).await.unwrap();
    // Three chunks asked for at once, as a read-ahead does: one stream serves them all.
    let (a, b, c) = (
        source.read_at(100, 1000),
        source.read_at(1100, 1000),
        source.read_at(2100, 1000),
    );
    let (a, b, c) = tokio::join!(a, b, c);
    assert_eq!(&a.unwrap()[..], &data[100..1100]);
    assert_eq!(&b.unwrap()[..], &data[1100..2100]);
    assert_eq!(&c.unwrap()[..], &data[2100..3100]);
    assert_eq!(source.streams_opened(), 1);
    // Two claimed in order but run in the other: the later one finds the stream behind
    // its start (as if the earlier had been dropped) and opens one where it starts; the
    // earlier finds that one past its start and goes ranged, leaving it to the next read.
    let first = source.read_at(3100, 100);
    let second = source.read_at(3200, 100);
    assert_eq!(&second.await.unwrap()[..], &data[3200..3300]);
    assert_eq!(&first.await.unwrap()[..], &data[3100..3200]);
    assert_eq!(source.streams_opened(), 2);
    assert_reads(&source, &data, 3300, 100).await;
    assert_eq!(source.streams_opened(), 2);
}

#[tokio::test]
async fn a_read_that_never_ran_or_was_dropped_leaves_no_wrong_bytes() {
    let (data, source) = streaming_at_200().await;
    // Claimed the stream at 200, dropped before it ran: the next read finds the stream
    // behind its start and opens a new one where it starts.
    drop(source.read_at(200, 100));
    assert_reads(&source, &data, 300, 100).await;
    assert_eq!(source.streams_opened(), 2);
    // The dropped read, asked again: ranged (it continues nothing), the right bytes.
    assert_reads(&source, &data, 200, 100).await;
    // Dropped while it reads (polled once: it has taken the stream): the stream goes with it.
    let mut reading = Box::pin(source.read_at(400, 100));
    let _ = futures_poll_once(reading.as_mut()).await;
    drop(reading);
    assert_reads(&source, &data, 400, 300).await;
}

/// Polls `future` once: its output if it was ready.
async fn futures_poll_once<F: Future + Unpin>(mut future: F) -> Option<F::Output> {
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut future).poll(cx) {
            std::task::Poll::Ready(out) => Some(out),
            std::task::Poll::Pending => None,
        })
    })
    .await
}

#[tokio::test]
async fn a_stream_that_ends_early_is_the_ranged_reads_unexpected_eof() {
    // Continues: from a stream of 3..10, which ends at 6; then ranged, which fails.
    let source = read_past_a_wrong_hint(3, 3, 7).await;
    assert_eq!(source.streams_opened(), 1);
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
