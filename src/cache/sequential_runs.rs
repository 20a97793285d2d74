//! [`SequentialRuns`]: which reads of a source continue a sequential run, for telling a scan
//! from lookups.

use std::sync::{Mutex, PoisonError};

/// How many runs are followed at once per source: the inputs, clones and slices reading one
/// file sequentially at the same time (a verification, a merge, a few long postings lists).
/// Beyond that, the run least recently continued is forgotten.
const RUNS: usize = 8;

/// The sequential runs a source is being read in: where each ends and how many bytes it has
/// read so far, as the reads start (a read-ahead's chunks are asked before the previous one
/// came back, so a run is followed by where reads *start*, not where they complete).
///
/// A read continues a run when it starts exactly where the run ends, or, after a piece of a
/// stream ([`note_piece`](Self::note_piece)), anywhere in that piece: a reader that stops
/// reading a stream goes on with ranged reads from where it stopped in the piece it was
/// handed. Invariant: no two runs end at the same offset (a read that continues one moves its
/// end; a new run there replaces the other), and a run's piece lies before its end
/// (`from <= end`); a read continues the run it finds first.
#[derive(Debug, Default)]
pub(super) struct SequentialRuns {
    runs: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    runs: [Run; RUNS],
    // A clock for "least recently continued".
    tick: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Run {
    // Reads starting in `from..=end` continue it: `end` itself, or anywhere in a stream's last
    // piece.
    from: u64,
    end: u64,
    // Bytes read in the run (0: an unused entry).
    read: u64,
    used: u64,
}

impl SequentialRuns {
    /// How many bytes the run a read at `offset` would continue has read (0 if none), without
    /// noting the read.
    pub(super) fn before(&self, offset: u64) -> u64 {
        let table = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        table
            .runs
            .iter()
            .find(|r| r.continued_by(offset))
            .map_or(0, |r| r.read)
    }

    /// Notes a read of `len` bytes at `offset`; returns how many bytes the run it continues
    /// had read before it (0 if it starts a run of its own).
    pub(super) fn note(&self, offset: u64, len: u64) -> u64 {
        self.note_from(offset, len, false)
    }

    /// Notes a piece of a stream, `len` bytes at `offset`, as [`note`](Self::note) does a
    /// read, except that a read starting anywhere in the piece continues the run (the stream's
    /// reader may stop in its middle and go on with ranged reads from there).
    pub(super) fn note_piece(&self, offset: u64, len: u64) -> u64 {
        self.note_from(offset, len, true)
    }

    fn note_from(&self, offset: u64, len: u64, piece: bool) -> u64 {
        if len == 0 {
            return 0;
        }
        let end = offset.saturating_add(len);
        let mut table = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        table.tick += 1;
        let tick = table.tick;
        let runs = &mut table.runs;
        let from = if piece { offset } else { end };
        let before = match runs.iter().position(|r| r.continued_by(offset)) {
            Some(k) => {
                let before = runs[k].read;
                runs[k] = Run {
                    from,
                    end,
                    read: before.saturating_add(len),
                    used: tick,
                };
                before
            }
            None => {
                let k = (0..RUNS).min_by_key(|&k| runs[k].used).unwrap_or(0);
                runs[k] = Run {
                    from,
                    end,
                    read: len,
                    used: tick,
                };
                0
            }
        };
        // Another run ending where this read ends is forgotten (it would be continued by the
        // same reads as this one).
        let kept = runs.iter().filter(|r| r.read > 0 && r.end == end).count();
        if kept > 1 {
            let mut seen = false;
            for r in runs.iter_mut().filter(|r| r.read > 0 && r.end == end) {
                if r.used != tick || seen {
                    *r = Run::default();
                } else {
                    seen = true;
                }
            }
        }
        debug_assert!(
            {
                let live: Vec<u64> = runs.iter().filter(|r| r.read > 0).map(|r| r.end).collect();
                live.iter()
                    .enumerate()
                    .all(|(i, e)| !live[i + 1..].contains(e))
            },
            "two runs end at the same offset"
        );
        debug_assert!(
            runs.iter().all(|r| r.from <= r.end),
            "a piece past its run's end"
        );
        before
    }
}

impl Run {
    /// Whether a read at `offset` continues this run (an unused entry: never).
    fn continued_by(&self, offset: u64) -> bool {
        self.read > 0 && (self.from..=self.end).contains(&offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_reads_make_a_run_and_others_start_their_own() {
        let runs = SequentialRuns::default();
        assert_eq!(runs.note(0, 100), 0);
        assert_eq!((runs.before(100), runs.before(99)), (100, 0));
        assert_eq!(runs.note(100, 50), 100);
        assert_eq!(runs.note(150, 10), 150);
        assert_eq!(runs.note(5000, 10), 0, "elsewhere: a run of its own");
        assert_eq!(runs.note(160, 40), 160, "the first run goes on");
        assert_eq!(runs.note(5010, 1), 10);
        assert_eq!(runs.note(0, 0), 0, "an empty read is no run");
    }

    #[test]
    fn interleaved_runs_are_followed_and_the_oldest_forgotten() {
        let runs = SequentialRuns::default();
        for r in 0..RUNS as u64 {
            runs.note(r << 32, 10);
        }
        for r in 0..RUNS as u64 {
            assert_eq!(runs.note((r << 32) + 10, 10), 10, "run {r}");
        }
        // A new run pushes out the least recently continued: run 0.
        assert_eq!(runs.note(99 << 32, 10), 0);
        assert_eq!(runs.before(20), 0, "run 0 was forgotten");
        assert_eq!(runs.before((1 << 32) + 20), 20, "run 1 was not");
    }

    #[test]
    fn a_read_anywhere_in_a_streams_last_piece_continues_its_run() {
        let runs = SequentialRuns::default();
        assert_eq!(runs.note_piece(1000, 100), 0);
        assert_eq!(runs.note_piece(1100, 50), 100);
        assert_eq!(runs.before(1099), 0, "an earlier piece is handed out whole");
        assert_eq!(
            (runs.before(1100), runs.before(1120), runs.before(1150)),
            (150, 150, 150)
        );
        assert_eq!(runs.before(1151), 0);
        // The reader stopped at 1120 and goes on ranged: a plain read, continued at its end.
        assert_eq!(runs.note(1120, 30), 150);
        assert_eq!((runs.before(1149), runs.before(1150)), (0, 180));
    }

    #[test]
    fn two_runs_meeting_become_one() {
        let runs = SequentialRuns::default();
        runs.note(0, 100);
        runs.note(50, 50); // another run ending at 100
        assert_eq!(
            runs.note(100, 10),
            50,
            "the latest run is the one continued"
        );
        assert_eq!(runs.note(100, 10), 0, "and the other is gone");
    }
}
