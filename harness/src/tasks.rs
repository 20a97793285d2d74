//! Running a cell's tasks at once ([`all_tasks`]), and naming the request that failed in one
//! ([`failed_request`]): shared by the timed and the verification passes.

use std::io;

use tokio::task::JoinSet;

use crate::error::context;

/// Runs `job(task, item)` for every item at once and returns the results in task order: inline
/// for one item, as spawned tasks for several (so that a multi-threaded runtime runs them in
/// parallel).
pub(crate) async fn all_tasks<I, T, F, Fut>(items: Vec<I>, job: F) -> io::Result<Vec<T>>
where
    I: Send + 'static,
    T: Send + 'static,
    F: Fn(usize, I) -> Fut,
    Fut: std::future::Future<Output = io::Result<T>> + Send + 'static,
{
    if items.len() == 1 {
        let item = items.into_iter().next().expect("one item");
        return Ok(vec![job(0, item).await?]);
    }
    let mut set = JoinSet::new();
    for (task, item) in items.into_iter().enumerate() {
        let running = job(task, item);
        set.spawn(async move { (task, running.await) });
    }
    let mut results: Vec<Option<T>> = (0..set.len()).map(|_| None).collect();
    while let Some(joined) = set.join_next().await {
        let (task, result) = joined.map_err(io::Error::other)?;
        results[task] = Some(result?);
    }
    Ok(results
        .into_iter()
        .map(|r| r.expect("every task reported"))
        .collect())
}

/// An error of the request at `offset`, in pass `pass` (from 0) of task `task`.
pub(crate) fn failed_request(e: io::Error, task: usize, offset: u64, pass: u32) -> io::Error {
    let task = if task > 0 {
        format!(", task {task}")
    } else {
        String::new()
    };
    context(
        e,
        format!("request at offset {offset} (pass {}{task})", pass + 1),
    )
}
