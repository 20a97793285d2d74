//! Integration tests of the throughput harness (`throughput_harness`) on small files: what a run
//! measures and reports, source by source, and that its verification catches wrong bytes. No
//! test asserts a speed.

use crate::common;

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use abi_testkit::{
    assert_contains, assert_count, word_pattern_vec as pattern, CountingPositional, Faulty,
    FaultyConfig,
};
use async_buffered_input::source::MemorySource;
use async_buffered_input::ReadAhead;
use throughput_harness::{
    BoxPositionalSource, BoxSource, Cell, Checksum, Event, Mismatch, Pattern, Plan, ReaderKind,
    Report, Source, SourceReport,
};

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

/// A file of `len` bytes of the harness's pattern, `data.bin` in a new temporary folder (the
/// guard deletes it).
fn pattern_file(len: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = temp_dir();
    let path = dir.path().join("data.bin");
    std::fs::write(&path, pattern(len)).unwrap();
    (dir, path)
}

/// A plan of one request size and one window capacity, timing `readers`.
fn plan_of(
    source: Source,
    size: usize,
    capacity: usize,
    readers: impl IntoIterator<Item = ReaderKind>,
) -> Plan {
    Plan::new(source)
        .sizes([size])
        .capacities([capacity])
        .readers(readers)
}

/// Runs `plan` and checks that every row of every source read `data` right
/// ([`assert_complete_and_correct`]).
async fn run_and_check(plan: Plan, data: &[u8]) -> Report {
    let report = plan.run().await.unwrap();
    for source in &report.sources {
        assert_complete_and_correct(&report, source, data);
    }
    report
}

/// `source` with `data`, in memory, as its positional form.
fn with_memory_positional(source: Source, data: Vec<u8>) -> Source {
    source.with_positional(move || {
        let data = data.clone();
        async move { Ok(MemorySource::new(data)) }
    })
}

/// The report of every default reader over 50,000 bytes in memory, at 10- and 1000-byte
/// requests and 512-byte and 4 KiB windows.
async fn small_memory_report() -> Report {
    Plan::new(Source::memory(pattern(50_000)))
        .sizes([10, 1000])
        .capacities([512, 4096])
        .run()
        .await
        .unwrap()
}

/// The reader column of a row of the table: after the source name, up to two spaces.
/// `text` with its lines joined and its runs of white space folded: the report's prose as one
/// line, wherever the 120 columns wrapped it.
fn prose(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn reader_of(row: &str) -> &str {
    let rest = row
        .split_once(' ')
        .map_or("", |(_, rest)| rest)
        .trim_start();
    rest.split("  ").next().unwrap_or_default()
}

/// Every cell of a sequential, one-task run complete, verified, with the right bytes
/// `repetitions` times; the limit row too.
fn assert_complete_and_correct(report: &Report, source: &SourceReport, data: &[u8]) {
    let expected = checksum_of_passes(data, report.repetitions);
    let total = data.len() as u64 * u64::from(report.repetitions);
    assert_eq!(source.file_len, data.len() as u64);
    for r in &source.cells {
        assert!(r.complete, "{r}");
        assert_eq!(r.mismatch, None, "{r}");
        assert_eq!(r.bytes, total, "{r}");
        let per_pass = (data.len() as u64).div_ceil(r.cell.read_size as u64);
        assert_eq!(r.requests, per_pass * u64::from(report.repetitions), "{r}");
        assert_eq!(r.checksum, expected, "{r}");
        // Each byte came from the source at least once (later passes may reuse a window).
        assert!(r.underlying_bytes >= data.len() as u64, "{r:?}");
        // The verification pass read the source too.
        assert!(r.verify_reads >= 1, "{r:?}");
        assert!(
            r.bytes_per_second() > 0.0 && r.requests_per_second() > 0.0,
            "{r:?}"
        );
        assert!(
            (r.mb_per_second() * 1e6 - r.bytes_per_second()).abs() < 1e-3 * r.bytes_per_second()
        );
        let latency = r.latency.unwrap_or_else(|| panic!("{r:?}: no latency"));
        assert!(
            latency.samples >= 1 && latency.samples <= r.requests,
            "{r:?}"
        );
        assert!(
            latency.p50 <= latency.p99 && latency.p99 <= latency.max,
            "{r:?}"
        );
        assert!(source.ratio_to_limit(r).is_some_and(|x| x > 0.0), "{r:?}");
    }
    let limit = &source.limit;
    assert!(limit.complete, "{limit:?}");
    assert_eq!(limit.mismatch, None);
    assert_eq!(limit.bytes, total);
    assert_eq!(
        limit.requests,
        (data.len() as u64).div_ceil(1 << 20) * u64::from(report.repetitions)
    );
    assert_eq!(limit.checksum, expected);
    assert_eq!(limit.read_size, 1 << 20);
    assert!(source.verified());
}

#[tokio::test]
async fn a_written_file_is_read_by_every_reader_and_verified() {
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
    assert_eq!(report.sources.len(), 1);
    let source = &report.sources[0];
    let write = source.write.as_ref().unwrap();
    assert_eq!(
        (write.bytes, write.buffer_size, write.writes),
        (len as u64, 1000, 205)
    );
    assert_eq!(write.path, path);
    assert!(write
        .to_string()
        .starts_with(&format!("Wrote a file of {len} bytes in ")));
    assert_eq!(source.label, path.display().to_string());
    // 4 sizes x (4 readers with a window x 2 capacities + the unbuffered one).
    assert_eq!(source.cells.len(), 4 * 9);
    assert_complete_and_correct(&report, source, &data);
    assert!(report.verified());
    // The run wrote the pattern, so verification computed it instead of reading the file.
    assert!(source.limit.holds_pattern);
    assert_eq!(source.reference_reads, 0);
    assert!(source
        .limit
        .to_string()
        .starts_with(&format!("Read a file of {len} bytes 2 times in ")));

    // The counting wrapper sees what each reader costs the source.
    let unbuffered = source.get(ReaderKind::Unbuffered, 100, None).unwrap();
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
            let r = source.get(reader, 100, Some(capacity)).unwrap();
            assert!(
                r.underlying_reads * 20 < unbuffered.underlying_reads,
                "{r:?} vs {unbuffered:?}"
            );
            // About one source read per window per pass (plus end-of-file reads).
            let windows = (len as u64).div_ceil(capacity as u64) * 2;
            assert!(r.underlying_reads <= 2 * windows + 4, "{r:?}");
        }
    }
    assert_eq!(report.read_ahead(), Some(ReadAhead::default()));
    assert!(source
        .cells
        .iter()
        .all(|r| r.read_ahead.is_some() == r.cell.reader.uses_read_ahead()));
    let buffered = source.get(ReaderKind::Buffered, 100, Some(4096)).unwrap();
    assert_eq!(source.baseline(buffered), Some(buffered));
    assert_eq!(source.ratio_to_buffered(buffered), Some(1.0));
    // Readers without a window are compared at the first capacity.
    assert_eq!(source.baseline(unbuffered), Some(buffered));
    // Each pass after the first goes back to the start: a seek for the stream readers, a
    // request that does not continue the previous one for the read-ahead reader.
    assert!(
        source.cells.iter().all(|r| r.underlying_seeks >= 1),
        "{report}"
    );
}

#[tokio::test]
async fn a_fixed_read_ahead_reads_whole_chunks() {
    let len = 200 * 1024 + 17;
    let (_dir, path) = pattern_file(len);
    let plan = Plan::new(Source::file(&path).page_cache_reads(false))
        .sizes([100, 65536])
        .capacities([4096, 65536])
        .readers([ReaderKind::BufferedReadAhead])
        .read_ahead(ReadAhead::new(256 << 10, 4))
        .repetitions(2);
    let report = run_and_check(plan, &pattern(len)).await;
    let source = &report.sources[0];
    for r in &source.cells {
        // Per pass, one plain request for the first window, then one 256 KiB chunk covers the
        // rest of this file; the rewind before the second pass is the one request that does not
        // continue the previous one.
        assert_eq!(r.read_ahead, Some(ReadAhead::new(256 << 10, 4)), "{r:?}");
        assert_eq!(r.underlying_reads, 2 * 2, "{r:?}");
        assert_eq!(r.underlying_seeks, 1, "{r:?}");
        assert_eq!(r.underlying_bytes, 2 * len as u64, "{r:?}");
    }
    assert!(report.to_string().contains("(page cache reads off)"));
}

#[tokio::test]
async fn several_read_ahead_shapes_are_timed_side_by_side() {
    let len = 600 * 1024 + 17;
    let (_dir, path) = pattern_file(len);
    let fixed = ReadAhead::new(256 << 10, 4);
    let readers = [ReaderKind::BufferedReadAhead, ReaderKind::BufReader];
    let plan = plan_of(
        Source::file(&path).page_cache_reads(false),
        65536,
        4096,
        readers,
    )
    .read_aheads([ReadAhead::default(), fixed, ReadAhead::default()]);
    let report = run_and_check(plan, &pattern(len)).await;
    let source = &report.sources[0];
    assert_eq!(report.read_aheads, [ReadAhead::default(), fixed]);
    let shapes: Vec<_> = source
        .cells
        .iter()
        .map(|r| (r.cell.reader, r.cell.read_ahead, r.read_ahead))
        .collect();
    assert_eq!(
        shapes,
        [
            (
                ReaderKind::BufferedReadAhead,
                Some(ReadAhead::default()),
                Some(ReadAhead::default())
            ),
            (ReaderKind::BufferedReadAhead, Some(fixed), Some(fixed)),
            (ReaderKind::BufReader, None, None),
        ]
    );
    // The fixed shape: one plain request for the first window, then 256 KiB chunks; the
    // adaptive one starts at 64 KiB chunks, so it makes more requests.
    let fixed_reads = source.cells[1].underlying_reads;
    assert_eq!(fixed_reads, 1 + (len as u64 - 4096).div_ceil(256 << 10));
    assert!(source.cells[0].underlying_reads > fixed_reads, "{source:?}");
    // The rows name their shape (the adaptive one by the reader's name alone), the legend
    // lists the shapes, and the verdict compares the adaptive one with the best fixed one.
    let table = report.to_string();
    assert_contains(&table, "AsyncBufferedInput+RA 256KiBx4 ");
    // (The legend wraps at 120 columns, so only its start is checked on one line.)
    assert_contains(&table, "of each shape: adaptive,");
    assert_contains(&table, "Read-ahead: adaptive at ");
    assert_contains(&table, " the best fixed shape (256KiBx4).");
    let json = report.json();
    let rows = json.as_array().unwrap();
    let shaped: Vec<_> = rows
        .iter()
        .filter(|r| r["reader"] == "readahead")
        .map(|r| r["read_ahead"]["chunk_size"].clone())
        .collect();
    assert_eq!(shaped.len(), 2, "{json}");
    assert_eq!(shaped[1], 256 << 10, "{json}");
}

#[test]
fn the_object_store_reader_reads_only_urls() {
    let err = Plan::new(Source::memory(vec![1u8; 10]))
        .readers([ReaderKind::ObjectStoreBufReader])
        .validate()
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(
        err.to_string().starts_with(
            "the reader object_store BufReader (object-store-bufreader) reads object-store URLs"
        ),
        "{err}"
    );
    assert_eq!(
        "object_store BufReader".parse::<ReaderKind>().unwrap(),
        ReaderKind::ObjectStoreBufReader
    );
    let err = Plan::new(Source::memory(vec![1u8; 10]))
        .readers([ReaderKind::BufferedReadAhead])
        .read_aheads([])
        .validate()
        .unwrap_err();
    assert!(err.to_string().contains("no read-ahead shapes"), "{err}");
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
    let source = &report.sources[0];
    assert_eq!(source.cells.len(), 5 * (4 * 3 + 1));
    assert_complete_and_correct(&report, source, &data);
    let one = source.get(ReaderKind::Unbuffered, 1, None).unwrap();
    assert_eq!(one.underlying_reads, 10_007);
    assert_eq!(source.name, "memory");
}

#[tokio::test]
async fn several_sources_are_timed_side_by_side() {
    let dir = temp_dir();
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    let len = 150_000;
    let report = Plan::over([
        Source::file(&a).named("disk"),
        Source::memory(pattern(len)),
        Source::slow_link(&b, Duration::from_micros(100), 0).named("link"),
    ])
    .write_first(len as u64, 4096)
    .sizes([100, 65536])
    .capacities([8192])
    .readers([ReaderKind::Buffered, ReaderKind::BufferedReadAhead])
    .run()
    .await
    .unwrap();
    let names: Vec<&str> = report.sources.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["disk", "memory", "link"]);
    // The files are written, memory is not (it has no path).
    let written: Vec<bool> = report.sources.iter().map(|s| s.write.is_some()).collect();
    assert_eq!(written, [true, false, true]);
    for source in &report.sources {
        assert_complete_and_correct(&report, source, &pattern(len));
        assert_eq!(source.cells.len(), 4, "{}", source.name);
    }
    assert_eq!(report.sources_agree(), Some(true));
    assert!(report.verified());

    let table = report.to_string();
    assert!(
        table.starts_with("Throughput of 3 sources: sequential reads, 1 task,"),
        "{table}"
    );
    for (name, label) in [
        ("disk", a.display().to_string()),
        ("memory", "memory (150000 bytes)".to_string()),
        ("link", format!("{} over a simulated link", b.display())),
    ] {
        assert_contains(&table, &format!("\n{name}: {label}"));
        let rows: Vec<&str> = table
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(name))
            .collect();
        // limit + 4 cells, a stream row where the source has a streaming call (not the
        // simulated link), and a write row for the written sources.
        let writes = usize::from(name != "memory");
        let streams = usize::from(name != "link");
        assert_eq!(rows.len(), 5 + streams + writes, "{name}:\n{table}");
        assert!(rows.iter().any(|r| r.contains(" limit ")), "{table}");
        assert_eq!(rows.iter().any(|r| r.contains(" stream ")), streams == 1);
    }
    assert_count(&table, "  Read a file of 150000 bytes in ", 3);
    assert_count(&table, "  Wrote a file of 150000 bytes in ", 2);
    assert_contains(&table, "sources: all 3 hold the same bytes");

    let rows = report.json();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3 * 5 + 2 + 2);
    for row in rows {
        assert!(
            row["source_name"].is_string() && row["source"].is_string(),
            "{row}"
        );
        assert!(
            row["limit_bytes_per_second"].as_f64().unwrap() > 0.0,
            "{row}"
        );
    }
    let kinds: Vec<&str> = rows
        .iter()
        .filter(|r| r["source_name"] == "disk")
        .map(|r| r["row"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["write", "limit", "limit", "read", "read", "read", "read"]
    );
}

#[tokio::test]
async fn random_and_clustered_requests_are_seeded_and_verified() {
    let len = 300_000;
    let data = pattern(len);
    let run = |seed: u64| {
        let plan = Plan::new(Source::memory(data.clone()))
            .patterns([Pattern::Random, Pattern::Clustered { run: 4 }])
            .sizes([100, 4096])
            .capacities([8192])
            .random_requests(64)
            .seed(seed);
        async move { plan.run().await }
    };
    let report = run(7).await.unwrap();
    assert!(report.verified(), "{report}");
    let source = &report.sources[0];
    assert_eq!(source.cells.len(), 2 * 2 * 5);
    for r in &source.cells {
        assert!(r.cell.pattern.is_random());
        assert!(r.complete, "{r}");
        assert_eq!(r.requests, 64, "{r}");
        assert_eq!(r.bytes, 64 * r.cell.read_size as u64, "{r}");
        // Every reader of a (pattern, size) read the same bytes.
        let buffered = source.baseline(r).unwrap();
        assert_eq!(r.checksum, buffered.checksum, "{r}");
    }
    // Random requests make the unbuffered reader seek; clustered ones in runs of 4 seek less.
    let seeks = |pattern: Pattern| {
        source
            .cells
            .iter()
            .find(|r| {
                r.cell.pattern == pattern
                    && r.cell.reader == ReaderKind::Unbuffered
                    && r.cell.read_size == 100
            })
            .unwrap()
            .underlying_seeks
    };
    assert!(seeks(Pattern::Random) >= 60, "{report}");
    assert!(seeks(Pattern::Clustered { run: 4 }) <= 17, "{report}");
    // The same seed makes the same requests; another seed others.
    let again = run(7).await.unwrap();
    let other = run(8).await.unwrap();
    let sums = |r: &Report| -> Vec<u64> { r.sources[0].cells.iter().map(|c| c.checksum).collect() };
    assert_eq!(sums(&report), sums(&again));
    assert_ne!(sums(&report), sums(&other));
    let table = report.to_string();
    assert_contains(&table, "random, clustered (runs of 4) reads");
    assert_contains(&table, "from seed 7");
    assert!(
        table.lines().any(|l| l.contains(" clustered:4 ")),
        "{table}"
    );
}

#[tokio::test]
async fn concurrent_tasks_share_the_work() {
    let len = 100_003;
    let data = pattern(len);
    let report = Plan::new(Source::memory(data.clone()))
        .tasks([1, 3])
        .sizes([1000])
        .capacities([4096])
        .run()
        .await
        .unwrap();
    assert!(report.verified(), "{report}");
    let source = &report.sources[0];
    assert_eq!(source.cells.len(), 2 * 5);
    let tasks_of = |tasks: usize| source.cells.iter().filter(move |r| r.cell.tasks == tasks);
    for r in tasks_of(1).chain(tasks_of(3)) {
        // A sequential pass splits the file between the tasks: each byte read once in all.
        assert!(r.complete, "{r}");
        assert_eq!(r.bytes, len as u64, "{r}");
        assert_eq!(r.requests, (len as u64).div_ceil(1000), "{r}");
    }
    let one: Vec<u64> = tasks_of(1).map(|r| r.checksum).collect();
    let three: Vec<u64> = tasks_of(3).map(|r| r.checksum).collect();
    assert!(one.iter().all(|&s| s == Checksum::of(&data)));
    assert!(three.iter().all(|&s| s == three[0]), "the same parts");
    assert_ne!(one[0], three[0], "three tasks' checksums, not the file's");
    // Three stream readers: three opened sources, each positioned at its part.
    let unbuffered = tasks_of(3)
        .find(|r| r.cell.reader == ReaderKind::Unbuffered)
        .unwrap();
    assert_eq!(unbuffered.underlying_reads, (len as u64).div_ceil(1000));
    let table = report.to_string();
    assert_contains(&table, "1, 3 concurrent tasks");
    assert!(table
        .lines()
        .next()
        .unwrap()
        .contains("1, 3 concurrent tasks"));
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
    let expected = [
        Cell::new(ReaderKind::Buffered, 8, Some(1024)),
        Cell::new(ReaderKind::Unbuffered, 8, None),
        Cell::new(ReaderKind::Buffered, 64, Some(1024)),
        Cell::new(ReaderKind::Unbuffered, 64, None),
    ];
    assert_eq!(cells, expected);

    let mut log = Vec::new();
    let report = plan
        .run_with(|event| {
            log.push(match event {
                Event::SourceStarted { index, total, .. } => format!("source {index}/{total}"),
                Event::WriteStarted {
                    len, buffer_size, ..
                } => format!("write {len} {buffer_size}"),
                Event::WriteFinished(w) => format!("wrote {}", w.bytes),
                Event::CellStarted {
                    index, total, cell, ..
                } => format!("start {index}/{total} {cell}"),
                Event::CellTimed { index, .. } => format!("timed {index}"),
                Event::VerificationStarted { cells } => format!("verify {cells}"),
                Event::LimitFinished { name, report } => {
                    format!("limit {} {}", !name.is_empty(), report.bytes)
                }
                Event::CellFinished { index, report, .. } => {
                    format!("end {index} {}", report.bytes)
                }
                _ => "other".to_string(),
            })
        })
        .await
        .unwrap();
    // The verification passes finish in any order, after everything is timed.
    let (timing, verifying) = log.split_at(12);
    assert_eq!(
        timing,
        [
            "source 0/1",
            "write 5000 512",
            "wrote 5000",
            "start 0/4 AsyncBufferedInput, 8 B requests, 1 KiB window",
            "timed 0",
            "start 1/4 unbuffered, 8 B requests",
            "timed 1",
            "start 2/4 AsyncBufferedInput, 64 B requests, 1 KiB window",
            "timed 2",
            "start 3/4 unbuffered, 64 B requests",
            "timed 3",
            "verify 4",
        ]
    );
    assert_eq!(verifying[0], "limit true 5000");
    let mut ends = verifying[1..].to_vec();
    ends.sort();
    assert_eq!(
        ends,
        ["end 0 5000", "end 1 5000", "end 2 5000", "end 3 5000"]
    );
    assert_eq!(
        report.sources[0]
            .cells
            .iter()
            .map(|r| r.cell)
            .collect::<Vec<_>>(),
        cells
    );
}

#[tokio::test]
async fn the_budget_stops_slow_cells_and_their_verification_follows() {
    let (_dir, path) = pattern_file(20_000);
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
    let source = &report.sources[0];
    let buffered = source.get(ReaderKind::Buffered, 1, Some(65536)).unwrap();
    let unbuffered = source.get(ReaderKind::Unbuffered, 1, None).unwrap();
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
    // The partial cell read a prefix of the file, and its verification the same prefix.
    assert_eq!(unbuffered.mismatch, None);
    assert_eq!(
        unbuffered.checksum,
        Checksum::of(&pattern(20_000)[..unbuffered.bytes as usize])
    );
    assert_eq!(unbuffered.verify_reads, unbuffered.underlying_reads);
    assert!(report.has_partial());
    assert!(report.verified());
    let table = report.to_string();
    assert_contains(
        &table,
        ", time budget per cell: 30s, 150ms for unbuffered.\n",
    );
    assert_contains(&table, "partial: 1 of 3 rows ran out of time");
    assert!(unbuffered
        .to_string()
        .ends_with("(partial: time budget ran out)"));
    let unbuffered_row = table
        .lines()
        .find(|l| reader_of(l) == "unbuffered")
        .unwrap();
    assert!(unbuffered_row.ends_with("partial"), "{table}");
}

#[tokio::test]
async fn a_slow_link_costs_one_round_trip_per_source_read() {
    let (_dir, path) = pattern_file(20_000);
    let latency = Duration::from_micros(300);
    let source = Source::slow_link(&path, latency, 0);
    assert!(source
        .label()
        .contains("over a simulated link (300µs latency, no bandwidth cap)"));
    let plan = plan_of(
        source,
        100,
        4096,
        [ReaderKind::Buffered, ReaderKind::Unbuffered],
    );
    let report = run_and_check(plan, &pattern(20_000)).await;
    let source = &report.sources[0];
    let buffered = source.get(ReaderKind::Buffered, 100, Some(4096)).unwrap();
    let unbuffered = source.get(ReaderKind::Unbuffered, 100, None).unwrap();
    assert_eq!(unbuffered.underlying_reads, 200);
    assert!(buffered.underlying_reads <= 10, "{buffered:?}");
    // The limit row reads the link in 1 MiB requests: one for this file.
    assert_eq!(source.limit.underlying_reads, 1);
}

/// A source whose stream hands out a wrong byte at `wrong_at` (always, or only while `when` is
/// set); its positional form is right.
fn tampered(data: Vec<u8>, wrong_at: usize, when: Option<Arc<AtomicBool>>) -> Source {
    let stream = data.clone();
    let tampered = Source::custom("tampered", move || {
        let mut data = stream.clone();
        if when.as_ref().is_none_or(|w| w.load(Ordering::SeqCst)) {
            data[wrong_at] ^= 0x40;
        }
        async move { Ok(Box::new(io::Cursor::new(data)) as BoxSource) }
    });
    with_memory_positional(tampered, data)
}

#[tokio::test]
async fn verification_names_the_first_wrong_byte() {
    let data = pattern(3000);
    let readers = [ReaderKind::Buffered, ReaderKind::BufferedReadAhead];
    let report = plan_of(tampered(data.clone(), 1234, None), 100, 1024, readers)
        .run()
        .await
        .unwrap();
    assert!(!report.verified());
    let source = &report.sources[0];
    // The limit row reads the positional form, which is right, and holds the pattern.
    assert_eq!(source.limit.mismatch, None);
    assert!(source.limit.holds_pattern);
    let bad = source.mismatches();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].cell.reader, ReaderKind::Buffered);
    assert_eq!(
        bad[0].mismatch,
        Some(Mismatch::Byte {
            task: 0,
            offset: 1234,
            expected: data[1234],
            found: data[1234] ^ 0x40
        })
    );
    let table = report.to_string();
    assert_contains(
        &table,
        &format!(
            "MISMATCH: rows that read other bytes than the file holds:\n  custom \
             AsyncBufferedInput, 100 B requests, 1 KiB window: byte 1234 is {:#04x}, the file \
             holds {:#04x}",
            data[1234] ^ 0x40,
            data[1234]
        ),
    );
    assert!(table.lines().any(|l| l.ends_with("MISMATCH")), "{table}");
    let rows = report.json();
    let verified: Vec<bool> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verified"].as_bool().unwrap())
        .collect();
    assert_eq!(verified, [true, false, true]);
}

#[tokio::test]
async fn a_timed_pass_that_saw_other_bytes_is_caught() {
    // Wrong bytes only while cells are being timed: the verification passes read the right
    // ones, and only the first and last byte of each request tell the passes apart.
    let timing = Arc::new(AtomicBool::new(false));
    let data = pattern(3000);
    let tampered = tampered(data, 199, Some(Arc::clone(&timing)));
    let plan = plan_of(tampered, 100, 1024, [ReaderKind::Buffered]);
    let report = plan
        .run_with(|event| match event {
            Event::CellStarted { .. } => timing.store(true, Ordering::SeqCst),
            Event::CellTimed { .. } => timing.store(false, Ordering::SeqCst),
            _ => {}
        })
        .await
        .unwrap();
    let cell = &report.sources[0].cells[0];
    assert_eq!(cell.mismatch, Some(Mismatch::TimedPass), "{report}");
    assert!(!report.verified());
    assert!(report
        .to_string()
        .contains("the timed pass saw other bytes"));
}

#[tokio::test]
async fn a_failing_cell_is_reported_and_the_run_goes_on() {
    let data = pattern(10_000);
    let stream = data.clone();
    let source = Source::custom("fragile", move || {
        // Every read at or after 5000 fails.
        let cfg = FaultyConfig {
            fail_reads_from: Some(5000),
            read_error: (io::ErrorKind::Other, "the disk caught fire"),
            ..Default::default()
        };
        let failing = Faulty::new(stream.clone(), cfg);
        async move { Ok(Box::new(failing) as BoxSource) }
    });
    let source = with_memory_positional(source, data).named("fragile");
    let readers = [ReaderKind::Buffered, ReaderKind::BufferedReadAhead];
    let report = plan_of(source, 1000, 1024, readers).run().await.unwrap();
    // The stream reader failed; the read-ahead reader, over the positional form, did not.
    let failures = report.failures();
    assert_eq!(failures.len(), 1, "{report}");
    let (source, failed) = failures[0];
    assert_eq!(source.name, "fragile");
    assert_eq!(failed.cell.reader, ReaderKind::Buffered);
    let error = failed.error.as_deref().unwrap();
    assert_contains(error, "the disk caught fire");
    assert_contains(error, "request at offset");
    assert!(!failed.complete && failed.bytes == 0);
    let ahead = &source.cells[1];
    assert!(ahead.complete && ahead.error.is_none() && ahead.mismatch.is_none());
    assert!(report.verified(), "nothing read wrong");
    let table = report.to_string();
    assert_contains(
        &table,
        "FAILED: 1 of 3 rows could not be measured or verified:\n  fragile \
                        AsyncBufferedInput, 1000 B requests, 1 KiB window: ",
    );
    assert!(table.lines().any(|l| l.ends_with("FAILED")), "{table}");
    assert_contains(&table, "verified: 1 cell and 1 limit row");
    let rows = report.json();
    assert!(rows[1]["error"].as_str().unwrap().contains("caught fire"));
    assert_eq!(rows[1]["verified"], false);
    assert!(rows[2]["error"].is_null());
}

#[tokio::test]
async fn a_file_without_the_pattern_is_verified_against_itself() {
    let dir = temp_dir();
    let path = dir.path().join("other.bin");
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let readers = [ReaderKind::Buffered, ReaderKind::Unbuffered];
    let report = plan_of(Source::file(&path), 1000, 8192, readers)
        .patterns([Pattern::Sequential, Pattern::Random])
        .run()
        .await
        .unwrap();
    let source = &report.sources[0];
    assert!(!source.limit.holds_pattern);
    assert!(
        source.reference_reads > 0,
        "the file was read to verify against"
    );
    assert!(report.verified(), "{report}");
    assert_eq!(source.limit.checksum, Checksum::of(&data));
    assert!(prose(&report.to_string()).contains("compared with the source read straight"));
}

#[tokio::test]
async fn a_file_that_does_not_hold_what_was_written_is_a_mismatch_of_the_limit() {
    // A custom file source that writes the pattern (the write phase) but reads other bytes.
    let dir = temp_dir();
    let path = dir.path().join("f.bin");
    let source = Source::custom_file("liar", &path, || async {
        Ok(Box::new(io::Cursor::new(vec![9u8; 4000])) as BoxSource)
    })
    .with_positional(|| async { Ok(MemorySource::new(vec![9u8; 4000])) })
    .named("liar");
    let report = Plan::new(source)
        .write_first(4000, 1000)
        .sizes([1000])
        .capacities([4096])
        .readers([ReaderKind::Buffered])
        .run()
        .await
        .unwrap();
    let limit = &report.sources[0].limit;
    assert!(matches!(
        limit.mismatch,
        Some(Mismatch::Byte {
            offset: 0,
            found: 9,
            ..
        })
    ));
    assert!(!limit.holds_pattern);
    assert!(!report.verified());
    assert!(report.to_string().contains("  liar limit: byte 0 is 0x09"));
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
        (Plan::over([]), "no sources to time"),
        (Plan::new(memory()).patterns([]), "no access patterns"),
        (Plan::new(memory()).tasks([0]), "at least 1 task, got 0"),
        (
            Plan::new(memory()).random_requests(0),
            "need at least 1 request, got 0",
        ),
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
    assert_eq!(report.unwrap().sources[0].cells.len(), 6);
}

#[tokio::test]
async fn no_readers_is_the_classic_test_write_and_read() {
    let dir = temp_dir();
    let path = dir.path().join("classic.bin");
    let report = Plan::new(Source::file(&path))
        .write_first(1 << 20, 1024)
        .readers([])
        .run()
        .await
        .unwrap();
    let source = &report.sources[0];
    assert!(source.cells.is_empty());
    assert!(report.verified());
    let table = report.to_string();
    assert_contains(&table, "  Wrote a file of 1048576 bytes in ");
    assert_contains(&table, "  Read a file of 1048576 bytes in ");
    assert_contains(&table, "verified: 0 cells and 2 limit rows");
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

    let nowhere = dir.path().join("no/such/dir/f");
    let err = Plan::new(Source::file(&nowhere))
        .write_first(10, 10)
        .run()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert!(
        err.to_string().starts_with(&format!(
            "cannot write {}: the folder {} does not exist",
            nowhere.display(),
            nowhere.parent().unwrap().display()
        )),
        "{err}"
    );
}

#[tokio::test]
async fn a_bad_source_among_several_is_named_before_anything_is_timed() {
    let dir = temp_dir();
    let missing = dir.path().join("missing.bin");
    let mut events = 0;
    let err = Plan::over([
        Source::memory(pattern(1000)),
        Source::file(&missing).named("nfs"),
    ])
    .run_with(|_| events += 1)
    .await
    .unwrap_err();
    assert_eq!(events, 0, "nothing ran");
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert_eq!(err.to_string(), "source 2 of 2, nfs");
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(
        cause.contains(&format!("cannot open {}", missing.display())),
        "{cause}"
    );
}

#[tokio::test]
async fn the_table_is_aligned_and_says_its_units() {
    let report = small_memory_report().await;
    // Every column: the wide form.
    let table = format!("{report:#}");
    assert!(
        table.starts_with(
            "Throughput of 1 source: sequential reads, 1 task, 1 pass per cell, no time budget."
        ),
        "{table}"
    );
    assert_contains(&table, "MB/s = 10^6 bytes/s.");
    assert_contains(&table, "\"vs limit\" = MB/s / the source's limit row");
    assert!(table.contains("\nmemory: memory (50000 bytes), 50000 bytes (48.8 KiB), checksum 0x"));
    assert_contains(
        &table,
        "verified: 18 cells and 2 limit rows read the file's bytes",
    );
    common::assert_read_ahead_legend(&table);
    assert!(!table.contains("Not shown"), "{table}");
    let lines: Vec<&str> = table.lines().collect();
    let header = lines.iter().position(|l| l.starts_with("source ")).unwrap();
    common::assert_columns(
        lines[header],
        &[
            "reader",
            "request",
            "window",
            "bytes read",
            "seconds",
            "MB/s",
            "requests/s",
            "p50",
            "p99",
            "src reads",
            "src seeks",
            "vs limit",
            "vs buffered",
        ],
    );
    assert!(!lines[header].contains("pattern") && !lines[header].contains("tasks"));
    let rows: Vec<&str> = lines[header + 1..]
        .iter()
        .take_while(|l| !l.starts_with("Readers:"))
        .copied()
        .collect();
    let data_rows: Vec<&str> = rows.iter().filter(|l| !l.is_empty()).copied().collect();
    assert_eq!(data_rows.len(), 18 + 2, "{table}");
    // Right-aligned numeric columns end at the same place as their header (in characters:
    // latencies have a µ).
    for title in ["MB/s", "p99", "vs limit"] {
        let end = lines[header].find(title).unwrap() + title.len();
        for row in &data_rows {
            let row: Vec<char> = row.chars().collect();
            assert_ne!(row[end - 1], ' ', "{title}: {row:?}");
            assert!(row.len() == end || row[end] == ' ', "{title}: {row:?}");
        }
    }
    for (name, rows) in [
        ("limit", 1),
        ("stream", 1),
        ("AsyncBufferedInput", 4),
        ("AsyncBufferedInput+RA", 4),
        ("tokio BufReader", 4),
        ("unbuffered", 2),
        ("byte loop", 4),
    ] {
        assert_eq!(
            data_rows.iter().filter(|r| reader_of(r) == name).count(),
            rows,
            "{name}"
        );
    }
    assert!(data_rows.iter().all(|r| r.starts_with("memory  ")));
    // One blank line before each group of a request size.
    assert_eq!(
        rows.iter().filter(|l| l.is_empty()).count(),
        2 + 1,
        "{table}"
    );
}

/// `x` as the table prints ratios, read back: `1.25x`, or `1/1900x` below 0.001.
fn parse_ratio(text: &str) -> f64 {
    let number = text.strip_suffix('x').unwrap_or_else(|| panic!("{text:?}"));
    match number.strip_prefix("1/") {
        Some(n) => 1.0 / n.parse::<f64>().unwrap(),
        None => number.parse().unwrap(),
    }
}

#[tokio::test]
async fn the_default_text_fits_120_columns_explains_every_reader_and_ends_with_a_verdict() {
    let report = small_memory_report().await;
    let text = report.to_string();
    for line in text.lines() {
        assert!(
            line.chars().count() <= 120,
            "{} chars: {line}",
            line.chars().count()
        );
    }
    // Some columns had to go, and the legend says which.
    assert_contains(&text, "\nNot shown to fit 120 columns: ");
    let wide = format!("{report:#}");
    assert!(wide.lines().any(|l| l.chars().count() > 120), "{wide}");
    // A legend line for every reader in the table.
    let legend: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "Readers:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    for name in [
        "limit",
        "stream",
        "AsyncBufferedInput",
        "AsyncBufferedInput+RA",
        "tokio BufReader",
        "unbuffered",
        "byte loop",
    ] {
        assert!(
            legend
                .iter()
                .any(|l| l.trim_start().split("  ").next() == Some(name)),
            "no legend for {name}:\n{text}"
        );
    }
    // The verdict is last: one line per request size, naming the fastest AsyncBufferedInput
    // row and its ratios to the limit and to the fastest tokio BufReader at that size.
    let source = &report.sources[0];
    let verdict: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Verdict: "))
        .skip(1)
        .collect();
    assert_eq!(verdict.len(), 2, "{text}");
    for (line, (size, size_text)) in verdict.iter().zip([(10, "10 B"), (1000, "1000 B")]) {
        let fastest = |keep: &dyn Fn(ReaderKind) -> bool| {
            source
                .cells
                .iter()
                .filter(|r| r.cell.read_size == size && keep(r.cell.reader))
                .max_by(|a, b| a.bytes_per_second().total_cmp(&b.bytes_per_second()))
                .unwrap()
        };
        let best = fastest(&|k| {
            matches!(
                k,
                ReaderKind::Buffered | ReaderKind::BufferedReadAhead | ReaderKind::Cached
            )
        });
        let tokio = fastest(&|k| k == ReaderKind::BufReader);
        let window = match best.cell.capacity {
            Some(512) => "512 B",
            Some(4096) => "4 KiB",
            other => panic!("{other:?}"),
        };
        let start = format!(
            "  memory, {size_text} requests: {} ({window} window) ",
            best.cell.reader.name()
        );
        assert!(
            line.starts_with(&start),
            "{line:?} should start with {start:?}"
        );
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = |w: &str| words.iter().position(|x| *x == w).unwrap();
        let to_limit = parse_ratio(words[at("the") - 1]);
        let to_tokio = parse_ratio(words[at("tokio") - 1]);
        let expected_limit = source.ratio_to_limit(best).unwrap();
        let expected_tokio = best.bytes_per_second() / tokio.bytes_per_second();
        assert!(
            (to_limit / expected_limit - 1.0).abs() < 0.01,
            "{line}: {expected_limit}"
        );
        assert!(
            (to_tokio / expected_tokio - 1.0).abs() < 0.01,
            "{line}: {expected_tokio}"
        );
    }
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
    for r in &report.sources[0].cells {
        assert_eq!(r.budget, plan.budget_for(r.cell.reader), "{r:?}");
    }
    assert_eq!(
        report.sources[0].limit.budget,
        Some(Duration::from_secs(60))
    );
    let table = report.to_string();
    assert!(
        prose(&table).contains(
            ", time budget per cell: 60s, none for tokio BufReader, 5s for byte loop and unbuffered. "
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
    assert_send_sync_unpin::<SourceReport>();
    assert_send_sync_unpin::<throughput_harness::CellReport>();
    assert_send_sync_unpin::<throughput_harness::LimitReport>();
    assert_send_sync_unpin::<throughput_harness::Latency>();
    assert_send_sync_unpin::<Mismatch>();
    assert_send_sync_unpin::<Cell>();
    assert_send_sync_unpin::<Pattern>();
    assert_send_sync_unpin::<Checksum>();
    assert_send_sync_unpin::<ReaderKind>();
    assert_send_sync_unpin::<throughput_harness::CountingSource<tokio::fs::File>>();
    assert_send_sync_unpin::<BoxPositionalSource>();
    assert_send_sync_unpin::<CountingPositional<BoxPositionalSource>>();
    fn assert_send_unpin<T: Send + Unpin + ?Sized>() {}
    assert_send_unpin::<BoxSource>();
}

#[tokio::test]
async fn read_ahead_overlaps_the_round_trips_of_a_slow_link() {
    let (_dir, path) = pattern_file(1 << 20);
    let latency = Duration::from_millis(2);
    let readers = [ReaderKind::Buffered, ReaderKind::BufferedReadAhead];
    let plan = plan_of(Source::slow_link(&path, latency, 0), 1000, 8192, readers)
        .read_ahead(ReadAhead::new(64 << 10, 4));
    let report = run_and_check(plan, &pattern(1 << 20)).await;
    let source = &report.sources[0];
    let buffered = source.get(ReaderKind::Buffered, 1000, Some(8192)).unwrap();
    let ahead = source
        .get(ReaderKind::BufferedReadAhead, 1000, Some(8192))
        .unwrap();
    assert!(
        (128..=129).contains(&buffered.underlying_reads),
        "{buffered:?}"
    );
    // One plain request, then 16 chunks to the end.
    assert_eq!(ahead.underlying_reads, 17, "{ahead:?}");
    assert_eq!(ahead.underlying_seeks, 0, "{ahead:?}");
    assert_eq!(ahead.read_ahead, Some(ReadAhead::new(64 << 10, 4)));
    assert!(prose(&report.to_string()).contains("(chunks of up to 64 KiB, up to 4 at a time)"));
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
    // Without that reader the source is fine; its limit row reads the stream.
    let report = Plan::new(custom.clone())
        .readers([ReaderKind::Buffered])
        .run()
        .await
        .unwrap();
    assert!(report.verified());
    assert_eq!(report.sources[0].limit.bytes, 5000);

    let both = with_memory_positional(custom, data);
    assert!(both.has_positional());
    let report = Plan::new(both)
        .sizes([7, 4096])
        .capacities([100])
        .read_ahead(ReadAhead::new(1000, 3))
        .run()
        .await
        .unwrap();
    assert_complete_and_correct(&report, &report.sources[0], &pattern(5000));
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
    assert_complete_and_correct(&report, &report.sources[0], &pattern(3000));

    let err = Source::from_url("gopher://host/file").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(
        err.to_string()
            .contains("unsupported URL scheme \"gopher\""),
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
    assert_eq!(source.name(), "http");
    assert!(source.path().is_none() && source.has_positional());
    let err = Plan::new(source.clone())
        .write_first(10, 10)
        .validate()
        .unwrap_err();
    assert!(err.to_string().contains("has no path"), "{err}");
    // Among several, the write phase skips it, and an unreachable server is named.
    let dir = temp_dir();
    let err = Plan::over([Source::file(dir.path().join("f.bin")), source])
        .write_first(10, 10)
        .run()
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "source 2 of 2, http");
    let chain = std::error::Error::source(&err).unwrap().to_string();
    assert_contains(&chain, url);
}

/// A stream that makes every `read` that returns bytes wait `delay`, whatever its size (a
/// backend whose cost is per call: a round trip), and ends at once.
struct CostPerCall {
    data: io::Cursor<Vec<u8>>,
    delay: Duration,
    sleep: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl tokio::io::AsyncRead for CostPerCall {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        if self.data.position() >= self.data.get_ref().len() as u64 || buf.remaining() == 0 {
            return std::task::Poll::Ready(Ok(()));
        }
        let delay = self.delay;
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(delay)));
        std::task::ready!(std::future::Future::poll(sleep.as_mut(), cx));
        self.sleep = None;
        std::pin::Pin::new(&mut self.data).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncSeek for CostPerCall {
    fn start_seek(mut self: std::pin::Pin<&mut Self>, to: io::SeekFrom) -> io::Result<()> {
        std::pin::Pin::new(&mut self.data).start_seek(to)
    }

    fn poll_complete(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<u64>> {
        std::pin::Pin::new(&mut self.data).poll_complete(cx)
    }
}

#[tokio::test]
async fn the_limit_is_the_faster_of_the_loop_and_the_stream() {
    // 8 MiB at 20 ms a call: the loop makes 8 calls of 1 MiB, the stream 1 of 8 MiB, and
    // AsyncBufferedInput with a 4 MiB window at 4 MiB requests 2: it beats the loop, not the
    // stream.
    let data = pattern(8 << 20);
    let source = {
        let data = data.clone();
        Source::custom("per call", move || {
            let data = data.clone();
            async move {
                Ok(Box::new(CostPerCall {
                    data: io::Cursor::new(data),
                    delay: Duration::from_millis(20),
                    sleep: None,
                }) as BoxSource)
            }
        })
    };
    let report = plan_of(source, 4 << 20, 4 << 20, [ReaderKind::Buffered])
        .run()
        .await
        .unwrap();
    assert!(report.verified(), "{report}");
    let source = &report.sources[0];
    let stream = source.stream.as_ref().expect("a custom stream streams");
    assert!(stream.complete && source.limit.complete, "{report}");
    assert_eq!(stream.checksum, source.limit.checksum);
    assert_eq!((stream.requests, source.limit.requests), (1, 8));
    let (looped, streamed) = (source.limit.bytes_per_second(), stream.bytes_per_second());
    assert!(streamed > looped, "the stream is the faster: {report}");
    assert_eq!(source.limit_bytes_per_second(), streamed);

    // "vs limit" divides by the stream's rate, not the loop's.
    let best = source
        .get(ReaderKind::Buffered, 4 << 20, Some(4 << 20))
        .unwrap();
    assert!(
        best.bytes_per_second() > looped,
        "it beats the loop: {report}"
    );
    let to_limit = source.ratio_to_limit(best).unwrap();
    assert!((to_limit * streamed / best.bytes_per_second() - 1.0).abs() < 1e-9);
    assert!(to_limit < 1.0, "{report}");
    assert_eq!(source.ratio_of_limit_row(stream), Some(1.0));
    assert!(source.ratio_of_limit_row(&source.limit).unwrap() < 1.0);

    // The table and the verdict say so: the reader is below the limit.
    let text = format!("{report:#}");
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.iter().position(|l| l.starts_with("source ")).unwrap();
    let column = lines[header].find("vs limit").unwrap() + "vs limit".len();
    let cell_of = |reader: &str| {
        let row = lines
            .iter()
            .find(|l| reader_of(l) == reader)
            .unwrap_or_else(|| panic!("no {reader} row:\n{text}"));
        let chars: Vec<char> = row.chars().collect();
        let cell: String = chars[..column].iter().collect();
        parse_ratio(cell.split_whitespace().last().unwrap())
    };
    assert_eq!(cell_of("stream"), 1.0, "{text}");
    assert!(cell_of("limit") < 1.0, "{text}");
    assert!(cell_of("AsyncBufferedInput") < 1.0, "{text}");
    let verdict = lines
        .iter()
        .skip_while(|l| !l.starts_with("Verdict: "))
        .nth(1)
        .unwrap_or_else(|| panic!("no verdict:\n{text}"));
    let words: Vec<&str> = verdict.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "the").unwrap();
    let said = parse_ratio(words[at - 1]);
    assert!(
        said < 1.0,
        "the verdict claims the reader beats the limit: {verdict}"
    );
    assert!(
        (said / to_limit - 1.0).abs() < 0.01,
        "{verdict}: {to_limit}"
    );
    assert_contains(&text, "  Streamed a file of 8388608 bytes in ");
}

#[tokio::test]
async fn a_limit_floor_times_the_limit_rows_in_rounds_of_whole_passes() {
    let data = pattern(3 << 20);
    let report = plan_of(
        Source::memory(data.clone()),
        4096,
        8192,
        [ReaderKind::Buffered],
    )
    .repetitions(2)
    .limit_floor(Duration::from_millis(40))
    .run()
    .await
    .unwrap();
    let source = &report.sources[0];
    // The figures are the median round's: the plan's passes, as without a floor.
    assert_complete_and_correct(&report, source, &data);
    for limit in source.limit_rows() {
        assert!(limit.rounds > 1, "{limit:?}");
        assert!(limit.mismatch.is_none() && limit.complete, "{limit:?}");
        assert_eq!(limit.checksum, checksum_of_passes(&data, 2));
    }
    let text = report.to_string();
    assert_contains(&text, " rounds)");
    assert_contains(&prose(&text), "until a time floor had passed (up to ");
}
