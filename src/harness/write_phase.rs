//! The write phase: the classic test's "Wrote a file of N bytes".

use std::io;
use std::path::Path;
use std::time::Instant;

use tokio::io::AsyncWriteExt;

use super::pattern::fill_pattern;
use super::write_report::WriteReport;

/// Creates (or truncates) `path` and writes `len` bytes of the [test pattern](fill_pattern) in
/// writes of `buffer_size` bytes, timed up to `sync_all`.
pub(crate) async fn write_file(
    path: &Path,
    len: u64,
    buffer_size: usize,
) -> io::Result<WriteReport> {
    let context = |what: &str, e: io::Error| {
        io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
    };
    let mut buf = vec![0u8; buffer_size];
    let start = Instant::now();
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(|e| context("create", e))?;
    let (mut pos, mut writes) = (0u64, 0u64);
    while pos < len {
        let n = (len - pos).min(buffer_size as u64) as usize;
        fill_pattern(pos, &mut buf[..n]);
        file.write_all(&buf[..n])
            .await
            .map_err(|e| context("write", e))?;
        pos += n as u64;
        writes += 1;
    }
    file.flush().await.map_err(|e| context("write", e))?;
    file.sync_all().await.map_err(|e| context("sync", e))?;
    let elapsed = start.elapsed();
    Ok(WriteReport {
        path: path.to_path_buf(),
        bytes: len,
        buffer_size,
        writes,
        elapsed,
    })
}
