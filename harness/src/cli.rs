//! The command line of the `throughput` example: its arguments, how they become a [`Plan`], and
//! the run that prints the table (or JSON) and draws the chart.
//!
//! Exit status: 0 on success, 1 if the run fails or complete cells' checksums differ, 2 on a
//! usage error.

use std::fs::File;
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use async_buffered_input::fetch::ReadAhead;
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

use crate::error::chain;
use crate::plan::{Plan, ReaderKind};
use crate::plot::write_svg;
use crate::run::Event;
use crate::sources::Source;

/// Time sequential reads of a file at a sweep of request sizes, through AsyncBufferedInput (alone
/// and with read-ahead), tokio's BufReader, the unbuffered source and a byte-at-a-time loop.
///
/// Sizes take the units B, K/KiB, M/MiB, G/GiB (powers of 1024) and KB, MB, GB (powers of
/// 1000); durations ns, us, ms, s (and min, h, ...); rates a size per second (100MB/s).
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

/// The `throughput` command: parses the process's arguments (printing usage and exiting with
/// status 2 if they are wrong), runs the plan they describe, and prints the report. Errors go
/// to stderr with their causes, `error: cannot open /mnt/f: No such file or directory (os
/// error 2)`.
///
/// Needs a tokio runtime with the time driver enabled (`#[tokio::main]`).
pub async fn main() -> ExitCode {
    match run(Args::parse()).await {
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
        let source = Source::from_url(url).map_err(|e| url_error(url, &e))?;
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
    plan.validate().map_err(|e| chain(&e))?;

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
        if args.direct && e.kind() == io::ErrorKind::InvalidInput {
            format!(
                "{} (with --direct: this filesystem refuses unaligned direct reads; --direct is \
                 meant for NFS)",
                chain(&e)
            )
        } else {
            chain(&e)
        }
    })?;
    drop(temp);

    let json = report.json();
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
            .map_err(|e| format!("cannot write {}: {}", out.display(), chain(&e)))?;
    }
    if let Some(svg) = &args.plot {
        write_svg(&report, svg)
            .map_err(|e| format!("cannot draw {}: {}", svg.display(), chain(&*e)))?;
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
                .map_err(|e| format!("cannot create a temporary file: {}", chain(&e)))?;
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
fn url_error(url: &str, e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::Unsupported {
        format!(
            "{}; build with it: cargo run --release --features object-store --example throughput \
             -- --path {url}",
            chain(e)
        )
    } else {
        chain(e)
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
        io::ErrorKind::NotFound => format!(
            "{} does not exist (use --write to create it)",
            path.display()
        ),
        _ => format!("cannot read {}: {}", path.display(), chain(&e)),
    })?;
    if meta.is_dir() {
        return Err(format!(
            "cannot read {}: it is a directory, not a file",
            path.display()
        ));
    }
    File::open(path).map_err(|e| format!("cannot read {}: {}", path.display(), chain(&e)))?;
    if meta.len() == 0 {
        return Err(format!("{} is empty: nothing to time", path.display()));
    }
    Ok(())
}

/// The file opened with `O_DIRECT` for each cell, so reads bypass the page cache: as a tokio
/// `File` for the stream readers, as a `FileSource` for the read-ahead reader.
#[cfg(target_os = "linux")]
fn direct_source(path: &Path) -> Result<Source, String> {
    use crate::error::context;
    use crate::sources::BoxSource;
    use async_buffered_input::source::FileSource;
    use std::os::unix::fs::OpenOptionsExt;

    async fn open_direct(file: PathBuf) -> io::Result<std::fs::File> {
        tokio::task::spawn_blocking(move || {
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECT)
                .open(&file)
                .map_err(|e| context(e, format!("cannot open {} with O_DIRECT", file.display())))
        })
        .await
        .map_err(io::Error::other)?
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
    if args.no_progress || !io::stderr().is_terminal() {
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

// ----- argument parsers -----

fn parse_reader(s: &str) -> Result<ReaderKind, String> {
    s.trim().parse().map_err(|e: io::Error| e.to_string())
}

fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("{s:?} is neither on nor off")),
    }
}

/// `256KiBx4`, `1MiB x 8`: a chunk size (as [`parse_size`]) and a depth.
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

/// `100`, `8K`, `8KiB`, `1.5MiB`, `64MB`, `1e6`: a number of bytes and a unit, any case. K, M, G
/// and T are powers of 1024 like KiB, MiB, GiB and TiB; KB, MB, GB and TB powers of 1000.
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty size (two commas in a row?)".into());
    }
    let number = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &t[number.len()..];
    // parse-size reads a bare K like KB (decimal); here it is KiB, as in `dd` and `head -c`.
    let config = if unit.len() == 1 && !unit.eq_ignore_ascii_case("b") {
        parse_size::Config::new().with_binary()
    } else {
        parse_size::Config::new()
    };
    let bytes = config.parse_size(t).map_err(|e| match e {
        parse_size::Error::PosOverflow => "too large".to_string(),
        _ if parse_size::parse_size(number).is_ok() => {
            format!("unknown unit {unit:?}: use B, KiB, MiB, GiB, KB, MB or GB")
        }
        _ => "not a size: expected a number of bytes like 100, 8KiB or 64MB".to_string(),
    })?;
    // parse-size rounds to the nearest byte: a fraction of a byte is a mistake here.
    let per_unit = config.parse_size(format!("1{unit}")).unwrap_or(1);
    if number
        .trim()
        .parse::<f64>()
        .is_ok_and(|n| (n * per_unit as f64).fract() != 0.0)
    {
        return Err("not a whole number of bytes".to_string());
    }
    Ok(bytes)
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

/// `150us`, `2ms`, `1.5s`, `1min 30s`, `0`: humantime's durations, and a bare 0.
fn parse_duration(s: &str) -> Result<Duration, String> {
    use humantime::DurationError;

    let t = s.trim();
    if t.parse::<f64>() == Ok(0.0) {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(t).map_err(|e| match e {
        DurationError::UnknownUnit { unit, .. } if unit.is_empty() => {
            "needs a unit: ns, us, ms or s".to_string()
        }
        DurationError::UnknownUnit { unit, .. } => {
            format!("unknown unit {unit:?}: use ns, us, ms, s, min or h")
        }
        DurationError::NumberOverflow => e.to_string(),
        _ => "not a duration: expected a number and a unit, like 2ms or 1.5s".to_string(),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_and_decimal_units() {
        for (text, bytes) in [
            ("100", 100),
            ("100B", 100),
            ("8K", 8 << 10),
            ("8k", 8 << 10),
            ("8Ki", 8 << 10),
            ("8KiB", 8 << 10),
            ("8 KiB", 8 << 10),
            ("1.5MiB", 3 << 19),
            ("2M", 2 << 20),
            ("1G", 1 << 30),
            ("1GiB", 1 << 30),
            ("10KB", 10_000),
            ("10kb", 10_000),
            ("64MB", 64_000_000),
            ("1GB", 1_000_000_000),
            ("1e3", 1000),
            ("0", 0),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn bad_sizes_say_what_is_wrong() {
        for (text, message) in [
            ("", "empty size (two commas in a row?)"),
            ("x", "not a size"),
            ("fast", "not a size"),
            ("1.2.3", "not a size"),
            ("8XB", "unknown unit \"XB\""),
            ("8 QB", "unknown unit \"QB\""),
            ("1.5", "not a whole number of bytes"),
            ("0.1KiB", "not a whole number of bytes"),
            ("99999999999999999999", "too large"),
            ("100000PB", "too large"),
        ] {
            let err = parse_size(text).unwrap_err();
            assert!(err.starts_with(message), "{text:?}: {err}");
        }
    }

    #[test]
    fn rates_are_sizes_per_second() {
        assert_eq!(parse_rate("100MB/s"), Ok(100_000_000));
        assert_eq!(parse_rate("1GiB/s"), Ok(1 << 30));
        assert_eq!(parse_rate("unlimited"), Ok(0));
        assert!(parse_rate("0B/s")
            .unwrap_err()
            .contains("use \"unlimited\""));
    }

    #[test]
    fn durations_need_a_unit_except_zero() {
        for (text, duration) in [
            ("150us", Duration::from_micros(150)),
            ("150µs", Duration::from_micros(150)),
            ("2ms", Duration::from_millis(2)),
            ("2 ms", Duration::from_millis(2)),
            ("1.5s", Duration::from_millis(1500)),
            ("1min 30s", Duration::from_secs(90)),
            ("0", Duration::ZERO),
            ("0s", Duration::ZERO),
        ] {
            assert_eq!(parse_duration(text), Ok(duration), "{text}");
        }
        for (text, message) in [
            ("2", "needs a unit"),
            ("2 fortnights", "unknown unit \"fortnights\""),
            ("fast", "not a duration"),
        ] {
            let err = parse_duration(text).unwrap_err();
            assert!(err.starts_with(message), "{text:?}: {err}");
        }
    }

    #[test]
    fn budgets_are_durations_or_none() {
        assert_eq!(parse_budget("none").unwrap().0, None);
        assert_eq!(parse_budget("2s").unwrap().0, Some(Duration::from_secs(2)));
        assert!(parse_budget("0s").unwrap_err().contains("use \"none\""));
    }

    #[test]
    fn the_arguments_are_consistent() {
        use clap::CommandFactory;
        Args::command().debug_assert();
    }
}
