//! `StatsGroup`: the stats of an input and all its clones and slices together, while they are
//! open and after they are dropped.

use std::io::Cursor;

use abi_testkit::{pattern_vec, Rng};
use async_buffered_input::source::MemorySource;
use async_buffered_input::{AsyncBufferedInput, Stats, StatsGroup};
use async_buffered_input::{PositionalFetch, ReadAhead};

type Input = AsyncBufferedInput<PositionalFetch<MemorySource>>;

fn input(len: usize, capacity: usize) -> (Input, Vec<u8>) {
    let data = pattern_vec(len);
    let fetch = PositionalFetch::new(MemorySource::new(data.clone()));
    (AsyncBufferedInput::with_capacity(capacity, fetch), data)
}

/// Reads a few things: window hits, a refill, a read straight into the caller's buffer.
async fn some_reads(input: &mut Input, data: &[u8], at: u64) {
    input.seek_to(at);
    let a = input.read_u32().await.unwrap();
    assert_eq!(a.to_be_bytes(), data[at as usize..at as usize + 4]);
    input.read_byte().await.unwrap();
    let big = input.read_bytes_owned(3000).await.unwrap();
    assert_eq!(big[..], data[at as usize + 5..at as usize + 3005]);
    input.read_u16().await.unwrap(); // a refill
    for _ in 0..3 {
        input.read_byte().await.unwrap(); // window hits
    }
}

#[tokio::test]

async fn clones_slices_and_slices_of_clones_add_up_in_the_group_after_they_are_dropped() {
    let group = StatsGroup::new();
    let (input, data) = input(100_000, 1024);
    let mut input = input.with_stats_group(&group);
    some_reads(&mut input, &data, 10).await;

    let mut clone = input.clone();
    some_reads(&mut clone, &data, 20_000).await;
    let mut slice = input.slice(50_000, 20_000).await.unwrap();
    some_reads(&mut slice, &data[50_000..70_000], 100).await;
    let mut slice_of_clone = clone.slice(1000, 9000).await.unwrap();
    some_reads(&mut slice_of_clone, &data[1000..10_000], 3).await;
    let mut clone_of_slice = slice.clone();
    some_reads(&mut clone_of_slice, &data[50_000..70_000], 7000).await;

    for other in [&clone, &slice, &slice_of_clone, &clone_of_slice] {
        assert!(other.stats_group().unwrap().same_group(&group));
    }
    let all: Vec<Stats> = [&input, &clone, &slice, &slice_of_clone, &clone_of_slice]
        .iter()
        .map(|i| i.stats())
        .collect();
    let sum: Stats = all.iter().sum();
    // Open, every fetch is there already; the bytes handed out at most all of them.
    let open = group.stats();
    assert_eq!(open.bytes_from_source, sum.bytes_from_source, "{open:?}");
    assert_eq!(open.underlying_reads, sum.underlying_reads, "{open:?}");
    assert!(open.bytes_from_window <= sum.bytes_from_window, "{open:?}");
    assert_eq!(open.bytes_direct, sum.bytes_direct, "{open:?}");

    drop((clone, slice, slice_of_clone, clone_of_slice));
    // The dropped ones' last window reads are in; the open one's since its last read past the
    // window are not yet.
    let input_stats = input.stats();
    drop(input);
    assert_eq!(group.stats(), sum);
    assert_eq!(input_stats, all[0]);
    assert_eq!(
        group.to_string(),
        sum.to_string(),
        "Display is the total's Display"
    );
}

#[tokio::test]

async fn an_open_input_shows_its_fetches_at_once_and_its_window_reads_at_its_next_slow_read() {
    let group = StatsGroup::new();
    let (input, data) = input(10_000, 100);
    let mut input = input.with_stats_group(&group);
    input.read_u32().await.unwrap(); // a refill of 100 bytes
    assert_eq!(group.stats().bytes_from_source, 100);
    assert_eq!(group.stats().underlying_reads, 1);
    assert_eq!(
        group.stats().bytes_from_window,
        4,
        "a read past the window publishes"
    );
    for _ in 0..10 {
        input.read_u32().await.unwrap(); // window hits: no cost, not published yet
    }
    assert_eq!(group.stats().bytes_from_window, 4);
    let mut buf = vec![0u8; 100];
    input.read_bytes(&mut buf).await.unwrap(); // past the window: published
    assert_eq!(buf, data[44..144]);
    assert_eq!(group.stats(), input.stats());
    for _ in 0..3 {
        input.read_byte().await.unwrap(); // window hits again: published when dropped
    }
    let last = input.stats();
    drop(input);
    assert_eq!(group.stats(), last);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]

async fn clones_read_in_concurrent_tasks_add_up_exactly() {
    let group = StatsGroup::new();
    let data = pattern_vec(1 << 20);
    let fetch = PositionalFetch::new(MemorySource::new(data.clone()))
        .with_read_ahead(ReadAhead::new(16 << 10, 2));
    let input = AsyncBufferedInput::with_capacity(4096, fetch).with_stats_group(&group);
    let tasks: Vec<_> = (0..16u64)
        .map(|k| {
            let mut clone = input.clone();
            let data = data.clone();
            tokio::spawn(async move {
                let mut rng = Rng::new(k);
                for _ in 0..200 {
                    let at = rng.below(data.len() as u64 - 10_000);
                    let len = 1 + rng.below(6000) as usize;
                    clone.seek_to(at);
                    let got = clone.read_bytes_owned(len).await.unwrap();
                    assert_eq!(got[..], data[at as usize..at as usize + len]);
                }
                clone.stats() // the clone is dropped here
            })
        })
        .collect();
    let mut sum = input.stats();
    for task in tasks {
        sum += task.await.unwrap();
    }
    drop(input);
    assert_eq!(group.stats(), sum);
    assert!(sum.bytes_from_source > 0 && sum.underlying_reads > 0);
}

#[tokio::test]

async fn a_stream_input_counts_too_and_into_inner_publishes() {
    let group = StatsGroup::new();
    let data = pattern_vec(5000);
    let mut input =
        AsyncBufferedInput::with_capacity(64, Cursor::new(data.clone())).with_stats_group(&group);
    input.seek_to(1000);
    let got = input.read_bytes_owned(300).await.unwrap();
    assert_eq!(got[..], data[1000..1300]);
    input.read_u16().await.unwrap();
    assert_eq!(input.length().await.unwrap(), 5000); // a seek to the end
    let last = input.stats();
    assert!(last.underlying_seeks >= 2, "{last:?}");
    let _stream = input.into_inner();
    assert_eq!(group.stats(), last);
}

#[tokio::test]

async fn joining_a_group_brings_the_work_so_far_and_moving_leaves_it_behind() {
    let (first, second) = (StatsGroup::new(), StatsGroup::new());
    let (mut input, _) = input(10_000, 100);
    input.read_bytes_owned(500).await.unwrap();
    let before = input.stats();
    let mut input = input.with_stats_group(&first);
    input.read_u32().await.unwrap();
    assert!(input.stats_group().unwrap().same_group(&first));
    let in_first = input.stats();
    let mut input = input.with_stats_group(&second);
    input.read_bytes_owned(700).await.unwrap();
    let last = input.stats();
    drop(input);
    assert!(before.bytes_from_source > 0);
    assert_eq!(
        first.stats(),
        in_first,
        "the work before joining counts in the first group"
    );
    assert_eq!(
        second.stats(),
        last - in_first,
        "only the work after moving counts"
    );
    assert!(!first.same_group(&second));
}

#[tokio::test]

async fn inputs_in_no_group_have_none_and_neither_do_their_clones() {
    let (input, _) = input(1000, 100);
    assert!(input.stats_group().is_none());
    assert!(input.clone().stats_group().is_none());
    assert!(input.slice(0, 10).await.unwrap().stats_group().is_none());
    let group = StatsGroup::new();
    assert_eq!(group.stats(), Stats::default());
    assert_eq!(
        format!("{group:?}"),
        format!("StatsGroup({:?})", Stats::default())
    );
}
