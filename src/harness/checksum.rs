use std::fmt;

/// A cheap, order-sensitive 64-bit checksum of a byte stream, to prove that two readers read the
/// same bytes.
///
/// The stream is mixed eight bytes at a time (FxHash-style: rotate, xor, multiply) and finished
/// with the SplitMix64 finalizer and the stream's length. The result depends only on the bytes
/// and their order, not on how the stream was split into [`update`](Self::update) calls, so a
/// reader that reads one byte at a time and one that reads 64 KiB at a time agree. It is fast
/// (one multiply per eight bytes) and not cryptographic.
///
/// # Examples
///
/// ```
/// use async_buffered_input::harness::Checksum;
///
/// let mut whole = Checksum::new();
/// whole.update(b"hello, world");
///
/// let mut pieces = Checksum::new();
/// for piece in [&b"hel"[..], b"lo, w", b"", b"orld"] {
///     pieces.update(piece);
/// }
/// assert_eq!(whole.finish(), pieces.finish());
/// assert_ne!(whole.finish(), Checksum::of(b"world, hello"));
/// ```
#[derive(Clone)]
pub struct Checksum {
    // Invariants: `tail_len < 8`; `tail` holds the last `tail_len` bytes of the stream (little
    // endian, the earliest byte lowest) that do not fill a word yet, and is 0 above them; `state`
    // has mixed every full word before them; `len` counts every byte.
    state: u64,
    tail: u64,
    tail_len: u32,
    len: u64,
}

const SEED: u64 = 0xcbf2_9ce4_8422_2325;
const MULTIPLIER: u64 = 0x517c_c1b7_2722_0a95;

impl Checksum {
    /// An empty checksum (of no bytes).
    pub const fn new() -> Self {
        Self {
            state: SEED,
            tail: 0,
            tail_len: 0,
            len: 0,
        }
    }

    /// The checksum of `bytes`, in one call.
    pub fn of(bytes: &[u8]) -> u64 {
        let mut sum = Self::new();
        sum.update(bytes);
        sum.finish()
    }

    /// Appends `bytes` to the stream.
    #[inline]
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.tail_len > 0 {
            while self.tail_len < 8 {
                let Some((&b, rest)) = bytes.split_first() else {
                    return;
                };
                self.tail |= u64::from(b) << (8 * self.tail_len);
                self.tail_len += 1;
                bytes = rest;
            }
            self.mix(self.tail);
            self.tail = 0;
            self.tail_len = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let word: [u8; 8] = word.try_into().expect("chunks_exact(8) yields 8 bytes");
            self.mix(u64::from_le_bytes(word));
        }
        for (i, &b) in words.remainder().iter().enumerate() {
            self.tail |= u64::from(b) << (8 * i);
        }
        self.tail_len = words.remainder().len() as u32;
        debug_assert!(self.tail_len < 8);
    }

    /// The checksum of every byte appended so far. The stream can go on after this.
    pub fn finish(&self) -> u64 {
        let mut h = self.state;
        if self.tail_len > 0 {
            h = (h.rotate_left(5) ^ self.tail).wrapping_mul(MULTIPLIER);
        }
        h ^= self.len;
        // SplitMix64's finalizer, so that nearby streams give far-apart sums.
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    }

    /// How many bytes the stream has had.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the stream has had no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    // ----- private helpers -----

    #[inline(always)]
    fn mix(&mut self, word: u64) {
        self.state = (self.state.rotate_left(5) ^ word).wrapping_mul(MULTIPLIER);
    }
}

impl Default for Checksum {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checksum")
            .field("len", &self.len)
            .field("sum", &format_args!("{:#018x}", self.finish()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| (i.wrapping_mul(31) ^ (i >> 3)) as u8)
            .collect()
    }

    #[test]
    fn independent_of_how_the_stream_is_split() {
        let data = data(1000);
        let whole = Checksum::of(&data);
        for step in [1, 2, 3, 7, 8, 9, 15, 64, 999, 1000] {
            let mut sum = Checksum::new();
            for chunk in data.chunks(step) {
                sum.update(chunk);
                assert!(sum.tail_len < 8);
            }
            assert_eq!(sum.finish(), whole, "step {step}");
            assert_eq!(sum.len(), 1000);
        }
    }

    #[test]
    fn sensitive_to_order_length_and_content() {
        let data = data(64);
        let base = Checksum::of(&data);
        let mut swapped = data.clone();
        swapped.swap(3, 40);
        assert_ne!(Checksum::of(&swapped), base);
        assert_ne!(Checksum::of(&data[..63]), base);
        let mut zeros = Checksum::new();
        zeros.update(&[0; 8]);
        assert_ne!(zeros.finish(), Checksum::of(&[0; 7]));
        assert_ne!(zeros.finish(), Checksum::of(&[]));
        let mut flipped = data.clone();
        flipped[63] ^= 1;
        assert_ne!(Checksum::of(&flipped), base);
    }

    #[test]
    fn finish_does_not_end_the_stream() {
        let mut sum = Checksum::new();
        sum.update(b"abc");
        let _ = sum.finish();
        sum.update(b"def");
        assert_eq!(sum.finish(), Checksum::of(b"abcdef"));
        assert!(!sum.is_empty());
        assert!(Checksum::default().is_empty());
    }
}
