//! Jobs run a few at a time, their results kept in the order the jobs were given.

use std::future::Future;
use std::io;

use tokio::task::{AbortHandle, JoinSet};

/// Runs `jobs` with at most `limit` of them at once, each as a task of its own (so that their
/// CPU work, a CRC, can run on other threads), and returns their results in the jobs' order.
///
/// Deterministic as a loop over the jobs: the jobs start in order, and if some fail, the error
/// returned is the one of the first failing job in that order, whatever the order they finished
/// in. Once a job has failed, no job starts and those after it are aborted; those before it are
/// awaited, as one of them may fail too and come first.
///
/// Memory: at most `limit` jobs hold what they hold at once.
///
/// # Cancel safety
///
/// Cancel safe: dropping the future aborts every running job (the `JoinSet` is dropped); none
/// starts after.
///
/// # Panics
///
/// A job's panic is resumed here.
pub(super) async fn try_join_in_order<T, F>(
    limit: usize,
    jobs: impl IntoIterator<Item = F>,
) -> io::Result<Vec<T>>
where
    F: Future<Output = io::Result<T>> + Send + 'static,
    T: Send + 'static,
{
    debug_assert!(limit > 0, "at least one job at a time");
    let mut jobs = jobs.into_iter();
    // By job: its result once done, and its task's handle while it runs.
    let mut results: Vec<Option<T>> = Vec::new();
    let mut handles: Vec<AbortHandle> = Vec::new();
    let mut running = JoinSet::new();
    // The first failure in the jobs' order seen so far.
    let mut failed: Option<(usize, io::Error)> = None;
    loop {
        while failed.is_none() && running.len() < limit {
            let Some(job) = jobs.next() else { break };
            let index = results.len();
            results.push(None);
            handles.push(running.spawn(async move { (index, job.await) }));
        }
        // Invariant: every job started has a slot, and at most `limit` run.
        debug_assert!(results.len() == handles.len() && running.len() <= limit);
        let Some(joined) = running.join_next().await else {
            break;
        };
        let (index, result) = match joined {
            Ok(done) => done,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Aborted by us, after a failure: its result does not matter.
            Err(e) if e.is_cancelled() && failed.is_some() => continue,
            Err(e) => return Err(io::Error::other(e)),
        };
        match result {
            Ok(value) => results[index] = Some(value),
            Err(e) => {
                if failed.as_ref().is_none_or(|&(first, _)| index < first) {
                    for later in &handles[index + 1..] {
                        later.abort();
                    }
                    failed = Some((index, e));
                }
            }
        }
    }
    match failed {
        Some((_, e)) => Err(e),
        None => Ok(results
            .into_iter()
            .map(|r| r.expect("every job ran to the end without failing"))
            .collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    /// Counts a job as running until dropped (run to its end, or aborted).
    struct Live(Arc<AtomicUsize>);

    impl Live {
        fn new(live: Arc<AtomicUsize>, max: &AtomicUsize) -> Self {
            let now = live.fetch_add(1, Ordering::SeqCst) + 1;
            max.fetch_max(now, Ordering::SeqCst);
            Self(live)
        }
    }

    impl Drop for Live {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Job `i` sleeps `delays[i]` ms, then fails if `fails[i]`.
    fn jobs(
        delays: &[u64],
        fails: &[usize],
        live: &Arc<AtomicUsize>,
        max: &Arc<AtomicUsize>,
    ) -> Vec<impl Future<Output = io::Result<usize>> + Send + 'static> {
        delays
            .iter()
            .enumerate()
            .map(|(i, &ms)| {
                let fails = fails.contains(&i);
                let (live, max) = (Arc::clone(live), Arc::clone(max));
                async move {
                    let _live = Live::new(live, &max);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    if fails {
                        Err(io::Error::other(format!("job {i}")))
                    } else {
                        Ok(i * 10)
                    }
                }
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn results_keep_the_jobs_order_and_the_limit_holds() {
        let (live, max) = (Arc::default(), Arc::default());
        let delays = [30, 5, 20, 1, 8, 13, 2, 40];
        let out = try_join_in_order(3, jobs(&delays, &[], &live, &max))
            .await
            .unwrap();
        assert_eq!(out, (0..8).map(|i| i * 10).collect::<Vec<_>>());
        assert_eq!(max.load(Ordering::SeqCst), 3);
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_failure_in_order_wins_whatever_finishes_first() {
        // Job 5 fails first in time, job 2 later: job 2's error is the answer.
        for limit in [1, 2, 4, 8] {
            let (live, max) = (Arc::default(), Arc::default());
            let delays = [10, 10, 50, 10, 10, 1, 10, 10];
            let e = try_join_in_order(limit, jobs(&delays, &[2, 5], &live, &max))
                .await
                .unwrap_err();
            assert_eq!(e.to_string(), "job 2", "limit {limit}");
            // Nothing left running: the later jobs were aborted.
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(live.load(Ordering::SeqCst), 0, "limit {limit}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_the_future_aborts_the_running_jobs() {
        let (live, max) = (Arc::default(), Arc::default());
        let all = try_join_in_order(4, jobs(&[1000; 10], &[], &live, &max));
        assert!(tokio::time::timeout(Duration::from_millis(10), all)
            .await
            .is_err());
        assert_eq!(max.load(Ordering::SeqCst), 4);
        // The aborted tasks drop their jobs when next scheduled.
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }
}
