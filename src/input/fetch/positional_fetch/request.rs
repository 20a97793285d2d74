//! One request to the source, answered at once or running as a task of its own.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll, Waker};

use tokio::time::Instant;
use tokio_util::task::AbortOnDropHandle;

use crate::memory_budget::Reservation;

/// One request to the source for the view's `[at, at + len)`: already answered, or running as
/// a task that is aborted when the request is dropped.
pub(super) struct Request<T> {
    pub(super) at: u64,
    pub(super) len: usize,
    fetch: Answer<T>,
    // When it was asked, and whether a fetch has waited for it: the read-ahead may grow once
    // per request waited for, by how long it took (`ReadAhead::grown`).
    pub(super) asked: Instant,
    pub(super) waited: bool,
    // The budget its bytes take, if one bounds the read-ahead: passed on to `ready`.
    pub(super) budget: Option<Reservation>,
    // How many fetches had failed when it was asked (`PositionalFetch::errors`).
    pub(super) asked_after: u64,
    // Whether it asks a run's whole way to its stream at once (`top_up`): then it is the only
    // chunk held or in flight, and may pass a chunk's size.
    pub(super) to_stream: bool,
}

enum Answer<T> {
    Done(Option<io::Result<T>>),
    Running(AbortOnDropHandle<io::Result<T>>),
}

impl<T: Send + 'static> Request<T> {
    /// Polls `future` once; if it is not done, spawns it on the current runtime so it
    /// progresses on its own.
    pub(super) fn start<F>(cx: &mut Context<'_>, at: u64, len: usize, future: F) -> Self
    where
        F: Future<Output = io::Result<T>> + Send + 'static,
    {
        let mut future = Box::pin(future);
        let fetch = match future.as_mut().poll(cx) {
            Poll::Ready(result) => Answer::Done(Some(result)),
            Poll::Pending => match tokio::runtime::Handle::try_current() {
                Ok(runtime) => Answer::Running(AbortOnDropHandle::new(runtime.spawn(future))),
                Err(_) => Answer::Done(Some(Err(io::Error::other(format!(
                    "the request for {len} bytes at offset {at} is pending and needs a tokio \
                     runtime to run on"
                ))))),
            },
        };
        Self {
            at,
            len,
            fetch,
            asked: Instant::now(),
            waited: false,
            budget: None,
            asked_after: 0,
            to_stream: false,
        }
    }

    pub(super) fn end(&self) -> u64 {
        self.at.saturating_add(self.len as u64)
    }

    /// Its answer, if it is here, without waiting for it: a task that finished is polled (with
    /// a waker that does nothing: nobody waits on it here) and its answer kept.
    pub(super) fn answer(&mut self) -> Option<&io::Result<T>> {
        if let Answer::Running(handle) = &mut self.fetch {
            if !handle.is_finished() {
                return None;
            }
            let Poll::Ready(result) =
                Pin::new(handle).poll(&mut Context::from_waker(Waker::noop()))
            else {
                return None; // out of the task's budget: taken later
            };
            self.fetch = Answer::Done(Some(result.unwrap_or_else(|join| {
                Err(io::Error::other(format!(
                    "the request for {} bytes at offset {} failed: {join}",
                    self.len, self.at
                )))
            })));
        }
        match &self.fetch {
            Answer::Done(Some(result)) => Some(result),
            _ => None,
        }
    }

    /// Whether it has not failed: its answer is bytes, or it is still in flight (it may fail
    /// yet: the fetch that reaches it finds out). The answer of a spawned request whose task
    /// has finished is taken first (without waiting: the task is done).
    pub(super) fn not_failed(&mut self) -> bool {
        !matches!(self.answer(), Some(Err(_)))
    }

    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        match &mut self.fetch {
            Answer::Done(result) => Poll::Ready(
                result
                    .take()
                    .unwrap_or_else(|| Err(io::Error::other("request polled after it completed"))),
            ),
            Answer::Running(handle) => Poll::Ready(match ready!(Pin::new(handle).poll(cx)) {
                Ok(result) => result,
                Err(join) => Err(io::Error::other(format!(
                    "the request for {} bytes at offset {} failed: {join}",
                    self.len, self.at
                ))),
            }),
        }
    }
}
