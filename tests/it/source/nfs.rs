//! `NfsSource` (feature `nfs`): URLs that do not parse and a server that is down, which need no
//! server, and reads from a real NFSv3 server on 127.0.0.1, which do: every byte of a file
//! through a buffered input, ranges at odd offsets across READs, and the `io::ErrorKind` of a
//! missing file, a file nobody may read and a folder.
//!
//! The server tests are `#[ignore]`d in a plain `cargo test`; `.ci/run` starts the server and
//! runs them with `--include-ignored`. By hand (`NFS_ANON=1`: the server treats the client as
//! nobody, so that mode bits count; the folder must be searchable by others):
//!
//! ```text
//! mkdir -p /tmp/abi-nfs-data && head -c 5000000 /dev/urandom > /tmp/abi-nfs-data/blob.bin
//! scripts/nfs-server.sh install
//! set -a; eval "$(NFS_ANON=1 scripts/nfs-server.sh up /tmp/abi-nfs-data)"; set +a
//! ABI_NFS_URL=$NFS_URL ABI_NFS_DIR=$NFS_DIR ABI_NFS_MOUNT_PORT=$NFS_MOUNT_PORT \
//!   cargo test --features nfs --test it -- --include-ignored source::nfs::
//! scripts/nfs-server.sh down
//! ```
//!
//! `ABI_NFS_URL` names the export (`nfs://127.0.0.1:PORT/export`), `ABI_NFS_DIR` the folder it
//! serves (the tests read `blob.bin` in both, and write files of their own into the folder), and
//! `ABI_NFS_MOUNT_PORT`, if set, MOUNT's port (else the source finds it: on the NFS port, or
//! through the portmapper). `NFS_IMPL=rust` works too.
#![cfg(feature = "nfs")]

use std::io::ErrorKind;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::common::read_in_random_sizes;
use abi_testkit::{chain, server_var, Rng};
use async_buffered_input::source::{NfsSource, PositionalSource};
use async_buffered_input::{AsyncBufferedInput, PositionalFetch, ReadAhead};

const THIS_FILE: &str = "tests/it/source/nfs.rs";

/// A port on 127.0.0.1 where nothing listens (bound, then closed).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn a_server_that_is_down_is_connection_refused_naming_the_url() {
    let port = closed_port();
    for url in [
        format!("nfs://127.0.0.1:{port}/export/blob.bin"),
        format!("nfs://127.0.0.1:{port}/export/blob.bin?mountport={port}"),
    ] {
        let started = Instant::now();
        let e = NfsSource::connect(&url).await.unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(e.kind(), ErrorKind::ConnectionRefused, "{e}");
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("open {url}: ")), "{msg}");
        assert!(msg.contains(&format!("127.0.0.1:{port}")), "{msg}");
    }
}

#[tokio::test]
async fn urls_that_do_not_parse_are_invalid_input() {
    for (url, why) in [
        ("http://127.0.0.1/export/f.bin", "the scheme is not nfs://"),
        ("nfs://127.0.0.1", "no path"),
        ("nfs://127.0.0.1/export", "an export and a file"),
        ("nfs://127.0.0.1:port/export/f.bin", "a bad port"),
        (
            "nfs://127.0.0.1/export/f.bin?cache=yes",
            "an unknown option",
        ),
    ] {
        let e = NfsSource::connect(url).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{url}: {e}");
        let msg = e.to_string();
        assert!(msg.contains(url) && msg.contains(why), "{url}: {msg}");
    }
}

// ----- a real server (ignored unless .ci/run starts it) -----

/// The URL of `name` in the export, with `query` (and `mountport=` if the environment gives
/// MOUNT's port and `with_mount_port`).
fn url_of(name: &str, query: &str, with_mount_port: bool) -> String {
    let base = server_var("ABI_NFS_URL", THIS_FILE);
    let mut options: Vec<String> = Vec::new();
    if !query.is_empty() {
        options.push(query.to_owned());
    }
    if let (true, Ok(port)) = (with_mount_port, std::env::var("ABI_NFS_MOUNT_PORT")) {
        options.push(format!("mountport={port}"));
    }
    let mut url = format!("{}/{name}", base.trim_end_matches('/'));
    if !options.is_empty() {
        url = format!("{url}?{}", options.join("&"));
    }
    url
}

/// The folder the server exports.
fn served_dir() -> PathBuf {
    PathBuf::from(server_var("ABI_NFS_DIR", THIS_FILE))
}

/// The bytes of `blob.bin` in the served folder.
fn blob() -> Vec<u8> {
    let path = served_dir().join("blob.bin");
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        data.len() > 1 << 20,
        "{}: over 1 MiB, please",
        path.display()
    );
    data
}

/// A file (or folder) of this test in the served folder, removed when dropped.
struct Made(PathBuf);

impl Drop for Made {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0).or_else(|_| std::fs::remove_dir(&self.0));
    }
}

#[tokio::test]
#[ignore = "needs an NFS server: scripts/nfs-server.sh up DIR; set ABI_NFS_URL and ABI_NFS_DIR"]
async fn every_byte_of_a_file_through_a_buffered_input() {
    let data = blob();
    // MOUNT found by the source itself: on the NFS port, or through the portmapper.
    let url = url_of("blob.bin", "", false);
    let source = NfsSource::connect(&url).await.unwrap();
    assert_eq!(source.known_len(), Some(data.len() as u64));
    assert_eq!(source.resource().as_deref(), Some(url.as_str()));
    let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::default());
    let mut input = AsyncBufferedInput::new(fetch);
    assert_eq!(input.length().await.unwrap(), data.len() as u64);
    let all = read_in_random_sizes(&mut input, data.len(), 300_000, 30).await;
    if let Some(i) = (0..data.len()).find(|&i| all[i] != data[i]) {
        panic!("byte {i} differs from the file");
    }
    let e = input.read_byte().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
}

#[tokio::test]
#[ignore = "needs an NFS server: scripts/nfs-server.sh up DIR; set ABI_NFS_URL and ABI_NFS_DIR"]
async fn ranges_at_odd_offsets_across_reads_and_past_the_end() {
    let data = blob();
    let len = data.len() as u64;
    // 4 KiB READs, 3 in flight: most ranges below are several READs issued together.
    let url = url_of("blob.bin", "rsize=4096&connections=3", true);
    let source = NfsSource::connect(&url).await.unwrap();
    let mut ranges = vec![
        (0, 1),
        (1, 4095),
        (4095, 4097),
        (4097, 3 * 4096 + 1),
        (12_345, 100_003),
        (len - 7, 7),
        (len - 7, 100),
        (len - 4097, 1 << 20),
        (len, 10),
        (len + 100, 10),
        (0, len as usize),
    ];
    let mut rng = Rng::new(31);
    ranges.extend((0..40).map(|_| (rng.below(len), 1 + rng.below(200_000) as usize)));
    for (offset, n) in ranges {
        let got = source.read_at(offset, n).await.unwrap();
        let start = offset.min(len) as usize;
        let end = offset.saturating_add(n as u64).min(len) as usize;
        assert_eq!(got.len(), end - start, "read_at({offset}, {n})");
        assert!(
            got[..] == data[start..end],
            "read_at({offset}, {n}) bytes differ"
        );
    }
}

#[tokio::test]
#[ignore = "needs an NFS server: scripts/nfs-server.sh up DIR; set ABI_NFS_URL and ABI_NFS_DIR"]
async fn a_missing_file_is_not_found_naming_the_url() {
    let url = url_of("no-such-file.bin", "", true);
    let e = NfsSource::connect(&url).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    let msg = chain(&e);
    assert!(msg.contains(&url) && msg.contains("NFS3ERR_NOENT"), "{msg}");
}

#[tokio::test]
#[ignore = "needs an NFS server: scripts/nfs-server.sh up DIR; set ABI_NFS_URL and ABI_NFS_DIR"]
async fn a_folder_is_is_a_directory() {
    let name = format!("folder-{}", std::process::id());
    let made = Made(served_dir().join(&name));
    std::fs::create_dir(&made.0).unwrap();
    let e = NfsSource::connect(&url_of(&name, "", true))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IsADirectory, "{e}");
}

/// Needs the server to treat the client as nobody (`NFS_ANON=1`): the file is made here, by
/// its owner, with mode 000.
#[tokio::test]
#[ignore = "needs an NFS server with NFS_ANON=1: scripts/nfs-server.sh up DIR; set ABI_NFS_URL and ABI_NFS_DIR"]
async fn a_file_nobody_may_read_is_permission_denied_naming_the_url() {
    use std::os::unix::fs::PermissionsExt;
    let name = format!("mode-000-{}.bin", std::process::id());
    let made = Made(served_dir().join(&name));
    std::fs::write(&made.0, vec![7u8; 10_000]).unwrap();
    std::fs::set_permissions(&made.0, std::fs::Permissions::from_mode(0o000)).unwrap();
    let url = url_of(&name, "", true);
    // Finding the file and its length needs no read permission; its bytes do.
    let e = match NfsSource::connect(&url).await {
        Ok(source) => {
            assert_eq!(source.known_len(), Some(10_000));
            match source.read_at(100, 1000).await {
                Ok(_) => panic!("{url} was read: is the server up with NFS_ANON=1?"),
                Err(e) => e,
            }
        }
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
    let msg = chain(&e);
    assert!(msg.contains(&url) && msg.contains("NFS3ERR_ACCES"), "{msg}");
}
