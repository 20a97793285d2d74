//! splitmix64: the mix behind the patterns, and a tiny PRNG for reproducible sweeps.

/// The golden-ratio increment of splitmix64.
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// splitmix64 of `x`: a bijective mix of a 64-bit value (Steele, Lea and Flood's SplitMix64
/// finalizer applied to `x + 0x9E37_79B9_7F4A_7C15`). Cheap, and good enough to scatter offsets
/// and to make file content that is periodic at no small power of two.
///
/// # Examples
///
/// ```
/// use abi_testkit::splitmix64;
///
/// assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
/// assert_ne!(splitmix64(1), splitmix64(2));
/// ```
#[inline]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Small deterministic PRNG (the splitmix64 sequence) for reproducible "random" sweeps: the
/// same seed gives the same values on every machine and run.
///
/// # Examples
///
/// ```
/// use abi_testkit::Rng;
///
/// let (mut a, mut b) = (Rng::new(7), Rng::new(7));
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (scrambled, so that small seeds start far apart).
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next value of the sequence.
    pub fn next_u64(&mut self) -> u64 {
        let z = splitmix64(self.0);
        self.0 = self.0.wrapping_add(GOLDEN);
        z
    }

    /// Uniform-ish in `0..n` (0 when `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sequence is the one the tests' sweeps were written against: splitmix64 with the
    /// state advanced by the golden ratio before each mix, written out step by step.
    #[test]
    fn the_sequence_is_splitmix64() {
        let mut state = 42u64 ^ 0x5DEE_CE66_D1CE_4E5B;
        let mut rng = Rng::new(42);
        for _ in 0..1000 {
            state = state.wrapping_add(GOLDEN);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            assert_eq!(rng.next_u64(), z ^ (z >> 31));
        }
    }

    #[test]
    fn below_stays_below() {
        let mut rng = Rng::new(1);
        assert_eq!(rng.below(0), 0);
        for n in 1..200 {
            assert!(rng.below(n) < n);
        }
    }
}
