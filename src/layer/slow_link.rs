use std::io;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;

use crate::source::forward::forward;
use crate::source::PositionalSource;

/// A [`PositionalSource`] wrapper that serves its inner source's bytes as if over a network
/// link: every request waits a round trip of `latency`, and all requests share one link of
/// `bandwidth` bytes per second.
///
/// The model is deterministic and runs on [`tokio::time`], so it works under
/// `tokio::time::pause` (tests then take no real time):
///
/// - a request issued at `t` is answered at `max(t + latency, link free) + len / bandwidth`,
///   where "link free" is when the previous transfer ends: concurrent requests overlap their
///   latency but share the bandwidth, transferring one after another;
/// - [`len`](PositionalSource::len) costs one round trip (like an HTTP `HEAD`);
/// - a bandwidth of 0 means no cap (latency only);
/// - tokio's timer has a resolution of 1 ms, so each answer can come up to 1 ms late (the link's
///   booking stays exact, so pipelined requests do not accumulate the error; one-at-a-time
///   requests do).
///
/// The inner source's own time adds to the latency (a real file read takes what it takes).
///
/// # Examples
///
/// ```
/// use abi_testkit::SlowLink;
/// use async_buffered_input::source::{MemorySource, PositionalSource};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> std::io::Result<()> {
/// // 2 ms round trips, 1 MB/s.
/// let link = SlowLink::new(MemorySource::new(vec![0u8; 4000]), Duration::from_millis(2), 1_000_000);
/// let started = tokio::time::Instant::now();
/// let (a, b) = tokio::join!(link.read_at(0, 1000), link.read_at(1000, 1000));
/// assert_eq!(a?.len() + b?.len(), 2000);
/// // The latencies overlap, the transfers (1 ms each) do not.
/// assert_eq!(started.elapsed(), Duration::from_millis(4));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct SlowLink<S> {
    inner: S,
    latency: Duration,
    // Bytes per second; 0 = no cap.
    bandwidth: u64,
    // When the last transfer booked on the link ends (`None` before the first).
    link_free_at: Mutex<Option<Instant>>,
}

impl<S> SlowLink<S> {
    /// Wraps `inner` behind a link with `latency` per request and `bandwidth` bytes per second
    /// shared by all requests (0: no cap).
    pub fn new(inner: S, latency: Duration, bandwidth: u64) -> Self {
        Self {
            inner,
            latency,
            bandwidth,
            link_free_at: Mutex::new(None),
        }
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The latency of every request.
    pub fn latency(&self) -> Duration {
        self.latency
    }

    /// The bandwidth in bytes per second (0: no cap).
    pub fn bandwidth(&self) -> u64 {
        self.bandwidth
    }

    /// The time `len` bytes take on the link once their transfer starts.
    fn transfer_time(&self, len: usize) -> Duration {
        if self.bandwidth == 0 {
            return Duration::ZERO;
        }
        let nanos = (len as u128 * 1_000_000_000).div_ceil(u128::from(self.bandwidth));
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// Books a transfer of `len` bytes for a request issued at `issued`; returns when it ends.
    fn book(&self, issued: Instant, len: usize) -> Instant {
        // A poisoned lock only means another request panicked; the time it holds is still valid.
        let mut free = self.link_free_at.lock().unwrap_or_else(|e| e.into_inner());
        let arrives = later(issued, self.latency);
        let starts = match *free {
            Some(free) if free > arrives => free,
            _ => arrives,
        };
        let ends = later(starts, self.transfer_time(len));
        *free = Some(ends);
        ends
    }
}

/// `at + by`, or a century later if that overflows.
fn later(at: Instant, by: Duration) -> Instant {
    at.checked_add(by)
        .unwrap_or_else(|| at + Duration::from_secs(100 * 365 * 24 * 3600))
}

impl<S: PositionalSource> PositionalSource for SlowLink<S> {
    /// The inner source's bytes, answered after the link's latency and transfer time.
    ///
    /// Dropping the future before it completes still leaves its transfer booked on the link
    /// (the bytes were on their way).
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let issued = Instant::now();
        let data = self.inner.read_at(offset, len).await?;
        let ends = self.book(issued, data.len());
        tokio::time::sleep_until(ends).await;
        Ok(data)
    }

    forward!(inner =>
        /// The inner source's (no request).
        known_len,
        /// The inner source's name.
        resource,
        description,
        /// The inner source's.
        release_buffers
    );

    /// The inner source's length, after one round trip.
    async fn len(&self) -> io::Result<u64> {
        let issued = Instant::now();
        let len = self.inner.len().await?;
        tokio::time::sleep_until(later(issued, self.latency)).await;
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemorySource;

    #[tokio::test(start_paused = true)]
    async fn sequential_requests_pay_latency_each_time() {
        let link = SlowLink::new(
            MemorySource::new(vec![1u8; 100]),
            Duration::from_millis(5),
            0,
        );
        let t0 = Instant::now();
        link.read_at(0, 10).await.unwrap();
        link.read_at(10, 10).await.unwrap();
        assert_eq!(t0.elapsed(), Duration::from_millis(10));
        assert_eq!(link.len().await.unwrap(), 100);
        assert_eq!(t0.elapsed(), Duration::from_millis(15));
    }

    #[test]
    fn transfer_time_does_not_overflow() {
        let link = SlowLink::new(MemorySource::default(), Duration::ZERO, 1);
        assert_eq!(
            link.transfer_time(usize::MAX),
            Duration::from_nanos(u64::MAX)
        );
    }
}
