//! Real files over given bytes, unlinked at once so that nothing is left behind.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `data` to a uniquely named file in `std::env::temp_dir()`, opens it and unlinks it
/// right away (the open handle keeps the data alive on Unix, so nothing is left behind even if
/// the test panics).
pub fn temp_tokio_file(data: Vec<u8>) -> tokio::fs::File {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let path = std::env::temp_dir().join(format!(
        "async-buffered-input-test-{}-{}-{}.bin",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst),
        nanos
    ));
    std::fs::write(&path, &data).expect("write temp file");
    let file = std::fs::File::open(&path).expect("open temp file");
    let _ = std::fs::remove_file(&path);
    tokio::fs::File::from_std(file)
}

/// Writes `data` to a uniquely named file in `dir`, opens it and unlinks it at once; returns the
/// open file and the path it had. Integration tests pass cargo's temp folder,
/// `env!("CARGO_TARGET_TMPDIR")` (`target/tmp`, on the build's disk: unlike a tmpfs `/tmp`, a file
/// system with page cache reads and eviction).
pub fn temp_std_file_in(dir: &Path, data: &[u8]) -> (std::fs::File, PathBuf) {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let path = dir.join(format!(
        "async-buffered-input-test-std-{}-{}.bin",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst),
    ));
    std::fs::write(&path, data).expect("write temp file");
    let file = std::fs::File::open(&path).expect("open temp file");
    let _ = std::fs::remove_file(&path);
    (file, path)
}
