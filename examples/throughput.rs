//! The throughput harness from the command line: time sequential reads of a file at a sweep of
//! request sizes through several readers, and show why a good buffered input matters.
//!
//! ```text
//! cargo run --release --example throughput                      # 64 MiB temp file, default sweep
//! cargo run --release --example throughput -- --path /mnt/nfs/f # an existing file, left as is
//! cargo run --release --example throughput -- --path /mnt/nfs/f --write --file-size 8MiB
//! cargo run --release --example throughput -- --latency 2ms --bandwidth 100MB/s --file-size 4MiB
//! cargo run --release --example throughput -- --read-ahead 1MiBx8
//! cargo run --release --example throughput -- --path file:///mnt/nfs/f
//! cargo run --release --features object-store --example throughput -- --path http://host:8080/f
//! cargo run --release --features object-store --example throughput -- --path s3://bucket/key
//! cargo run --release --example throughput -- --json > report.json
//! cargo run --release --example throughput -- --plot throughput.svg
//! ```
//!
//! Without `--path` it writes a temporary file (timing the write, in the manner of the classic
//! NFS test), times it, and deletes it. `--path` also takes a URL: `file://` always, `http://`,
//! `https://` and `s3://` (credentials, region and endpoint from the usual `AWS_*` variables) in
//! builds with the cargo feature `object-store`. The table's MB/s are 10^6 bytes per second.
//! Exit status: 0 on success, 1 if the run fails or complete cells' checksums differ, 2 on a
//! usage error.

use std::fs::File;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use async_buffered_input::harness::{Event, Plan, ReaderKind, Report, Source};
use async_buffered_input::source::ReadAhead;
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

/// Time sequential reads of a file at a sweep of request sizes, through AsyncBufferedInput (alone
/// and with read-ahead), tokio's BufReader, the unbuffered source and a byte-at-a-time loop.
///
/// Sizes take the units B, K/KiB, M/MiB, G/GiB (powers of 1024) and KB, MB, GB (powers of
/// 1000); durations ns, us, ms, s; rates a size per second (100MB/s).
#[derive(Parser, Debug)]
#[command(name = "throughput", version)]
struct Args {
    /// Time this file (for example one on an NFS or SSHFS mount); it is not modified unless
    /// --write is given. Default: a temporary file, written first and deleted at the end. Also
    /// takes a URL: file:///path (a local file, like a path), and with the cargo feature
    /// object-store http://, https:// and s3://bucket/key (AWS_* variables; read-only).
    #[arg(long, value_name = "FILE|URL")]
    path: Option<PathBuf>,

    /// Write the file first (created or overwritten), timing the write.
    #[arg(long)]
    write: bool,

    /// Length of the file to write (with --write, or without --path) [default: 64MiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_nonzero_size)]
    file_size: Option<u64>,

    /// Size of each write in the write phase.
    #[arg(long, value_name = "SIZE", default_value = "1KiB", value_parser = parse_nonzero_usize)]
    write_buffer: usize,

    /// Request sizes to time, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "1,8,100,1000,8192,65536",
          value_parser = parse_nonzero_usize)]
    sizes: Vec<usize>,

    /// Window capacities to time the readers that have a window with, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "8KiB,64KiB",
          value_parser = parse_nonzero_usize)]
    capacities: Vec<usize>,

    /// Readers to compare, comma-separated: buffered (AsyncBufferedInput), readahead
    /// (AsyncBufferedInput over the source's positional reads with read-ahead), bufreader
    /// (tokio's BufReader), unbuffered (the source itself), byteloop (read_u8 per byte over a
    /// BufReader).
    #[arg(long, value_name = "LIST", value_delimiter = ',',
          default_value = "buffered,readahead,bufreader,unbuffered,byteloop", value_parser = parse_reader)]
    readers: Vec<ReaderKind>,

    /// Read-ahead of the readahead reader: chunk size x chunks in flight, e.g. 1MiBx8
    /// [default: 256KiBx4].
    #[arg(long, value_name = "SIZExDEPTH", value_parser = parse_read_ahead)]
    read_ahead: Option<ReadAhead>,

    /// Page cache reads of the readahead reader's FileSource (Linux): on, cached bytes are
    /// copied at once on the reading thread; off, every chunk is a read on tokio's blocking pool.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    page_cache_reads: bool,

    /// How many times each cell reads the whole file.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,

    /// Time budget of each cell (reader, request size, window); a cell out of time reports what
    /// it read, marked partial. "none" for no limit.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_budget)]
    budget: Budget,

    /// Time budget of each cell of the unbuffered reader and the byte loop, which take minutes on
    /// large files (the smaller of this and --budget applies). "none" for no limit.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_budget)]
    slow_budget: Budget,

    /// Simulate a slow network link: latency of every request (e.g. 2ms).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    latency: Option<Duration>,

    /// Simulate a slow network link: bandwidth shared by a cell's requests (e.g. 100MB/s).
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    bandwidth: Option<u64>,

    /// Print the report as JSON on stdout (an array of objects, one per cell) instead of the
    /// table.
    #[arg(long)]
    json: bool,

    /// Also write the JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    json_out: Option<PathBuf>,

    /// Draw MB/s against request size (log scales), one line per reader and window, as SVG.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,

    /// Open the file with O_DIRECT (Linux), bypassing the client's page cache so that every read
    /// reaches the server: for NFS, whose client accepts unaligned direct reads. Local
    /// filesystems usually refuse them ("Invalid argument").
    #[arg(long, conflicts_with_all = ["latency", "bandwidth"])]
    direct: bool,

    /// No progress bar (it is only drawn when stderr is a terminal anyway).
    #[arg(long)]
    no_progress: bool,
}

/// `--budget`: a limit, or none. (A newtype, since clap would read `Option<Duration>` as an
/// optional argument.)
#[derive(Clone, Copy, Debug)]
struct Budget(Option<Duration>);

const DEFAULT_FILE_SIZE: u64 = 64 << 20;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(args).await {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<ExitCode, String> {
    if args.read_ahead.is_some() && !args.readers.iter().any(|r| r.uses_read_ahead()) {
        return Err(format!(
            "--read-ahead configures the {} reader, which --readers leaves out",
            ReaderKind::BufferedReadAhead.id()
        ));
    }
    // A URL: file:// is a local path from here on; http(s):// and s3:// are remote.
    let mut given_path = args.path.clone();
    let mut remote = None;
    if let Some(url) = args.path.as_deref().and_then(url_of) {
        let source = Source::from_url(url).map_err(|e| url_error(url, e))?;
        match source.path() {
            Some(local) => given_path = Some(local.to_path_buf()),
            None => {
                check_remote_args(&args, url)?;
                given_path = None;
                remote = Some(source);
            }
        }
    }
    if !args.page_cache_reads {
        if !args.readers.iter().any(|r| r.uses_read_ahead()) {
            return Err(format!(
                "--page-cache-reads configures the {} reader, which --readers leaves out",
                ReaderKind::BufferedReadAhead.id()
            ));
        }
        if remote.is_some() || args.direct || args.latency.is_some() || args.bandwidth.is_some() {
            return Err(
                "--page-cache-reads off applies to a local file read as it is: \
                        a URL, --direct or a simulated link has no page cache reads to turn off"
                    .to_string(),
            );
        }
    }
    let (source, temp, write_len) = match remote {
        Some(source) => (source, None, None),
        None => local_source(&args, given_path.as_deref())?,
    };
    let slow_budget = match (args.budget.0, args.slow_budget.0) {
        (Some(all), Some(slow)) => Some(all.min(slow)),
        (all, slow) => all.or(slow),
    };
    let mut plan = Plan::new(source)
        .sizes(args.sizes.iter().copied())
        .capacities(args.capacities.iter().copied())
        .readers(args.readers.iter().copied())
        .repetitions(args.repeat)
        .budget(args.budget.0)
        .reader_budget(ReaderKind::Unbuffered, slow_budget)
        .reader_budget(ReaderKind::ByteLoop, slow_budget)
        .read_ahead(args.read_ahead.unwrap_or_default());
    if let Some(len) = write_len {
        plan = plan.write_first(len, args.write_buffer);
    }
    plan.validate().map_err(|e| e.to_string())?;

    let progress = progress_bar(&args, plan.cells().len() as u64);
    let json_mode = args.json;
    let observe = |event: Event<'_>| match event {
        Event::WriteStarted { path, len, .. } => {
            progress.set_message(format!("writing {len} bytes to {}", path.display()));
        }
        Event::WriteFinished(report) if json_mode => progress.suspend(|| eprintln!("{report}")),
        Event::CellStarted { cell, .. } => progress.set_message(cell.to_string()),
        Event::CellFinished { .. } => progress.inc(1),
        _ => {}
    };
    let outcome = tokio::select! {
        outcome = plan.run_with(observe) => outcome,
        _ = tokio::signal::ctrl_c() => {
            progress.finish_and_clear();
            drop(temp); // deletes the temporary file
            return Err("interrupted".to_string());
        }
    };
    progress.finish_and_clear();
    let report = outcome.map_err(|e| {
        if args.direct && e.kind() == std::io::ErrorKind::InvalidInput {
            format!("{e} (with --direct: this filesystem refuses unaligned direct reads; --direct is meant for NFS)")
        } else {
            e.to_string()
        }
    })?;
    drop(temp);

    let json =
        serde_json::Value::Array(report.cells.iter().map(|r| cell_json(&report, r)).collect());
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json).expect("JSON values serialize")
        );
    } else {
        print!("{report}");
    }
    if let Some(out) = &args.json_out {
        let text = serde_json::to_string_pretty(&json).expect("JSON values serialize");
        std::fs::write(out, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    }
    if let Some(svg) = &args.plot {
        plot(&report, svg).map_err(|e| format!("cannot draw {}: {e}", svg.display()))?;
        eprintln!("plot: {}", svg.display());
    }
    if !report.checksums_agree() {
        eprintln!("error: complete cells read different bytes (checksums differ); see the table");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The local file to time (the given path, or a temporary file to write and delete), read as
/// the options say: directly, over a simulated link, or with `O_DIRECT`; and the length to write
/// first, if any.
fn local_source(
    args: &Args,
    given: Option<&Path>,
) -> Result<(Source, Option<tempfile::NamedTempFile>, Option<u64>), String> {
    let (path, temp, write_len) = match given {
        Some(path) => {
            if !args.write && args.file_size.is_some() {
                return Err(format!(
                    "--file-size needs --write: {} is timed as it is",
                    path.display()
                ));
            }
            check_readable(path, args.write)?;
            let len = args
                .write
                .then(|| args.file_size.unwrap_or(DEFAULT_FILE_SIZE));
            (path.to_path_buf(), None, len)
        }
        None => {
            let temp = tempfile::Builder::new()
                .prefix("abi-throughput-")
                .suffix(".bin")
                .tempfile()
                .map_err(|e| format!("cannot create a temporary file: {e}"))?;
            let path = temp.path().to_path_buf();
            (
                path,
                Some(temp),
                Some(args.file_size.unwrap_or(DEFAULT_FILE_SIZE)),
            )
        }
    };
    let source = if args.latency.is_some() || args.bandwidth.is_some() {
        Source::slow_link(
            &path,
            args.latency.unwrap_or_default(),
            args.bandwidth.unwrap_or(0),
        )
    } else if args.direct {
        direct_source(&path)?
    } else {
        Source::file(&path).page_cache_reads(args.page_cache_reads)
    };
    Ok((source, temp, write_len))
}

/// `--path`'s value if it is a URL (`scheme://...`), not a file name.
fn url_of(path: &Path) -> Option<&str> {
    let s = path.to_str()?;
    let (scheme, _) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    (starts_well && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(s)
}

/// A URL the harness cannot read, with the command that can when the feature is missing.
fn url_error(url: &str, e: std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::Unsupported {
        format!(
            "{e}; build with it: cargo run --release --features object-store --example throughput \
             -- --path {url}"
        )
    } else {
        e.to_string()
    }
}

/// Refuses the options that need a local file, for an http(s) or s3 URL.
fn check_remote_args(args: &Args, url: &str) -> Result<(), String> {
    if args.write {
        return Err(format!(
            "cannot --write {url}: http(s) and s3 URLs are read-only here; --write needs a local \
             file (a path or a file:// URL)"
        ));
    }
    if args.file_size.is_some() {
        return Err(format!(
            "--file-size is the length of a file to write; {url} is timed as it is"
        ));
    }
    if args.latency.is_some() || args.bandwidth.is_some() {
        return Err(format!(
            "--latency and --bandwidth simulate a link to a local file; {url} is read over the \
             network as it is"
        ));
    }
    if args.direct {
        return Err(format!(
            "--direct opens a local file with O_DIRECT; {url} is not a local file"
        ));
    }
    Ok(())
}

/// Fails early, with a clear message, on a path that cannot be timed. With `write`, only the
/// folder must exist.
fn check_readable(path: &Path, write: bool) -> Result<(), String> {
    if write {
        if path.is_dir() {
            return Err(format!(
                "cannot write {}: it is a directory, not a file",
                path.display()
            ));
        }
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !parent.is_dir() {
            return Err(format!(
                "cannot write {}: the folder {} does not exist",
                path.display(),
                parent.display()
            ));
        }
        return Ok(());
    }
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "{} does not exist (use --write to create it)",
            path.display()
        ),
        _ => format!("cannot read {}: {e}", path.display()),
    })?;
    if meta.is_dir() {
        return Err(format!(
            "cannot read {}: it is a directory, not a file",
            path.display()
        ));
    }
    File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if meta.len() == 0 {
        return Err(format!("{} is empty: nothing to time", path.display()));
    }
    Ok(())
}

/// The file opened with `O_DIRECT` for each cell, so reads bypass the page cache: as a tokio
/// `File` for the stream readers, as a `FileSource` for the read-ahead reader.
#[cfg(target_os = "linux")]
fn direct_source(path: &Path) -> Result<Source, String> {
    use async_buffered_input::harness::BoxSource;
    use async_buffered_input::source::FileSource;
    use std::os::unix::fs::OpenOptionsExt;

    async fn open_direct(file: PathBuf) -> std::io::Result<std::fs::File> {
        tokio::task::spawn_blocking(move || {
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECT)
                .open(&file)
                .map_err(|e| {
                    std::io::Error::new(
                        e.kind(),
                        format!("cannot open {} with O_DIRECT: {e}", file.display()),
                    )
                })
        })
        .await
        .map_err(std::io::Error::other)?
    }

    let file = path.to_path_buf();
    let open = move || {
        let opening = open_direct(file.clone());
        async move { Ok(Box::new(tokio::fs::File::from_std(opening.await?)) as BoxSource) }
    };
    let file = path.to_path_buf();
    let open_positional = move || {
        let file = file.clone();
        async move {
            let opened = open_direct(file.clone()).await?;
            Ok(FileSource::from_std(opened, file))
        }
    };
    Ok(
        Source::custom_file(format!("{} (O_DIRECT)", path.display()), path, open)
            .with_positional(open_positional),
    )
}

#[cfg(not(target_os = "linux"))]
fn direct_source(_path: &Path) -> Result<Source, String> {
    Err("--direct needs Linux (O_DIRECT)".to_string())
}

fn progress_bar(args: &Args, cells: u64) -> ProgressBar {
    if args.no_progress || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(cells);
    bar.set_style(
        ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} cells  {wide_msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// One cell as a JSON object. `checksum` is a hex string, since JSON numbers lose 64-bit
/// precision in many readers.
fn cell_json(report: &Report, r: &async_buffered_input::harness::CellReport) -> serde_json::Value {
    serde_json::json!({
        "reader": r.cell.reader.id(),
        "reader_name": r.cell.reader.name(),
        "read_size": r.cell.read_size,
        "capacity": r.cell.capacity,
        "bytes": r.bytes,
        "requests": r.requests,
        "seconds": r.seconds(),
        "bytes_per_second": r.bytes_per_second(),
        "mb_per_second": r.mb_per_second(),
        "requests_per_second": r.requests_per_second(),
        "underlying_reads": r.underlying_reads,
        "underlying_seeks": r.underlying_seeks,
        "underlying_bytes": r.underlying_bytes,
        "checksum": format!("{:#018x}", r.checksum),
        "complete": r.complete,
        "read_ahead": r.read_ahead.map(|ahead| serde_json::json!({
            "chunk_size": ahead.chunk_size(),
            "depth": ahead.depth(),
        })),
        "ratio_to_buffered": report.ratio_to_buffered(r),
        "repetitions": report.repetitions,
        "file_len": report.file_len,
        "source": report.source,
    })
}

/// MB/s against request size, log scales, one line per (reader, window): one colour per reader,
/// the thinner, lighter line for the smaller window; hollow points for partial cells.
fn plot(report: &Report, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;

    struct Series {
        label: String,
        color: RGBAColor,
        width: u32,
        points: Vec<(f64, f64, bool)>,
    }
    let mut series: Vec<Series> = Vec::new();
    for r in report.cells.iter().filter(|r| r.mb_per_second() > 0.0) {
        let label = match r.cell.capacity {
            Some(c) => format!("{} ({c} B window)", r.cell.reader.name()),
            None => r.cell.reader.name().to_string(),
        };
        let point = (r.cell.read_size as f64, r.mb_per_second(), r.complete);
        if let Some(s) = series.iter_mut().find(|s| s.label == label) {
            s.points.push(point);
            continue;
        }
        let base = match r.cell.reader {
            ReaderKind::Buffered => RGBColor(31, 119, 180),
            ReaderKind::BufReader => RGBColor(255, 127, 14),
            ReaderKind::Unbuffered => RGBColor(214, 39, 40),
            ReaderKind::ByteLoop => RGBColor(44, 160, 44),
            ReaderKind::BufferedReadAhead => RGBColor(148, 103, 189),
            _ => RGBColor(127, 127, 127),
        };
        // Windows smaller than the largest are drawn lighter and thinner.
        let largest =
            r.cell.capacity == report.capacities.last().copied() || r.cell.capacity.is_none();
        let (color, width) = if largest {
            (base.to_rgba(), 3)
        } else {
            (base.mix(0.55), 2)
        };
        series.push(Series {
            label,
            color,
            width,
            points: vec![point],
        });
    }
    if series.is_empty() {
        return Err("no cell read any byte".into());
    }
    let all = series.iter().flat_map(|s| s.points.iter());
    let (x_min, x_max, y_min, y_max) = all.fold(
        (f64::MAX, f64::MIN, f64::MAX, f64::MIN),
        |(a, b, c, d), &(x, y, _)| (a.min(x), b.max(x), c.min(y), d.max(y)),
    );

    let root = SVGBackend::new(path, (1000, 650)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Sequential reads of {} ({} bytes)",
                report.source, report.file_len
            ),
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (x_min / 1.5..x_max * 1.5).log_scale(),
            (y_min / 2.0..y_max * 2.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("request size (bytes)")
        .y_desc("MB/s (10^6 bytes/s)")
        .x_label_formatter(&|x| tick(*x))
        .y_label_formatter(&|y| tick(*y))
        .draw()?;
    for s in &series {
        let (color, width) = (s.color, s.width);
        chart
            .draw_series(LineSeries::new(
                s.points.iter().map(|&(x, y, _)| (x, y)),
                color.stroke_width(width),
            ))?
            .label(s.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(width))
            });
        chart.draw_series(s.points.iter().map(|&(x, y, complete)| {
            let style = if complete {
                color.filled()
            } else {
                color.stroke_width(2)
            };
            Circle::new((x, y), 4, style)
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    if report.has_partial() {
        root.draw(&Text::new(
            "hollow points: partial cells (time budget ran out)",
            (90, 620),
            ("sans-serif", 13),
        ))?;
    }
    root.present()?;
    Ok(())
}

/// An axis label: `1`, `100`, `0.1`, `0.001`, without float noise.
fn tick(v: f64) -> String {
    let decimals = if v >= 1.0 {
        0
    } else {
        (-v.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
}

// ----- argument parsers -----

fn parse_reader(s: &str) -> Result<ReaderKind, String> {
    s.trim().parse().map_err(|e: std::io::Error| e.to_string())
}

/// `256KiBx4`, `1MiB x 8`: a chunk size (as [`parse_size`]) and a depth.
fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("{s:?} is neither on nor off")),
    }
}

fn parse_read_ahead(s: &str) -> Result<ReadAhead, String> {
    let t = s.trim();
    let expected =
        "expected CHUNKxDEPTH: a chunk size and how many chunks in flight, like 256KiBx4";
    let (size, depth) = t
        .rsplit_once(['x', 'X', '×'])
        .ok_or_else(|| expected.to_string())?;
    if size.trim().is_empty() {
        return Err(format!("no chunk size before the x: {expected}"));
    }
    let chunk_size = parse_nonzero_usize(size).map_err(|e| format!("chunk size: {e}"))?;
    let depth: usize = depth.trim().parse().map_err(|_| {
        format!(
            "depth {:?} is not a whole number of chunks: {expected}",
            depth.trim()
        )
    })?;
    if depth == 0 {
        return Err("depth must be at least 1 chunk, got 0".to_string());
    }
    ReadAhead::try_new(chunk_size, depth).map_err(|e| e.to_string())
}

/// `100`, `8K`, `8KiB`, `1.5MiB`, `64MB`: bytes, binary (K, KiB, M, ...) or decimal (KB, MB, ...)
/// units, case-insensitive.
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty size (two commas in a row?)".into());
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| "not a size: expected a number of bytes like 100, 8KiB or 64MB".to_string())?;
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "ki" | "kib" => 1 << 10,
        "m" | "mi" | "mib" => 1 << 20,
        "g" | "gi" | "gib" => 1 << 30,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        _ => {
            return Err(format!(
                "unknown unit {unit:?}: use B, KiB, MiB, GiB, KB, MB or GB"
            ))
        }
    };
    let bytes = value * multiplier as f64;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err("too large".to_string());
    }
    if bytes.fract() != 0.0 {
        return Err("not a whole number of bytes".to_string());
    }
    Ok(bytes as u64)
}

fn parse_nonzero_size(s: &str) -> Result<u64, String> {
    match parse_size(s)? {
        0 => Err("must be at least 1 byte, got 0".to_string()),
        n => Ok(n),
    }
}

fn parse_nonzero_usize(s: &str) -> Result<usize, String> {
    let n = parse_nonzero_size(s)?;
    usize::try_from(n).map_err(|_| "too large".to_string())
}

/// `150us`, `2ms`, `1.5s`, `0`.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| {
        "not a duration: expected a number and a unit, like 2ms or 1.5s".to_string()
    })?;
    let seconds = match unit.trim() {
        "" if value == 0.0 => 0.0,
        "ns" => value / 1e9,
        "us" | "µs" => value / 1e6,
        "ms" => value / 1e3,
        "s" => value,
        "" => return Err("needs a unit: ns, us, ms or s".to_string()),
        _ => return Err(format!("unknown unit {unit:?}: use ns, us, ms or s")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| e.to_string())
}

fn parse_budget(s: &str) -> Result<Budget, String> {
    match s.trim() {
        "none" | "off" | "unlimited" => Ok(Budget(None)),
        _ => match parse_duration(s)? {
            d if d.is_zero() => {
                Err("a budget of 0 would time nothing; use \"none\" for no limit".to_string())
            }
            d => Ok(Budget(Some(d))),
        },
    }
}

/// `100MB/s`, `1GiB/s`, `unlimited` (0).
fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if matches!(t, "unlimited" | "none" | "0") {
        return Ok(0);
    }
    let size = t.strip_suffix("/s").unwrap_or(t);
    match parse_size(size)? {
        0 => Err("a bandwidth of 0 moves nothing; use \"unlimited\" for no cap".to_string()),
        n => Ok(n),
    }
}
