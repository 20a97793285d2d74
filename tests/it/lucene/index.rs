//! The `lucene_index` example against an index written by Apache Lucene 8 itself, and against
//! corrupted copies of it.
//!
//! The committed fixture `tests/fixtures/lucene-index/` (the index in `index/`, and in
//! `expected.txt` Lucene's own reading of its commit) was written by
//! `tests/lucene/WriteIndex.java` (`tests/lucene/generate-index.sh SEED DIR`). Set
//! `LUCENE_INDEX_DIR` to a freshly written one instead: `.ci/run` does, with a new seed each
//! run.
//!
//! The example binary is built once per test run with `cargo build --example lucene_index` (a
//! no-op when `cargo test` has just built it), in the same target folder and profile.

#[cfg(feature = "object-store")]
use crate::servers;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use abi_testkit::ExampleBuild;

fn example() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        ExampleBuild::new(env!("CARGO_MANIFEST_DIR"), "lucene_index")
            .package("async-buffered-input")
            .features(cfg!(feature = "object-store").then_some("object-store"))
            .features(cfg!(feature = "cache").then_some("cache"))
            // Built by `cargo test --all-features` (as CI does): build the same way, so that
            // nothing is compiled again.
            .all_features(cfg!(all(
                feature = "object-store",
                feature = "cache",
                feature = "metrics",
                feature = "opendal",
                feature = "disk-cache"
            )))
            .build()
    })
}

/// The folder with `index/` and `expected.txt`.
fn fixture_dir() -> PathBuf {
    match std::env::var_os("LUCENE_INDEX_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lucene-index"),
    }
}

fn index_dir() -> PathBuf {
    fixture_dir().join("index")
}

/// Runs the example on `location`: a folder or a URL.
fn run(location: impl AsRef<OsStr>) -> Output {
    run_with(location, &[])
}

/// Runs the example on `location` with `flags` after it.
fn run_with(location: impl AsRef<OsStr>, flags: &[&str]) -> Output {
    Command::new(example())
        .arg(location)
        .args(flags)
        .output()
        .expect("the example runs")
}

/// The stdout of a run that must have succeeded (UTF-8); on failure, the panic shows stdout and
/// stderr.
#[track_caller]
fn stdout_of_success(out: &Output) -> String {
    let stdout = String::from_utf8(out.stdout.clone()).expect("UTF-8 output");
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A copy of the index to corrupt.
fn copy_of(dir: &Path) -> tempfile::TempDir {
    let copy = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    for entry in std::fs::read_dir(dir).expect("index dir") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), copy.path().join(entry.file_name())).expect("copy");
    }
    copy
}

/// Lucene's own reading of the commit (`expected.txt`).
struct Expected {
    generation: u64,
    segments: Vec<String>,
    files: Vec<(String, u64)>,
    user_data: Vec<String>,
}

fn expected(dir: &Path) -> Expected {
    let text = std::fs::read_to_string(dir.join("expected.txt")).expect("expected.txt");
    let mut out = Expected {
        generation: 0,
        segments: vec![],
        files: vec![],
        user_data: vec![],
    };
    for line in text.lines() {
        let (kind, rest) = line.split_once(' ').expect("KIND REST");
        match kind {
            "generation" => out.generation = rest.parse().expect("generation"),
            "segment" => out.segments.push(rest.to_owned()),
            "file" => {
                let (name, size) = rest.rsplit_once(' ').expect("NAME SIZE");
                out.files
                    .push((name.to_owned(), size.parse().expect("size")));
            }
            "userdata" => out.user_data.push(rest.to_owned()),
            other => panic!("unknown line kind {other:?} in expected.txt"),
        }
    }
    out
}

#[test]
fn prints_the_commit_lucene_wrote_and_verifies_every_file() {
    let dir = index_dir();
    let expected = expected(&fixture_dir());
    let stdout = stdout_of_success(&run(&dir));
    let mut lines = stdout.lines();
    let first = lines.next().expect("a first line");
    assert!(
        first.ends_with(&format!("(generation {})", expected.generation)),
        "{first}"
    );
    // Segments, exactly as Lucene reads them.
    let segments: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("segment "))
        .collect();
    assert_eq!(segments, expected.segments, "{stdout}");
    assert!(segments.len() >= 4, "several segments: {stdout}");
    assert!(
        segments.iter().any(|s| s.contains("compound=true")),
        "{stdout}"
    );
    assert!(
        segments.iter().any(|s| s.contains("compound=false")),
        "{stdout}"
    );
    assert!(
        segments.iter().any(|s| !s.contains("deleted=0")),
        "deletes: {stdout}"
    );
    // User data, non-ASCII included.
    let user_data: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("user data "))
        .collect();
    assert_eq!(user_data, expected.user_data, "{stdout}");
    assert!(user_data.iter().any(|u| !u.is_ascii()), "{stdout}");
    // Every file of the commit, and no other.
    let mut files: BTreeSet<String> = stdout
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("files: "))
        .flat_map(|l| l.split(' ').map(str::to_owned))
        .collect();
    let segments_file = first
        .strip_prefix("commit ")
        .and_then(|l| l.split(' ').next())
        .expect("commit NAME");
    files.insert(segments_file.to_owned());
    let lucene_files: BTreeSet<String> = expected.files.iter().map(|(f, _)| f.clone()).collect();
    assert_eq!(files, lucene_files);
    assert!(
        files.iter().any(|f| f.ends_with(".liv")),
        "live docs (deletes): {files:?}"
    );
    // Each byte of each file read once: what was read from storage is the files' total size.
    let total: u64 = expected.files.iter().map(|(_, size)| size).sum();
    let last = stdout.lines().last().expect("a last line");
    assert!(
        last.starts_with(&format!(
            "verified {} files ({total} bytes read)",
            files.len()
        )),
        "{last}"
    );
    assert!(last.contains(" sub-files"), "{last}");
}

/// Reading one file at a time or many, through a cache or not: the same output.
#[test]
fn prints_the_same_whatever_the_concurrency_and_the_cache() {
    let plain = stdout_of_success(&run(index_dir()));
    let mut flag_sets = vec![vec!["--concurrency", "1"], vec!["--concurrency", "64"]];
    if cfg!(feature = "cache") {
        // Half the index (the committed one is about 60 KiB).
        flag_sets.push(vec!["--cache", "32KiB"]);
        flag_sets.push(vec!["--concurrency", "3", "--cache", "64MB"]);
    }
    for flags in flag_sets {
        let out = stdout_of_success(&run_with(index_dir(), &flags));
        assert_eq!(out, plain, "{flags:?}");
    }
}

#[test]
fn bad_flags_are_refused_with_what_is_wrong_and_the_usage() {
    for (flags, says) in [
        (&["--cache", "lots"][..], "--cache \"lots\""),
        (&["--cache", "0"], "at least 1 byte"),
        (&["--cache", "12XB"], "--cache \"12XB\""),
        (&["--concurrency", "0"], "--concurrency \"0\""),
        (&["--concurrency"], "--concurrency needs a value"),
        (&["--tasks", "2"], "--tasks needs --bench"),
        (
            &["--cache", "1MiB", "--cache", "2MiB"],
            "--cache given twice",
        ),
        (&["--fast", "1"], "unknown flag \"--fast\""),
    ] {
        let out = run_with(index_dir(), flags);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(says), "{flags:?}: {stderr}");
        assert!(
            stderr.contains("usage: lucene_index"),
            "{flags:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{flags:?}");
    }
}

/// Runs the example on a corrupted copy: it must fail with one error line naming `names`.
#[track_caller]
fn fails_naming(location: impl AsRef<OsStr>, names: &[&str]) -> String {
    let out = run(location);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one error line: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    for name in names {
        assert!(stderr.contains(name), "the error names {name}: {stderr}");
    }
    stderr
}

fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    out.sort();
    out
}

/// A copy of the index with one byte flipped in the middle of its compound file, which lies
/// inside a sub-file (between the header and the footer): the copy, the compound file, and
/// the offset of the flipped byte.
fn copy_with_a_flipped_sub_file_byte() -> (tempfile::TempDir, PathBuf, usize) {
    let copy = copy_of(&index_dir());
    let cfs = files_ending(copy.path(), ".cfs")
        .pop()
        .expect("a compound file");
    let mut bytes = std::fs::read(&cfs).expect("read .cfs");
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    std::fs::write(&cfs, &bytes).expect("write .cfs");
    (copy, cfs, at)
}

#[test]
fn a_flipped_byte_in_a_compound_sub_file_names_the_sub_file() {
    let (copy, cfs, at) = copy_with_a_flipped_sub_file_byte();
    let cfs_name = cfs.file_name().unwrap().to_string_lossy().into_owned();
    let stderr = fails_naming(copy.path(), &[&cfs_name, "checksum"]);
    assert!(stderr.contains("corrupt"), "{stderr}");
    // The error names the sub-file as its slice: "slice NAME [a..b) of PATH", where NAME is one
    // of the segment's files and [a..b) holds the flipped byte.
    let segment = cfs_name.strip_suffix(".cfs").expect("NAME.cfs");
    let slice = stderr
        .split("slice ")
        .nth(1)
        .unwrap_or_else(|| panic!("no slice named: {stderr}"));
    let (name, rest) = slice.split_once(" [").expect("slice NAME [");
    let (range, rest) = rest.split_once(") of ").expect("[a..b) of");
    let (a, b) = range.split_once("..").expect("a..b");
    let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
    assert!(
        name.starts_with(segment) && name.len() > segment.len() && name != cfs_name,
        "a sub-file of {segment}: {stderr}"
    );
    assert!((a..b).contains(&at), "[{a}..{b}) holds {at}: {stderr}");
    assert!(
        rest.starts_with(&*cfs.to_string_lossy()),
        "of PATH: {stderr}"
    );
}

#[test]
fn a_truncated_si_names_the_file() {
    let copy = copy_of(&index_dir());
    let si = files_ending(copy.path(), ".si").pop().expect("a .si file");
    let bytes = std::fs::read(&si).expect("read .si");
    std::fs::write(&si, &bytes[..bytes.len() - 5]).expect("truncate .si");
    let name = si.file_name().unwrap().to_string_lossy().into_owned();
    fails_naming(copy.path(), &[&name]);
}

#[test]
fn a_wrong_segments_checksum_names_the_file() {
    let copy = copy_of(&index_dir());
    let segments = files_ending(copy.path(), "")
        .into_iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("segments_")
        })
        .expect("segments_N");
    let mut bytes = std::fs::read(&segments).expect("read segments_N");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01; // the stored CRC's low byte
    std::fs::write(&segments, &bytes).expect("write segments_N");
    let name = segments.file_name().unwrap().to_string_lossy().into_owned();
    fails_naming(copy.path(), &[&name, "checksum"]);
}

#[test]
fn a_missing_file_names_it() {
    let copy = copy_of(&index_dir());
    let victim = files_ending(copy.path(), ".liv")
        .pop()
        .or_else(|| files_ending(copy.path(), ".cfe").pop())
        .expect("a file to remove");
    std::fs::remove_file(&victim).expect("remove");
    let name = victim.file_name().unwrap().to_string_lossy().into_owned();
    fails_naming(copy.path(), &[&name]);
}

/// The example over `http://` (nginx with WebDAV listings) and `s3://` (SeaweedFS), servers started
/// here through `scripts/http-server.sh` and `scripts/s3-server.sh`: the same output as over the
/// folder, and errors naming the URL.
#[cfg(feature = "object-store")]
mod remote {
    use super::*;
    use servers::Nginx;

    #[test]
    fn prints_the_same_commit_and_verifies_the_same_bytes_as_over_the_folder() {
        let server = Nginx::serve(&fixture_dir());
        let local = run(index_dir());
        let stdout = stdout_of_success(&run(format!("{}/index/", server.url)));
        assert!(local.status.success());
        assert_eq!(stdout, String::from_utf8_lossy(&local.stdout));
        assert!(
            stdout.lines().last().unwrap().starts_with("verified "),
            "{stdout}"
        );
        let requests = server.requests();
        assert!(requests.iter().all(|(m, _, _)| m != "HEAD"), "{requests:?}");
    }

    #[test]
    fn a_flipped_byte_in_a_sub_file_names_the_url_and_the_sub_file() {
        let (copy, cfs, _) = copy_with_a_flipped_sub_file_byte();
        let server = Nginx::serve(copy.path());
        let cfs_name = cfs.file_name().unwrap().to_string_lossy().into_owned();
        let url = format!("{}/{cfs_name}", server.url);
        let stderr = fails_naming(format!("{}/", server.url), &[&url, "checksum", "slice "]);
        let segment = cfs_name.strip_suffix(".cfs").unwrap();
        let sub_file = stderr
            .split("slice ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        assert!(
            sub_file.starts_with(segment) && sub_file != cfs_name,
            "a sub-file of {segment}: {stderr}"
        );
    }

    #[test]
    fn prints_the_same_commit_over_s3_as_over_the_folder() {
        let server = servers::S3::serve(&index_dir(), "index");
        let local = run(index_dir());
        let remote = Command::new(example())
            .arg(format!("s3://{}/index/", server.bucket()))
            .envs(server.env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("the example runs");
        let stdout = stdout_of_success(&remote);
        assert_eq!(stdout, String::from_utf8_lossy(&local.stdout));
    }

    #[test]
    fn a_missing_file_names_it_and_the_url() {
        let copy = copy_of(&index_dir());
        let victim = files_ending(copy.path(), ".cfe").pop().expect("a .cfe");
        std::fs::remove_file(&victim).expect("remove");
        let server = Nginx::serve(copy.path());
        let name = victim.file_name().unwrap().to_string_lossy().into_owned();
        fails_naming(format!("{}/", server.url), &[&name, &server.url]);
    }
}

/// An `s3://` location with no AWS credentials in the environment is refused with what to set,
/// and no request goes to the cloud metadata endpoint (object_store's credential chain would
/// ask 169.254.169.254, which must never leave a test machine).
#[cfg(feature = "object-store")]
#[test]
fn s3_without_credentials_is_refused_before_any_request() {
    let started = std::time::Instant::now();
    let out = Command::new(example())
        .arg("s3://abi-no-such-bucket/index/")
        .env_clear()
        .env("AWS_REGION", "us-east-1")
        .output()
        .expect("the example runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("no AWS credentials"), "{stderr}");
    assert!(stderr.contains("AWS_SKIP_SIGNATURE=true"), "{stderr}");
    // Refused at once: a metadata request would have waited for its timeout first.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{stderr}"
    );
}
