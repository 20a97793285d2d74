//! The term-lookup workload (`Pattern::Terms`, `--pattern terms`): how it parses, that its
//! requests are a pure function of the seed, that the Zipf-skewed hot regions dominate, that
//! every request lies inside the file, and a small run over a temporary file whose every cell
//! is verified, with its bytes fetched per byte used; the cached reader, whose tasks share a
//! block cache, verified and making fewer source reads than the buffered reader. No test asserts
//! a speed.

use std::collections::HashMap;

use abi_testkit::{assert_contains, word_pattern_vec as pattern};
use throughput_harness::{Cell, Pattern, Plan, ReaderKind, Report, Source};

const REGION: u64 = Pattern::TERMS_REGION;

fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("abi-harness-terms-")
        .tempdir()
        .unwrap()
}

/// A term-lookup cell of the buffered reader with `size`-byte requests, `tasks` tasks and the
/// Zipf exponent `s_milli` (thousandths).
fn terms_cell(size: usize, tasks: usize, s_milli: u32) -> Cell {
    let mut cell = Cell::new(ReaderKind::Buffered, size, Some(8192));
    cell.pattern = Pattern::Terms { s_milli };
    cell.tasks = tasks;
    cell
}

/// The requests of `cell` over `file_len` bytes with `seed`, `n` per pass, every task's.
fn requests(cell: &Cell, file_len: u64, seed: u64, n: u64) -> Vec<Vec<(u64, usize)>> {
    Plan::new(Source::memory(vec![0u8; 1]))
        .seed(seed)
        .random_requests(n)
        .requests(cell, file_len)
}

/// Runs `plan` and checks that every cell was verified and none failed.
async fn run_verified(plan: &Plan) -> Report {
    let report = plan.run().await.unwrap();
    assert!(report.verified(), "{report}");
    assert!(report.failures().is_empty(), "{report}");
    report
}

/// How many requests land in each region, the most requested first.
fn region_counts(requests: &[Vec<(u64, usize)>]) -> Vec<(u64, usize)> {
    let mut counts: HashMap<u64, usize> = HashMap::new();
    for &(offset, _) in requests.iter().flatten() {
        *counts.entry(offset / REGION).or_default() += 1;
    }
    let mut counts: Vec<(u64, usize)> = counts.into_iter().collect();
    counts.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts
}

#[test]
fn terms_parses_with_and_without_an_exponent() {
    let default = Pattern::Terms {
        s_milli: Pattern::DEFAULT_ZIPF_MILLI,
    };
    assert_eq!(Pattern::DEFAULT_ZIPF_MILLI, 1100);
    for (text, expected) in [
        ("terms", default),
        (" TERMS ", default),
        ("terms:1.1", default),
        ("terms:0.8", Pattern::Terms { s_milli: 800 }),
        ("terms:2", Pattern::Terms { s_milli: 2000 }),
        ("terms:0", Pattern::Terms { s_milli: 0 }),
        ("terms:10", Pattern::Terms { s_milli: 10_000 }),
    ] {
        let parsed: Pattern = text.parse().unwrap();
        assert_eq!(parsed, expected, "{text}");
        assert_eq!(parsed.id().parse::<Pattern>().unwrap(), parsed, "{text}");
        assert!(parsed.is_random(), "{text}");
    }
    assert_eq!(default.id(), "terms");
    assert_eq!(Pattern::Terms { s_milli: 800 }.id(), "terms:0.8");
    assert_eq!(default.to_string(), "term-lookup (Zipf s = 1.1)");
    for (text, needle) in [
        ("terms:", "the Zipf exponent must be a number"),
        ("terms:hot", "the Zipf exponent must be a number"),
        ("terms:-0.5", "from 0 to 10, got -0.5"),
        ("terms:11", "from 0 to 10, got 11"),
        (
            "termz",
            "expected seq, random, clustered, clustered:N, terms or terms:S",
        ),
    ] {
        let err = text.parse::<Pattern>().unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{text}");
        assert!(err.to_string().contains(needle), "{text}: {err}");
    }
    // In a cell's name.
    let cell = terms_cell(100, 64, 1100);
    assert_eq!(
        cell.to_string(),
        "AsyncBufferedInput, 100 B term-lookup (Zipf s = 1.1) requests, 8 KiB window, 64 tasks"
    );
}

#[test]
fn terms_requests_depend_only_on_the_seed_task_and_index() {
    let cell = terms_cell(300, 8, 1100);
    let len = 64 << 20;
    let a = requests(&cell, len, 7, 4000);
    assert_eq!(a, requests(&cell, len, 7, 4000), "the same seed");
    assert_ne!(a, requests(&cell, len, 8, 4000), "another seed");
    assert_eq!(a.len(), 8);
    assert_eq!(a.iter().map(Vec::len).sum::<usize>(), 4000);
    assert_ne!(a[0][..20], a[1][..20], "tasks make different lookups");
    // A request is a function of (seed, task, index): more requests per pass keep the first
    // task's first ones.
    let more = requests(&cell, len, 7, 8000);
    assert_eq!(more[0][..a[0].len()], a[0][..]);
    // Not sorted, not aligned.
    assert!(a[0].windows(2).any(|w| w[0].0 > w[1].0));
    assert!(a[0].iter().any(|&(offset, _)| offset % 4096 != 0));
}

#[test]
fn hot_regions_dominate_and_are_scattered_over_the_file() {
    // 64 MiB: 1024 regions.
    let len = 1024 * REGION;
    let n = 20_000;
    let counts = region_counts(&requests(&terms_cell(100, 8, 1100), len, 3, n));
    let top = |k: usize| counts.iter().take(k).map(|&(_, c)| c).sum::<usize>() as f64 / n as f64;
    // Under s = 1.1 over 1024 ranks, the top 10 take about 48% of the lookups; uniform, 1%.
    assert!(top(10) > 0.30, "top 1% of regions: {:.3}", top(10));
    // The hottest rank is the first region, the next ones spread over the file.
    assert_eq!(counts[0].0, 0, "{:?}", &counts[..10]);
    let hottest: Vec<u64> = counts.iter().take(10).map(|&(region, _)| region).collect();
    let (lo, hi) = (hottest.iter().min().unwrap(), hottest.iter().max().unwrap());
    assert!(hi - lo > 512, "the 10 hottest regions: {hottest:?}");
    // Yet lookups reach far beyond the hot regions.
    assert!(counts.len() > 300, "{} regions touched", counts.len());

    // A steeper skew: one region takes most; none: about uniform.
    let steep = region_counts(&requests(&terms_cell(100, 8, 2000), len, 3, n));
    assert!(steep[0].1 as f64 / n as f64 > 0.5, "{:?}", &steep[..3]);
    let flat = region_counts(&requests(&terms_cell(100, 8, 0), len, 3, n));
    let flat_top: usize = flat.iter().take(10).map(|&(_, c)| c).sum();
    assert!((flat_top as f64 / n as f64) < 0.03, "{:?}", &flat[..10]);
}

#[test]
fn every_lookup_lies_inside_the_file() {
    for (len, size) in [
        (64 << 20, 100),
        (64 << 20, 300),
        ((16 << 20) + 12_345, 300),
        (5000, 100),
        (50, 100),
        (3 * REGION, 200_000),
        (REGION + 1, 300),
    ] {
        let cell = terms_cell(size, 3, 1100);
        let all = requests(&cell, len, 11, 3000);
        assert_eq!(all.iter().map(Vec::len).sum::<usize>(), 3000);
        for &(offset, n) in all.iter().flatten() {
            assert_eq!(n as u64, (size as u64).min(len), "{len} {size}");
            assert!(offset + n as u64 <= len, "{len} {size}: {offset}+{n}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terms_run_over_a_file_verifies_every_lookup() {
    let dir = temp_dir();
    let path = dir.path().join("terms.bin");
    // 1 MiB and a bit: 17 regions, the last short.
    let len: u64 = (1 << 20) + 777;
    let readers = [
        ReaderKind::Buffered,
        ReaderKind::BufferedReadAhead,
        ReaderKind::BufReader,
        ReaderKind::Unbuffered,
    ];
    let plan = Plan::new(Source::file(&path).named("disk"))
        .write_first(len, 64 << 10)
        .patterns([Pattern::Terms { s_milli: 1100 }])
        .tasks([64])
        .sizes([100, 300])
        .capacities([8192])
        .readers(readers)
        .random_requests(2000)
        .seed(5);
    let report = run_verified(&plan).await;
    let source = &report.sources[0];
    assert_eq!(source.file_len, len);
    assert_eq!(source.cells.len(), 2 * 4);
    for r in &source.cells {
        assert!(r.complete, "{r}");
        assert_eq!(r.mismatch, None, "{r}");
        assert_eq!(r.requests, 2000, "{r}");
        assert_eq!(r.bytes, 2000 * r.cell.read_size as u64, "{r}");
        assert_eq!(r.cell.tasks, 64);
        // Every reader of a size read the same bytes.
        assert_eq!(r.checksum, source.baseline(r).unwrap().checksum, "{r}");
        // Each lookup seeks, then reads: the readers without a window to keep seek the source
        // for (nearly) every one.
        if matches!(
            r.cell.reader,
            ReaderKind::Unbuffered | ReaderKind::BufReader
        ) {
            assert!(
                r.underlying_seeks >= 1900,
                "{r}: {} seeks",
                r.underlying_seeks
            );
        } else {
            assert!(
                r.underlying_seeks > 100,
                "{r}: {} seeks",
                r.underlying_seeks
            );
        }
        let ratio = r.fetched_per_used().unwrap();
        match r.cell.reader {
            // Exactly the bytes asked for.
            ReaderKind::Unbuffered => assert_eq!(ratio, 1.0, "{r}"),
            // A window (and read-ahead) fetches more than one lookup uses.
            _ => assert!(ratio > 1.5, "{r}: {ratio}"),
        }
    }
    let table = report.to_string();
    assert_contains(&table, "term-lookup (Zipf s = 1.1) reads");
    assert_contains(&table, "Term lookups: each request reads");
    assert_contains(&table, "fetched/used");
    assert!(table.lines().any(|l| l.contains(" terms ")), "{table}");
    let json = report.json();
    for row in json
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["row"] == "read")
    {
        assert_eq!(row["pattern"], "terms", "{row}");
        let ratio = row["bytes_fetched_per_byte_used"].as_f64().unwrap();
        let expected = row["underlying_bytes"].as_f64().unwrap() / row["bytes"].as_f64().unwrap();
        assert!((ratio - expected).abs() < 1e-9, "{row}");
    }

    // The same run again makes the same lookups; over a file that does not hold the harness's
    // pattern, the cells are verified against the file read straight.
    let again = plan.clone().run().await.unwrap();
    let sums = |r: &throughput_harness::Report| -> Vec<u64> {
        r.sources[0].cells.iter().map(|c| c.checksum).collect()
    };
    assert_eq!(sums(&report), sums(&again));
    let mut other = pattern(len as usize);
    for (i, b) in other.iter_mut().enumerate() {
        *b ^= (i / 7) as u8;
    }
    let other_path = dir.path().join("other.bin");
    std::fs::write(&other_path, &other).unwrap();
    let report = Plan::new(Source::file(&other_path))
        .patterns([Pattern::Terms { s_milli: 1500 }])
        .tasks([8])
        .sizes([300])
        .capacities([4096])
        .readers([ReaderKind::Buffered, ReaderKind::BufReader])
        .random_requests(500)
        .run()
        .await
        .unwrap();
    assert!(report.verified(), "{report}");
    let source = &report.sources[0];
    assert!(!source.limit.holds_pattern);
    assert!(source.cells.iter().all(|r| r.complete && r.requests == 500));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cached_reader_verifies_lookups_and_saves_source_reads() {
    let dir = temp_dir();
    let path = dir.path().join("cached.bin");
    // 2 MiB: 32 regions of 256 blocks of 8 KiB.
    let len: u64 = 2 << 20;
    let plan = Plan::new(Source::file(&path))
        .write_first(len, 64 << 10)
        .patterns([Pattern::Terms { s_milli: 1100 }])
        .tasks([16])
        .sizes([100, 300])
        .capacities([8192])
        .readers([ReaderKind::Buffered, ReaderKind::Cached])
        .random_requests(3000)
        .repetitions(2)
        .seed(9);
    let report = run_verified(&plan).await;
    let source = &report.sources[0];
    assert_eq!(source.cells.len(), 2 * 2);
    for size in [100, 300] {
        let buffered = source.get(ReaderKind::Buffered, size, Some(8192)).unwrap();
        let cached = source.get(ReaderKind::Cached, size, Some(8192)).unwrap();
        for r in [buffered, cached] {
            assert!(r.complete, "{r}");
            assert_eq!(r.mismatch, None, "{r}");
            assert_eq!(r.requests, 2 * 3000, "{r}");
        }
        // The same lookups, the same bytes.
        assert_eq!(cached.checksum, buffered.checksum, "{cached}");
        assert_eq!(cached.cache_capacity, Some(Plan::DEFAULT_CACHE_CAPACITY));
        assert_eq!(buffered.cache_capacity, None);
        // Each task's window alone refills for nearly every lookup; the shared cache loads each
        // block once (the file fits in it), at most every block of the file.
        let blocks = len / 8192;
        assert!(
            cached.underlying_reads <= blocks,
            "{cached}: {} block loads",
            cached.underlying_reads
        );
        assert!(
            cached.underlying_reads * 4 < buffered.underlying_reads,
            "{cached}: {} source reads, the buffered reader {}",
            cached.underlying_reads,
            buffered.underlying_reads
        );
        assert!(
            cached.underlying_bytes * 4 < buffered.underlying_bytes,
            "{cached}"
        );
        // The verification pass reads through a cache of its own, cold, and still loads each
        // block at most once.
        assert!(cached.verify_reads <= blocks, "{cached}");
        assert!(cached.verify_reads > 0, "{cached}");
    }
    let table = report.to_string();
    assert_contains(&table, "AsyncBufferedInput+cache");
    // The legend's prose, wherever the 120 columns wrapped it.
    let prose = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(prose.contains("block cache of 256 MiB per cell"), "{table}");
    let json = report.json();
    let cached_rows: Vec<_> = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["reader"] == "cached")
        .collect();
    assert_eq!(cached_rows.len(), 2);
    for row in cached_rows {
        assert_eq!(row["reader_name"], "AsyncBufferedInput+cache", "{row}");
        assert_eq!(row["cache_capacity"], 256u64 << 20, "{row}");
        assert_eq!(row["verified"], true, "{row}");
    }
}

#[tokio::test]
async fn the_cached_reader_needs_a_cache_that_holds_a_window() {
    let plan = Plan::new(Source::memory(vec![1u8; 100_000]))
        .patterns([Pattern::Terms { s_milli: 1100 }])
        .sizes([100])
        .capacities([8192, 65536])
        .readers([ReaderKind::Cached])
        .cache_capacity(32 << 10);
    let err = plan.validate().unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        err.to_string()
            .contains("cache of 32 KiB cannot hold one block of a 64 KiB window"),
        "{err}"
    );
    // Over memory, with one task, a small cache: every lookup is still verified.
    let report = plan
        .capacities([8192])
        .random_requests(500)
        .run()
        .await
        .unwrap();
    assert!(report.verified(), "{report}");
    let r = &report.sources[0].cells[0];
    assert!(r.complete && r.requests == 500, "{r}");
    assert_eq!(r.cache_capacity, Some(32 << 10));
}

#[cfg(unix)]
#[tokio::test]
async fn a_disk_cache_serves_the_next_run() {
    let dir = temp_dir();
    let data = pattern(4 << 20);
    let plan = Plan::new(Source::memory(data))
        .patterns([Pattern::Terms { s_milli: 1100 }])
        .sizes([100])
        .capacities([8192])
        .readers([ReaderKind::Cached])
        .cache_capacity(64 << 10) // a working set far larger than the memory tier
        .disk_cache(dir.path(), 64 << 20)
        .random_requests(2000);
    let first = plan.clone().run().await.unwrap();
    let second = plan.run().await.unwrap();
    let (a, b) = (&first.sources[0].cells[0], &second.sources[0].cells[0]);
    assert!(first.verified() && second.verified(), "{first}\n{second}");
    assert!(a.underlying_reads > 0, "{a}");
    assert_eq!(b.underlying_reads, 0, "every block is on disk: {b}");
    assert!(b.disk_hits.unwrap() > 0, "{b:?}");
    assert!(dir.path().join("block-8192").join("layout").exists());
    let json = second.json();
    let row = json
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["reader"] == "cached")
        .unwrap();
    assert_eq!(row["disk_hits"], b.disk_hits.unwrap(), "{row}");
    assert!(second.to_string().contains("disk hits"), "{second}");
}
