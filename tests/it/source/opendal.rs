//! `OpendalSource` (feature `opendal`): faults through OpenDAL's memory service (the file
//! vanishes, shrinks, comes back), which need no server, and reads from real FTP and WebDAV
//! servers on 127.0.0.1, which do.
//!
//! The server tests are `#[ignore]`d in a plain `cargo test`; `.ci/run` starts the servers and
//! runs them with `--include-ignored`. By hand:
//!
//! ```text
//! mkdir -p /tmp/abi-data && head -c 5000000 /dev/urandom > /tmp/abi-data/blob.bin
//! set -a; eval "$(scripts/ftp-server.sh up /tmp/abi-data)"; eval "$(scripts/webdav-server.sh up /tmp/abi-data)"; set +a
//! ABI_OBJECT_FILE=/tmp/abi-data/blob.bin ABI_FTP_URL=$FTP_URL ABI_WEBDAV_URL=$WEBDAV_URL \
//!   cargo test --features opendal --test it -- --include-ignored source::opendal::
//! scripts/ftp-server.sh down; scripts/webdav-server.sh down
//! ```
//!
//! `FTP_URL` and `WEBDAV_URL` name the served folder (`ftp://user:password@127.0.0.1:PORT`,
//! `webdav://127.0.0.1:PORT`); the tests read `blob.bin` in it.
#![cfg(feature = "opendal")]

use std::io::ErrorKind;
use std::time::Duration;

use crate::common::read_in_random_sizes;
use abi_testkit::{chain, pattern_vec, Rng};
use async_buffered_input::layer::Retrying;
use async_buffered_input::source::{OpendalSource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{PositionalFetch, ReadAhead};

/// An in-memory operator holding `data` at `path`, and the source of that file.
async fn memory_with(path: &str, data: &[u8]) -> (opendal::Operator, OpendalSource) {
    let operator = opendal::Operator::new(opendal::services::Memory::default()).unwrap();
    operator.write(path, data.to_vec()).await.unwrap();
    let source = OpendalSource::open(operator.clone(), path).await.unwrap();
    (operator, source)
}

/// The file vanishes mid-read: the read fails `NotFound` naming the file and the range, the
/// position does not move, and once the file is back the same input reads on, byte for byte.
#[tokio::test]
async fn a_vanished_file_fails_the_read_and_the_input_resumes_when_it_is_back() {
    let data = pattern_vec(100_000);
    let (operator, source) = memory_with("idx/seg.bin", &data).await;
    let name = source.name().to_owned();
    let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::new(4096, 2));
    let mut input = AsyncBufferedInput::with_capacity(1024, fetch);
    let mut buf = vec![0u8; 30_000];
    input.read_bytes(&mut buf).await.unwrap();
    assert_eq!(buf, data[..30_000]);

    operator.delete("idx/seg.bin").await.unwrap();
    // Read far enough that read-ahead chunks fetched before the delete run out.
    let mut far = vec![0u8; 50_000];
    let e = input.read_bytes(&mut far).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    let msg = chain(&e);
    assert!(
        msg.contains(&name) && msg.contains("bytes at offset"),
        "names the file and the range: {msg}"
    );
    assert_eq!(input.position(), 30_000, "a failed read consumes nothing");

    operator.write("idx/seg.bin", data.clone()).await.unwrap();
    input.read_bytes(&mut far).await.unwrap();
    assert_eq!(far, data[30_000..80_000]);
    let mut rest = vec![0u8; 20_000];
    input.read_bytes(&mut rest).await.unwrap();
    assert_eq!(rest, data[80_000..]);
    assert_eq!(
        input.read_byte().await.unwrap_err().kind(),
        ErrorKind::UnexpectedEof
    );
}

/// The file shrinks under an open source: reads past the new end fail `UnexpectedEof` (never
/// short or wrong bytes), reads before it still succeed.
#[tokio::test]
async fn a_shrunk_file_is_unexpected_eof_not_short_bytes() {
    let data = pattern_vec(10_000);
    let (operator, source) = memory_with("f.bin", &data).await;
    operator
        .write("f.bin", data[..6000].to_vec())
        .await
        .unwrap();
    assert_eq!(
        &source.read_at(100, 500).await.unwrap()[..],
        &data[100..600]
    );
    let e = source.read_at(5000, 2000).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    assert!(format!("{e}").contains(source.name()), "{e}");
}

/// `Retrying` over an `OpendalSource`: `NotFound` is not transient, so it is not retried and
/// fails at once, keeping its kind.
#[tokio::test(start_paused = true)]
async fn retrying_does_not_retry_not_found() {
    let (operator, source) = memory_with("f.bin", b"abc").await;
    operator.delete("f.bin").await.unwrap();
    let retrying = Retrying::new(source);
    let started = tokio::time::Instant::now();
    let e = retrying.read_at(0, 3).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(started.elapsed() < Duration::from_millis(1), "no backoff");
}

// ----- real servers (ignored unless .ci/run starts them) -----

/// The expected bytes, from `ABI_OBJECT_FILE`.
fn expected() -> Vec<u8> {
    let path = std::env::var("ABI_OBJECT_FILE")
        .expect("ABI_OBJECT_FILE: the local copy of blob.bin (see this file's docs)");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `VAR`'s folder URL, from the environment.
fn folder(var: &str) -> String {
    std::env::var(var)
        .unwrap_or_else(|_| panic!("{var}: the served folder's URL (see this file's docs)"))
        .trim_end_matches('/')
        .to_owned()
}

/// Reads the whole of `blob.bin` at `base` sequentially with read-ahead (from one stream),
/// random ranges through a clone, and checks a missing file is `NotFound` naming it.
async fn read_from_server(base: &str) {
    let data = expected();
    let uri = format!("{base}/blob.bin");
    let source = std::sync::Arc::new(OpendalSource::from_uri(&uri).await.unwrap());
    assert_eq!(source.length(), data.len() as u64);
    let fetch = PositionalFetch::from_arc(std::sync::Arc::clone(&source))
        .with_read_ahead(ReadAhead::new(256 * 1024, 4));
    let mut input = AsyncBufferedInput::with_capacity(8192, fetch);
    let all = read_in_random_sizes(&mut input, data.len(), 100_000, 23).await;
    assert!(all == data, "sequential read differs from the file");
    // One stream served the pass after its first read; a stream that failed (on FTP, a pooled
    // connection with a stale reply) is opened again, so a few at most.
    let streams = source.streams_opened();
    assert!(
        (1..=3).contains(&streams),
        "{streams} streams for one sequential pass"
    );
    let (mut clone, mut rng) = (input.clone(), Rng::new(24));
    for _ in 0..50 {
        let pos = rng.below(data.len() as u64);
        let n = (1 + rng.below(70_000)).min(data.len() as u64 - pos) as usize;
        clone.seek_to(pos);
        let mut buf = vec![0u8; n];
        clone.read_bytes(&mut buf).await.unwrap();
        assert!(
            buf == data[pos as usize..pos as usize + n],
            "range {pos}+{n}"
        );
    }
    let missing = format!("{base}/missing.bin");
    let e = OpendalSource::from_uri(&missing).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
}

#[tokio::test]
#[ignore = "needs an FTP server: .ci/run (scripts/ftp-server.sh), ABI_FTP_URL and ABI_OBJECT_FILE"]
async fn ftp_server() {
    read_from_server(&folder("ABI_FTP_URL")).await;
}

#[tokio::test]
#[ignore = "needs a WebDAV server: .ci/run (scripts/webdav-server.sh), ABI_WEBDAV_URL and ABI_OBJECT_FILE"]
async fn webdav_server() {
    read_from_server(&folder("ABI_WEBDAV_URL")).await;
}
