//! Vectored reads: the bytes of several ranges, near ones fetched by one request, the requests
//! run at once.

use std::io;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use tokio_util::task::AbortOnDropHandle;

use super::PositionalFetch;
use crate::error::Error;
use crate::source::PositionalSource;

/// Ranges of `read_ranges` less than this far apart are fetched by one request (as
/// `object_store`'s `get_ranges` does): one request is cheaper than two round trips.
pub(crate) const COALESCE: u64 = 1 << 20;

/// Vectored reads.
impl<S: PositionalSource> PositionalFetch<S> {
    /// The bytes of each range of the view, in the order asked: near ranges (less than
    /// [`COALESCE`] apart) are fetched by one request, and the requests run at once, each as a
    /// task (aborted if this future is dropped). Each answer is a slice of its request's
    /// bytes, without a copy. A range past the view's end gives `UnexpectedEof` with what was
    /// there (checked against the length first, so no request asks past it).
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
        let tasks: Vec<_> = merged
            .iter()
            .map(|m| {
                let source = Arc::clone(&self.source);
                let (offset, len) = (
                    self.base.saturating_add(m.start),
                    (m.end - m.start) as usize,
                );
                AbortOnDropHandle::new(
                    runtime.spawn(async move { source.read_at(offset, len).await }),
                )
            })
            .collect();
        let mut answers = Vec::with_capacity(tasks.len());
        for (m, task) in merged.iter().zip(tasks) {
            let first = order
                .iter()
                .position(|&i| ranges[i].start >= m.start)
                .unwrap_or(0);
            let bytes = match task.await {
                Ok(Ok(bytes)) => bytes,
                Ok(Err(e)) => return Err((order[first], Error::Source(e))),
                Err(join) => {
                    let e = io::Error::other(format!("the request for {m:?} failed: {join}"));
                    return Err((order[first], Error::Source(e)));
                }
            };
            if (bytes.len() as u64) < m.end - m.start {
                // The source ended before the length said.
                return Err((order[first], Error::eof(bytes.len() as u64)));
            }
            answers.push((m.start, bytes));
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
}
