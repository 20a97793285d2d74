//! `ObjectStoreSource` against real servers on 127.0.0.1 (nginx over HTTP, SeaweedFS over
//! S3), and its failure behaviour: a server that is down, one that restarts, one that stalls
//! mid-body.
//!
//! The server tests are `#[ignore]`d in a plain `cargo test`; `.ci/run` starts the servers and
//! runs them with `--ignored`. By hand:
//!
//! ```text
//! mkdir -p /tmp/abi-data && head -c 5000000 /dev/urandom > /tmp/abi-data/blob.bin
//! set -a; eval "$(scripts/http-server.sh up /tmp/abi-data)"; eval "$(scripts/s3-server.sh up /tmp/abi-s3)"; set +a
//! scripts/s3-server.sh upload /tmp/abi-data/blob.bin blob.bin
//! ABI_OBJECT_FILE=/tmp/abi-data/blob.bin ABI_HTTP_URL=$HTTP_URL ABI_S3_BUCKET=$S3_BUCKET \
//!   cargo test --features object-store --test it -- --include-ignored source::object_store::
//! ```
//!
//! Variables: `ABI_OBJECT_FILE` (a local file; the servers serve it under its file name),
//! `ABI_HTTP_URL` (nginx's base URL), `ABI_S3_BUCKET` (the bucket holding it) with the `AWS_*`
//! variables `scripts/s3-server.sh up` prints. A test that needs one and does not find it fails.
#![cfg(feature = "object-store")]

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use abi_testkit::{chain, value_of, Rng};
use async_buffered_input::source::{ObjectStoreSource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{Fetch, PositionalFetch, ReadAhead};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const THIS: &str = "tests/it/source/object_store.rs";

fn env(name: &str) -> String {
    abi_testkit::server_var(name, THIS)
}

fn object_file() -> (PathBuf, String, Vec<u8>) {
    abi_testkit::object_file(THIS)
}

/// Reads the whole object through an input over `source` in mixed request sizes, then random
/// seeks, slices and clones, checking every byte.
async fn check_every_byte<S: PositionalSource>(source: S, data: &[u8], ahead: Option<ReadAhead>) {
    let mut fetch = PositionalFetch::new(source);
    fetch.set_read_ahead(ahead);
    let mut input = AsyncBufferedInput::new(fetch);
    assert_eq!(input.length().await.unwrap(), data.len() as u64);
    let sizes = [1usize, 100, 8191, 8192, 8193, 65_536, 3, 300_000];
    let mut pos = 0usize;
    let mut i = 0;
    while pos < data.len() {
        let n = sizes[i % sizes.len()].min(data.len() - pos);
        let got = input
            .read_bytes_owned(n)
            .await
            .unwrap_or_else(|e| panic!("read {n} at {pos}: {e}"));
        assert!(
            got[..] == data[pos..pos + n],
            "bytes differ in [{pos}, {})",
            pos + n
        );
        pos += n;
        i += 1;
    }
    assert_eq!(
        input.read_byte().await.unwrap_err().kind(),
        ErrorKind::UnexpectedEof
    );
    let mut rng = Rng::new(data.len() as u64);
    for _ in 0..50 {
        let at = rng.below(data.len() as u64) as usize;
        let n = (rng.below(20_000) as usize).min(data.len() - at);
        input.seek_to(at as u64);
        let got = input.read_bytes_owned(n).await.unwrap();
        assert!(
            got[..] == data[at..at + n],
            "bytes differ in [{at}, {})",
            at + n
        );
    }
    let mut slice = input.slice(1000, 50_000).await.unwrap();
    let got = slice.read_bytes_owned(50_000).await.unwrap();
    assert!(got[..] == data[1000..51_000]);
    let mut clone = input.clone();
    clone.seek_to(data.len() as u64 - 10);
    assert_eq!(
        &clone.read_bytes_owned(10).await.unwrap()[..],
        &data[data.len() - 10..]
    );
}

fn configs() -> [Option<ReadAhead>; 3] {
    [
        None,
        Some(ReadAhead::default()),
        Some(ReadAhead::new(64 << 10, 3)),
    ]
}

#[tokio::test]
#[ignore = "needs an HTTP/S3 server on 127.0.0.1: run .ci/run, or see the top of this file"]
async fn http_nginx_every_byte() {
    let (_, name, data) = object_file();
    let url = format!("{}/{name}", env("ABI_HTTP_URL"));
    for ahead in configs() {
        let source = ObjectStoreSource::from_url(&url).await.unwrap();
        assert_eq!(source.length(), data.len() as u64);
        check_every_byte(source, &data, ahead).await;
    }
}

#[tokio::test]
#[ignore = "needs an HTTP/S3 server on 127.0.0.1: run .ci/run, or see the top of this file"]
async fn s3_every_byte() {
    let (_, name, data) = object_file();
    let url = format!("s3://{}/{name}", env("ABI_S3_BUCKET"));
    env("AWS_ENDPOINT");
    for ahead in configs() {
        let source = ObjectStoreSource::from_url(&url).await.unwrap();
        check_every_byte(source, &data, ahead).await;
    }
}

#[tokio::test]
#[ignore = "needs an HTTP/S3 server on 127.0.0.1: run .ci/run, or see the top of this file"]
async fn missing_objects_are_not_found_naming_the_url() {
    let http = format!("{}/no-such-object.bin", env("ABI_HTTP_URL"));
    let s3 = format!("s3://{}/no-such-object.bin", env("ABI_S3_BUCKET"));
    for url in [http, s3] {
        let e = ObjectStoreSource::from_url(&url).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{url}: {e}");
        assert!(e.to_string().contains(&url), "{e}");
    }
}

/// `scripts/http-server.sh` with its own state folder (so it does not disturb the shared
/// server); prints the `KEY=VALUE` lines of `up`.
fn own_nginx(state: &Path, args: &[&str], port: Option<u16>) -> String {
    let mut cmd = crate::servers::server_script("http-server.sh");
    cmd.args(args).env("HTTP_STATE", state);
    match port {
        Some(port) => cmd.env("HTTP_PORT", port.to_string()),
        None => cmd.env_remove("HTTP_PORT"), // not the shared server's
    };
    crate::servers::script_output("http-server.sh", &mut cmd, &args)
}

/// Stops the test's own nginx even if the test fails.
struct Down(PathBuf);

impl Drop for Down {
    fn drop(&mut self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/http-server.sh");
        let _ = Command::new("bash")
            .arg(script)
            .arg("down")
            .env("HTTP_STATE", &self.0)
            .output();
    }
}

#[tokio::test]
#[ignore = "needs an HTTP/S3 server on 127.0.0.1: run .ci/run, or see the top of this file"]
async fn http_server_down_fails_within_the_bound_then_the_same_input_resumes() {
    let (path, name, data) = object_file();
    let dir = path.parent().unwrap().to_str().unwrap().to_owned();
    let state = std::env::temp_dir().join(format!("abi-http-fault-{}", std::process::id()));
    let _down = Down(state.clone());
    let vars = own_nginx(&state, &["up", &dir], None);
    let port: u16 = value_of(&vars, "HTTP_PORT");
    let url = format!("http://127.0.0.1:{port}/{name}");
    let source = ObjectStoreSource::from_url(&url).await.unwrap();
    let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::new(64 << 10, 3));
    let mut input = AsyncBufferedInput::new(fetch);
    let first = input.read_bytes_owned(100_000).await.unwrap();
    assert!(first[..] == data[..100_000]);

    own_nginx(&state, &["down"], None);
    // Far from what read-ahead fetched, so the read needs the server.
    let at = data.len() as u64 / 2;
    input.seek_to(at);
    let causes = fails_within(&mut input, 50_000, Duration::from_secs(3), "a down server").await;
    assert!(causes.contains(&url), "the error names the URL: {causes}");
    assert_eq!(input.position(), at, "a failed read consumes nothing");
    // Still down: fails again, still in bounded time.
    assert!(input.read_byte().await.is_err());

    own_nginx(&state, &["up", &dir], Some(port));
    let got = input.read_bytes_owned(50_000).await.unwrap();
    assert!(got[..] == data[at as usize..at as usize + 50_000]);
    let rest = data.len() - at as usize - 50_000;
    let got = input.read_bytes_owned(rest).await.unwrap();
    assert!(got[..] == data[at as usize + 50_000..]);
}

/// Reads `len` bytes from `input`, which must fail within `bound` (`what` fails, says the
/// message); the error and its causes.
async fn fails_within<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
    len: usize,
    bound: Duration,
    what: &str,
) -> String {
    let started = Instant::now();
    let e = input.read_bytes_owned(len).await.unwrap_err();
    let took = started.elapsed();
    assert!(took < bound, "{what} took {took:?} to fail: {e}");
    chain(&e)
}

/// A server that answers a ranged GET with headers and a few bytes, then stalls: the read must
/// fail within the documented bound (5 s request timeout, no retry after 3 s), not hang.
#[tokio::test]
async fn a_server_that_stalls_mid_body_fails_within_the_bound() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut conn, _)) = listener.accept().await {
            let mut request = [0u8; 4096];
            let _ = conn.read(&mut request).await;
            let head = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-99999/1000000\r\n\
                        Content-Length: 100000\r\nContent-Type: application/octet-stream\r\n\r\n";
            let _ = conn.write_all(head.as_bytes()).await;
            let _ = conn.write_all(&[7u8; 1000]).await;
            held.push(conn); // never finish the body
        }
    });
    let url = format!("http://{addr}/stall.bin");
    let (store, path) = ObjectStoreSource::store_for_url(&url).unwrap();
    let source = ObjectStoreSource::with_length(store, path, url.clone(), 1_000_000);
    let mut input = AsyncBufferedInput::new(PositionalFetch::new(source));
    let bound = Duration::from_secs(9);
    let causes = fails_within(&mut input, 100_000, bound, "a stalled server").await;
    assert!(
        causes.contains("bytes=0-"),
        "the error names the range: {causes}"
    );
    assert!(causes.contains(&url), "the error names the URL: {causes}");
    assert_eq!(input.position(), 0);
    server.abort();
}
