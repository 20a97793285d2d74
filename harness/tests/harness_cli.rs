//! Tests of the `throughput` example, the harness's command line: JSON shape, the table, the
//! write phase, and the error messages for bad paths and arguments.
//!
//! The example binary is built once per test run with `cargo build --example throughput` (a
//! no-op when `cargo test` has just built it), in the same target folder, profile and features
//! as this test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;
use throughput_harness::fill_pattern;

/// The example's binary, built on first use.
fn example() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        // This test runs from <target>/<profile>/deps/.
        let exe = std::env::current_exe().expect("the test's own path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("<target>/<profile>");
        let target_dir = profile_dir.parent().expect("<target>");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args([
                "build",
                "--quiet",
                "--example",
                "throughput",
                "--target-dir",
            ])
            .arg(target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if profile_dir
            .file_name()
            .is_some_and(|name| name == "release")
        {
            build.arg("--release");
        }
        // The same features as this test, so that the build reuses what `cargo test` built.
        if cfg!(feature = "object-store") {
            build.args(["--features", "object-store"]);
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "cargo build --example throughput failed");
        let bin = profile_dir
            .join("examples")
            .join(format!("throughput{}", std::env::consts::EXE_SUFFIX));
        assert!(bin.is_file(), "{} was not built", bin.display());
        bin
    })
}

fn run(args: &[&str]) -> Output {
    Command::new(example())
        .args(args)
        .output()
        .expect("the example runs")
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

fn pattern(len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    fill_pattern(0, &mut data);
    data
}

const SMALL: [&str; 8] = [
    "--file-size",
    "64KiB",
    "--sizes",
    "100,4096",
    "--capacities",
    "4KiB",
    "--budget",
    "20s",
];

#[test]
fn json_has_one_object_per_cell_with_the_documented_fields() {
    let mut args = SMALL.to_vec();
    args.push("--json");
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let cells: Vec<Value> = match serde_json::from_slice(&out.stdout).expect("stdout is JSON") {
        Value::Array(cells) => cells,
        other => panic!("expected an array, got {other}"),
    };
    // 2 sizes x (4 readers with a window x 1 capacity + the unbuffered one).
    assert_eq!(cells.len(), 10);
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
        for key in [
            "reader",
            "reader_name",
            "read_size",
            "capacity",
            "bytes",
            "requests",
            "seconds",
            "bytes_per_second",
            "mb_per_second",
            "requests_per_second",
            "underlying_reads",
            "underlying_seeks",
            "underlying_bytes",
            "checksum",
            "complete",
            "read_ahead",
            "ratio_to_buffered",
            "repetitions",
            "file_len",
            "source",
        ] {
            assert!(cell.get(key).is_some(), "{key} missing in {cell}");
        }
        assert_eq!(cell["bytes"], 65536, "{cell}");
        assert_eq!(cell["file_len"], 65536, "{cell}");
        assert_eq!(cell["complete"], true, "{cell}");
        assert!(cell["seconds"].as_f64().unwrap() > 0.0, "{cell}");
        let bps = cell["bytes_per_second"].as_f64().unwrap();
        assert!((bps / 1e6 - cell["mb_per_second"].as_f64().unwrap()).abs() < 1e-6 * bps);
        assert!(
            cell["read_size"] == 100 || cell["read_size"] == 4096,
            "{cell}"
        );
        match cell["reader"].as_str().unwrap() {
            "unbuffered" => assert!(cell["capacity"].is_null(), "{cell}"),
            _ => assert_eq!(cell["capacity"], 4096, "{cell}"),
        }
        // The default read-ahead, ReadAhead::default(), for the read-ahead reader only.
        match cell["reader"].as_str().unwrap() {
            "readahead" => assert_eq!(
                cell["read_ahead"],
                serde_json::json!({"chunk_size": 262144, "depth": 4}),
                "{cell}"
            ),
            _ => assert!(cell["read_ahead"].is_null(), "{cell}"),
        }
        assert!(
            cell["checksum"].as_str().unwrap().starts_with("0x"),
            "{cell}"
        );
        assert_eq!(
            cell["checksum"], cells[0]["checksum"],
            "every reader read the same bytes"
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
    // Requests to the positional source: 1 plain for the first window, 1 chunk for the rest.
    assert_eq!(at_100("readahead"), 2);
    // The write phase goes to stderr in JSON mode, in the classic words.
    assert!(
        stderr(&out).contains("Wrote a file of 65536 bytes in "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_default_output_is_a_table_and_the_temporary_file_is_deleted() {
    let out = run(&SMALL);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(table.contains("MB/s = 10^6 bytes/s"), "{table}");
    assert!(table.contains("Wrote a file of 65536 bytes in "), "{table}");
    assert!(
        table.contains("checksums: all 10 complete cells read the same bytes"),
        "{table}"
    );
    assert!(
        table.contains("AsyncBufferedInput+RA = AsyncBufferedInput over the source's positional reads with read-ahead (256 KiB chunks, 4 at a time); its src reads are the requests that reach the positional source"),
        "{table}"
    );
    for name in [
        "AsyncBufferedInput ",
        "AsyncBufferedInput+RA ",
        "tokio BufReader",
        "unbuffered",
        "byte loop",
    ] {
        assert!(
            table.lines().any(|l| l.starts_with(name)),
            "{name} missing:\n{table}"
        );
    }
    let first = table.lines().next().unwrap();
    let path = first
        .strip_prefix("Sequential reads of ")
        .and_then(|rest| rest.split(": ").next())
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"));
    assert!(path.contains("abi-throughput-"), "{first}");
    assert!(!Path::new(path).exists(), "{path} should have been deleted");
}

#[test]
fn an_existing_file_is_timed_without_being_modified() {
    let dir = temp_dir();
    let path = dir.path().join("existing.bin");
    let data: Vec<u8> = (0..30_000u32).map(|i| (i * 7) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let out = run(&[
        "--path",
        path.to_str().unwrap(),
        "--sizes",
        "1000",
        "--capacities",
        "8192",
        "--readers",
        "buffered,unbuffered",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let cells: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cells.len(), 2);
    assert!(cells.iter().all(|c| c["bytes"] == 30_000));
    assert_eq!(std::fs::read(&path).unwrap(), data);
    assert!(stderr(&out).is_empty(), "no write phase: {}", stderr(&out));
}

#[test]
fn write_creates_the_file_and_keeps_it() {
    let dir = temp_dir();
    let path = dir.path().join("new.bin");
    let out = run(&[
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
    assert!(out.status.success(), "{}", stderr(&out));
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
fn a_simulated_link_and_a_plot() {
    let dir = temp_dir();
    let svg = dir.path().join("plot.svg");
    let out = run(&[
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
        "--json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let cells: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        cells[0]["source"]
            .as_str()
            .unwrap()
            .contains("simulated link (1ms latency, 100 MB/s)"),
        "{}",
        cells[0]
    );
    let unbuffered = cells
        .iter()
        .find(|c| c["reader"] == "unbuffered" && c["read_size"] == 100)
        .unwrap();
    // 164 requests of at least 1 ms each.
    assert!(
        unbuffered["seconds"].as_f64().unwrap() >= 0.164,
        "{unbuffered}"
    );
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
        "unknown reader \"fast\": expected one of buffered, readahead, bufreader, unbuffered, \
         byteloop",
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
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let table = stdout(&out);
        let first = table.lines().next().unwrap_or_default();
        assert!(first.starts_with("Sequential reads of "), "{table}");
        assert_eq!(
            first.contains("(page cache reads off)"),
            !label.is_empty(),
            "{table}"
        );
        assert!(
            table.contains("checksums: all 4 complete cells read the same bytes"),
            "{table}"
        );
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
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let cells: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
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
    let out = run(&[
        "--path",
        &url,
        "--write",
        "--file-size",
        "20000",
        "--sizes",
        "100",
        "--capacities",
        "4KiB",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&path).unwrap(), pattern(20_000));
    let cells: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cells.len(), 5, "every reader");
    for cell in &cells {
        assert_eq!(cell["source"], path.display().to_string(), "{cell}");
        assert_eq!(cell["bytes"], 20_000, "{cell}");
        assert_eq!(cell["checksum"], cells[0]["checksum"], "{cell}");
    }
    // And read as it is without --write.
    let out = run(&["--path", &url, "--sizes", "1000", "--capacities", "4KiB"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("checksums: all 5 complete cells read the same bytes"),
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
        &["--path", "ftp://host/f.bin"],
        1,
        "unsupported URL scheme \"ftp\"",
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
}
