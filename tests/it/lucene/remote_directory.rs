//! A Lucene index written by Lucene itself, opened through a `Directory` served by nginx
//! (started by the test through `scripts/http-server.sh`; needs `scripts/http-server.sh
//! install`): the "segment service" of issue 21 in at most 40 lines of user code, and what
//! opening the index costs on the wire (one connection, no `HEAD`). Also the same library items
//! over the local folder, and a compound file as a directory of its own.
//!
//! The index is `tests/fixtures/lucene-index/index`, or `$LUCENE_INDEX_DIR/index` when set
//! (`.ci/run` writes a fresh one with Lucene each run).
#![cfg(feature = "object-store")]

use crate::servers;

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_buffered_input::lucene::Directory;
use async_buffered_input::lucene::{verify_commit, SegmentInfos};
use servers::Nginx;

/// The folder that holds `index/`.
fn fixture_dir() -> PathBuf {
    match std::env::var_os("LUCENE_INDEX_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lucene-index"),
    }
}

/// Every file of the local index, by name.
fn local_files(index: &Path) -> HashMap<String, Vec<u8>> {
    std::fs::read_dir(index)
        .expect("index dir")
        .map(|e| e.expect("entry"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).expect("read"),
            )
        })
        .collect()
}

// ---- The user's program: from here to the end marker, at most 40 lines (counted below). ----
type Local = Arc<HashMap<String, Vec<u8>>>;

/// Latest commit, every file verified, then 10,000 random 100-byte reads checked against `local`.
async fn segment_service(url: &str, local: Local) -> io::Result<(SegmentInfos, u64)> {
    let dir = Directory::at(url)?;
    let commit = SegmentInfos::read_latest_commit(&dir).await?;
    let verified = verify_commit(&dir, &commit).await?; // the bytes read
    let mut inputs = Vec::new();
    for name in commit.files() {
        inputs.push((dir.open(&name).await?, name));
    }
    let (inputs, mut tasks) = (Arc::new(inputs), tokio::task::JoinSet::new());
    for task in 0..16u64 {
        let (inputs, local) = (Arc::clone(&inputs), Arc::clone(&local));
        tasks.spawn(async move {
            let mut rng = task;
            for _ in 0..10_000 / 16 {
                rng = rng
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let (input, name) = &inputs[((rng >> 40) % inputs.len() as u64) as usize];
                let mut input = input.clone();
                let len = input.length().await?;
                let (n, at) = (len.min(100), (rng >> 16) % (len - len.min(100) + 1));
                input.seek_to(at);
                let got = input.read_bytes_owned(n as usize).await?;
                if got[..] != local[name][at as usize..(at + n) as usize] {
                    return Err(io::Error::other(format!("{name}: wrong bytes at {at}")));
                }
            }
            Ok::<_, io::Error>(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(io::Error::other)??;
    }
    Ok((commit, verified))
}
// ---- End of the user's program. ----

#[test]
fn the_users_program_fits_in_40_lines() {
    let source = include_str!("remote_directory.rs");
    let start = source
        .find("// ---- The user's program")
        .expect("start marker");
    let end = source
        .find("// ---- End of the user's program")
        .expect("end marker");
    let lines = source[start..end].lines().count() - 1; // less the marker itself
    assert!(lines <= 40, "{lines} lines");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_segment_service_over_nginx_reads_what_lucene_wrote() {
    let index = fixture_dir().join("index");
    let server = Nginx::serve(&fixture_dir());
    let local = Arc::new(local_files(&index));
    let (commit, verified) = segment_service(&format!("{}/index/", server.url), Arc::clone(&local))
        .await
        .expect("the service runs");
    // The same commit as over the local folder, every file verified, each byte read once.
    let dir = Directory::local(&index);
    let local_commit = SegmentInfos::read_latest_commit(&dir).await.unwrap();
    assert_eq!(commit, local_commit);
    assert_eq!(verified, verify_commit(&dir, &local_commit).await.unwrap());
    let total: u64 = commit.files().iter().map(|f| local[f].len() as u64).sum();
    assert_eq!(verified, total);
    assert!(
        commit.segments.iter().any(|s| s.compound) && commit.segments.len() >= 4,
        "{commit:?}"
    );
    // 10,000 reads (625 per task) on top of the listing and the verification.
    let gets = server
        .requests()
        .iter()
        .filter(|(m, _, _)| m == "GET")
        .count();
    assert!(gets >= 10_000, "{gets} GETs for 10,000 random reads");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_the_index_over_nginx_takes_one_connection_and_no_head() {
    let index = fixture_dir().join("index");
    let server = Nginx::serve(&fixture_dir());
    // One read at a time, with no read-ahead: each file's first bytes, one request each.
    let dir = Directory::at(&format!("{}/index/", server.url))
        .unwrap()
        .with_read_ahead(None);
    let names = dir.list().await.unwrap();
    let mut expected: Vec<String> = std::fs::read_dir(&index)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    expected.sort();
    assert_eq!(names, expected);
    let mut opened = 0;
    for name in &names {
        let mut input = dir.open(name).await.unwrap();
        let length = std::fs::metadata(index.join(name)).unwrap().len();
        assert_eq!(input.known_length(), Some(length), "{name}");
        if length > 0 {
            input.read_byte().await.unwrap();
        }
        opened += 1;
    }
    // nginx logs a request once its response is sent: wait (a little) for the last one's line.
    let reads = names.len() - usize::from(names.iter().any(|n| n == "write.lock"));
    let mut requests = server.requests();
    for _ in 0..100 {
        if requests.iter().filter(|(m, _, _)| m == "GET").count() >= reads {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        requests = server.requests();
    }
    let methods: Vec<&str> = requests.iter().map(|(m, _, _)| m.as_str()).collect();
    assert_eq!(
        methods.iter().filter(|m| **m == "PROPFIND").count(),
        1,
        "{requests:?}"
    );
    assert_eq!(
        methods.iter().filter(|m| **m == "HEAD").count(),
        0,
        "{requests:?}"
    );
    assert_eq!(
        methods.iter().filter(|m| **m == "GET").count(),
        reads,
        "{requests:?}"
    );
    // One shared client: on a quiet machine every request rides one connection. hyper hands a
    // connection back to its pool from a task of its own once the previous body has ended; on a
    // loaded machine the next request can start before that task has run, and the pool then
    // dials another connection (seen: 2 or 3 of them for 44 files when three busy loops share
    // the two cores). A client per file, the bug this guards against, shows one per file.
    let connections: BTreeSet<u64> = requests.iter().map(|(_, _, c)| *c).collect();
    println!("{opened} files over {} connection(s)", connections.len());
    assert!(
        connections.len() <= 4,
        "{opened} files on connections {connections:?}: {requests:?}"
    );

    // The whole commit, verified with read-ahead, asks no HEAD either.
    server.clear_log();
    let dir = Directory::at(&format!("{}/index", server.url)).unwrap();
    let commit = SegmentInfos::read_latest_commit(&dir).await.unwrap();
    verify_commit(&dir, &commit).await.unwrap();
    let requests = server.requests();
    assert!(requests.iter().all(|(m, _, _)| m != "HEAD"), "{requests:?}");
    assert!(requests.iter().filter(|(m, _, _)| m == "GET").count() >= commit.files().len() - 1);
}

#[tokio::test]
async fn a_compound_file_is_a_directory_of_its_sub_files() {
    let index = fixture_dir().join("index");
    let dir = Directory::local(&index);
    let commit = SegmentInfos::read_latest_commit(&dir).await.unwrap();
    let segment = commit
        .segments
        .iter()
        .find(|s| s.compound)
        .expect("a compound segment");
    let cfs = dir.open_compound(&segment.name, &segment.id).await.unwrap();
    let names = cfs.list().await.unwrap();
    assert!(!names.is_empty() && names.iter().all(|n| n.starts_with(&segment.name)));
    // Where each sub-file lies in the `.cfs` is checked against the file's bytes by the unit
    // test `entries_lie_where_the_cfe_says` (the offsets are not public).
    let whole = std::fs::read(index.join(format!("{}.cfs", segment.name))).unwrap();
    for name in &names {
        let length = cfs.length(name).await.unwrap();
        let mut sub = cfs.open(name).await.unwrap();
        assert_eq!(sub.length().await.unwrap(), length);
        let bytes = sub.read_bytes_owned(length as usize).await.unwrap();
        assert!(
            whole.windows(bytes.len()).any(|w| w == &bytes[..]),
            "{name}"
        );
        // Each sub-file is a Lucene file of its own, with its own footer.
        async_buffered_input::lucene::codec::checksum_entire_file(&mut sub)
            .await
            .unwrap();
    }
    // And the `.cfs` itself has one.
    let mut file = dir.open(&format!("{}.cfs", segment.name)).await.unwrap();
    async_buffered_input::lucene::codec::checksum_entire_file(&mut file)
        .await
        .unwrap();
    let e = cfs.open("_nope.fdt").await.unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
    assert!(
        e.to_string().contains("_nope.fdt") && e.to_string().contains(".cfs"),
        "{e}"
    );
    // The wrong segment id is refused, naming the file.
    let e = dir
        .open_compound(&segment.name, &[0; 16])
        .await
        .unwrap_err();
    assert!(e.to_string().contains(".cfe"), "{e}");
}
