//! What a cell asks of the file: the access [`Pattern`] and the seeded sequence of requests it
//! gives each task ([`Requests`]).

use std::fmt;
use std::io;
use std::str::FromStr;

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
}

impl Pattern {
    /// The run length of [`Pattern::Clustered`] when none is given (`clustered`).
    pub const DEFAULT_RUN: u32 = 16;

    /// A short, stable identifier, what [`FromStr`] parses and the JSON report prints: `seq`,
    /// `random`, `clustered` (or `clustered:N` for runs of N other than
    /// [`DEFAULT_RUN`](Self::DEFAULT_RUN)).
    pub fn id(&self) -> String {
        match self {
            Pattern::Sequential => "seq".into(),
            Pattern::Random => "random".into(),
            Pattern::Clustered { run } if *run == Self::DEFAULT_RUN => "clustered".into(),
            Pattern::Clustered { run } => format!("clustered:{run}"),
        }
    }

    /// Whether the pattern jumps (random or clustered), so that a pass makes a chosen number of
    /// requests rather than reading the file once.
    pub fn is_random(&self) -> bool {
        !matches!(self, Pattern::Sequential)
    }
}

impl fmt::Display for Pattern {
    /// `sequential`, `random`, `clustered (runs of 16)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Sequential => f.write_str("sequential"),
            Pattern::Random => f.write_str("random"),
            Pattern::Clustered { run } => write!(f, "clustered (runs of {run})"),
        }
    }
}

impl FromStr for Pattern {
    type Err = io::Error;

    /// `seq` (or `sequential`), `random`, `clustered` or `clustered:N` (runs of N requests),
    /// ignoring case and surrounding spaces.
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
            _ => {}
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
            "unknown pattern {s:?}: expected seq, random, clustered or clustered:N"
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
}

/// Requests per pass of a random or clustered cell, unless the plan says otherwise: as many as
/// would read the file once, but at most this many.
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
        Self {
            pattern,
            file_len,
            size,
            seed,
            per_pass,
            tasks,
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

/// SplitMix64 of `x`: a bijective mix, good enough to scatter offsets and cheap.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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
        ] {
            assert_eq!(pattern.id().parse::<Pattern>().unwrap(), pattern);
        }
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
