//! The `metrics` feature: the wrappers' counters reach an installed recorder.
#![cfg(feature = "metrics")]

use std::time::Duration;

use abi_testkit::{Delay, Scripted};
use async_buffered_input::layer::{Hedged, RequestLimiter, Retrying};
use async_buffered_input::metrics as names;
use async_buffered_input::source::{MemorySource, PositionalSource};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

/// 1000 bytes whose request 0 stalls (a deadline, then a retry), the rest answer at once.
fn script() -> Scripted {
    Scripted::new(vec![9u8; 1000]).delay_with(|r| match r.index {
        0 => Delay::Forever,
        _ => Delay::Ready,
    })
}

/// Runs `work` on a current-thread runtime with a paused clock, recording into a recorder of
/// its own: what it returned, and the recorder's snapshotter.
fn recorded_with<T>(work: impl std::future::Future<Output = T>) -> (T, Snapshotter) {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let out = metrics::with_local_recorder(&recorder, || {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap()
            .block_on(work)
    });
    (out, snapshotter)
}

/// [`recorded_with`] for work that returns nothing.
fn recorded(work: impl std::future::Future<Output = ()>) -> Snapshotter {
    recorded_with(work).1
}

#[test]
fn counters_move() {
    let snapshotter = recorded(async {
        let limiter = RequestLimiter::new(1);
        // Request 0 fails after 20 ms, request 2 stalls, the rest answer at once.
        let script = Scripted::new(vec![9u8; 1000])
            .delay_with(|r| match r.index {
                0 => Delay::Sleep(Duration::from_millis(20)),
                2 => Delay::Forever,
                _ => Delay::Ready,
            })
            .fail_request(0);
        let source = Retrying::new(
            Hedged::new(limiter.wrap(script))
                .with_fixed_delay(Duration::from_millis(10))
                .with_budget(1.0),
        )
        .with_attempts(3)
        .with_backoff(Duration::from_millis(1), Duration::from_millis(1))
        .with_attempt_deadline(Duration::from_millis(100), 1 << 20);
        // The first read's request fails at 20 ms; its hedge, sent at 10 ms, waited for the
        // only turn until then, and answers (it won).
        assert_eq!(source.read_at(0, 100).await.unwrap().len(), 100);
        // The second read's request stalls; its hedge waits for the only turn; at 100 ms the
        // attempt (both) is abandoned at its deadline, and the retry answers.
        assert_eq!(source.read_at(100, 100).await.unwrap().len(), 100);
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
    assert_eq!(counter(names::DEADLINES_HIT), 1, "{counters:?}");
    assert_eq!(counter(names::RETRIES), 1, "{counters:?}");
    assert_eq!(counter(names::HEDGES_FIRED), 2, "{counters:?}");
    assert_eq!(counter(names::HEDGES_WON), 1, "{counters:?}");
    // Answered or failed: requests 0, 1 (the hedge) and 3 (the retry); the stalled one and
    // its waiting hedge were dropped, not answered.
    assert_eq!(counter(names::REQUESTS), 3, "{counters:?}");
    assert_eq!(counter(names::REQUEST_ERRORS), 1, "{counters:?}");
    assert_eq!(counter(names::REQUEST_BYTES), 200, "{counters:?}");
    assert_eq!(histograms.get(names::REQUEST_DURATION), Some(&3));
    assert_eq!(
        histograms.get(names::LIMITER_WAIT),
        Some(&1),
        "the first hedge waited for its turn (the second was dropped waiting)"
    );
}

#[test]
fn retries_are_counted() {
    let snapshotter = recorded(async {
        let source = Retrying::new(script())
            .with_attempts(3)
            .with_backoff(Duration::from_millis(1), Duration::from_millis(1))
            .with_attempt_deadline(Duration::from_millis(100), 1 << 20);
        assert_eq!(source.read_at(0, 10).await.unwrap().len(), 10);
    });
    let retries = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .find(|(key, ..)| key.key().name() == names::RETRIES)
        .map(|(.., value)| value);
    assert_eq!(retries, Some(DebugValue::Counter(1)));
}

/// Counters and gauges from `snapshotter`, by name and `tier` label (`""` without one).
#[cfg(feature = "disk-cache")]
fn values(snapshotter: &Snapshotter) -> std::collections::HashMap<(String, String), f64> {
    let mut out = std::collections::HashMap::new();
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        let tier = key
            .key()
            .labels()
            .find(|l| l.key() == "tier")
            .map(|l| l.value().to_owned())
            .unwrap_or_default();
        let value = match value {
            DebugValue::Counter(n) => n as f64,
            DebugValue::Gauge(g) => g.into_inner(),
            DebugValue::Histogram(_) => continue,
        };
        out.insert((key.key().name().to_owned(), tier), value);
    }
    out
}

/// Reads blocks `blocks` of `data` through `cache`, checking every byte.
#[cfg(feature = "disk-cache")]
async fn read_blocks(
    data: &[u8],
    bs: usize,
    cache: &async_buffered_input::cache::BlockCache,
    blocks: std::ops::Range<usize>,
) {
    let source = async_buffered_input::cache::Cached::with_key(
        MemorySource::new(data.to_vec()),
        cache.clone(),
        "b",
    );
    // Last block first: reads that continue each other would be a scan, which the cache reads
    // around without admitting (see `Cached`), and this test counts what the tiers admit.
    for b in blocks.rev() {
        let got = source.read_at((b * bs) as u64, bs).await.unwrap();
        assert_eq!(&got[..], &data[b * bs..(b + 1) * bs], "block {b}");
    }
}

#[cfg(feature = "disk-cache")]
#[test]
fn cache_tiers_are_counted() {
    use async_buffered_input::cache::{BlockCache, DiskTier};

    let dir = tempfile::tempdir().unwrap();
    let bs = 4096;
    let data: Vec<u8> = (0..8 * bs).map(|i| (i % 251) as u8).collect();
    let ((stats, disk_bytes), snapshotter) = recorded_with(async {
        // Room on disk for 4 of the 8 blocks, in memory for all of them.
        let slot = (bs + 552) as u64;
        let disk = DiskTier::open(dir.path(), 4 * slot, bs).unwrap();
        // 8 misses in memory and on disk, 8 writes, 4 of them evicting an earlier block;
        // then 8 hits in memory.
        let first = BlockCache::with_disk_tier(8 * bs as u64, disk.clone());
        read_blocks(&data, bs, &first, 0..8).await;
        read_blocks(&data, bs, &first, 0..8).await;
        // A fresh memory tier: blocks 0..4 (read last, so kept on disk) come from disk.
        let second = BlockCache::with_disk_tier(8 * bs as u64, disk.clone());
        read_blocks(&data, bs, &second, 0..4).await;
        // The region files cut to nothing: the next fresh tier finds 4 corrupt blocks.
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "bin") {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_len(0)
                    .unwrap();
            }
        }
        let third = BlockCache::with_disk_tier(8 * bs as u64, disk.clone());
        read_blocks(&data, bs, &third, 0..4).await;
        let disk_bytes = third.stats().disk_bytes;
        let stats = first.stats() + second.stats() + third.stats();
        (stats, disk_bytes)
    });
    let values = values(&snapshotter);
    let value = |name: &str, tier: &str| {
        values
            .get(&(name.to_owned(), tier.to_owned()))
            .copied()
            .unwrap_or(0.0)
    };
    assert_eq!(value(names::CACHE_HITS, "memory"), 8.0, "{values:?}");
    assert_eq!(value(names::CACHE_MISSES, "memory"), 16.0, "{values:?}");
    assert_eq!(value(names::CACHE_HITS, "disk"), 4.0, "{values:?}");
    assert_eq!(value(names::CACHE_MISSES, "disk"), 12.0, "{values:?}");
    assert_eq!(
        value(names::DISK_TIER_CORRUPT_BLOCKS, ""),
        4.0,
        "{values:?}"
    );
    // The metrics agree with the caches' own counters (the disk tier's are shared by all three,
    // so its numbers came three times into the sum).
    assert_eq!(value(names::CACHE_HITS, "memory"), stats.hits as f64);
    assert_eq!(
        value(names::DISK_TIER_EVICTIONS, ""),
        stats.disk_evictions as f64 / 3.0
    );
    assert!(stats.disk_evictions > 0, "{stats}");
    assert_eq!(value(names::DISK_TIER_BYTES, ""), disk_bytes as f64);
}
