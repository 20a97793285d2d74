//! Tests of the `throughput` example, the harness's command line: JSON shape, the table, several
//! sources side by side, the write phase, patterns and tasks, and the error messages for bad
//! paths and arguments. No test asserts a speed.
//!
//! The example binary is built once per test run with `cargo build --example throughput` (a
//! no-op when `cargo test` has just built it), in the same target folder, profile and features
//! as this test.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use abi_testkit::{assert_contains, assert_count, word_pattern_vec as pattern, ExampleBuild};
use async_buffered_input::ReadAhead;
use serde_json::Value;

/// The example's binary, built on first use with the same features as this test.
fn example() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let all_features = cfg!(all(feature = "object-store", feature = "opendal"));
        // Built by `cargo test --all-features` at the workspace's root (as CI does): build the
        // same way from there, so that nothing is compiled again.
        let folder = if all_features {
            concat!(env!("CARGO_MANIFEST_DIR"), "/..")
        } else {
            env!("CARGO_MANIFEST_DIR")
        };
        ExampleBuild::new(folder, "throughput")
            .features(cfg!(feature = "object-store").then_some("object-store"))
            .all_features(all_features)
            .build()
    })
}

fn run(args: &[&str]) -> Output {
    Command::new(example())
        .args(args)
        .output()
        .expect("the example runs")
}

/// Runs the example with `args` and asserts that it succeeded.
#[track_caller]
fn run_ok(args: &[&str]) -> Output {
    let out = run(args);
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts that the run failed with `code` and that stderr says `needle`.
#[track_caller]
fn assert_fails(args: &[&str], code: i32, needle: &str) {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: stdout {} stderr {}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains(needle),
        "{args:?}: stderr should say {needle:?}, got:\n{}",
        stderr(&out)
    );
    assert!(
        out.stdout.is_empty(),
        "{args:?}: nothing on stdout on error, got {}",
        stdout(&out)
    );
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("abi-harness-cli-")
        .tempdir()
        .unwrap()
}

/// A small sweep whose every cell reads the whole file: a budget of 20 s for every reader,
/// unbuffered and byte loop included (instead of their default 0.2 s, which a loaded machine can
/// run out of), so that no assertion depends on the machine's speed.
const SMALL: [&str; 10] = [
    "--file-size",
    "64KiB",
    "--sizes",
    "100,4096",
    "--capacities",
    "4KiB",
    "--budget",
    "20s",
    "--slow-budget",
    "none",
];

/// The rows of a JSON report (`--json` on stdout).
fn rows(out: &Output) -> Vec<Value> {
    match serde_json::from_slice(&out.stdout).expect("stdout is JSON") {
        Value::Array(rows) => rows,
        other => panic!("expected an array, got {other}"),
    }
}

/// The read rows (cells) of a JSON report.
fn cells(rows: &[Value]) -> Vec<&Value> {
    rows.iter().filter(|r| r["row"] == "read").collect()
}

const FIELDS: [&str; 47] = [
    "source",
    "source_name",
    "file_len",
    "row",
    "reader",
    "reader_name",
    "read_size",
    "capacity",
    "pattern",
    "tasks",
    "bytes",
    "requests",
    "seconds",
    "bytes_per_second",
    "mb_per_second",
    "requests_per_second",
    "latency_p50_ns",
    "latency_p99_ns",
    "latency_max_ns",
    "latency_samples",
    "underlying_reads",
    "underlying_seeks",
    "underlying_bytes",
    "bytes_fetched_per_byte_used",
    "verify_reads",
    "rounds",
    "checksum",
    "verified",
    "mismatch",
    "error",
    "complete",
    "budget_seconds",
    "read_ahead",
    "cache_capacity",
    "source_requests",
    "hedges_fired",
    "hedges_won",
    "hedges_denied",
    "reads_coalesced",
    "limit_bytes_per_second",
    "disk_hits",
    "ratio_to_limit",
    "ratio_to_buffered",
    "holds_pattern",
    "reference_reads",
    "repetitions",
    "seed",
];

#[test]
fn json_has_one_object_per_row_with_every_field() {
    let mut args = SMALL.to_vec();
    args.push("--json");
    let out = run_ok(&args);
    let rows = rows(&out);
    // The write row, the limit and stream rows, 2 sizes x (4 readers with a window x 1
    // capacity + the unbuffered one).
    assert_eq!(rows.len(), 3 + 10);
    for row in &rows {
        for key in FIELDS {
            assert!(row.get(key).is_some(), "{key} missing in {row}");
        }
        assert_eq!(row.as_object().unwrap().len(), FIELDS.len(), "{row}");
        assert_eq!(row["file_len"], 65536, "{row}");
        assert_eq!(row["source_name"], rows[0]["source_name"], "{row}");
        assert!(
            row["limit_bytes_per_second"].as_f64().unwrap() > 0.0,
            "{row}"
        );
        assert_eq!(row["seed"], 1, "{row}");
    }
    let (write, limit) = (&rows[0], &rows[1]);
    assert_eq!(
        (&write["row"], &write["reader"]),
        (&"write".into(), &"write".into())
    );
    assert_eq!(write["read_size"], 1024, "{write}");
    assert_eq!(write["requests"], 64, "{write}");
    assert_eq!(
        (&limit["row"], &limit["reader"]),
        (&"limit".into(), &"limit".into())
    );
    assert_eq!(limit["read_size"], 1 << 20, "{limit}");
    assert_eq!(limit["holds_pattern"], true, "{limit}");
    assert_eq!(limit["verified"], true, "{limit}");
    // The stream row: one streaming read of the whole file, with the same checksum. The faster
    // of the two limit rows is the limit: its ratio is 1, the other's at most 1.
    let stream = &rows[2];
    assert_eq!(
        (&stream["row"], &stream["reader"]),
        (&"limit".into(), &"stream".into())
    );
    assert_eq!(
        (&stream["read_size"], &stream["requests"]),
        (&65536.into(), &1.into())
    );
    assert_eq!(stream["checksum"], limit["checksum"], "{stream}");
    assert_eq!(stream["verified"], true, "{stream}");
    let ratios = [&limit, &stream].map(|l| l["ratio_to_limit"].as_f64().unwrap());
    assert!(ratios.iter().all(|&x| x <= 1.0), "{ratios:?}");
    assert_eq!(
        ratios.iter().copied().fold(0.0, f64::max),
        1.0,
        "{ratios:?}"
    );
    for l in [&limit, &stream] {
        assert!(l["rounds"].as_u64().unwrap() >= 1, "{l}");
    }
    let cells = cells(&rows);
    let mut readers: Vec<&str> = cells
        .iter()
        .map(|c| c["reader"].as_str().unwrap())
        .collect();
    readers.sort_unstable();
    readers.dedup();
    assert_eq!(
        readers,
        [
            "buffered",
            "bufreader",
            "byteloop",
            "readahead",
            "unbuffered"
        ]
    );
    for cell in &cells {
        assert_eq!(cell["bytes"], 65536, "{cell}");
        assert_eq!(cell["complete"], true, "{cell}");
        assert_eq!(cell["verified"], true, "{cell}");
        assert!(cell["mismatch"].is_null(), "{cell}");
        assert_eq!(
            (&cell["pattern"], &cell["tasks"]),
            (&"seq".into(), &1.into())
        );
        assert!(cell["seconds"].as_f64().unwrap() > 0.0, "{cell}");
        let bps = cell["bytes_per_second"].as_f64().unwrap();
        assert!((bps / 1e6 - cell["mb_per_second"].as_f64().unwrap()).abs() < 1e-6 * bps);
        let ratio = cell["ratio_to_limit"].as_f64().unwrap();
        let limit_bps = cell["limit_bytes_per_second"].as_f64().unwrap();
        assert!((ratio * limit_bps - bps).abs() < 1e-6 * bps, "{cell}");
        let (p50, p99) = (&cell["latency_p50_ns"], &cell["latency_p99_ns"]);
        assert!(p50.as_u64().unwrap() <= p99.as_u64().unwrap(), "{cell}");
        assert!(cell["latency_samples"].as_u64().unwrap() >= 1, "{cell}");
        assert!(
            cell["read_size"] == 100 || cell["read_size"] == 4096,
            "{cell}"
        );
        match cell["reader"].as_str().unwrap() {
            "unbuffered" => assert!(cell["capacity"].is_null(), "{cell}"),
            _ => assert_eq!(cell["capacity"], 4096, "{cell}"),
        }
        // The default read-ahead, for the read-ahead reader only.
        let ahead = ReadAhead::default();
        match cell["reader"].as_str().unwrap() {
            "readahead" => assert_eq!(
                cell["read_ahead"],
                serde_json::json!({"chunk_size": ahead.chunk_size(), "depth": ahead.depth()}),
                "{cell}"
            ),
            _ => assert!(cell["read_ahead"].is_null(), "{cell}"),
        }
        assert!(
            cell["checksum"].as_str().unwrap().starts_with("0x"),
            "{cell}"
        );
        assert_eq!(
            cell["checksum"], limit["checksum"],
            "every reader read the file's bytes"
        );
    }
    let at_100 = |reader: &str| {
        cells
            .iter()
            .find(|c| c["reader"] == reader && c["read_size"] == 100)
            .unwrap()["underlying_reads"]
            .as_u64()
            .unwrap()
    };
    assert!(at_100("buffered") * 20 < at_100("unbuffered"));
    // The classic test's lines go to stderr in JSON mode.
    for line in [
        "Wrote a file of 65536 bytes in ",
        "Read a file of 65536 bytes in ",
    ] {
        assert!(stderr(&out).contains(line), "{}", stderr(&out));
    }
}

#[test]
fn the_default_output_is_a_table_and_the_temporary_file_is_deleted() {
    let out = run_ok(&SMALL);
    let table = stdout(&out);
    assert!(
        table.starts_with("Throughput of 1 source: sequential reads, 1 task,"),
        "{table}"
    );
    assert_contains(&table, "MB/s = 10^6 bytes/s");
    assert_contains(&table, "  Wrote a file of 65536 bytes in ");
    assert_contains(&table, "  Read a file of 65536 bytes in ");
    assert_contains(
        &table,
        "verified: 10 cells and 2 limit rows read the file's bytes",
    );
    common::assert_read_ahead_legend(&table);
    for name in [
        "write ",
        "limit ",
        "AsyncBufferedInput ",
        "AsyncBufferedInput+RA ",
        "tokio BufReader",
        "unbuffered",
        "byte loop",
    ] {
        assert!(
            table.lines().any(|l| l
                .split_once(' ')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(name))),
            "{name} missing:\n{table}"
        );
    }
    let source_line = table
        .lines()
        .find(|l| l.contains("abi-throughput-"))
        .unwrap_or_else(|| panic!("no temporary file in\n{table}"));
    let path = source_line
        .split_once(": ")
        .and_then(|(_, rest)| rest.split(", ").next())
        .unwrap();
    assert!(path.ends_with(".bin"), "{source_line}");
    assert!(!Path::new(path).exists(), "{path} should have been deleted");
}

#[test]
fn the_default_sweep_fits_120_columns_and_ends_with_a_verdict() {
    // The default sizes and windows over a smaller file than the default's, in a short budget.
    let out = run_ok(&["--file-size", "256KiB", "--budget", "300ms"]);
    let text = stdout(&out);
    for line in text.lines() {
        assert!(
            line.chars().count() <= 120,
            "{} chars: {line}",
            line.chars().count()
        );
    }
    let lines: Vec<&str> = text.lines().collect();
    let verdict = lines
        .iter()
        .position(|l| l.starts_with("Verdict: "))
        .unwrap_or_else(|| panic!("no verdict:\n{text}"));
    // The smallest and the largest default request size, each a line (or two, wrapped).
    let rest = &lines[verdict + 1..];
    assert!(matches!(rest.len(), 2..=4), "{text}");
    assert!(
        rest[0].starts_with("  ext") || rest[0].starts_with("  "),
        "{text}"
    );
    assert!(
        rest[0].contains(", 1 B requests: AsyncBufferedInput"),
        "{text}"
    );
    let last = rest
        .iter()
        .position(|l| l.contains(", 64 KiB requests: "))
        .unwrap();
    assert!(rest[last].contains(" MB/s: "), "{text}");
    let tail = rest[last..].join(" ");
    assert!(
        tail.contains(" the limit, ") && tail.contains(" tokio BufReader."),
        "{text}"
    );

    // --wide prints every column, the narrow table says which it left out.
    assert_contains(&text, "Not shown to fit 120 columns: bytes read, ");
    let out = run_ok(&[
        "--file-size",
        "64KiB",
        "--sizes",
        "100",
        "--capacities",
        "4KiB",
        "--wide",
    ]);
    let wide = stdout(&out);
    let header = wide.lines().find(|l| l.starts_with("source ")).unwrap();
    common::assert_columns(
        header,
        &[
            "bytes read",
            "seconds",
            "requests/s",
            "p50",
            "src seeks",
            "fetched/used",
        ],
    );
    assert!(!wide.contains("Not shown"), "{wide}");
}

#[test]
fn an_existing_file_is_timed_without_being_modified() {
    let dir = temp_dir();
    let path = dir.path().join("existing.bin");
    let data: Vec<u8> = (0..30_000u32).map(|i| (i * 7) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let out = run_ok(&[
        "--path",
        path.to_str().unwrap(),
        "--sizes",
        "1000",
        "--capacities",
        "8192",
        "--readers",
        "buffered,unbuffered",
        // Every cell reads the whole file, however loaded the machine (see `SMALL`).
        "--slow-budget",
        "none",
        "--json",
    ]);
    let rows = rows(&out);
    assert_eq!(rows.len(), 4, "the limit and stream rows and two cells");
    assert!(rows.iter().all(|c| c["bytes"] == 30_000));
    // Not the pattern: verified against the file itself.
    assert_eq!(rows[0]["holds_pattern"], false);
    assert!(rows[0]["reference_reads"].as_u64().unwrap() > 0);
    assert!(rows.iter().all(|c| c["verified"] == true));
    assert_eq!(std::fs::read(&path).unwrap(), data);
    assert!(
        !stderr(&out).contains("Wrote"),
        "no write phase: {}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("Read a file of 30000 bytes in "));
}

#[test]
fn write_creates_the_file_and_keeps_it() {
    let dir = temp_dir();
    let path = dir.path().join("new.bin");
    let out = run_ok(&[
        "--path",
        path.to_str().unwrap(),
        "--write",
        "--file-size",
        "10KB",
        "--write-buffer",
        "1000",
        "--sizes",
        "100",
        "--capacities",
        "1KiB",
        "--readers",
        "buffered",
    ]);
    assert!(
        stdout(&out).contains("Wrote a file of 10000 bytes in "),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("(10 writes of 1000 bytes)"),
        "{}",
        stdout(&out)
    );
    assert_eq!(std::fs::read(&path).unwrap(), pattern(10_000));
}

#[test]
fn several_paths_make_one_table_and_one_chart() {
    let dir = temp_dir();
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    let svg = dir.path().join("chart.svg");
    let named = |name: &str, path: &Path| format!("{name}={}", path.display());
    let common = [
        "--file-size",
        "40KiB",
        "--sizes",
        "100,8192",
        "--capacities",
        "4KiB",
        "--readers",
        "buffered,readahead,unbuffered",
        // Every cell reads the whole file, however loaded the machine (see `SMALL`).
        "--slow-budget",
        "none",
    ];
    let mut args = vec![
        "--path".to_string(),
        named("disk", &a),
        "--path".to_string(),
        named("other", &b),
        "--write".to_string(),
        "--plot".to_string(),
        svg.display().to_string(),
    ];
    args.extend(common.iter().map(ToString::to_string));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_ok(&args);
    let table = stdout(&out);
    assert!(table.starts_with("Throughput of 2 sources:"), "{table}");
    assert_count(&table, "  Wrote a file of 40960 bytes in ", 2);
    assert_count(&table, "  Read a file of 40960 bytes in ", 2);
    assert_contains(&table, "sources: all 2 hold the same bytes");
    for name in ["disk", "other"] {
        assert_contains(&table, &format!("\n{name}: "));
        let rows = table
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(name))
            .count();
        // write, limit, stream, 2 sizes x 3 readers.
        assert_eq!(rows, 9, "{name}:\n{table}");
    }
    assert_eq!(std::fs::read(&a).unwrap(), pattern(40960));
    assert_eq!(std::fs::read(&b).unwrap(), pattern(40960));
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("<svg"), "not an SVG");
    for caption in ["disk: ", "other: "] {
        assert!(drawn.contains(caption), "no panel {caption:?}");
    }
    assert!(drawn.contains("limit (1 MiB reads straight from the source)"));

    // One bad source among several is named, before anything runs.
    let missing = dir.path().join("missing.bin");
    assert_fails(
        &[
            "--path",
            a.to_str().unwrap(),
            "--path",
            missing.to_str().unwrap(),
        ],
        1,
        &format!(
            "{} does not exist (use --write to create it)",
            missing.display()
        ),
    );
    assert_fails(
        &["--path", a.to_str().unwrap(), "--path", "nfs=http://[::1/f"],
        1,
        "--path nfs=http://[::1/f: invalid URL",
    );
}

#[test]
fn patterns_tasks_and_seeds() {
    let mut args = SMALL.to_vec();
    args.extend([
        "--pattern",
        "random,clustered:4",
        "--tasks",
        "1,2",
        "--requests",
        "20",
        "--seed",
        "3",
        "--readers",
        "buffered,unbuffered",
        "--json",
    ]);
    let out = run_ok(&args);
    let rows = rows(&out);
    let cells = cells(&rows);
    // 2 patterns x 2 task counts x 2 sizes x 2 readers.
    assert_eq!(cells.len(), 16);
    for cell in &cells {
        assert!(
            cell["pattern"] == "random" || cell["pattern"] == "clustered:4",
            "{cell}"
        );
        assert!(cell["tasks"] == 1 || cell["tasks"] == 2, "{cell}");
        assert_eq!(cell["requests"], 20, "{cell}");
        assert_eq!(cell["verified"], true, "{cell}");
        assert_eq!(cell["seed"], 3, "{cell}");
    }
    let table = stdout(&run(&args[..args.len() - 1]));
    let header = table.lines().find(|l| l.starts_with("source ")).unwrap();
    assert!(
        header.contains("pattern") && header.contains("tasks"),
        "{table}"
    );
    assert_contains(&table, "from seed 3");

    assert_fails(&["--pattern", "zigzag"], 2, "unknown pattern \"zigzag\"");
    assert_fails(
        &["--pattern", "clustered:0"],
        2,
        "at least 1 request, got 0",
    );
    assert_fails(&["--tasks", "0"], 2, "a cell needs at least 1 task, got 0");
    assert_fails(&["--tasks", "x"], 2, "is not a whole number of tasks");
    assert_fails(&["--requests", "0"], 2, "--requests");
}

#[test]
fn term_lookups_with_many_tasks() {
    let args = [
        "--file-size",
        "512KiB",
        "--capacities",
        "4KiB",
        "--budget",
        "20s",
        "--pattern",
        "terms",
        "--tasks",
        "64",
        "--sizes",
        "100,300",
        "--requests",
        "640",
        "--readers",
        "buffered,bufreader,unbuffered",
        // Every cell reads the whole file, however loaded the machine (see `SMALL`).
        "--slow-budget",
        "none",
        "--json",
    ];
    let out = run_ok(&args);
    let rows = rows(&out);
    let limit = rows.iter().find(|r| r["row"] == "limit").unwrap();
    assert!(limit["bytes_fetched_per_byte_used"].is_null(), "{limit}");
    let cells = cells(&rows);
    // 2 sizes x 3 readers.
    assert_eq!(cells.len(), 6);
    for cell in &cells {
        assert_eq!(cell["pattern"], "terms", "{cell}");
        assert_eq!(cell["tasks"], 64, "{cell}");
        assert_eq!(cell["requests"], 640, "{cell}");
        assert_eq!(cell["verified"], true, "{cell}");
        let ratio = cell["bytes_fetched_per_byte_used"].as_f64().unwrap();
        if cell["reader"] == "unbuffered" {
            assert_eq!(ratio, 1.0, "{cell}");
        } else {
            assert!(ratio > 1.0, "{cell}");
        }
    }
    let table = stdout(&run(&args[..args.len() - 1]));
    let header = table.lines().find(|l| l.starts_with("source ")).unwrap();
    assert!(header.contains("fetched/used"), "{table}");
    assert_contains(
        &table,
        "term-lookup (Zipf s = 1.1) reads, 64 concurrent tasks",
    );

    assert_fails(
        &["--pattern", "terms:x"],
        2,
        "the Zipf exponent must be a number",
    );
    assert_fails(&["--pattern", "terms:12"], 2, "from 0 to 10, got 12");
}

#[test]
fn readers_none_is_the_classic_test() {
    let out = run_ok(&["--file-size", "1MiB", "--readers", "none"]);
    let table = stdout(&out);
    assert_contains(&table, "  Wrote a file of 1048576 bytes in ");
    assert_contains(&table, "  Read a file of 1048576 bytes in ");
    assert_contains(&table, "verified: 0 cells and 2 limit rows");
}

#[test]
fn a_simulated_link_and_a_plot() {
    let dir = temp_dir();
    let svg = dir.path().join("plot.svg");
    let out = run_ok(&[
        "--file-size",
        "16KiB",
        "--sizes",
        "100,1000",
        "--capacities",
        "4KiB",
        "--readers",
        "buffered,unbuffered",
        "--latency",
        "1ms",
        "--bandwidth",
        "100MB/s",
        "--slow-budget",
        "none",
        "--json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let rows = rows(&out);
    assert!(
        rows[0]["source"]
            .as_str()
            .unwrap()
            .contains("simulated link (1ms latency, 100 MB/s)"),
        "{}",
        rows[0]
    );
    assert_eq!(rows[0]["source_name"], "link");
    let unbuffered = rows
        .iter()
        .find(|c| c["reader"] == "unbuffered" && c["read_size"] == 100)
        .unwrap();
    // 164 requests, each a round trip.
    assert_eq!(unbuffered["underlying_reads"], 164, "{unbuffered}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("<svg"), "not an SVG");
    assert!(
        drawn.contains("AsyncBufferedInput (4096 B window)"),
        "no legend"
    );
    assert!(drawn.contains("request size (bytes)"), "no axis label");
}

#[test]
fn a_missing_file_is_named() {
    let dir = temp_dir();
    let missing = dir.path().join("missing.bin");
    let missing = missing.to_str().unwrap();
    assert_fails(
        &["--path", missing],
        1,
        &format!("error: {missing} does not exist (use --write to create it)"),
    );
}

#[test]
fn a_directory_is_not_a_file() {
    let dir = temp_dir();
    let path = dir.path().to_str().unwrap();
    assert_fails(&["--path", path], 1, "it is a directory, not a file");
    assert_fails(
        &["--path", path, "--write"],
        1,
        "it is a directory, not a file",
    );
    let nowhere = dir.path().join("no/such/folder/f.bin");
    assert_fails(
        &["--path", nowhere.to_str().unwrap(), "--write"],
        1,
        "does not exist",
    );
}

#[test]
fn an_empty_file_has_nothing_to_time() {
    let dir = temp_dir();
    let path = dir.path().join("empty.bin");
    std::fs::write(&path, b"").unwrap();
    assert_fails(
        &["--path", path.to_str().unwrap()],
        1,
        "is empty: nothing to time",
    );
    assert_fails(
        &["--path", path.to_str().unwrap(), "--file-size", "1MiB"],
        1,
        "--file-size needs --write",
    );
}

#[test]
fn zero_sizes_are_refused() {
    assert_fails(&["--sizes", "100,0"], 2, "must be at least 1 byte, got 0");
    assert_fails(&["--sizes", "100,0"], 2, "--sizes");
    assert_fails(&["--capacities", "0"], 2, "must be at least 1 byte, got 0");
    assert_fails(&["--file-size", "0"], 2, "must be at least 1 byte, got 0");
    assert_fails(
        &["--write-buffer", "0KiB"],
        2,
        "must be at least 1 byte, got 0",
    );
    assert_fails(&["--repeat", "0"], 2, "--repeat");
    assert_fails(&["--budget", "0s"], 2, "use \"none\" for no limit");
}

#[test]
fn malformed_lists_and_values_are_refused() {
    assert_fails(&["--sizes", "1,,8"], 2, "empty size (two commas in a row?)");
    assert_fails(
        &["--sizes", "1,x"],
        2,
        "invalid value 'x' for '--sizes <LIST>': not a size",
    );
    assert_fails(&["--sizes", "8XB"], 2, "unknown unit \"XB\"");
    assert_fails(&["--sizes", "1.5"], 2, "not a whole number of bytes");
    assert_fails(
        &["--readers", "buffered,fast"],
        2,
        "unknown reader \"fast\": expected one of buffered, readahead, cached, bufreader, \
         unbuffered, byteloop",
    );
    assert_fails(
        &["--cache-capacity", "64MiB", "--readers", "buffered"],
        1,
        "--cache-capacity configures the cached reader, which --readers leaves out",
    );
    assert_fails(
        &["--readers", "cached", "--cache-capacity", "16KiB"],
        1,
        "the cached reader's cache of 16 KiB cannot hold one block of a 64 KiB window",
    );
    assert_fails(&["--budget", "2"], 2, "needs a unit");
    // humantime reads "2 weeks"; a unit it does not know is still refused.
    assert_fails(&["--latency", "2 fortnights"], 2, "unknown unit");
    assert_fails(&["--bandwidth", "fast"], 2, "not a size");
}

#[test]
fn direct_io_is_for_network_filesystems() {
    assert_fails(
        &["--direct", "--latency", "1ms"],
        2,
        "'--direct' cannot be used with '--latency <DURATION>'",
    );
    // Local filesystems refuse unaligned O_DIRECT reads (or O_DIRECT altogether); where one
    // accepts them the run simply succeeds.
    let args = [
        "--direct",
        "--file-size",
        "16KiB",
        "--sizes",
        "100",
        "--capacities",
        "4KiB",
        "--readers",
        "buffered",
    ];
    let out = run(&args);
    if !out.status.success() {
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("O_DIRECT") || stderr(&out).contains("--direct is meant for NFS"),
            "{}",
            stderr(&out)
        );
    } else {
        assert!(stdout(&out).contains("(O_DIRECT)"), "{}", stdout(&out));
    }
}

#[test]
fn page_cache_reads_can_be_turned_off() {
    assert_fails(
        &["--page-cache-reads", "maybe"],
        2,
        "\"maybe\" is neither on nor off",
    );
    assert_fails(
        &["--page-cache-reads", "off", "--readers", "buffered"],
        1,
        "--page-cache-reads configures the readahead reader, which --readers leaves out",
    );
    assert_fails(
        &["--page-cache-reads", "off", "--latency", "1ms"],
        1,
        "a URL, --direct or a simulated link has no page cache reads to turn off",
    );
    for (value, label) in [("off", " (page cache reads off)"), ("on", "")] {
        let mut args = SMALL.to_vec();
        args.extend([
            "--readers",
            "buffered,readahead",
            "--page-cache-reads",
            value,
        ]);
        let out = run_ok(&args);
        let table = stdout(&out);
        let source_line = table
            .lines()
            .find(|l| l.contains("abi-throughput-"))
            .unwrap_or_else(|| panic!("{table}"));
        assert_eq!(
            source_line.contains("(page cache reads off)"),
            !label.is_empty(),
            "{table}"
        );
        assert_contains(&table, "verified: 4 cells and 2 limit rows");
    }
}

#[test]
fn read_ahead_is_size_x_depth() {
    for (value, needle) in [
        (
            "256KiB",
            "expected CHUNKxDEPTH: a chunk size and how many chunks in flight, like 256KiBx4",
        ),
        ("x4", "no chunk size before the x"),
        ("0x4", "chunk size: must be at least 1 byte, got 0"),
        ("1.5x4", "chunk size: not a whole number of bytes"),
        ("8QBx4", "chunk size: unknown unit \"QB\""),
        ("256KiBx", "depth \"\" is not a whole number of chunks"),
        (
            "256KiBx1.5",
            "depth \"1.5\" is not a whole number of chunks",
        ),
        ("256KiBx0", "depth must be at least 1 chunk, got 0"),
    ] {
        assert_fails(&["--read-ahead", value], 2, needle);
        assert_fails(&["--read-ahead", value], 2, "--read-ahead <SIZExDEPTH>");
    }
    assert_fails(
        &["--read-ahead", "64KiBx2", "--readers", "buffered"],
        1,
        "--read-ahead configures the readahead reader, which --readers leaves out",
    );
    let mut args = SMALL.to_vec();
    args.extend([
        "--readers",
        "readahead",
        "--read-ahead",
        "16KiB x 2",
        "--json",
    ]);
    let out = run_ok(&args);
    let rows = rows(&out);
    let cells = cells(&rows);
    assert_eq!(cells.len(), 2);
    for cell in &cells {
        assert_eq!(
            cell["read_ahead"],
            serde_json::json!({"chunk_size": 16384, "depth": 2}),
            "{cell}"
        );
        assert_eq!(cell["reader_name"], "AsyncBufferedInput+RA", "{cell}");
        // 64 KiB: one plain request for the first 4 KiB window, then 16 KiB chunks to the end.
        assert_eq!(cell["underlying_reads"], 5, "{cell}");
    }
}

#[test]
fn a_file_url_is_a_local_file() {
    let dir = temp_dir();
    let path = dir.path().join("url file.bin");
    let url = format!("file://{}", path.display()).replace(' ', "%20");
    // --write works on a file:// URL as on a path.
    let out = run_ok(&[
        "--path",
        &url,
        "--write",
        "--file-size",
        "20000",
        "--sizes",
        "100",
        "--capacities",
        "4KiB",
        // Every cell reads the whole file, however loaded the machine (see `SMALL`).
        "--slow-budget",
        "none",
        "--json",
    ]);
    assert_eq!(std::fs::read(&path).unwrap(), pattern(20_000));
    let rows = rows(&out);
    assert_eq!(cells(&rows).len(), 5, "every reader");
    for row in &rows {
        assert_eq!(row["source"], path.display().to_string(), "{row}");
        assert_eq!(row["bytes"], 20_000, "{row}");
        if row["row"] != "write" {
            assert_eq!(row["checksum"], rows[1]["checksum"], "{row}");
        }
    }
    // And read as it is without --write.
    let out = run_ok(&[
        "--path",
        &url,
        "--sizes",
        "1000",
        "--capacities",
        "4KiB",
        "--slow-budget",
        "none",
    ]);
    assert!(
        stdout(&out).contains("verified: 5 cells and 2 limit rows"),
        "{}",
        stdout(&out)
    );

    let missing = format!("file://{}", dir.path().join("missing.bin").display());
    assert_fails(
        &["--path", &missing],
        1,
        "does not exist (use --write to create it)",
    );
    assert_fails(
        &["--path", "file://server/share/f.bin"],
        1,
        "names the host \"server\"; only local files can be read",
    );
    assert_fails(
        &["--path", "gopher://host/f.bin"],
        1,
        "unsupported URL scheme \"gopher\"",
    );
}

#[cfg(not(feature = "object-store"))]
#[test]
fn remote_urls_need_the_object_store_feature() {
    for url in [
        "http://127.0.0.1:1/f.bin",
        "https://example.com/f.bin",
        "s3://bucket/f.bin",
    ] {
        assert_fails(
            &["--path", url],
            1,
            "URLs need the cargo feature `object-store`",
        );
        assert_fails(
            &["--path", url],
            1,
            &format!(
                "cargo run --release --features object-store --example throughput -- --path {url}"
            ),
        );
    }
}

#[cfg(feature = "object-store")]
#[test]
fn remote_urls_are_read_only_and_remote() {
    // Refused before any request: nothing listens on port 1.
    let url = "http://127.0.0.1:1/f.bin";
    assert_fails(
        &["--path", url, "--write"],
        1,
        "http(s) and s3 URLs are read-only",
    );
    assert_fails(
        &["--path", url, "--file-size", "1MiB"],
        1,
        "is timed as it is",
    );
    assert_fails(
        &["--path", url, "--latency", "1ms"],
        1,
        "simulate a link to a local file",
    );
    assert_fails(&["--path", url, "--direct"], 1, "is not a local file");
    // A server that is down is named.
    assert_fails(&["--path", url], 1, url);
    // Among several, a URL is read as it is: --write writes the local files only, and the
    // server that is down is named with its place among the sources.
    let dir = temp_dir();
    let local = dir.path().join("f.bin");
    assert_fails(
        &[
            "--path",
            local.to_str().unwrap(),
            "--path",
            &format!("web={url}"),
            "--write",
            "--file-size",
            "10KiB",
        ],
        1,
        &format!("error: source 2 of 2, web: cannot open {url}"),
    );
}
