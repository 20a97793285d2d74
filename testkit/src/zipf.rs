//! A Zipf distribution over ranks, drawn by inverting its cumulative distribution: the skew of
//! the term-lookup workloads (the harness's `terms` pattern, the `term_lookup` bench).

/// Ranks `0..n` drawn with probability proportional to `1 / (rank + 1)^s`, by inverting the
/// cumulative distribution.
///
/// # Examples
///
/// ```
/// use abi_testkit::Zipf;
///
/// let zipf = Zipf::new(100, 1.1);
/// assert_eq!(zipf.rank(0.0), 0, "the lowest u is the hottest rank");
/// assert_eq!(zipf.rank(1.0), 99, "u = 1 still lands on a rank");
/// assert!(zipf.rank(0.5) < 10, "half the draws go to the few hottest ranks");
/// ```
#[derive(Clone)]
pub struct Zipf {
    // `cdf[k]`: the probability of a rank at most `k`; increasing, the last 1 (up to rounding).
    cdf: Vec<f64>,
}

impl Zipf {
    /// The distribution over `n` ranks (at least 1) with the exponent `s` (at least 0).
    pub fn new(n: usize, s: f64) -> Self {
        debug_assert!(n > 0 && s >= 0.0);
        let mut total = 0.0;
        let mut cdf: Vec<f64> = (1..=n)
            .map(|k| {
                total += (k as f64).powf(-s);
                total
            })
            .collect();
        for c in &mut cdf {
            *c /= total;
        }
        debug_assert!(cdf.windows(2).all(|w| w[0] <= w[1]));
        Self { cdf }
    }

    /// The number of ranks.
    pub fn len(&self) -> usize {
        self.cdf.len()
    }

    /// Always false: a distribution has at least one rank.
    pub fn is_empty(&self) -> bool {
        self.cdf.is_empty()
    }

    /// The rank for `u`, uniform in `[0, 1)`: the one whose share of the cumulative
    /// distribution holds `u` (the last for `u` at or past 1).
    #[inline]
    pub fn rank(&self, u: f64) -> usize {
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.cdf.len() - 1)
    }
}

impl std::fmt::Debug for Zipf {
    /// The number of ranks, not the distribution.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Zipf").field("ranks", &self.len()).finish()
    }
}
