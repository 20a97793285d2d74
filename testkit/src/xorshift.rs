//! xorshift64: the benches' cheap generator of bench data and offsets.

/// Marsaglia's xorshift64 (shifts 13, 7, 17): the generator the benches make their data and
/// offsets with. Cheaper than [`Rng`](crate::Rng), and its sequence is fixed here so that a
/// bench reads the same bytes at the same offsets from one build to the next.
///
/// The seed must not be 0 (the sequence would stay 0).
///
/// # Examples
///
/// ```
/// use abi_testkit::XorShift64;
///
/// let mut x = XorShift64::new(42);
/// let first = x.next_u64();
/// assert_eq!(first, XorShift64::new(42).next_u64());
/// assert_ne!(first, x.next_u64());
/// ```
#[derive(Clone, Debug)]
pub struct XorShift64(u64);

impl XorShift64 {
    /// A generator whose state starts at `seed`; the first value is the state after one step.
    pub fn new(seed: u64) -> Self {
        debug_assert_ne!(seed, 0, "xorshift64 stays 0 from a seed of 0");
        Self(seed)
    }

    /// The next value (the new state).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_xorshift64_13_7_17() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut x = XorShift64::new(state);
        for _ in 0..1000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            assert_eq!(x.next_u64(), state);
        }
    }
}
