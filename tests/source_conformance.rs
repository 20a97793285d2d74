//! The core conformance sweep (`common::conformance_with_capacity`) against positional sources
//! behind `PositionalReader`: memory, a local file with and without read-ahead (with page cache
//! reads, the default, and without: every read on the blocking pool), a source only partly at
//! hand to `try_read_at`, and a simulated slow link under paused time.

#[macro_use]
mod common;

use std::time::Duration;

use async_buffered_input::source::{
    FileSource, MemorySource, PositionalReader, ReadAhead, SlowLink,
};
use common::*;

/// A file holding `data` (written to cargo's `target/tmp` and unlinked at once; the open
/// handle keeps it readable).
fn file_source(data: Vec<u8>) -> FileSource {
    let (file, path) = temp_std_file(&data);
    FileSource::from_std(file, path)
}

conformance_tests!(memory, |data: Vec<u8>| PositionalReader::new(
    MemorySource::new(data)
));
conformance_tests!(memory_read_ahead, |data: Vec<u8>| {
    PositionalReader::new(MemorySource::new(data)).with_read_ahead(ReadAhead::new(100, 3))
});
conformance_tests!(memory_read_ahead_depth_1, |data: Vec<u8>| {
    PositionalReader::new(MemorySource::new(data)).with_read_ahead(ReadAhead::new(1, 1))
});
conformance_tests!(file, |data: Vec<u8>| PositionalReader::new(file_source(
    data
)));
conformance_tests!(file_read_ahead, |data: Vec<u8>| {
    PositionalReader::new(file_source(data)).with_read_ahead(ReadAhead::new(4096, 4))
});
conformance_tests!(file_read_ahead_small_chunks, |data: Vec<u8>| {
    PositionalReader::new(file_source(data)).with_read_ahead(ReadAhead::new(77, 2))
});

conformance_tests!(file_blocking_pool, |data: Vec<u8>| PositionalReader::new(
    file_source(data).with_page_cache_reads(false)
));
conformance_tests!(file_blocking_pool_read_ahead, |data: Vec<u8>| {
    PositionalReader::new(file_source(data).with_page_cache_reads(false))
        .with_read_ahead(ReadAhead::new(4096, 4))
});
conformance_tests!(partly_at_hand, |data: Vec<u8>| PositionalReader::new(
    PartlyAtHand::new(data, 1)
));
conformance_tests!(partly_at_hand_read_ahead, |data: Vec<u8>| {
    PositionalReader::new(PartlyAtHand::new(data, 2)).with_read_ahead(ReadAhead::new(300, 3))
});
conformance_tests!(partly_at_hand_small_chunks, |data: Vec<u8>| {
    PositionalReader::new(PartlyAtHand::new(data, 3)).with_read_ahead(ReadAhead::new(5, 2))
});

// A clone of a reader reads like the original.
conformance_tests!(memory_view_of_a_clone, |data: Vec<u8>| {
    PositionalReader::new(MemorySource::new(data)).clone()
});

fn slow_link(
    data: Vec<u8>,
    read_ahead: Option<ReadAhead>,
) -> PositionalReader<SlowLink<MemorySource>> {
    let link = SlowLink::new(
        MemorySource::new(data),
        Duration::from_millis(2),
        100_000_000,
    );
    let mut reader = PositionalReader::new(link);
    reader.set_read_ahead(read_ahead);
    reader
}

#[tokio::test(start_paused = true)]
async fn slow_link_under_paused_time() {
    for cap in CONFORMANCE_CAPACITIES {
        conformance_with_capacity(&|data| slow_link(data, None), cap).await;
    }
}

#[tokio::test(start_paused = true)]
async fn slow_link_with_read_ahead_under_paused_time() {
    for cap in CONFORMANCE_CAPACITIES {
        conformance_with_capacity(&|data| slow_link(data, Some(ReadAhead::new(1000, 4))), cap)
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_read_ahead_on_a_multi_thread_runtime() {
    for cap in [7, 8192] {
        conformance_with_capacity(
            &|data| {
                PositionalReader::new(file_source(data)).with_read_ahead(ReadAhead::new(512, 3))
            },
            cap,
        )
        .await;
    }
}
