//! The file a run writes: the write phase, timed as the classic NFS test timed its writes, of
//! the harness's test pattern ([`fill_word_pattern`], from the test kit).
//!
//! The pattern is a fixed pseudo-random byte stream: byte `n` is byte `n % 8` (little endian)
//! of the `n / 8 + 1`-th value of the SplitMix64 sequence. It looks like compressed data (no
//! runs, no repeats), so a reader that returns bytes from the wrong offset changes the
//! checksum, and any slice of it can be made or checked without the rest. Files written by
//! earlier versions of the harness hold the same bytes (a test below pins them), so a run still
//! recognizes them as holding the pattern.

use std::io;
use std::path::Path;
use std::time::Instant;

use tokio::io::AsyncWriteExt;

use abi_testkit::fill_word_pattern;

use crate::error::{context, not_a_file};
use crate::report::WriteReport;

/// Creates (or truncates) `path` and writes `len` bytes of the [test pattern](fill_word_pattern) in
/// writes of `buffer_size` bytes, timed up to `sync_all`.
pub(crate) async fn write_file(
    path: &Path,
    len: u64,
    buffer_size: usize,
) -> io::Result<WriteReport> {
    let failed = |what: &str, e: io::Error| context(e, format!("cannot {what} {}", path.display()));
    let mut buf = vec![0u8; buffer_size];
    let start = Instant::now();
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(|e| failed("create", e))?;
    let (mut pos, mut writes) = (0u64, 0u64);
    while pos < len {
        let n = (len - pos).min(buffer_size as u64) as usize;
        fill_word_pattern(pos, &mut buf[..n]);
        file.write_all(&buf[..n])
            .await
            .map_err(|e| failed("write", e))?;
        pos += n as u64;
        writes += 1;
    }
    file.flush().await.map_err(|e| failed("write", e))?;
    file.sync_all().await.map_err(|e| failed("sync", e))?;
    let elapsed = start.elapsed();
    Ok(WriteReport {
        path: path.to_path_buf(),
        bytes: len,
        buffer_size,
        writes,
        elapsed,
    })
}

/// Whether a write phase can create `path`: not a directory, in a folder that exists.
pub(crate) fn check_writable(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(not_a_file("write", path));
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "cannot write {}: the folder {} does not exist",
                path.display(),
                parent.display()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pattern as the harness wrote it before the test kit had it: word `i` is SplitMix64's
    /// finalizer of `(i + 1)` times the golden ratio.
    fn word_as_before(i: u64) -> u64 {
        let z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[tokio::test]
    async fn the_file_holds_the_same_bytes_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pattern.bin");
        // Writes of 1001 bytes: most start off a word boundary.
        let len = 100_003u64;
        let report = write_file(&path, len, 1001).await.unwrap();
        assert_eq!((report.bytes, report.writes), (len, 100));
        let written = std::fs::read(&path).unwrap();
        let before: Vec<u8> = (0..len)
            .map(|n| word_as_before(n / 8).to_le_bytes()[(n % 8) as usize])
            .collect();
        assert_eq!(written.len(), before.len());
        let first_difference = written.iter().zip(&before).position(|(a, b)| a != b);
        assert_eq!(first_difference, None);
    }

    #[test]
    fn has_no_obvious_structure() {
        let data = abi_testkit::word_pattern_vec(4096);
        let mut counts = [0u32; 256];
        for &b in &data {
            counts[b as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 0 && c < 50), "{counts:?}");
        assert_ne!(data[..8], data[8..16]);
    }
}
