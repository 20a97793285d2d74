//! `verify_commit` and `SegmentInfos::read` reading several files at once
//! (`Directory::with_concurrency`): the same result and the same error as one file after
//! another, requests that overlap within the bound, and nothing left running once dropped.
//!
//! Each file's source is a test kit `Scripted` (a delay, by file) behind a counting
//! `RequestLimiter`, through the directory's source layer.

use std::path::{Path, PathBuf};
use std::time::Duration;

use abi_testkit::{Delay, Scripted};
use async_buffered_input::layer::RequestLimiter;
use async_buffered_input::lucene::{verify_commit, Directory, SegmentInfos};
use async_buffered_input::source::{DynSource, PositionalSource};

/// The committed index (not `$LUCENE_INDEX_DIR`: these tests pick files of its known layout).
fn index() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lucene-index/index")
}

/// `dir` with each file's source a `Scripted` that waits `delay(file name)` per request,
/// behind `limiter`, and without read-ahead: one request in flight per file at most.
fn scripted(
    dir: &Path,
    limiter: &RequestLimiter,
    delay: impl Fn(&str) -> Delay + Send + Sync + 'static,
) -> Directory {
    let limiter = limiter.clone();
    Directory::local(dir)
        .with_read_ahead(None)
        .with_source_layer(move |source| {
            let name = source.resource().unwrap_or_default();
            let file = name.rsplit('/').next().unwrap_or_default().to_owned();
            let wait = delay(&file);
            DynSource::new(limiter.wrap(Scripted::over(source).named(&name).delay(wait)))
        })
}

#[tokio::test]
async fn any_concurrency_reads_and_verifies_what_one_file_at_a_time_does() {
    let one = Directory::local(index()).with_concurrency(1);
    let commit = SegmentInfos::read_latest_commit(&one).await.unwrap();
    let bytes_read = verify_commit(&one, &commit).await.unwrap();
    assert!(commit.files().len() > 20, "{commit:?}");
    let mut total = 0;
    for file in commit.files() {
        total += one.length(&file).await.unwrap();
    }
    assert_eq!(bytes_read, total, "each byte read once");
    for files in [2, 3, 8, 64] {
        let limiter = RequestLimiter::unlimited();
        // Later files answer sooner, so they finish out of order.
        let dir = scripted(&index(), &limiter, |file| {
            let rank = file.bytes().map(u64::from).sum::<u64>() % 7;
            Delay::Sleep(Duration::from_millis(7 - rank))
        })
        .with_concurrency(files);
        assert_eq!(dir.concurrency(), files);
        let again = SegmentInfos::read_latest_commit(&dir).await.unwrap();
        assert_eq!(again, commit, "concurrency {files}");
        assert_eq!(
            verify_commit(&dir, &again).await.unwrap(),
            bytes_read,
            "concurrency {files}"
        );
    }
}

/// A copy of the index with one byte flipped in the middle of each of `files`.
fn copy_with_flipped(files: &[&str]) -> tempfile::TempDir {
    let copy = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    for entry in std::fs::read_dir(index()).expect("index dir") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), copy.path().join(entry.file_name())).expect("copy");
    }
    for file in files {
        let path = copy.path().join(file);
        let mut bytes = std::fs::read(&path).expect("read");
        let at = bytes.len() / 2;
        bytes[at] ^= 0x40;
        std::fs::write(&path, &bytes).expect("write");
    }
    copy
}

#[tokio::test]
async fn the_first_corrupt_file_in_the_commits_order_is_named_whatever_finishes_first() {
    // Two corrupt files of segment _1 (`.fdt` before `.nvd` in the commit's order) and one of
    // _3; the first is made the slowest, so the others fail before it when read at once.
    let copy = copy_with_flipped(&["_1.fdt", "_1.nvd", "_3.fdt"]);
    let commit = SegmentInfos::read_latest_commit(&Directory::local(copy.path()))
        .await
        .unwrap();
    let mut errors = Vec::new();
    for files in [1, 2, 8] {
        let limiter = RequestLimiter::unlimited();
        let dir = scripted(copy.path(), &limiter, |file| {
            Delay::Sleep(Duration::from_millis(if file == "_1.fdt" { 60 } else { 1 }))
        })
        .with_concurrency(files);
        let e = verify_commit(&dir, &commit).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
        errors.push(e.to_string());
        // Nothing left running once the error is back.
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(limiter.in_flight(), 0, "concurrency {files}");
    }
    assert!(errors[0].contains("_1.fdt"), "{}", errors[0]);
    assert!(errors[0].contains("checksum"), "{}", errors[0]);
    assert!(errors.iter().all(|e| *e == errors[0]), "{errors:#?}");
}

#[tokio::test]
async fn a_missing_si_file_is_named_as_one_at_a_time_names_it() {
    let copy = copy_with_flipped(&[]);
    std::fs::remove_file(copy.path().join("_2.si")).expect("remove");
    std::fs::remove_file(copy.path().join("_3.si")).expect("remove");
    for files in [1, 8] {
        let dir = Directory::local(copy.path()).with_concurrency(files);
        let e = SegmentInfos::read_latest_commit(&dir).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}");
        assert!(e.to_string().contains("_2.si"), "concurrency {files}: {e}");
    }
}

#[tokio::test]
async fn requests_overlap_up_to_the_bound_and_no_further() {
    for files in [1, 2, 4] {
        let limiter = RequestLimiter::unlimited();
        let dir = scripted(&index(), &limiter, |_| {
            Delay::Sleep(Duration::from_millis(10))
        })
        .with_concurrency(files);
        let read = SegmentInfos::read_latest_commit(&dir).await.unwrap();
        verify_commit(&dir, &read).await.unwrap();
        assert!(limiter.requests() > 20, "{limiter:?}");
        // At most two requests a file: a compound file's `.cfs` header is prefetched while
        // its `.cfe` is read.
        assert!(
            limiter.max_in_flight() <= 2 * files,
            "concurrency {files}: {limiter:?}"
        );
        if files > 1 {
            assert!(
                limiter.max_in_flight() > 1,
                "concurrency {files}: {limiter:?}"
            );
        }
    }
}

#[tokio::test]
async fn dropping_the_verification_abandons_every_file_being_read() {
    let commit = SegmentInfos::read_latest_commit(&Directory::local(index()))
        .await
        .unwrap();
    let limiter = RequestLimiter::unlimited();
    let dir = scripted(&index(), &limiter, |_| Delay::Forever).with_concurrency(4);
    let verify = verify_commit(&dir, &commit);
    assert!(tokio::time::timeout(Duration::from_millis(50), verify)
        .await
        .is_err());
    // Four files at once, a compound one with its header prefetched: 4 to 8 requests.
    let most = limiter.max_in_flight();
    assert!((4..=8).contains(&most), "{most} requests in flight");
    // The aborted tasks drop their requests when next scheduled.
    for _ in 0..100 {
        if limiter.in_flight() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(limiter.in_flight(), 0, "{limiter:?}");
    assert_eq!(
        limiter.requests(),
        most as u64,
        "none started after the first ones"
    );
}
