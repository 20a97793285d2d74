use std::fmt;
use std::io;

use bytes::Bytes;
use tokio::time::Instant;

use crate::layer::limit::request_limiter::Turn;
use crate::layer::limit::waiting_reads::WaitingReads;
use crate::layer::RequestLimiter;
use crate::source::forward::forward;
use crate::source::PositionalSource;
use crate::stats::metrics;

/// A [`PositionalSource`] wrapper whose requests wait for a turn from a shared
/// [`RequestLimiter`]: at most the limiter's bound of requests are in flight across every source
/// it wraps.
///
/// Build one with [`RequestLimiter::wrap`]. [`read_at`](PositionalSource::read_at) and
/// [`len`](PositionalSource::len) wait for a turn and hold it until the inner source answers (or
/// the future is dropped); [`try_read_at`](PositionalSource::try_read_at), which never waits,
/// goes straight to the inner source. Put it below a cache (`Cached<Limited<S>>`) so that hits
/// never wait.
///
/// # Near reads share a turn
///
/// A read that has to wait for a turn waits in line with the other waiting reads of this
/// source; the first of them to get a turn takes along every waiting read near it (their ranges
/// and its own within 128 KiB, or its own length if larger) and asks for all of them in one
/// request, whose answer each gets its slice of (copied if less than half of it, so that a
/// small read kept by a cache never keeps the whole answer alive). With many tasks reading small ranges of one
/// file (term lookups in hot blocks), the limit then costs fewer turns than reads. A read that
/// finds a turn free goes alone at once, and reads already in flight are never joined: a read
/// is only taken along when it would have waited for a turn anyway. If the request fails, every read taken
/// along gets the error (naming its own range); if the read that took it along is dropped,
/// it waits for a turn again. [`RequestLimiter::coalesced`](crate::layer::RequestLimiter::coalesced)
/// counts the reads answered this way.
///
/// It serves no stream ([`read_stream`](crate::source::PositionalSource::read_stream) is
/// `None`): a stream would hold a turn for as long as it is read,
/// so sequential runs through it stay ranged.
pub struct Limited<S> {
    inner: S,
    limiter: RequestLimiter,
    waiting: WaitingReads,
}

impl<S> Limited<S> {
    /// Wraps `inner`, its requests counted against `limiter`.
    pub fn new(inner: S, limiter: RequestLimiter) -> Self {
        Self {
            inner,
            limiter,
            waiting: WaitingReads::new(),
        }
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

impl<S: PositionalSource> Limited<S> {
    /// One request to the inner source, holding `turn` until it answers.
    async fn request(&self, turn: Turn<'_>, offset: u64, len: usize) -> io::Result<Bytes> {
        let started = Instant::now();
        let result = self.inner.read_at(offset, len).await;
        drop(turn);
        match &result {
            Ok(data) => metrics::request(data.len(), started.elapsed()),
            Err(_) => metrics::request_failed(started.elapsed()),
        }
        result
    }
}

impl<S: PositionalSource> PositionalSource for Limited<S> {
    /// The inner source's bytes, asked once a turn is free, or with a near read that got one
    /// first (see [above](Self#near-reads-share-a-turn)).
    ///
    /// # Errors
    ///
    /// The inner source's (for a read taken along, the error of the shared request, naming
    /// this read's range).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a future dropped while it waits leaves the line; one dropped while the
    /// request runs drops the request and gives its turn back (the reads it took along then
    /// wait for a turn again).
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        loop {
            if let Some(turn) = self.limiter.try_turn() {
                return self.request(turn, offset, len).await;
            }
            let (ticket, mut listen) = self.waiting.join(offset, len);
            let permit = tokio::select! {
                biased;
                taken = &mut listen.answer => match taken {
                    Ok(result) => return result,
                    Err(_) => continue, // the read that took it along was dropped: again
                },
                // Taken along: leave the line for a permit at once, wait for the answer.
                _ = &mut listen.taken => match listen.answer.await {
                    Ok(result) => return result,
                    Err(_) => continue,
                },
                permit = self.limiter.wait_permit() => permit,
            };
            let Some(batch) = self.waiting.lead(&ticket) else {
                // Taken along just as its permit came: the permit goes to the next in line.
                drop(permit);
                match listen.answer.await {
                    Ok(result) => return result,
                    Err(_) => continue,
                }
            };
            drop(ticket);
            let turn = self.limiter.take(permit);
            if batch.taken() == 0 {
                return self.request(turn, offset, len).await;
            }
            self.limiter.count_coalesced(batch.taken());
            let result = self.request(turn, batch.offset, batch.len).await;
            return batch.deliver(result, || self.inner.description());
        }
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
        /// The inner source's (no request).
        known_len,
        /// The inner source's, without waiting for a turn (it never waits).
        try_read_at,
        resource, description, release_buffers
    );
}

impl<S: fmt::Debug> fmt::Debug for Limited<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limited")
            .field("inner", &self.inner)
            .field("limiter", &self.limiter)
            .finish_non_exhaustive()
    }
}
