use std::io;

use bytes::Bytes;
use tokio::time::Instant;

use super::forward::forward;
use super::{PositionalSource, RequestLimiter};
use crate::metrics;

/// A [`PositionalSource`] wrapper whose requests wait for a turn from a shared
/// [`RequestLimiter`]: at most the limiter's bound of requests are in flight across every source
/// it wraps.
///
/// Build one with [`RequestLimiter::wrap`]. [`read_at`](PositionalSource::read_at) and
/// [`len`](PositionalSource::len) wait for a turn and hold it until the inner source answers (or
/// the future is dropped); [`try_read_at`](PositionalSource::try_read_at), which never waits,
/// goes straight to the inner source. Put it below a cache (`Cached<Limited<S>>`) so that hits
/// never wait.
#[derive(Debug)]
pub struct Limited<S> {
    inner: S,
    limiter: RequestLimiter,
}

impl<S> Limited<S> {
    /// Wraps `inner`, its requests counted against `limiter`.
    pub fn new(inner: S, limiter: RequestLimiter) -> Self {
        Self { inner, limiter }
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The limiter the requests count against.
    pub fn limiter(&self) -> &RequestLimiter {
        &self.limiter
    }
}

impl<S: PositionalSource> PositionalSource for Limited<S> {
    /// The inner source's bytes, asked once a turn is free.
    ///
    /// # Errors
    ///
    /// The inner source's.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a future dropped while it waits leaves the queue; one dropped while the
    /// request runs drops the request and gives its turn back.
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let _turn = self.limiter.turn().await;
        let started = Instant::now();
        let result = self.inner.read_at(offset, len).await;
        match &result {
            Ok(data) => metrics::request(data.len(), started.elapsed()),
            Err(_) => metrics::request_failed(started.elapsed()),
        }
        result
    }

    /// The inner source's length, asked once a turn is free.
    ///
    /// # Errors
    ///
    /// The inner source's.
    ///
    /// # Cancel safety
    ///
    /// As [`read_at`](Self::read_at).
    async fn len(&self) -> io::Result<u64> {
        let _turn = self.limiter.turn().await;
        self.inner.len().await
    }

    forward!(inner =>
        /// The inner source's, without waiting for a turn (it never waits).
        try_read_at,
        resource, description, release_buffers
    );
}
