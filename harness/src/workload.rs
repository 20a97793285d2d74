//! What a cell asks of the file: the access [`Pattern`] and the seeded sequence of requests it
//! gives each task ([`Requests`]), with the Zipf-skewed choice of hot regions of term lookups.

use std::fmt;
use std::io;
use std::str::FromStr;

use abi_testkit::{splitmix64, Zipf};

/// The order in which a cell's requests visit the file.
///
/// Every pattern is a pure function of the run's seed, the task and the request's index, so
/// every reader of a cell, its verification pass, and every later run with the same seed make
/// exactly the same requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Pattern {
    /// From the first byte to the last, each request where the previous one ended. A pass reads
    /// the file once; with several tasks, each task reads its own contiguous part of it.
    Sequential,
    /// Each request at a uniformly random offset (any byte, not aligned), as a lookup in a
    /// large index does.
    Random,
    /// Runs of `run` consecutive requests, each run at a random offset: a lookup that then scans
    /// a little, like reading a term dictionary block.
    Clustered {
        /// Requests per run.
        run: u32,
    },
    /// Term lookups, as a search service makes them: each request picks one of the file's
    /// regions of [`TERMS_REGION`](Self::TERMS_REGION) bytes by a Zipf-skewed rank, then reads
    /// at a uniformly random offset inside it. The ranks are scattered over the file by a fixed
    /// permutation (the same for every seed), so the hot regions are spread out, not the first
    /// ones. The request's length is the cell's request size.
    Terms {
        /// The Zipf exponent `s` of the regions' popularity, in thousandths (1100 for
        /// `s = 1.1`): the region of rank `k` (from 0) is picked with a probability
        /// proportional to `1 / (k + 1)^s`. An integer, so that a pattern stays `Eq` and
        /// `Hash`.
        s_milli: u32,
    },
}

impl Pattern {
    /// The run length of [`Pattern::Clustered`] when none is given (`clustered`).
    pub const DEFAULT_RUN: u32 = 16;
    /// The Zipf exponent of [`Pattern::Terms`] when none is given (`terms`), in thousandths:
    /// `s = 1.1`.
    pub const DEFAULT_ZIPF_MILLI: u32 = 1100;
    /// The largest Zipf exponent `terms:S` takes, in thousandths (`s = 10`: practically every
    /// lookup in the hottest region).
    pub const MAX_ZIPF_MILLI: u32 = 10_000;
    /// The size of the regions [`Pattern::Terms`] picks from: 64 KiB, a term dictionary's block
    /// cluster. The last region of a file that is not a multiple of it is shorter.
    pub const TERMS_REGION: u64 = 64 << 10;

    /// A short, stable identifier, what [`FromStr`] parses and the JSON report prints: `seq`,
    /// `random`, `clustered` (or `clustered:N` for runs of N other than
    /// [`DEFAULT_RUN`](Self::DEFAULT_RUN)), `terms` (or `terms:S` for a Zipf exponent other
    /// than [`DEFAULT_ZIPF_MILLI`](Self::DEFAULT_ZIPF_MILLI), like `terms:0.8`).
    pub fn id(&self) -> String {
        match self {
            Pattern::Sequential => "seq".into(),
            Pattern::Random => "random".into(),
            Pattern::Clustered { run } if *run == Self::DEFAULT_RUN => "clustered".into(),
            Pattern::Clustered { run } => format!("clustered:{run}"),
            Pattern::Terms { s_milli } if *s_milli == Self::DEFAULT_ZIPF_MILLI => "terms".into(),
            Pattern::Terms { s_milli } => format!("terms:{}", thousandths(*s_milli)),
        }
    }

    /// The term-lookup pattern with the Zipf exponent `s` (rounded to thousandths).
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `s` is not a number from 0 to 10.
    ///
    /// # Examples
    ///
    /// ```
    /// use throughput_harness::Pattern;
    ///
    /// assert_eq!(Pattern::terms(1.1)?, Pattern::Terms { s_milli: 1100 });
    /// assert_eq!(Pattern::terms(0.8)?.id(), "terms:0.8");
    /// assert!(Pattern::terms(-1.0).is_err());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn terms(s: f64) -> io::Result<Pattern> {
        let max = f64::from(Self::MAX_ZIPF_MILLI) / 1000.0;
        if !(0.0..=max).contains(&s) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a Zipf exponent must be a number from 0 to {max}, got {s}"),
            ));
        }
        Ok(Pattern::Terms {
            s_milli: (s * 1000.0).round() as u32,
        })
    }

    /// Whether the pattern jumps (random, clustered or term lookups), so that a pass makes a
    /// chosen number of requests rather than reading the file once.
    pub fn is_random(&self) -> bool {
        !matches!(self, Pattern::Sequential)
    }
}

impl fmt::Display for Pattern {
    /// `sequential`, `random`, `clustered (runs of 16)`, `term-lookup (Zipf s = 1.1)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Sequential => f.write_str("sequential"),
            Pattern::Random => f.write_str("random"),
            Pattern::Clustered { run } => write!(f, "clustered (runs of {run})"),
            Pattern::Terms { s_milli } => {
                write!(f, "term-lookup (Zipf s = {})", thousandths(*s_milli))
            }
        }
    }
}

impl FromStr for Pattern {
    type Err = io::Error;

    /// `seq` (or `sequential`), `random`, `clustered` or `clustered:N` (runs of N requests),
    /// `terms` or `terms:S` (term lookups with the Zipf exponent S, from 0 to 10, like
    /// `terms:1.1`), ignoring case and surrounding spaces.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = s.trim().to_ascii_lowercase();
        let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
        match key.as_str() {
            "seq" | "sequential" => return Ok(Pattern::Sequential),
            "random" | "rand" => return Ok(Pattern::Random),
            "clustered" => {
                return Ok(Pattern::Clustered {
                    run: Self::DEFAULT_RUN,
                })
            }
            "terms" | "term" => {
                return Ok(Pattern::Terms {
                    s_milli: Self::DEFAULT_ZIPF_MILLI,
                })
            }
            _ => {}
        }
        if let Some(exponent) = key.strip_prefix("terms:") {
            return match exponent.trim().parse::<f64>() {
                Ok(s) => Pattern::terms(s).map_err(|e| invalid(format!("terms:{exponent}: {e}"))),
                Err(_) => Err(invalid(format!(
                    "terms:{exponent}: the Zipf exponent must be a number, like terms:1.1"
                ))),
            };
        }
        if let Some(run) = key.strip_prefix("clustered:") {
            return match run.trim().parse::<u32>() {
                Ok(0) => Err(invalid(
                    "a clustered run needs at least 1 request, got 0".into(),
                )),
                Ok(run) => Ok(Pattern::Clustered { run }),
                Err(_) => Err(invalid(format!(
                    "clustered:{run}: the run length must be a whole number of requests, like \
                     clustered:16"
                ))),
            };
        }
        Err(invalid(format!(
            "unknown pattern {s:?}: expected seq, random, clustered, clustered:N, terms or terms:S"
        )))
    }
}

/// The requests one cell makes, for each of its tasks, in one pass: a pure function of the
/// pattern, the file's length, the request size, the seed and the task.
#[derive(Clone, Debug)]
pub(crate) struct Requests {
    pattern: Pattern,
    file_len: u64,
    size: usize,
    seed: u64,
    // Requests per pass, all tasks together.
    per_pass: u64,
    tasks: usize,
    // `Some` for `Pattern::Terms` only: its regions' popularity.
    regions: Option<HotRegions>,
}

/// Requests per pass of a random, clustered or term-lookup cell, unless the plan says otherwise:
/// as many as would read the file once, but at most this many.
pub(crate) const DEFAULT_RANDOM_REQUESTS: u64 = 10_000;

impl Requests {
    /// The requests of a cell of `pattern` at `size` bytes over a file of `file_len` bytes
    /// (at least 1), shared by `tasks` tasks (at least 1). A sequential pass reads the file
    /// once; a random or clustered one makes `random_requests` requests, or by default as many
    /// as would read the file once, at most [`DEFAULT_RANDOM_REQUESTS`].
    pub(crate) fn new(
        pattern: Pattern,
        file_len: u64,
        size: usize,
        seed: u64,
        random_requests: Option<u64>,
        tasks: usize,
    ) -> Self {
        debug_assert!(file_len > 0 && size > 0 && tasks > 0);
        let whole_file = file_len.div_ceil(size as u64);
        let per_pass = match pattern {
            Pattern::Sequential => whole_file,
            _ => random_requests.unwrap_or(whole_file.min(DEFAULT_RANDOM_REQUESTS)),
        };
        let regions = match pattern {
            Pattern::Terms { s_milli } => Some(HotRegions::new(
                file_len.div_ceil(Pattern::TERMS_REGION),
                f64::from(s_milli) / 1000.0,
            )),
            _ => None,
        };
        Self {
            pattern,
            file_len,
            size,
            seed,
            per_pass,
            tasks,
            regions,
        }
    }

    /// Requests per pass, all tasks together.
    #[cfg(test)]
    pub(crate) fn per_pass(&self) -> u64 {
        self.per_pass
    }

    /// The requests task `task` makes in a pass: an even share of [`per_pass`](Self::per_pass).
    pub(crate) fn of_task(&self, task: usize) -> u64 {
        self.first_of(task + 1) - self.first_of(task)
    }

    /// The offset and length of request `k` (below [`of_task`](Self::of_task)) of `task`. Every
    /// request is at least 1 byte and ends at or before the end of the file.
    pub(crate) fn get(&self, task: usize, k: u64) -> (u64, usize) {
        debug_assert!(k < self.of_task(task));
        let size = self.size as u64;
        let len = size.min(self.file_len);
        let offset = match self.pattern {
            // A task's part of the file: the requests `first_of(task)..first_of(task + 1)`.
            Pattern::Sequential => (self.first_of(task) + k) * size,
            Pattern::Random => self.random(task, k) % (self.file_len - len + 1),
            Pattern::Clustered { run } => {
                let run = u64::from(run);
                let span = run.saturating_mul(size).min(self.file_len);
                let start = self.random(task, k / run) % (self.file_len - span + 1);
                start + ((k % run) * size) % span
            }
            Pattern::Terms { .. } => {
                let regions = self
                    .regions
                    .as_ref()
                    .expect("a terms pattern has its regions");
                // The top 53 bits pick the region, a mix of all 64 the offset inside it.
                let x = self.random(task, k);
                let region = regions.pick((x >> 11) as f64 / (1u64 << 53) as f64);
                let start = region * Pattern::TERMS_REGION;
                let region_len = Pattern::TERMS_REGION.min(self.file_len - start);
                // A request longer than its region starts at the region (or as late as the
                // file allows) and runs into the next.
                let room = region_len.saturating_sub(len) + 1;
                (start + splitmix64(x) % room).min(self.file_len - len)
            }
        };
        let len = len.min(self.file_len - offset);
        debug_assert!(len > 0 && offset + len <= self.file_len);
        (offset, len as usize)
    }

    /// The largest request: the request size, or the whole file if that is smaller.
    pub(crate) fn largest(&self) -> usize {
        (self.size as u64).min(self.file_len) as usize
    }

    /// The first offset of each task: where its reader is positioned before the clock starts.
    pub(crate) fn starts(&self) -> Vec<u64> {
        (0..self.tasks)
            .map(|task| self.walk(task).next().map_or(0, |(offset, _)| offset))
            .collect()
    }

    /// The requests of `task` in one pass, in order: cheap enough for the timed loop (a
    /// sequential walk adds, a random one mixes).
    pub(crate) fn walk(&self, task: usize) -> Walk<'_> {
        let first = self.first_of(task);
        Walk {
            requests: self,
            task,
            k: 0,
            n: self.of_task(task),
            next_offset: first.saturating_mul(self.size as u64),
        }
    }

    /// The bytes task `task` reads in a pass.
    #[cfg(test)]
    fn bytes_of_task(&self, task: usize) -> u64 {
        (0..self.of_task(task))
            .map(|k| self.get(task, k).1 as u64)
            .sum()
    }

    // ----- private helpers -----

    /// The index of the first request of `task` in a pass, in the order of the tasks
    /// (`first_of(tasks) == per_pass`).
    fn first_of(&self, task: usize) -> u64 {
        (u128::from(self.per_pass) * task as u128 / self.tasks as u128) as u64
    }

    /// A pseudo-random number for (`task`, `k`) under the seed.
    fn random(&self, task: usize, k: u64) -> u64 {
        splitmix64(splitmix64(splitmix64(self.seed) ^ task as u64) ^ k)
    }
}

/// The popularity of a term-lookup file's regions: a Zipf distribution over ranks, inverted
/// from its cumulative distribution, and the fixed permutation that scatters the ranks over the
/// regions.
#[derive(Clone)]
struct HotRegions {
    // One rank per region: 8 bytes per 64 KiB of file.
    zipf: Zipf,
    // Coprime with the number of regions, so that `rank * scatter % regions` is a permutation
    // of the ranks.
    scatter: u64,
}

impl HotRegions {
    /// The popularity of `regions` regions (at least 1) under the Zipf exponent `s`.
    fn new(regions: u64, s: f64) -> Self {
        debug_assert!(regions > 0 && s >= 0.0);
        let zipf = Zipf::new(regions as usize, s);
        // Near the golden ratio of the regions (Fibonacci hashing): consecutive ranks land far
        // apart, and the hottest regions spread over the whole file.
        let mut scatter = ((regions as f64 * 0.618_033_988_75) as u64).max(1);
        while gcd(scatter, regions) != 1 {
            scatter += 1;
        }
        Self { zipf, scatter }
    }

    /// The region picked by `u`, uniform in `[0, 1)`: the rank whose share of the cumulative
    /// distribution holds `u`, scattered.
    #[inline]
    fn pick(&self, u: f64) -> u64 {
        let n = self.zipf.len() as u64;
        let rank = self.zipf.rank(u) as u64;
        let region = (u128::from(rank) * u128::from(self.scatter) % u128::from(n)) as u64;
        debug_assert!(region < n);
        region
    }
}

impl fmt::Debug for HotRegions {
    /// The number of regions and the permutation, not the distribution.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HotRegions")
            .field("regions", &self.zipf.len())
            .field("scatter", &self.scatter)
            .finish()
    }
}

/// The greatest common divisor of `a` and `b`.
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `n` thousandths as a short decimal: `1.1` for 1100, `2` for 2000, `0.125` for 125.
fn thousandths(n: u32) -> String {
    let (whole, frac) = (n / 1000, n % 1000);
    if frac == 0 {
        return whole.to_string();
    }
    let frac = format!("{frac:03}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// The requests of one task in one pass ([`Requests::walk`]).
#[derive(Debug)]
pub(crate) struct Walk<'a> {
    requests: &'a Requests,
    task: usize,
    k: u64,
    n: u64,
    // Sequential only: where the next request starts.
    next_offset: u64,
}

impl Iterator for Walk<'_> {
    type Item = (u64, usize);

    #[inline]
    fn next(&mut self) -> Option<(u64, usize)> {
        if self.k >= self.n {
            return None;
        }
        let request = match self.requests.pattern {
            Pattern::Sequential => {
                let offset = self.next_offset;
                let len = (self.requests.size as u64).min(self.requests.file_len - offset);
                self.next_offset += len;
                (offset, len as usize)
            }
            _ => self.requests.get(self.task, self.k),
        };
        self.k += 1;
        Some(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_parse_from_their_ids() {
        for pattern in [
            Pattern::Sequential,
            Pattern::Random,
            Pattern::Clustered { run: 16 },
            Pattern::Clustered { run: 3 },
            Pattern::Terms { s_milli: 1100 },
            Pattern::Terms { s_milli: 800 },
            Pattern::Terms { s_milli: 2000 },
            Pattern::Terms { s_milli: 1255 },
            Pattern::Terms { s_milli: 0 },
        ] {
            assert_eq!(pattern.id().parse::<Pattern>().unwrap(), pattern);
        }
        assert_eq!(Pattern::Terms { s_milli: 1100 }.id(), "terms");
        assert_eq!(Pattern::Terms { s_milli: 1255 }.id(), "terms:1.255");
        assert_eq!(Pattern::Terms { s_milli: 2000 }.id(), "terms:2");
        assert_eq!(
            Pattern::Terms { s_milli: 800 }.to_string(),
            "term-lookup (Zipf s = 0.8)"
        );
        assert_eq!(
            " Sequential ".parse::<Pattern>().unwrap(),
            Pattern::Sequential
        );
        assert_eq!(Pattern::Clustered { run: 3 }.id(), "clustered:3");
        assert_eq!(
            Pattern::Clustered { run: 16 }.to_string(),
            "clustered (runs of 16)"
        );
        for (text, needle) in [
            ("zigzag", "unknown pattern \"zigzag\": expected seq, random"),
            ("clustered:0", "at least 1 request, got 0"),
            ("clustered:x", "must be a whole number of requests"),
            ("terms:x", "the Zipf exponent must be a number"),
            ("terms:-1", "from 0 to 10, got -1"),
            ("terms:10.5", "from 0 to 10, got 10.5"),
            ("terms:nan", "from 0 to 10"),
        ] {
            let err = text.parse::<Pattern>().unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
            assert!(err.to_string().contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn sequential_tasks_split_the_file_into_contiguous_parts() {
        for (len, size, tasks) in [(1000, 100, 1), (1000, 100, 3), (1001, 100, 4), (7, 100, 2)] {
            let requests = Requests::new(Pattern::Sequential, len, size, 1, None, tasks);
            assert_eq!(requests.per_pass(), len.div_ceil(size as u64));
            let mut next = 0;
            for task in 0..tasks {
                for k in 0..requests.of_task(task) {
                    let (offset, n) = requests.get(task, k);
                    assert_eq!(
                        offset, next,
                        "{len} {size} {tasks}: task {task} request {k}"
                    );
                    next += n as u64;
                }
            }
            assert_eq!(next, len, "every byte once");
            for task in 0..tasks {
                let walked: Vec<_> = requests.walk(task).collect();
                let got: Vec<_> = (0..requests.of_task(task))
                    .map(|k| requests.get(task, k))
                    .collect();
                assert_eq!(walked, got, "the walk is the same requests");
            }
            let total: u64 = (0..tasks).map(|t| requests.bytes_of_task(t)).sum();
            assert_eq!(total, len);
        }
        // Random requests ignore a count meant for them only.
        let requests = Requests::new(Pattern::Sequential, 1000, 10, 1, Some(3), 1);
        assert_eq!(requests.per_pass(), 100);
    }

    #[test]
    fn random_requests_stay_in_the_file_and_depend_only_on_the_seed() {
        let a = Requests::new(Pattern::Random, 10_000, 100, 7, None, 2);
        let b = Requests::new(Pattern::Random, 10_000, 100, 7, None, 2);
        let c = Requests::new(Pattern::Random, 10_000, 100, 8, None, 2);
        assert_eq!(a.per_pass(), 100, "as many as read the file once");
        assert_eq!(a.of_task(0) + a.of_task(1), 100);
        let offsets = |r: &Requests, task| -> Vec<u64> {
            (0..r.of_task(task)).map(|k| r.get(task, k).0).collect()
        };
        assert_eq!(offsets(&a, 0), offsets(&b, 0));
        assert_ne!(offsets(&a, 0), offsets(&c, 0), "another seed");
        assert_ne!(offsets(&a, 0)[..10], offsets(&a, 1)[..10], "tasks differ");
        for task in 0..2 {
            for k in 0..a.of_task(task) {
                let (offset, n) = a.get(task, k);
                assert_eq!(n, 100);
                assert!(offset + 100 <= 10_000);
            }
        }
        let walked: Vec<u64> = a.walk(1).map(|(o, _)| o).collect();
        assert_eq!(walked, offsets(&a, 1));
        // Not sorted, not aligned: a real spread.
        let o = offsets(&a, 0);
        assert!(o.windows(2).any(|w| w[0] > w[1]));
        assert!(o.iter().any(|x| x % 100 != 0));
        // The default count is capped; a given count is used as is.
        let big = Requests::new(Pattern::Random, 1 << 30, 1, 7, None, 1);
        assert_eq!(big.per_pass(), DEFAULT_RANDOM_REQUESTS);
        let given = Requests::new(Pattern::Random, 1 << 30, 1, 7, Some(5), 1);
        assert_eq!(given.per_pass(), 5);
        // Requests larger than the file read the whole file.
        let whole = Requests::new(Pattern::Random, 50, 100, 7, Some(3), 1);
        assert!((0..3).all(|k| whole.get(0, k) == (0, 50)));
    }

    #[test]
    fn hot_regions_are_a_permutation_of_the_ranks() {
        for regions in [1u64, 2, 3, 256, 1000, 4099 * 2] {
            let hot = HotRegions::new(regions, 1.1);
            assert_eq!(gcd(hot.scatter, regions), 1, "{regions}: {hot:?}");
            let mut seen = vec![false; regions as usize];
            for rank in 0..regions {
                let region =
                    (u128::from(rank) * u128::from(hot.scatter) % u128::from(regions)) as usize;
                assert!(!seen[region], "{regions}: region {region} twice");
                seen[region] = true;
            }
            // The extremes of `u` land inside.
            assert_eq!(hot.pick(0.0), 0, "the hottest rank is region 0");
            assert!(hot.pick(1.0 - f64::EPSILON) < regions);
            assert!(hot.pick(1.0) < regions);
        }
    }

    #[test]
    fn term_lookups_stay_in_their_region_and_in_the_file() {
        let region = Pattern::TERMS_REGION;
        for (len, size) in [
            (16 * region, 100),
            (16 * region + 5000, 300),
            (1000, 100),
            (1000, 5000),
            (3 * region, 2 * region as usize),
            (region + 1, 100),
        ] {
            let requests = Requests::new(
                Pattern::Terms { s_milli: 1100 },
                len,
                size,
                9,
                Some(2000),
                3,
            );
            for task in 0..3 {
                for (offset, n) in requests.walk(task) {
                    assert_eq!(n as u64, (size as u64).min(len), "{len} {size}");
                    assert!(offset + n as u64 <= len, "{len} {size}: {offset} {n}");
                    // A lookup that fits in its region does not leave it, unless it was moved
                    // back from the file's short last region.
                    let (first, last) = (offset / region, (offset + n as u64 - 1) / region);
                    if (n as u64) <= region && (last + 1) * region <= len {
                        assert_eq!(first, last, "{len} {size}: {offset} {n}");
                    }
                }
            }
        }
    }

    #[test]
    fn clustered_requests_come_in_runs() {
        let requests = Requests::new(Pattern::Clustered { run: 4 }, 100_000, 10, 3, Some(40), 1);
        let mut starts = Vec::new();
        for k in 0..40 {
            let (offset, n) = requests.get(0, k);
            assert_eq!(n, 10);
            assert!(offset + 10 <= 100_000);
            if k % 4 == 0 {
                starts.push(offset);
            } else {
                assert_eq!(
                    offset,
                    requests.get(0, k - 1).0 + 10,
                    "request {k} continues"
                );
            }
        }
        starts.dedup();
        assert!(starts.len() > 5, "runs start at random places: {starts:?}");
        // A run longer than the file wraps inside it.
        let small = Requests::new(Pattern::Clustered { run: 8 }, 25, 10, 3, Some(8), 1);
        for k in 0..8 {
            let (offset, n) = small.get(0, k);
            assert!(n >= 1 && offset + n as u64 <= 25, "{k}: {offset} {n}");
        }
    }
}
