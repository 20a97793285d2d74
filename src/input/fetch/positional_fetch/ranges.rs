//! Vectored reads: the bytes of several ranges, near ones fetched by one request, the requests
//! run at once.

use std::future::Future;
use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use tokio_util::task::AbortOnDropHandle;

use super::fetcher::PositionalFetch;
use crate::error::Error;
use crate::source::PositionalSource;

/// Ranges of `read_ranges` less than this far apart are fetched by one request (as
/// `object_store`'s `get_ranges` does): one request is cheaper than two round trips.
pub(crate) const COALESCE: u64 = 1 << 20;

/// The most bytes of answers a failed `read_ranges` keeps for its retry.
pub(super) const KEPT_RANGES_MAX: usize = 16 << 20;

/// A request of `read_ranges`, running, or answered by what a failed call kept.
type RangeAnswer = Result<AbortOnDropHandle<io::Result<Bytes>>, Bytes>;

/// Vectored reads.
impl<S: PositionalSource> PositionalFetch<S> {
    /// The bytes of each range of the view, in the order asked: near ranges (less than
    /// [`COALESCE`] apart) are fetched by one request, and the requests run at once, each as a
    /// task (aborted if this future is dropped). Each answer is a slice of its request's
    /// bytes, without a copy. A range past the view's end gives `UnexpectedEof` with what was
    /// there (checked against the length first, so no request asks past it).
    ///
    /// When a request fails with an error a retry can get past, the answers that came back
    /// are kept (`keep_ranges`), and the next call takes them instead of requesting them again.
    pub(crate) async fn read_ranges(
        &self,
        ranges: &[Range<u64>],
    ) -> Result<Vec<Bytes>, (usize, crate::error::Error)> {
        let length = self
            .view_length()
            .await
            .map_err(|e| (0, Error::Source(e)))?;
        for (i, r) in ranges.iter().enumerate() {
            if r.start > r.end {
                return Err((
                    i,
                    Error::InvalidInput(format!("the range {r:?} ends before it starts")),
                ));
            }
            if r.end > length {
                return Err((i, Error::eof(length.saturating_sub(r.start))));
            }
        }
        // Merge near ranges, in offset order, into the requests to make.
        let mut order: Vec<usize> = (0..ranges.len())
            .filter(|&i| !ranges[i].is_empty())
            .collect();
        order.sort_by_key(|&i| ranges[i].start);
        let mut merged: Vec<Range<u64>> = Vec::new();
        for &i in &order {
            let r = &ranges[i];
            match merged.last_mut() {
                Some(last) if r.start <= last.end.saturating_add(COALESCE) => {
                    last.end = last.end.max(r.end);
                }
                _ => merged.push(r.clone()),
            }
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            (
                0,
                Error::Source(io::Error::other("read_ranges needs a tokio runtime")),
            )
        })?;
        // What a failed call kept answers at once; the rest is requested.
        let kept = std::mem::take(&mut *self.ranges_kept.lock().unwrap_or_else(|e| e.into_inner()));
        let mut tasks: Vec<RangeAnswer> = merged
            .iter()
            .map(|m| {
                let held = kept.iter().find(|(start, bytes)| {
                    *start <= m.start && start + bytes.len() as u64 >= m.end
                });
                if let Some((start, bytes)) = held {
                    let from = (m.start - start) as usize;
                    return Err(bytes.slice(from..from + (m.end - m.start) as usize));
                }
                let source = Arc::clone(&self.source);
                let (offset, len) = (
                    self.base.saturating_add(m.start),
                    (m.end - m.start) as usize,
                );
                Ok(AbortOnDropHandle::new(
                    runtime.spawn(async move { source.read_at(offset, len).await }),
                ))
            })
            .collect();
        drop(kept);
        let mut answers = Vec::with_capacity(tasks.len());
        for (k, m) in merged.iter().enumerate() {
            let first = order
                .iter()
                .position(|&i| ranges[i].start >= m.start)
                .unwrap_or(0);
            let answer = match &mut tasks[k] {
                Err(held) => Ok(held.clone()),
                Ok(task) => match task.await {
                    Ok(Ok(bytes)) if (bytes.len() as u64) < m.end - m.start => {
                        // The source ended before the length said.
                        Err(Error::eof(bytes.len() as u64))
                    }
                    Ok(Ok(bytes)) => Ok(bytes),
                    Ok(Err(e)) => Err(Error::Source(e)),
                    Err(join) => Err(Error::Source(io::Error::other(format!(
                        "the request for {m:?} failed: {join}"
                    )))),
                },
            };
            match answer {
                Ok(bytes) => answers.push((m.start, bytes)),
                Err(e) => {
                    if e.can_succeed_on_retry() {
                        self.keep_ranges(answers, &merged[k + 1..], &mut tasks[k + 1..]);
                    }
                    return Err((order[first], e));
                }
            }
        }
        Ok(ranges
            .iter()
            .map(|r| {
                if r.is_empty() {
                    return Bytes::new();
                }
                let k = answers.partition_point(|(start, _)| *start <= r.start) - 1;
                let (start, bytes) = &answers[k];
                bytes.slice((r.start - start) as usize..(r.end - start) as usize)
            })
            .collect())
    }

    /// After a `read_ranges` failed: keeps the answers it got, and those of its later
    /// requests that have come back already (without waiting for the others), for its retry,
    /// at most [`KEPT_RANGES_MAX`] bytes.
    fn keep_ranges(
        &self,
        mut answers: Vec<(u64, Bytes)>,
        merged: &[Range<u64>],
        later: &mut [RangeAnswer],
    ) {
        let mut cx = Context::from_waker(Waker::noop());
        for (m, task) in merged.iter().zip(later.iter_mut()) {
            let bytes = match task {
                Err(held) => held.clone(),
                Ok(task) if task.is_finished() => match Pin::new(task).poll(&mut cx) {
                    Poll::Ready(Ok(Ok(bytes))) => bytes,
                    _ => continue,
                },
                Ok(_) => continue,
            };
            // A short answer (the source ended early) fails the retry anyway.
            if bytes.len() as u64 == m.end - m.start {
                answers.push((m.start, bytes));
            }
        }
        let mut total = 0;
        answers.retain(|(_, bytes)| {
            total += bytes.len();
            total <= KEPT_RANGES_MAX
        });
        *self.ranges_kept.lock().unwrap_or_else(|e| e.into_inner()) = answers;
    }

    /// Drops the answers a failed `read_ranges` kept (`release`).
    pub(super) fn release_kept_ranges(&mut self) {
        *self
            .ranges_kept
            .get_mut()
            .unwrap_or_else(|e| e.into_inner()) = Vec::new();
    }
}
