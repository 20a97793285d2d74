//! The file a run writes: the harness's test pattern ([`fill_pattern`]) and the write phase that
//! writes it, timed as the classic NFS test timed its writes.

use std::io;
use std::path::Path;
use std::time::Instant;

use tokio::io::AsyncWriteExt;

use crate::error::context;
use crate::report::WriteReport;
use crate::workload::{mix64, GOLDEN};

/// Creates (or truncates) `path` and writes `len` bytes of the [test pattern](fill_pattern) in
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
        fill_pattern(pos, &mut buf[..n]);
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

/// Fills `buf` with the harness's test pattern for the file offsets `offset..offset + buf.len()`.
///
/// The pattern is a fixed pseudo-random byte stream: byte `n` is byte `n % 8` (little endian) of
/// SplitMix64 applied to `n / 8`. It looks like compressed data (no runs, no repeats), so a
/// reader that returns bytes from the wrong offset changes the checksum, and any slice of it can
/// be generated or checked without the rest. The write phase of a [`Plan`](crate::Plan) writes it.
///
/// # Examples
///
/// ```
/// use throughput_harness::fill_pattern;
///
/// let mut whole = [0u8; 20];
/// fill_pattern(0, &mut whole);
/// let mut part = [0u8; 7];
/// fill_pattern(11, &mut part);
/// assert_eq!(part, whole[11..18]);
/// ```
pub fn fill_pattern(offset: u64, buf: &mut [u8]) {
    let mut at = offset;
    let mut rest = buf;
    // The unaligned head, byte by byte.
    while at % 8 != 0 {
        let Some((b, tail)) = rest.split_first_mut() else {
            return;
        };
        *b = word(at / 8).to_le_bytes()[(at % 8) as usize];
        at += 1;
        rest = tail;
    }
    let mut chunks = rest.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&word(at / 8).to_le_bytes());
        at += 8;
    }
    let tail = chunks.into_remainder();
    let len = tail.len();
    tail.copy_from_slice(&word(at / 8).to_le_bytes()[..len]);
}

/// Whether a write phase can create `path`: not a directory, in a folder that exists.
pub(crate) fn check_writable(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!(
                "cannot write {}: it is a directory, not a file",
                path.display()
            ),
        ));
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

/// The pattern's word `i`: SplitMix64's finalizer of `(i + 1)` times the golden ratio.
#[inline]
fn word(i: u64) -> u64 {
    mix64(i.wrapping_add(1).wrapping_mul(GOLDEN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_slice_matches_the_whole() {
        let mut whole = vec![0u8; 100];
        fill_pattern(0, &mut whole);
        for start in 0..40 {
            for len in [0, 1, 5, 8, 9, 17, 60] {
                let mut part = vec![0u8; len];
                fill_pattern(start as u64, &mut part);
                assert_eq!(part, whole[start..start + len], "start {start} len {len}");
            }
        }
    }

    #[test]
    fn has_no_obvious_structure() {
        let mut data = vec![0u8; 4096];
        fill_pattern(0, &mut data);
        let mut counts = [0u32; 256];
        for &b in &data {
            counts[b as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 0 && c < 50), "{counts:?}");
        assert_ne!(data[..8], data[8..16]);
    }
}
