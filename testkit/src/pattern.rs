//! The deterministic file contents tests, benches, the fuzzer and the harness read and check.
//!
//! Two patterns, both pure functions of the file offset (so any slice can be made or checked
//! without the rest): [`pattern`], a byte per offset, for the tests and the fuzzer; and
//! [`fill_word_pattern`], eight bytes per word, the throughput harness's file content.

use crate::splitmix64;

/// The byte stored at file offset `n`: the low byte of splitmix64(n). Not periodic at any small
/// power of two, so reading from a wrong offset (off by one, off by a window) is always caught
/// within a few bytes.
///
/// # Examples
///
/// ```
/// use abi_testkit::{pattern, pattern_vec};
///
/// let data = pattern_vec(100);
/// assert_eq!(data[42], pattern(42));
/// ```
#[inline]
pub fn pattern(n: u64) -> u8 {
    splitmix64(n) as u8
}

/// `len` bytes of [`pattern`], starting at offset 0.
pub fn pattern_vec(len: usize) -> Vec<u8> {
    (0..len as u64).map(pattern).collect()
}

/// Fills `buf` with the word pattern at file offsets `offset..offset + buf.len()`: byte `n` is
/// byte `n % 8` (little endian) of splitmix64 of `(n / 8) * 0x9E37_79B9_7F4A_7C15`, that is the
/// `n / 8 + 1`-th value of the splitmix64 sequence seeded with 0. It looks like compressed data
/// (no runs, no repeats) and is made a word at a time, fast enough to write gigabytes.
///
/// The throughput harness writes and verifies this pattern (its write phase, its verification
/// passes, and its check whether an existing file holds it).
///
/// # Examples
///
/// ```
/// use abi_testkit::fill_word_pattern;
///
/// let mut whole = [0u8; 20];
/// fill_word_pattern(0, &mut whole);
/// let mut part = [0u8; 7];
/// fill_word_pattern(11, &mut part);
/// assert_eq!(part, whole[11..18]);
/// ```
pub fn fill_word_pattern(offset: u64, buf: &mut [u8]) {
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

/// `len` bytes of [`fill_word_pattern`], starting at offset 0.
pub fn word_pattern_vec(len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    fill_word_pattern(0, &mut data);
    data
}

/// The `i`-th word of [`fill_word_pattern`].
#[inline]
fn word(i: u64) -> u64 {
    splitmix64(i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_pattern_is_the_low_byte_of_splitmix64() {
        // Written out as the tests' own copy had it.
        for n in (0..5000u64).chain([u64::MAX - 3, u64::MAX]) {
            let mut x = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
            x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            assert_eq!(pattern(n), (x ^ (x >> 31)) as u8, "offset {n}");
        }
    }

    #[test]
    fn the_byte_pattern_is_not_periodic_at_small_powers_of_two() {
        let data = pattern_vec(1 << 16);
        for shift in 0..12 {
            let period = 1usize << shift;
            assert!(
                (0..data.len() - period).any(|i| data[i] != data[i + period]),
                "period {period}"
            );
        }
    }

    #[test]
    fn the_word_pattern_is_the_splitmix64_sequence() {
        // The sequence written out: the state advances by the golden ratio before each mix.
        let mut state = 0u64;
        let mut expected = Vec::new();
        for _ in 0..32 {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            expected.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
        }
        let mut got = vec![0u8; expected.len()];
        fill_word_pattern(0, &mut got);
        assert_eq!(got, expected);
    }

    #[test]
    fn any_slice_of_the_word_pattern_matches_the_whole() {
        let whole = word_pattern_vec(100);
        for start in 0..40 {
            for len in [0, 1, 5, 8, 9, 17, 60] {
                let mut part = vec![0u8; len];
                fill_word_pattern(start as u64, &mut part);
                assert_eq!(part, whole[start..start + len], "start {start} len {len}");
            }
        }
    }
}
