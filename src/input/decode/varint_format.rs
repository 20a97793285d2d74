//! Lucene's varints decoded from a slice: 7 bits per byte, low groups first, the high bit set on
//! every byte but the last; and zig-zag. No I/O: the typed reads and [`WindowView`] build on it.
//!
//! [`WindowView`]: crate::WindowView

/// The most bytes a Lucene vint takes; its 5th byte carries the top 4 bits.
pub(crate) const VINT_MAX_LEN: usize = 5;
pub(crate) const VINT_LAST_BITS: u32 = 4;
/// The most bytes a Lucene vlong takes: 9, for 63 bits, as `readVLong` reads it (it rejects
/// negative values, which would need a 10th byte).
pub(crate) const VLONG_MAX_LEN: usize = 9;
pub(crate) const VLONG_LAST_BITS: u32 = 7;
/// The most bytes any `u64` takes: 10, the 10th carrying the top bit. Zig-zag vlongs (Lucene's
/// `readZLong`) and `read_varint_u64` use it.
pub(crate) const VARINT64_MAX_LEN: usize = 10;
pub(crate) const VARINT64_LAST_BITS: u32 = 1;

/// What a slice holds at the start of a varint.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Varint {
    /// A whole varint of `len` bytes.
    Done { value: u64, len: usize },
    /// The slice ends before the varint does.
    Short,
    /// The bytes are not a valid varint of this width.
    Malformed(String),
}

/// Decodes a Lucene varint (7 bits per byte, low groups first, high bit set on every byte but
/// the last) of at most `max_len` bytes, whose last possible byte may carry only `last_bits`
/// bits.
#[inline]
pub(crate) fn decode_varint(bytes: &[u8], max_len: usize, last_bits: u32) -> Varint {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(max_len).enumerate() {
        let shift = 7 * i as u32;
        if i == max_len - 1 {
            if u32::from(b) >> last_bits != 0 {
                return Varint::Malformed(format!(
                    "byte {} of {max_len} is {b:#04x}: too many bits for a {}-bit value, \
                     or longer than {max_len} bytes",
                    i + 1,
                    7 * (max_len as u32 - 1) + last_bits
                ));
            }
            return Varint::Done {
                value: value | u64::from(b) << shift,
                len: max_len,
            };
        }
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Varint::Done { value, len: i + 1 };
        }
    }
    Varint::Short
}

/// Decodes the varint at the start of `bytes` without a branch per byte, when `bytes` holds at
/// least 8 bytes and the varint ends within them: its value and length. `None` in every other
/// case (fewer than 8 bytes, a longer or malformed varint), for [`decode_varint`] to handle.
///
/// The stop byte is the first without its high bit; the 7-bit groups before it are then packed
/// together by three mask-and-shift steps (pairs, quads, octets).
#[inline(always)]
pub(crate) fn decode_varint_fast<const MAX_LEN: usize, const LAST_BITS: u32>(
    bytes: &[u8],
) -> Option<(u64, usize)> {
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let x = u64::from_le_bytes(*bytes.first_chunk::<8>()?);
    let stops = !x & HIGH_BITS;
    if stops == 0 {
        return None;
    }
    let len = (stops.trailing_zeros() / 8) as usize + 1;
    if len > MAX_LEN {
        return None;
    }
    if len == MAX_LEN && (x >> (8 * (len - 1)) & 0xff) >> LAST_BITS != 0 {
        return None;
    }
    // Keep the bytes up to the stop byte, without their high bits.
    let x = x & (stops ^ (stops - 1)) & !HIGH_BITS;
    let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    let x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
    Some((x, len))
}

#[inline]
pub(crate) fn zigzag_decode(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn varint_edges() {
        assert_eq!(decode_varint(&[0], 5, 4), Varint::Done { value: 0, len: 1 });
        assert_eq!(decode_varint(&[0x80], 5, 4), Varint::Short);
        assert_eq!(
            decode_varint(&[0xff, 0xff, 0xff, 0xff, 0x0f], 5, 4),
            Varint::Done {
                value: u64::from(u32::MAX),
                len: 5
            }
        );
        assert!(matches!(
            decode_varint(&[0xff, 0xff, 0xff, 0xff, 0x1f], 5, 4),
            Varint::Malformed(_)
        ));
        assert!(matches!(
            decode_varint(&[0x80, 0x80, 0x80, 0x80, 0x80], 5, 4),
            Varint::Malformed(_)
        ));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(
            decode_varint(&max, 10, 1),
            Varint::Done {
                value: u64::MAX,
                len: 10
            }
        );
    }

    /// The branch-free decoder agrees with the byte loop wherever it answers, and answers for
    /// every well-formed varint that ends within 8 bytes.
    fn agrees<const MAX_LEN: usize, const LAST_BITS: u32>(
        bytes: &[u8],
    ) -> Result<(), TestCaseError> {
        let slow = decode_varint(bytes, MAX_LEN, LAST_BITS);
        match decode_varint_fast::<MAX_LEN, LAST_BITS>(bytes) {
            Some((value, len)) => {
                prop_assert_eq!(slow, Varint::Done { value, len }, "{:02x?}", bytes)
            }
            None => prop_assert!(
                bytes.len() < 8 || !matches!(slow, Varint::Done { len, .. } if len <= 8),
                "{:02x?}: fast path declined {:?}",
                bytes,
                slow
            ),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// Random bytes whose first `stop` bytes carry a continuation bit, so the stop byte
        /// falls anywhere from the 1st to the 11th, cut to every length that matters.
        #[test]
        fn fast_varint_agrees_with_the_byte_loop(
            mut bytes in prop::collection::vec(any::<u8>(), 16),
            stop in 0usize..11,
            end_there in any::<bool>(),
        ) {
            for (i, b) in bytes.iter_mut().enumerate().take(10) {
                if i < stop {
                    *b |= 0x80;
                } else if i == stop && end_there {
                    *b &= 0x7f;
                }
            }
            for len in [0, 1, 5, 7, 8, 9, 10, 16] {
                agrees::<VINT_MAX_LEN, VINT_LAST_BITS>(&bytes[..len])?;
                agrees::<VLONG_MAX_LEN, VLONG_LAST_BITS>(&bytes[..len])?;
                agrees::<VARINT64_MAX_LEN, VARINT64_LAST_BITS>(&bytes[..len])?;
            }
        }
    }

    /// Every boundary value, followed by padding.
    #[test]
    fn fast_varint_agrees_at_every_7_bit_boundary() {
        for bits in 0..64 {
            for v in [(1u64 << bits) - 1, 1u64 << bits] {
                let mut bytes = Vec::new();
                let mut w = v;
                while w >= 0x80 {
                    bytes.push(w as u8 | 0x80);
                    w >>= 7;
                }
                bytes.push(w as u8);
                bytes.resize(16, 0xaa);
                agrees::<VINT_MAX_LEN, VINT_LAST_BITS>(&bytes).unwrap();
                agrees::<VLONG_MAX_LEN, VLONG_LAST_BITS>(&bytes).unwrap();
                agrees::<VARINT64_MAX_LEN, VARINT64_LAST_BITS>(&bytes).unwrap();
            }
        }
    }

    #[test]
    fn zigzag() {
        assert_eq!(zigzag_decode(0), 0);
        assert_eq!(zigzag_decode(1), -1);
        assert_eq!(zigzag_decode(2), 1);
        assert_eq!(zigzag_decode(u64::MAX), i64::MIN);
        assert_eq!(zigzag_decode(u64::MAX - 1), i64::MAX);
    }
}
