//! The sequential pass of the file benches (`local_file`, `slow_link`): the same loop for every
//! reader, so that they differ only in the read they make.

use std::io;

/// Makes `len / request` reads of `request` bytes with `read` (each filling the buffer it is
/// given) and returns the sum of each request's first byte, so that no read can be optimised
/// away.
///
/// # Panics
///
/// If a read fails: a bench has no use for a partial pass.
pub async fn sum_first_bytes(
    request: usize,
    len: usize,
    mut read: impl AsyncFnMut(&mut [u8]) -> io::Result<()>,
) -> u64 {
    let mut buf = vec![0u8; request];
    let mut sum = 0u64;
    for _ in 0..len / request {
        read(&mut buf).await.expect("read");
        sum += u64::from(buf[0]);
    }
    sum
}
