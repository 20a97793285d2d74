//! The `metrics` feature: the wrappers' counters reach an installed recorder.
#![cfg(feature = "metrics")]

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_buffered_input::metrics as names;
use async_buffered_input::source::{
    Deadline, HedgePolicy, Hedged, MemorySource, PositionalSource, RequestLimiter, RetryPolicy,
    Retrying,
};
use bytes::Bytes;
use metrics_util::debugging::{DebugValue, DebuggingRecorder};

/// Request 0 stalls (a deadline, then a retry), request 2 is slow (hedged), the rest answer at
/// once.
struct Script {
    data: MemorySource,
    sent: AtomicUsize,
}

impl PositionalSource for Script {
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        match self.sent.fetch_add(1, Ordering::SeqCst) {
            0 => std::future::pending().await,
            2 => tokio::time::sleep(Duration::from_secs(1)).await,
            _ => {}
        }
        self.data.read_at(offset, len).await
    }

    async fn len(&self) -> io::Result<u64> {
        self.data.len().await
    }
}

#[test]
fn counters_move() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            let limiter = RequestLimiter::new(1);
            let source = Retrying::new(
                Hedged::new(
                    limiter.wrap(Deadline::new(
                        Script {
                            data: MemorySource::new(vec![9u8; 1000]),
                            sent: AtomicUsize::new(0),
                        },
                        Duration::from_millis(100),
                        1 << 20,
                    )),
                    HedgePolicy::fixed(Duration::from_millis(10)).with_budget(1.0),
                ),
                RetryPolicy::new(3)
                    .with_backoff(Duration::from_millis(1), Duration::from_millis(1)),
            );
            // Each read: its request stalls (0) or is slow (2); the hedge, sent after 10 ms,
            // waits for the only turn; the first request hits its deadline at 100 ms and gives
            // the turn to the hedge, which answers.
            assert_eq!(source.read_at(0, 100).await.unwrap().len(), 100);
            assert_eq!(source.read_at(100, 100).await.unwrap().len(), 100);
        });
    });
    let mut counters = std::collections::HashMap::new();
    let mut histograms = std::collections::HashMap::new();
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        let name = key.key().name().to_owned();
        match value {
            DebugValue::Counter(n) => {
                counters.insert(name, n);
            }
            DebugValue::Histogram(values) => {
                histograms.insert(name, values.len());
            }
            DebugValue::Gauge(_) => {}
        }
    }
    let counter = |name: &str| counters.get(name).copied().unwrap_or(0);
    assert_eq!(counter(names::DEADLINES_HIT), 2, "{counters:?}");
    assert_eq!(counter(names::HEDGES_FIRED), 2, "{counters:?}");
    assert_eq!(counter(names::HEDGES_WON), 2, "{counters:?}");
    assert_eq!(counter(names::REQUESTS), 4, "{counters:?}");
    assert_eq!(counter(names::REQUEST_ERRORS), 2, "{counters:?}");
    assert_eq!(counter(names::REQUEST_BYTES), 200, "{counters:?}");
    assert_eq!(histograms.get(names::REQUEST_DURATION), Some(&4));
    assert_eq!(
        histograms.get(names::LIMITER_WAIT),
        Some(&2),
        "both hedges waited"
    );
}

#[test]
fn retries_are_counted() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            let source = Retrying::new(
                Deadline::new(
                    Script {
                        data: MemorySource::new(vec![9u8; 1000]),
                        sent: AtomicUsize::new(0),
                    },
                    Duration::from_millis(100),
                    1 << 20,
                ),
                RetryPolicy::new(3)
                    .with_backoff(Duration::from_millis(1), Duration::from_millis(1)),
            );
            assert_eq!(source.read_at(0, 10).await.unwrap().len(), 10);
        });
    });
    let retries = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .find(|(key, ..)| key.key().name() == names::RETRIES)
        .map(|(.., value)| value);
    assert_eq!(retries, Some(DebugValue::Counter(1)));
}
