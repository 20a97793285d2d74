//! Comparing bytes read with the bytes expected, without dumping megabytes.

/// Compares `actual` with `expected` (the file bytes starting at `offset`) and panics with the
/// first differing file offset instead of dumping megabytes of bytes.
#[track_caller]
pub fn assert_bytes(actual: &[u8], expected: &[u8], offset: u64, ctx: &str) {
    if actual == expected {
        return;
    }
    if let Some(i) = actual.iter().zip(expected).position(|(a, b)| a != b) {
        panic!(
            "{ctx}: byte mismatch at file offset {} (index {i}): got {:#04x}, expected {:#04x} \
             (lengths: got {}, expected {})",
            offset + i as u64,
            actual[i],
            expected[i],
            actual.len(),
            expected.len()
        );
    }
    panic!(
        "{ctx}: length mismatch at file offset {offset}: got {} bytes, expected {}",
        actual.len(),
        expected.len()
    );
}
