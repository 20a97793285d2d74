//! A positional source failing every n-th request.

use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicU64, Ordering};

use async_buffered_input::source::PositionalSource;

/// An in-memory positional source whose every `every`-th request (`read_at`, counted from 1 as
/// they start) fails with `kind`; nothing is at hand (`try_read_at` reads nothing), so every
/// fetch is a request. `every == 0` never fails. Counts the requests and the failures.
///
/// Its answers are ready at once, unless [`pending`](Self::pending) makes them wait: a failure
/// for one yield to the runtime, bytes for four (a reset comes back faster than a transfer).
/// The fetcher then runs its requests as tasks of their own, and those after a failed one are
/// still in flight when it fails.
#[derive(Debug)]
pub struct FailEvery {
    data: bytes::Bytes,
    every: u64,
    kind: ErrorKind,
    pending: bool,
    requests: AtomicU64,
    failures: AtomicU64,
}

impl FailEvery {
    /// A source over `data` failing every `every`-th request with `kind` (never if `every == 0`).
    pub fn new(data: Vec<u8>, every: u64, kind: ErrorKind) -> Self {
        Self {
            data: data.into(),
            every,
            kind,
            pending: false,
            requests: AtomicU64::new(0),
            failures: AtomicU64::new(0),
        }
    }

    /// Makes every answer wait: a failure for one yield to the runtime, bytes for four (builder
    /// style).
    pub fn pending(mut self, pending: bool) -> Self {
        self.pending = pending;
        self
    }

    /// Requests started so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// Requests failed so far.
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::SeqCst)
    }
}

impl PositionalSource for FailEvery {
    fn read_at(
        &self,
        offset: u64,
        len: usize,
    ) -> impl std::future::Future<Output = io::Result<bytes::Bytes>> + Send {
        let n = self.requests.fetch_add(1, Ordering::SeqCst) + 1;
        let answer = if self.every > 0 && n % self.every == 0 {
            self.failures.fetch_add(1, Ordering::SeqCst);
            Err(io::Error::new(
                self.kind,
                format!(
                    "request {n} (at {offset}) fails: every {}th does",
                    self.every
                ),
            ))
        } else {
            let size = self.data.len() as u64;
            let start = offset.min(size) as usize;
            let end = offset.saturating_add(len as u64).min(size) as usize;
            Ok(self.data.slice(start..end))
        };
        let yields = match (self.pending, answer.is_ok()) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => 4,
        };
        async move {
            for _ in 0..yields {
                tokio::task::yield_now().await;
            }
            answer
        }
    }

    fn len(&self) -> impl std::future::Future<Output = io::Result<u64>> + Send {
        std::future::ready(Ok(self.data.len() as u64))
    }
}
