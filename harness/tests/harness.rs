//! Integration tests of the throughput harness (`throughput_harness`) on small files.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_buffered_input::fetch::ReadAhead;
use async_buffered_input::source::MemorySource;
use throughput_harness::{
    fill_pattern, BoxPositionalSource, BoxSource, Checksum, CountingPositionalSource, Event, Plan,
    ReaderKind, Report, Source,
};

fn pattern(len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    fill_pattern(0, &mut data);
    data
}

fn checksum_of_passes(data: &[u8], passes: u32) -> u64 {
    let mut sum = Checksum::new();
    for _ in 0..passes {
        sum.update(data);
    }
    sum.finish()
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("abi-harness-test-")
        .tempdir()
        .unwrap()
}

/// Every cell complete, read every byte `repetitions` times, and read the right bytes.
fn assert_complete_and_correct(report: &Report, data: &[u8]) {
    let expected = checksum_of_passes(data, report.repetitions);
    let total = data.len() as u64 * u64::from(report.repetitions);
    for r in &report.cells {
        assert!(r.complete, "{r}");
        assert_eq!(r.bytes, total, "{r}");
        let per_pass = (data.len() as u64).div_ceil(r.cell.read_size as u64);
        assert_eq!(r.requests, per_pass * u64::from(report.repetitions), "{r}");
        assert_eq!(r.checksum, expected, "{r}");
        // Each byte came from the source at least once (later passes may reuse a window).
        assert!(r.underlying_bytes >= data.len() as u64, "{r:?}");
        assert!(
            r.bytes_per_second() > 0.0 && r.requests_per_second() > 0.0,
            "{r:?}"
        );
        assert!(
            (r.mb_per_second() * 1e6 - r.bytes_per_second()).abs() < 1e-3 * r.bytes_per_second()
        );
    }
    assert!(report.checksums_agree());
    assert!(!report.has_partial());
    assert_eq!(report.reference_checksum(), Some(expected));
}

#[tokio::test]
async fn a_written_file_is_read_by_every_reader_with_the_same_checksum() {
    let dir = temp_dir();
    let path = dir.path().join("data.bin");
    let len = 200 * 1024 + 17;
    let report = Plan::new(Source::file(&path))
        .write_first(len as u64, 1000)
        .sizes([100, 1000, 8192, 65536])
        .capacities([4096, 65536])
        .repetitions(2)
        .run()
        .await
        .unwrap();

    let data = pattern(len);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        data,
        "the write phase writes the pattern"
    );
    let write = report.write.as_ref().unwrap();
    assert_eq!(
        (write.bytes, write.buffer_size, write.writes),
        (len as u64, 1000, 205)
    );
    assert_eq!(write.path, path);
    assert!(write
        .to_string()
        .starts_with(&format!("Wrote a file of {len} bytes in ")));

    assert_eq!(report.file_len, len as u64);
    assert_eq!(report.source, path.display().to_string());
    // 4 sizes x (4 readers with a window x 2 capacities + the unbuffered one).
    assert_eq!(report.cells.len(), 4 * 9);
    assert_complete_and_correct(&report, &data);

    // The counting wrapper sees what each reader costs the source.
    let unbuffered = report.get(ReaderKind::Unbuffered, 100, None).unwrap();
    assert!(
        unbuffered.underlying_reads >= unbuffered.requests,
        "{unbuffered:?}"
    );
    for capacity in [4096, 65536] {
        for reader in [
            ReaderKind::Buffered,
            ReaderKind::BufferedReadAhead,
            ReaderKind::BufReader,
            ReaderKind::ByteLoop,
        ] {
            let r = report.get(reader, 100, Some(capacity)).unwrap();
            assert!(
                r.underlying_reads * 20 < unbuffered.underlying_reads,
                "{r:?} vs {unbuffered:?}"
            );
            // About one source read per window per pass (plus end-of-file reads).
            let windows = (len as u64).div_ceil(capacity as u64) * 2;
            assert!(r.underlying_reads <= 2 * windows + 4, "{r:?}");
        }
    }
    // The read-ahead reader's source reads are requests to the positional source: per pass, one
    // plain request for the first window, then 256 KiB chunks up to the end (one covers the rest
    // of this file), whatever the window and request size.
    assert_eq!(report.read_ahead(), Some(ReadAhead::default()));
    for r in report
        .cells
        .iter()
        .filter(|r| r.cell.reader == ReaderKind::BufferedReadAhead)
    {
        assert_eq!(r.read_ahead, Some(ReadAhead::default()), "{r:?}");
        assert_eq!(r.underlying_reads, 2 * 2, "{r:?}");
        // The rewind before the second pass is the one request that does not continue the
        // previous one.
        assert_eq!(r.underlying_seeks, 1, "{r:?}");
        assert_eq!(r.underlying_bytes, 2 * len as u64, "{r:?}");
    }
    assert!(report
        .cells
        .iter()
        .all(|r| r.read_ahead.is_some() == r.cell.reader.uses_read_ahead()));
    let buffered = report.get(ReaderKind::Buffered, 100, Some(4096)).unwrap();
    assert_eq!(report.baseline(buffered), Some(buffered));
    assert_eq!(report.ratio_to_buffered(buffered), Some(1.0));
    // Readers without a window are compared at the first capacity.
    assert_eq!(report.baseline(unbuffered), Some(buffered));
    // Each pass after the first seeks back to the start.
    assert!(
        report.cells.iter().all(|r| r.underlying_seeks >= 1),
        "{report}"
    );
}

#[tokio::test]
async fn tiny_and_odd_sizes_and_windows_in_memory() {
    let data = pattern(10_007);
    let report = Plan::new(Source::memory(data.clone()))
        .sizes([1, 3, 4096, 10_007, 20_000])
        .capacities([1, 7, 4096])
        .run()
        .await
        .unwrap();
    assert_eq!(report.cells.len(), 5 * (4 * 3 + 1));
    assert_complete_and_correct(&report, &data);
    let one = report.get(ReaderKind::Unbuffered, 1, None).unwrap();
    assert_eq!(one.underlying_reads, 10_007);
}

#[tokio::test]
async fn cells_follow_the_plan_order_and_events_report_them() {
    let dir = temp_dir();
    let path = dir.path().join("data.bin");
    let plan = Plan::new(Source::file(&path))
        .write_first(5000, 512)
        .sizes([64, 8, 64])
        .capacities([1024])
        .readers([
            ReaderKind::Unbuffered,
            ReaderKind::Buffered,
            ReaderKind::Buffered,
        ]);
    let cells = plan.cells();
    let expected: Vec<_> = [
        (ReaderKind::Buffered, 8, Some(1024)),
        (ReaderKind::Unbuffered, 8, None),
    ]
    .into_iter()
    .chain([
        (ReaderKind::Buffered, 64, Some(1024)),
        (ReaderKind::Unbuffered, 64, None),
    ])
    .collect();
    let got: Vec<_> = cells
        .iter()
        .map(|c| (c.reader, c.read_size, c.capacity))
        .collect();
    assert_eq!(got, expected);

    let mut log = Vec::new();
    let report = plan
        .run_with(|event| {
            log.push(match event {
                Event::WriteStarted {
                    len, buffer_size, ..
                } => format!("write {len} {buffer_size}"),
                Event::WriteFinished(w) => format!("wrote {}", w.bytes),
                Event::CellStarted {
                    index, total, cell, ..
                } => format!("start {index}/{total} {cell}"),
                Event::CellFinished {
                    index,
                    total,
                    report,
                } => {
                    format!("end {index}/{total} {}", report.bytes)
                }
                _ => "other".to_string(),
            })
        })
        .await
        .unwrap();
    assert_eq!(
        log,
        [
            "write 5000 512",
            "wrote 5000",
            "start 0/4 AsyncBufferedInput, 8 B requests, 1 KiB window",
            "end 0/4 5000",
            "start 1/4 unbuffered, 8 B requests",
            "end 1/4 5000",
            "start 2/4 AsyncBufferedInput, 64 B requests, 1 KiB window",
            "end 2/4 5000",
            "start 3/4 unbuffered, 64 B requests",
            "end 3/4 5000",
        ]
    );
    assert_eq!(
        report.cells.iter().map(|r| r.cell).collect::<Vec<_>>(),
        cells
    );
}

#[tokio::test]
async fn the_budget_stops_slow_cells_and_marks_them_partial() {
    let dir = temp_dir();
    let path = dir.path().join("data.bin");
    std::fs::write(&path, pattern(20_000)).unwrap();
    // 1 ms per request: the unbuffered reader at 1-byte requests would take 20 s.
    let budget = Duration::from_millis(150);
    let report = Plan::new(Source::slow_link(&path, Duration::from_millis(1), 0))
        .sizes([1])
        .capacities([65536])
        .readers([ReaderKind::Buffered, ReaderKind::Unbuffered])
        .budget(Duration::from_secs(30))
        .reader_budget(ReaderKind::Unbuffered, budget)
        .run()
        .await
        .unwrap();
    let buffered = report.get(ReaderKind::Buffered, 1, Some(65536)).unwrap();
    let unbuffered = report.get(ReaderKind::Unbuffered, 1, None).unwrap();
    assert!(buffered.complete, "{buffered}");
    assert_eq!(buffered.budget, Some(Duration::from_secs(30)));
    assert_eq!(unbuffered.budget, Some(budget));
    assert_eq!(buffered.bytes, 20_000);
    assert!(!unbuffered.complete, "{unbuffered}");
    assert!(
        unbuffered.bytes > 0 && unbuffered.bytes < 1000,
        "{unbuffered:?}"
    );
    assert_eq!(unbuffered.bytes, unbuffered.requests);
    assert!(unbuffered.elapsed >= budget, "{unbuffered:?}");
    assert!(
        unbuffered.elapsed < budget + Duration::from_secs(1),
        "{unbuffered:?}"
    );
    // The partial cell read a prefix of the file: its checksum says so, and it is not compared.
    assert_eq!(
        unbuffered.checksum,
        Checksum::of(&pattern(20_000)[..unbuffered.bytes as usize])
    );
    assert!(report.has_partial());
    assert!(report.checksums_agree());
    let table = report.to_string();
    assert!(
        table.contains(", time budget per cell: 30s, 150ms for unbuffered.\n"),
        "{table}"
    );
    assert!(
        table.contains("partial: 1 of 2 cells ran out of time"),
        "{table}"
    );
    assert!(unbuffered
        .to_string()
        .ends_with("(partial: time budget ran out)"));
    let unbuffered_row = table.lines().find(|l| l.starts_with("unbuffered")).unwrap();
    assert!(unbuffered_row.ends_with("partial"), "{table}");
}

#[tokio::test]
async fn a_slow_link_costs_one_round_trip_per_source_read() {
    let dir = temp_dir();
    let path = dir.path().join("data.bin");
    let data = pattern(20_000);
    std::fs::write(&path, &data).unwrap();
    let latency = Duration::from_micros(300);
    let source = Source::slow_link(&path, latency, 0);
    assert!(source
        .label()
        .contains("over a simulated link (300µs latency, no bandwidth cap)"));
    let report = Plan::new(source)
        .sizes([100])
        .capacities([4096])
        .readers([ReaderKind::Buffered, ReaderKind::Unbuffered])
        .run()
        .await
        .unwrap();
    assert_complete_and_correct(&report, &data);
    let buffered = report.get(ReaderKind::Buffered, 100, Some(4096)).unwrap();
    let unbuffered = report.get(ReaderKind::Unbuffered, 100, None).unwrap();
    assert_eq!(unbuffered.underlying_reads, 200);
    assert!(buffered.underlying_reads <= 10, "{buffered:?}");
    assert!(unbuffered.elapsed >= latency * 200, "{unbuffered:?}");
    assert!(
        buffered.bytes_per_second() > 5.0 * unbuffered.bytes_per_second(),
        "{report}"
    );
}

#[tokio::test]
async fn checksums_catch_a_reader_that_read_other_bytes() {
    // Every other open serves a file with one byte changed.
    let opens = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&opens);
    let source = Source::custom("flaky", move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        async move {
            let mut data = pattern(3000);
            if n % 2 == 0 {
                data[1234] ^= 0x40;
            }
            Ok(Box::new(io::Cursor::new(data)) as BoxSource)
        }
    });
    // Opens: 0 for the length, 1 for the first cell, 2 for the second (the changed one).
    let report = Plan::new(source)
        .sizes([100])
        .capacities([1024])
        .readers([ReaderKind::Buffered, ReaderKind::BufReader])
        .run()
        .await
        .unwrap();
    assert!(!report.checksums_agree());
    let bad = report.checksum_mismatches();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].cell.reader, ReaderKind::BufReader);
    assert!(report
        .to_string()
        .contains("checksums: MISMATCH: 1 of 2 complete cells differ"));
}

#[tokio::test]
async fn invalid_plans_are_refused_with_a_clear_message() {
    let memory = || Source::memory(vec![1u8; 10]);
    let cases = [
        (
            Plan::new(memory()).sizes([100, 0]),
            "request size must be at least 1 byte, got 0",
        ),
        (Plan::new(memory()).sizes([]), "no request sizes to time"),
        (
            Plan::new(memory()).capacities([0]),
            "window capacity must be at least 1 byte, got 0",
        ),
        (Plan::new(memory()).capacities([]), "no window capacities"),
        (Plan::new(memory()).readers([]), "no readers to compare"),
        (
            Plan::new(memory()).repetitions(0),
            "repetitions must be at least 1, got 0",
        ),
        (
            Plan::new(memory()).write_first(0, 10),
            "file length of at least 1 byte, got 0",
        ),
        (
            Plan::new(memory()).write_first(10, 0),
            "writes of at least 1 byte, got 0",
        ),
        (
            Plan::new(memory()).write_first(10, 10),
            "the write phase needs a file, and memory (10 bytes) has no path",
        ),
        (
            Plan::new(Source::memory(Vec::new())),
            "memory (0 bytes) is empty: nothing to time",
        ),
    ];
    for (plan, message) in cases {
        let err = plan.run().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        assert!(
            err.to_string().contains(message),
            "{err:?} should say {message:?}"
        );
    }
    // Without a capacity, a plan of readers without a window is fine.
    let report = Plan::new(memory())
        .capacities([])
        .readers([ReaderKind::Unbuffered])
        .run()
        .await;
    assert_eq!(report.unwrap().cells.len(), 6);
}

#[tokio::test]
async fn missing_files_and_directories_are_named_in_errors() {
    let dir = temp_dir();
    let missing = dir.path().join("missing.bin");
    let err = Plan::new(Source::file(&missing)).run().await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert!(
        err.to_string()
            .contains(&format!("cannot open {}", missing.display())),
        "{err}"
    );

    let err = Plan::new(Source::file(dir.path())).run().await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
    assert!(
        err.to_string().contains("it is a directory, not a file"),
        "{err}"
    );

    let err = Plan::new(Source::slow_link(dir.path(), Duration::ZERO, 0))
        .run()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::IsADirectory, "{err}");

    let err = Plan::new(Source::file(dir.path().join("no/such/dir/f")))
        .write_first(10, 10)
        .run()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert!(err.to_string().starts_with("cannot create "), "{err}");
}

#[tokio::test]
async fn the_table_is_aligned_and_says_its_units() {
    let report = Plan::new(Source::memory(pattern(50_000)))
        .sizes([10, 1000])
        .capacities([512, 4096])
        .run()
        .await
        .unwrap();
    let table = report.to_string();
    assert!(table.starts_with("Sequential reads of memory (50000 bytes): 50000 bytes (48.8 KiB), 1 pass per cell, no time budget."), "{table}");
    assert!(table.contains("MB/s = 10^6 bytes/s."), "{table}");
    assert!(
        table.contains("checksums: all 18 complete cells read the same bytes"),
        "{table}"
    );
    assert!(
        table.contains("AsyncBufferedInput+RA = AsyncBufferedInput over the source's positional reads with read-ahead (256 KiB chunks, 4 at a time); its src reads are the requests that reach the positional source"),
        "{table}"
    );
    let lines: Vec<&str> = table.lines().collect();
    let header = lines.iter().position(|l| l.starts_with("reader ")).unwrap();
    let rows: Vec<&str> = lines[header + 1..]
        .iter()
        .take_while(|l| !l.starts_with("checksums"))
        .copied()
        .collect();
    let data_rows: Vec<&str> = rows.iter().filter(|l| !l.is_empty()).copied().collect();
    assert_eq!(data_rows.len(), 18, "{table}");
    // Right-aligned numeric columns end at the same place as their header.
    let mbs_end = lines[header].find("MB/s").unwrap() + "MB/s".len();
    for row in &data_rows {
        assert_ne!(row.as_bytes()[mbs_end - 1], b' ', "{row}");
        assert_eq!(row.as_bytes()[mbs_end], b' ', "{row}");
    }
    let first_column = |row: &str| row.split("  ").next().unwrap().trim().to_string();
    for name in [
        "AsyncBufferedInput",
        "AsyncBufferedInput+RA",
        "tokio BufReader",
        "unbuffered",
        "byte loop",
    ] {
        assert_eq!(
            data_rows.iter().filter(|r| first_column(r) == name).count(),
            if name == "unbuffered" { 2 } else { 4 },
            "{name}"
        );
    }
    // One blank line between request sizes.
    assert_eq!(rows.iter().filter(|l| l.is_empty()).count(), 2, "{table}");
}

#[test]
fn the_run_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let plan = Plan::new(Source::file(Path::new("/nonexistent")));
    let run = plan.run();
    assert_send(&run);
    let run_with = plan.run_with(|_| {});
    assert_send(&run_with);
}

#[tokio::test]
async fn readers_can_have_budgets_of_their_own() {
    let plan = Plan::new(Source::memory(pattern(1000)))
        .sizes([100])
        .capacities([512])
        .budget(Duration::from_secs(60))
        .reader_budget(ReaderKind::ByteLoop, Duration::from_secs(5))
        .reader_budget(ReaderKind::Unbuffered, Duration::from_secs(1))
        .reader_budget(ReaderKind::Unbuffered, Duration::from_secs(5))
        .reader_budget(ReaderKind::BufReader, None);
    assert_eq!(
        plan.budget_for(ReaderKind::Buffered),
        Some(Duration::from_secs(60))
    );
    assert_eq!(plan.budget_for(ReaderKind::BufReader), None);
    assert_eq!(
        plan.budget_for(ReaderKind::Unbuffered),
        Some(Duration::from_secs(5))
    );
    let report = plan.run().await.unwrap();
    for r in &report.cells {
        assert_eq!(r.budget, plan.budget_for(r.cell.reader), "{r:?}");
    }
    let table = report.to_string();
    assert!(
        table.contains(
            ", time budget per cell: 60s, none for tokio BufReader, 5s for byte loop and unbuffered.\n"
        ),
        "{table}"
    );
    let same = Plan::new(Source::memory(pattern(1000)))
        .sizes([100])
        .budget(Duration::from_millis(2500))
        .run()
        .await
        .unwrap();
    assert!(same.to_string().contains(", time budget 2.5s per cell.\n"));
}

#[test]
fn public_types_are_send_sync_and_unpin() {
    fn assert_send_sync_unpin<T: Send + Sync + Unpin>() {}
    assert_send_sync_unpin::<Plan>();
    assert_send_sync_unpin::<Source>();
    assert_send_sync_unpin::<Report>();
    assert_send_sync_unpin::<throughput_harness::CellReport>();
    assert_send_sync_unpin::<throughput_harness::Cell>();
    assert_send_sync_unpin::<Checksum>();
    assert_send_sync_unpin::<ReaderKind>();
    assert_send_sync_unpin::<throughput_harness::CountingSource<tokio::fs::File>>();
    assert_send_sync_unpin::<BoxPositionalSource>();
    assert_send_sync_unpin::<CountingPositionalSource<BoxPositionalSource>>();
    fn assert_send_unpin<T: Send + Unpin + ?Sized>() {}
    assert_send_unpin::<BoxSource>();
}

#[tokio::test]
async fn read_ahead_hides_the_round_trips_of_a_slow_link() {
    let dir = temp_dir();
    let path = dir.path().join("data.bin");
    let data = pattern(1 << 20);
    std::fs::write(&path, &data).unwrap();
    // 2 ms per request: 128 windows of 8 KiB cost the plain window 256 ms or more; 64 KiB chunks,
    // 4 in flight, overlap their round trips.
    let latency = Duration::from_millis(2);
    let report = Plan::new(Source::slow_link(&path, latency, 0))
        .sizes([1000])
        .capacities([8192])
        .readers([ReaderKind::Buffered, ReaderKind::BufferedReadAhead])
        .read_ahead(ReadAhead::new(64 << 10, 4))
        .run()
        .await
        .unwrap();
    assert_complete_and_correct(&report, &data);
    let buffered = report.get(ReaderKind::Buffered, 1000, Some(8192)).unwrap();
    let ahead = report
        .get(ReaderKind::BufferedReadAhead, 1000, Some(8192))
        .unwrap();
    assert!(
        (128..=129).contains(&buffered.underlying_reads),
        "{buffered:?}"
    );
    assert!(buffered.elapsed >= latency * 128, "{buffered:?}");
    // One plain request, then 16 chunks to the end.
    assert_eq!(ahead.underlying_reads, 17, "{ahead:?}");
    assert_eq!(ahead.underlying_seeks, 0, "{ahead:?}");
    assert_eq!(ahead.read_ahead, Some(ReadAhead::new(64 << 10, 4)));
    assert!(
        ahead.bytes_per_second() > 3.0 * buffered.bytes_per_second(),
        "{report}"
    );
    assert!(report.to_string().contains("(64 KiB chunks, 4 at a time)"));
}

#[tokio::test]
async fn the_read_ahead_reader_needs_a_positional_source() {
    let data = pattern(5000);
    let stream = data.clone();
    let custom = Source::custom("stream only", move || {
        let data = stream.clone();
        async move { Ok(Box::new(io::Cursor::new(data)) as BoxSource) }
    });
    assert!(!custom.has_positional());
    let err = Plan::new(custom.clone()).run().await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(
        err.to_string().contains(
            "the reader AsyncBufferedInput+RA (readahead) reads a positional source, and stream \
             only has none"
        ),
        "{err}"
    );
    let err = custom.open_positional().await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::Unsupported, "{err}");
    // Without that reader the source is fine.
    Plan::new(custom.clone())
        .readers([ReaderKind::Buffered])
        .run()
        .await
        .unwrap();

    let both = custom.with_positional(move || {
        let data = data.clone();
        async move { Ok(MemorySource::new(data)) }
    });
    assert!(both.has_positional());
    let report = Plan::new(both)
        .sizes([7, 4096])
        .capacities([100])
        .read_ahead(ReadAhead::new(1000, 3))
        .run()
        .await
        .unwrap();
    assert_complete_and_correct(&report, &pattern(5000));
}

#[tokio::test]
async fn file_urls_are_local_files() {
    let dir = temp_dir();
    let path = dir.path().join("a file.bin");
    let url = format!("file://{}", path.display()).replace(' ', "%20");
    let source = Source::from_url(&url).unwrap();
    assert_eq!(source.path(), Some(path.as_path()));
    let report = Plan::new(source)
        .write_first(3000, 1000)
        .sizes([100])
        .capacities([1024])
        .run()
        .await
        .unwrap();
    assert_complete_and_correct(&report, &pattern(3000));

    let err = Source::from_url("ftp://host/file").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(
        err.to_string().contains("unsupported URL scheme \"ftp\""),
        "{err}"
    );
    let err = Source::from_url("file://server/share/f").unwrap_err();
    assert!(
        err.to_string().contains("names the host \"server\""),
        "{err}"
    );
}

#[cfg(not(feature = "object-store"))]
#[test]
fn remote_urls_need_the_object_store_feature() {
    for url in [
        "http://127.0.0.1:1/f",
        "https://example.com/f",
        "s3://bucket/key",
    ] {
        let err = Source::from_url(url).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::Unsupported, "{url}");
        assert!(
            err.to_string().contains("the cargo feature `object-store`"),
            "{err}"
        );
        assert!(err.to_string().contains(url), "{err}");
    }
}

#[cfg(feature = "object-store")]
#[tokio::test]
async fn remote_urls_are_read_only_and_name_the_url_when_unreachable() {
    let url = "http://127.0.0.1:9/missing.bin";
    let source = Source::from_url(url).unwrap();
    assert_eq!(source.label(), url);
    assert!(source.path().is_none() && source.has_positional());
    let err = Plan::new(source.clone())
        .write_first(10, 10)
        .validate()
        .unwrap_err();
    assert!(err.to_string().contains("has no path"), "{err}");
    let err = Plan::new(source).run().await.unwrap_err();
    assert!(err.to_string().contains(url), "{err}");
}
