//! UTF-8 validation for the short strings of `read_string`, and the crate's one `unsafe` block.
//!
//! `std::str::from_utf8` is built for long inputs (it validates two words at a time once its
//! position is aligned); on the ~20-byte strings of a term dictionary or a stored field it goes
//! byte by byte, branching on every byte, and was 70% of `read_string`'s time (BENCHMARKS.md,
//! "Strings"). [`is_utf8`] runs a small DFA over the table of well-formed sequences (Unicode
//! 15, table 3-7), which is exactly the set `std::str::from_utf8` accepts, without branching on
//! the bytes. Its tests compare it with std on every sequence of up to three
//! bytes, every 4-byte sequence with an interesting tail, and random and mutated strings.
//! [`to_string`] then builds the `String` without validating again; strings longer than 64
//! bytes, and the rare invalid one, go to std entirely (so the error is std's, and a false
//! "invalid" would only cost time).

/// Whether `bytes` is well-formed UTF-8 (the same answer as `std::str::from_utf8(bytes).is_ok()`).
///
/// A shift-based DFA: one table load and one shift per byte, no branch on the bytes' values
/// (branches on where the multi-byte characters are cost more than the work on short strings).
#[inline]
pub(crate) fn is_utf8(bytes: &[u8]) -> bool {
    let mut state = ACCEPT;
    for &b in bytes {
        // The next state sits at bit offset `state` of the byte's row; the shift only uses
        // the low 6 bits of its amount, so the bits above the state can stay.
        state = ROWS[usize::from(b)].wrapping_shr(state as u32);
    }
    state & 63 == ACCEPT
}

// The DFA's states, as bit offsets into a row (6 bits each). A state's row entry is 0 (ERROR)
// unless set, and ERROR goes nowhere else.
const ERROR: u64 = 0;
const ACCEPT: u64 = 6;
const CONT1: u64 = 12; // one continuation byte (80..=BF) to go
const CONT2: u64 = 18;
const CONT3: u64 = 24;
const AFTER_E0: u64 = 30; // next A0..=BF (no overlong 3-byte forms)
const AFTER_ED: u64 = 36; // next 80..=9F (no surrogates)
const AFTER_F0: u64 = 42; // next 90..=BF (no overlong 4-byte forms)
const AFTER_F4: u64 = 48; // next 80..=8F (nothing past U+10FFFF)

/// `ROWS[byte]` holds, at bit offset `state`, the state after reading `byte` in `state`.
static ROWS: [u64; 256] = rows();

const fn rows() -> [u64; 256] {
    const fn to(state: u64, next: u64) -> u64 {
        next << state
    }
    let mut rows = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut row = to(ERROR, ERROR);
        row |= match b {
            0x00..=0x7F => to(ACCEPT, ACCEPT),
            0xC2..=0xDF => to(ACCEPT, CONT1),
            0xE0 => to(ACCEPT, AFTER_E0),
            0xE1..=0xEC | 0xEE..=0xEF => to(ACCEPT, CONT2),
            0xED => to(ACCEPT, AFTER_ED),
            0xF0 => to(ACCEPT, AFTER_F0),
            0xF1..=0xF3 => to(ACCEPT, CONT3),
            0xF4 => to(ACCEPT, AFTER_F4),
            _ => 0,
        };
        if b >= 0x80 && b <= 0xBF {
            row |= to(CONT1, ACCEPT) | to(CONT2, CONT1) | to(CONT3, CONT2);
        }
        if b >= 0xA0 && b <= 0xBF {
            row |= to(AFTER_E0, CONT1);
        }
        if b >= 0x80 && b <= 0x9F {
            row |= to(AFTER_ED, CONT1);
        }
        if b >= 0x90 && b <= 0xBF {
            row |= to(AFTER_F0, CONT2);
        }
        if b >= 0x80 && b <= 0x8F {
            row |= to(AFTER_F4, CONT2);
        }
        rows[b] = row;
        b += 1;
    }
    rows
}

/// `bytes` as an owned `String`, or std's error if they are not UTF-8.
#[inline]
pub(crate) fn to_string(bytes: &[u8]) -> Result<String, std::str::Utf8Error> {
    // Past a few words std's aligned two-words-at-a-time ASCII steps beat a byte-wise DFA.
    const SHORT: usize = 64;
    if bytes.len() <= SHORT && is_utf8(bytes) {
        #[allow(unsafe_code)]
        // SAFETY: `is_utf8` accepted `bytes`, and it accepts only well-formed UTF-8 (the same
        // set as `std::str::from_utf8`; see the tests below, which compare the two exhaustively
        // on short sequences and randomly on long ones).
        return Ok(unsafe { String::from_utf8_unchecked(bytes.to_vec()) });
    }
    std::str::from_utf8(bytes).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn std_says(bytes: &[u8]) -> bool {
        std::str::from_utf8(bytes).is_ok()
    }

    #[track_caller]
    fn agree(bytes: &[u8]) {
        assert_eq!(is_utf8(bytes), std_says(bytes), "{bytes:02x?}");
    }

    #[test]
    fn every_sequence_of_up_to_three_bytes() {
        agree(&[]);
        for a in 0..=255u8 {
            agree(&[a]);
            for b in 0..=255u8 {
                agree(&[a, b]);
                for c in 0..=255u8 {
                    agree(&[a, b, c]);
                }
            }
        }
    }

    #[test]
    fn every_four_byte_lead_and_second_byte_with_interesting_tails() {
        const TAILS: [u8; 10] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0];
        for a in 0xC0..=0xFFu8 {
            for b in 0..=255u8 {
                for c in TAILS.into_iter().chain([0xC2, 0xE0, 0xF0, 0xFF]) {
                    for d in TAILS.into_iter().chain([0xC2, 0xE0, 0xF0, 0xFF]) {
                        agree(&[a, b, c, d]);
                    }
                }
            }
        }
    }

    #[test]
    fn sequences_inside_ascii_at_every_alignment() {
        // Multi-byte sequences (valid and not) with ASCII around them, so that the 8-byte
        // steps meet them at every offset within a word, and cut at every length.
        let samples: [&[u8]; 12] = [
            "é".as_bytes(),
            "€".as_bytes(),
            "𝄞".as_bytes(),
            &[0xC0, 0x80],
            &[0xED, 0xA0, 0x80],
            &[0xF4, 0x90, 0x80, 0x80],
            &[0xE0, 0x80, 0x80],
            &[0xF0, 0x80, 0x80, 0x80],
            &[0x80],
            &[0xFF],
            &[0xE2, 0x82],
            &[0xF0, 0x9D, 0x84],
        ];
        for sample in samples {
            for before in 0..17 {
                for after in 0..17 {
                    let mut bytes = vec![b'a'; before];
                    bytes.extend_from_slice(sample);
                    bytes.extend(std::iter::repeat_n(b'z', after));
                    agree(&bytes);
                    for cut in 0..bytes.len() {
                        agree(&bytes[..cut]);
                        agree(&bytes[cut..]);
                    }
                }
            }
        }
    }

    const CHARS: [char; 13] = [
        'a',
        'Z',
        '0',
        ' ',
        'é',
        'ü',
        '€',
        'ह',
        '中',
        '𝄞',
        '😀',
        '\u{10FFFF}',
        '\u{7F}',
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// Valid strings of mixed widths are accepted and built as they are; with one to three
        /// bytes overwritten, ours and std agree on validity and on the error.
        #[test]
        fn random_strings_and_their_mutations(
            chars in prop::collection::vec(prop::sample::select(&CHARS[..]), 0..40),
            mutations in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        ) {
            let s: String = chars.into_iter().collect();
            prop_assert!(is_utf8(s.as_bytes()), "{:?}", s);
            prop_assert_eq!(to_string(s.as_bytes()).unwrap(), s.clone());
            let mut bytes = s.into_bytes();
            if !bytes.is_empty() {
                for (at, b) in mutations {
                    let at = at.index(bytes.len());
                    bytes[at] = b;
                }
            }
            prop_assert_eq!(is_utf8(&bytes), std_says(&bytes), "{:02x?}", bytes);
            match (to_string(&bytes), std::str::from_utf8(&bytes)) {
                (Ok(ours), Ok(theirs)) => prop_assert_eq!(ours, theirs),
                (Err(ours), Err(theirs)) => prop_assert_eq!(ours, theirs),
                (ours, theirs) => prop_assert!(false, "{:02x?}: {:?} vs {:?}", bytes, ours, theirs),
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100_000))]

        /// Raw random bytes, mostly high ones (continuation bytes and leads).
        #[test]
        fn random_high_bytes(
            bytes in prop::collection::vec(
                prop_oneof![3 => 0x80u8..=0xff, 1 => any::<u8>()],
                0..24,
            )
        ) {
            prop_assert_eq!(is_utf8(&bytes), std_says(&bytes), "{:02x?}", bytes);
        }
    }
}
