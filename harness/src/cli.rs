//! The command line of the `throughput` example: its arguments, how they become a [`Plan`] over
//! one or several sources, and the run that prints the table (or JSON) and draws the chart.
//!
//! Exit status: 0 on success, 1 if the run fails, a cell fails, or a row read other bytes than the
//! file holds, 2 on a usage error.

use std::fs::File;
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use async_buffered_input::ReadAhead;
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

use crate::error::{chain, not_a_file};
use crate::plan::{Plan, ReaderKind};
use crate::plot::write_svg;
use crate::remote::Remote;
use crate::run::Event;
use crate::sources::Source;
use crate::units::{parse_duration, parse_nonzero_size, parse_nonzero_usize, parse_rate};
use crate::workload::Pattern;
use crate::write::check_writable;

/// Time reads of a file at a sweep of request sizes, through AsyncBufferedInput (alone, with
/// read-ahead, or through a block cache shared by a cell's tasks), tokio's BufReader, the unbuffered source and a byte-at-a-time loop, next to the
/// source's limit (1 MiB reads straight from it, like dd bs=1M), for one or several sources side
/// by side.
///
/// Sizes take the units B, K/KiB, M/MiB, G/GiB (powers of 1024) and KB, MB, GB (powers of
/// 1000); durations ns, us, ms, s (and min, h, ...); rates a size per second (100MB/s).
#[derive(Parser, Debug)]
#[command(name = "throughput", version)]
struct Args {
    /// A source to time; repeat it to time several side by side, in one table. A file (for
    /// example on an NFS or SSHFS mount), not modified unless --write is given, or a URL:
    /// file:///path, and with the cargo feature object-store http://, https:// and
    /// s3://bucket/key (AWS_* variables; read-only), with the feature nfs
    /// nfs://host[:port]/export/file. NAME=... names the source in the table
    /// (local=/tmp/f, s3=s3://b/k). Default: a temporary file, written first and deleted at the
    /// end.
    #[arg(long, value_name = "[NAME=]FILE|URL")]
    path: Vec<String>,

    /// Write each local file first (created or overwritten), timing the write; URLs are read as
    /// they are.
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
    /// (AsyncBufferedInput over the source's positional reads with read-ahead), cached
    /// (AsyncBufferedInput over the source's positional reads through one block cache shared by
    /// the cell's tasks, fresh per cell; not in the default list: meant for --pattern terms),
    /// bufreader (tokio's BufReader), unbuffered (the source itself), byteloop (read_u8 per byte
    /// over a BufReader), and for URL sources only opendal and opendal-tuned (OpenDAL's own
    /// reader; feature opendal) and object-store-bufreader (object_store's own BufReader;
    /// feature object-store); or none, for the write phase and the limit row only (the classic
    /// test).
    #[arg(long, value_name = "LIST", default_value = "buffered,readahead,bufreader,unbuffered,byteloop",
          value_parser = parse_readers)]
    readers: ReaderList,

    /// Access patterns, comma-separated: seq (from the first byte to the last), random (each
    /// request at a random offset), clustered (runs of 16 consecutive requests at random
    /// offsets; clustered:N for runs of N), terms (term lookups: each request at a random offset
    /// in a 64 KiB region picked by a Zipf-skewed rank, s = 1.1; terms:S for another exponent).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "seq",
          value_parser = parse_pattern)]
    pattern: Vec<Pattern>,

    /// Concurrent readers per cell, comma-separated (1,4 times each cell with one and with four):
    /// a sequential pass splits the file between them, a random one its requests.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "1",
          value_parser = parse_tasks)]
    tasks: Vec<usize>,

    /// Seed of the random, clustered and term-lookup patterns.
    #[arg(long, value_name = "N", default_value_t = Plan::DEFAULT_SEED)]
    seed: u64,

    /// Requests per pass of a random, clustered or terms cell, all tasks together [default: as
    /// many as read the file once, at most 10000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    requests: Option<u64>,

    /// Read-ahead shapes of the readahead reader, comma-separated, one row each: adaptive (the
    /// default: from 64 KiB x 2 up to 4 MiB x 4) or fixed, chunk size x chunks in flight, e.g.
    /// adaptive,64KiBx2,256KiBx4,1MiBx8 to compare the default with fixed shapes
    /// [default: adaptive].
    #[arg(long, value_name = "SIZExDEPTH", value_delimiter = ',', value_parser = parse_read_ahead)]
    read_ahead: Vec<ReadAhead>,

    /// Capacity of the cached reader's block cache, one per cell (blocks of the window's size).
    #[arg(long, value_name = "SIZE", value_parser = parse_nonzero_size)]
    cache_capacity: Option<u64>,

    /// Hedged reads for the readahead and cached readers' positional sources: auto hedges URL
    /// sources (HTTP, S3), a second request for a read slower than the p95 of recent ones (at
    /// least 2 ms), at most 5% of reads; off never hedges.
    #[arg(long, value_name = "auto|off", default_value = "auto", value_parser = parse_hedge)]
    hedge: Hedge,

    /// At most N requests in flight to each source from the readahead and cached readers (one
    /// RequestLimiter per source, shared by all cells) [default: no limit].
    #[arg(long, value_name = "N", value_parser = parse_nonzero_usize)]
    max_requests: Option<usize>,

    /// A local-disk tier under the cached reader's block cache, kept in DIR across runs (Unix):
    /// a second identical run reads what the first wrote, as after a restart.
    #[arg(long, value_name = "DIR")]
    disk_cache: Option<PathBuf>,

    /// Capacity of the --disk-cache tier, per window size [default: 1GiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_nonzero_size, requires = "disk_cache")]
    disk_cache_capacity: Option<u64>,

    /// Page cache reads of the readahead reader's FileSource (Linux): on, cached bytes are
    /// copied at once on the reading thread; off, every chunk is a read on tokio's blocking pool.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    page_cache_reads: bool,

    /// How many times each cell makes its requests.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,

    /// Time budget of each cell (reader, request size, window) and of each limit row; a cell out
    /// of time reports what it read, marked partial. "none" for no limit.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_budget)]
    budget: Budget,

    /// Time each limit row (the loop of 1 MiB reads and the stream) is timed for at least: its
    /// passes are timed again, whole, until this has passed (within --budget), and the row
    /// shows the median round. "none" for one round.
    #[arg(long, value_name = "DURATION", default_value = "500ms", value_parser = parse_floor)]
    limit_floor: Budget,

    /// Time budget of each cell of the unbuffered reader and the byte loop, which take minutes on
    /// large files (the smaller of this and --budget applies). "none" for no limit.
    #[arg(long, value_name = "DURATION", default_value = "200ms", value_parser = parse_budget)]
    slow_budget: Budget,

    /// Simulate a slow network link to each local file: latency of every request (e.g. 2ms).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    latency: Option<Duration>,

    /// Simulate a slow network link to each local file: bandwidth shared by a cell's requests
    /// (e.g. 100MB/s).
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    bandwidth: Option<u64>,

    /// Print the report as JSON on stdout (an array of objects, one per row of the table: write,
    /// limit and read rows, each with its source) instead of the table; the classic test's lines
    /// go to stderr.
    #[arg(long)]
    json: bool,

    /// Print every column of the table, however wide; by default it leaves out the columns
    /// that do not fit 120 characters (and says which).
    #[arg(long)]
    wide: bool,

    /// Also write the JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    json_out: Option<PathBuf>,

    /// Draw MB/s against request size (log scales), one panel per source, one line per reader
    /// and window, the limit dashed, as SVG.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,

    /// Open each local file with O_DIRECT (Linux), bypassing the client's page cache so that
    /// every read reaches the server: for NFS, whose client accepts unaligned direct reads. Local
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

/// `--readers`: a list, possibly empty (`none`).
#[derive(Clone, Debug)]
struct ReaderList(Vec<ReaderKind>);

const DEFAULT_FILE_SIZE: u64 = 64 << 20;

/// The `throughput` command: parses the process's arguments (printing usage and exiting with
/// status 2 if they are wrong), builds a tokio runtime (one thread, or one worker per core when
/// `--tasks` asks for concurrent readers), runs the plan they describe, and prints the report.
/// Errors go to stderr with their causes, `error: cannot open /mnt/f: No such file or directory
/// (os error 2)`.
pub fn main() -> ExitCode {
    let args = Args::parse();
    let mut runtime = if args.tasks.iter().any(|&t| t > 1) {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match runtime.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the tokio runtime: {}", chain(&e));
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// One `--path`, with the source it names.
struct Given {
    /// The argument as given.
    text: String,
    /// The name before `=`, if any.
    name: Option<String>,
    /// A local file (a path or a `file://` URL) or a remote object.
    target: Target,
}

enum Target {
    Local(PathBuf),
    Remote(Source),
}

async fn run(args: Args) -> Result<ExitCode, String> {
    let readers = &args.readers.0;
    let reads_ahead = readers.iter().any(|r| r.uses_read_ahead());
    if !args.read_ahead.is_empty() && !reads_ahead {
        return Err(format!(
            "--read-ahead configures the {} reader, which --readers leaves out",
            ReaderKind::BufferedReadAhead.id()
        ));
    }
    if args.disk_cache.is_some() && !readers.contains(&ReaderKind::Cached) {
        return Err(format!(
            "--disk-cache configures the {} reader, which --readers leaves out",
            ReaderKind::Cached.id()
        ));
    }
    if args.cache_capacity.is_some() && !readers.contains(&ReaderKind::Cached) {
        return Err(format!(
            "--cache-capacity configures the {} reader, which --readers leaves out",
            ReaderKind::Cached.id()
        ));
    }
    let given = args
        .path
        .iter()
        .map(|text| parse_path(text))
        .collect::<Result<Vec<_>, _>>()?;
    let locals = given
        .iter()
        .filter(|g| matches!(g.target, Target::Local(_)))
        .count();
    check_options(&args, &given, locals, reads_ahead)?;

    // The sources, in the order given; without --path, a temporary file.
    let mut temp = None;
    let mut sources = Vec::with_capacity(given.len().max(1));
    let writes = args.write || given.is_empty();
    for g in given {
        let source = match g.target {
            Target::Remote(source) => source,
            Target::Local(path) => {
                check_readable(&path, args.write)?;
                local_source(&args, &path)
            }
        };
        let source = match g.name {
            Some(name) => source.named(name),
            None => source,
        };
        let hedge = args.hedge == Hedge::Auto && source.is_remote_store();
        sources.push(if hedge || args.max_requests.is_some() {
            source.with_remote(Remote::new(hedge, args.max_requests))
        } else {
            source
        });
    }
    if sources.is_empty() {
        let file = tempfile::Builder::new()
            .prefix("abi-throughput-")
            .suffix(".bin")
            .tempfile()
            .map_err(|e| format!("cannot create a temporary file: {}", chain(&e)))?;
        sources.push(local_source(&args, file.path()));
        temp = Some(file);
    }

    let slow_budget = match (args.budget.0, args.slow_budget.0) {
        (Some(all), Some(slow)) => Some(all.min(slow)),
        (all, slow) => all.or(slow),
    };
    let mut plan = Plan::over(sources)
        .patterns(args.pattern.iter().copied())
        .tasks(args.tasks.iter().copied())
        .seed(args.seed)
        .random_requests(args.requests)
        .sizes(args.sizes.iter().copied())
        .capacities(args.capacities.iter().copied())
        .readers(readers.iter().copied())
        .repetitions(args.repeat)
        .budget(args.budget.0)
        .limit_floor(args.limit_floor.0)
        .reader_budget(ReaderKind::Unbuffered, slow_budget)
        .reader_budget(ReaderKind::ByteLoop, slow_budget)
        .read_aheads(if args.read_ahead.is_empty() {
            vec![ReadAhead::default()]
        } else {
            args.read_ahead.clone()
        })
        .cache_capacity(args.cache_capacity.unwrap_or(Plan::DEFAULT_CACHE_CAPACITY));
    if let Some(dir) = &args.disk_cache {
        plan = plan.disk_cache(dir, args.disk_cache_capacity.unwrap_or(1 << 30));
    }
    if writes {
        plan = plan.write_first(
            args.file_size.unwrap_or(DEFAULT_FILE_SIZE),
            args.write_buffer,
        );
    }
    plan.validate().map_err(|e| chain(&e))?;

    // Each cell advances the bar twice: timed, then verified.
    let progress = progress_bar(
        &args,
        2 * (plan.cells().len() * plan.sources().len()) as u64,
    );
    let json_mode = args.json;
    let mut current = String::new();
    let observe = |event: Event<'_>| match event {
        Event::SourceStarted { name, .. } => current = name.to_string(),
        Event::WriteStarted { path, len, .. } => {
            progress.set_message(format!(
                "{current}: writing {len} bytes to {}",
                path.display()
            ));
        }
        Event::WriteFinished(report) if json_mode => {
            progress.suspend(|| eprintln!("{current}: {report}"));
        }
        Event::CellStarted { cell, .. } => progress.set_message(format!("{current}: {cell}")),
        Event::CellTimed { .. } | Event::CellFinished { .. } => progress.inc(1),
        Event::VerificationStarted { cells } => {
            progress.set_message(format!("verifying {cells} cells (not timed)"));
        }
        Event::LimitFinished { name, report } if json_mode => {
            progress.suspend(|| eprintln!("{name}: {report}"));
        }
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
    } else if args.wide {
        print!("{report:#}");
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
    if !report.verified() {
        eprintln!(
            "error: some rows read other bytes than the file holds (MISMATCH); see the report"
        );
        return Ok(ExitCode::FAILURE);
    }
    let failures = report.failures();
    if !failures.is_empty() {
        let hint = if args.direct {
            " (with --direct: local file systems refuse unaligned direct reads, \
             \"Invalid argument\"; --direct is meant for NFS)"
        } else {
            ""
        };
        eprintln!(
            "error: {} cell(s) failed (FAILED in the report); the first: {} {}: {}{hint}",
            failures.len(),
            failures[0].0.name,
            failures[0].1.cell,
            failures[0].1.error.as_deref().unwrap_or_default()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads one `--path`: an optional `NAME=`, then a file or a URL. A URL is parsed now, so that a
/// bad one among several is named before anything runs.
fn parse_path(text: &str) -> Result<Given, String> {
    let (name, target) = match text.split_once('=') {
        Some((name, rest)) if is_name(name) && !rest.is_empty() && !Path::new(text).exists() => {
            (Some(name.to_string()), rest)
        }
        _ => (None, text),
    };
    let target = match url_of(target) {
        Some(url) => {
            let source = Source::from_url(url)
                .map_err(|e| format!("--path {text}: {}", url_error(url, &e)))?;
            match source.path() {
                Some(local) => Target::Local(local.to_path_buf()),
                None => Target::Remote(source),
            }
        }
        None => Target::Local(PathBuf::from(target)),
    };
    Ok(Given {
        text: text.to_string(),
        name,
        target,
    })
}

/// A source name: a letter, then letters, digits, `_`, `-` or `.`.
fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Refuses options that do not apply to the sources given, naming the source.
fn check_options(
    args: &Args,
    given: &[Given],
    locals: usize,
    reads_ahead: bool,
) -> Result<(), String> {
    let first_remote = given
        .iter()
        .find(|g| matches!(g.target, Target::Remote(_)))
        .map(|g| g.text.as_str());
    let no_local = !given.is_empty() && locals == 0;
    if let (true, Some(url)) = (no_local, first_remote) {
        if args.write {
            return Err(format!(
                "cannot --write {url}: http(s) and s3 URLs are read-only here; --write needs a \
                 local file (a path or a file:// URL)"
            ));
        }
        if args.file_size.is_some() {
            return Err(format!(
                "--file-size is the length of a file to write; {url} is timed as it is"
            ));
        }
        if args.latency.is_some() || args.bandwidth.is_some() {
            return Err(format!(
                "--latency and --bandwidth simulate a link to a local file; {url} is read over \
                 the network as it is"
            ));
        }
        if args.direct {
            return Err(format!(
                "--direct opens a local file with O_DIRECT; {url} is not a local file"
            ));
        }
    }
    if !given.is_empty() && !args.write && args.file_size.is_some() {
        return Err(format!(
            "--file-size needs --write: {} is timed as it is",
            given[0].text
        ));
    }
    if !args.page_cache_reads {
        if !reads_ahead {
            return Err(format!(
                "--page-cache-reads configures the {} reader, which --readers leaves out",
                ReaderKind::BufferedReadAhead.id()
            ));
        }
        if no_local || args.direct || args.latency.is_some() || args.bandwidth.is_some() {
            return Err(
                "--page-cache-reads off applies to a local file read as it is: \
                 a URL, --direct or a simulated link has no page cache reads to turn off"
                    .to_string(),
            );
        }
    }
    Ok(())
}

/// The local file at `path`, read as the options say: directly, over a simulated link, or with
/// `O_DIRECT`.
fn local_source(args: &Args, path: &Path) -> Source {
    if args.latency.is_some() || args.bandwidth.is_some() {
        Source::slow_link(
            path,
            args.latency.unwrap_or_default(),
            args.bandwidth.unwrap_or(0),
        )
    } else {
        Source::file(path)
            .direct(args.direct)
            .page_cache_reads(args.page_cache_reads)
    }
}

/// `--path`'s value if it is a URL (`scheme://...`), not a file name.
fn url_of(path: &str) -> Option<&str> {
    let (scheme, _) = path.split_once("://")?;
    let mut chars = scheme.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    (starts_well && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(path)
}

/// A URL the harness cannot read, with the command that can when the feature is missing.
fn url_error(url: &str, e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::Unsupported {
        let message = e.to_string();
        let feature = if message.contains("`opendal`") {
            "opendal"
        } else if message.contains("`nfs`") {
            "nfs"
        } else {
            "object-store"
        };
        format!(
            "{}; build with it: cargo run --release --features {feature} --example throughput \
             -- --path {url}",
            chain(e)
        )
    } else {
        chain(e)
    }
}

/// Fails early, with a clear message, on a path that cannot be timed. With `write`, only the
/// folder must exist.
fn check_readable(path: &Path, write: bool) -> Result<(), String> {
    if write {
        return check_writable(path).map_err(|e| e.to_string());
    }
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => format!(
            "{} does not exist (use --write to create it)",
            path.display()
        ),
        _ => format!("cannot read {}: {}", path.display(), chain(&e)),
    })?;
    if meta.is_dir() {
        return Err(not_a_file("read", path).to_string());
    }
    File::open(path).map_err(|e| format!("cannot read {}: {}", path.display(), chain(&e)))?;
    if meta.len() == 0 {
        return Err(format!("{} is empty: nothing to time", path.display()));
    }
    Ok(())
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

/// `buffered,readahead`, or `none`.
fn parse_readers(s: &str) -> Result<ReaderList, String> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(ReaderList(Vec::new()));
    }
    s.split(',')
        .map(|r| r.trim().parse().map_err(|e: io::Error| e.to_string()))
        .collect::<Result<Vec<_>, _>>()
        .map(ReaderList)
}

fn parse_pattern(s: &str) -> Result<Pattern, String> {
    s.parse().map_err(|e: io::Error| e.to_string())
}

fn parse_tasks(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("a cell needs at least 1 task, got 0".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number of tasks")),
    }
}

/// `--hedge`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hedge {
    /// Hedge URL sources.
    Auto,
    /// Never hedge.
    Off,
}

fn parse_hedge(text: &str) -> Result<Hedge, String> {
    match text {
        "auto" => Ok(Hedge::Auto),
        "off" => Ok(Hedge::Off),
        _ => Err(format!("expected auto or off, not {text:?}")),
    }
}

fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("{s:?} is neither on nor off")),
    }
}

/// `adaptive` ([`ReadAhead::default`]), or `256KiBx4`, `1MiB x 8`: a chunk size (as
/// `parse_size` reads it) and a depth.
fn parse_read_ahead(s: &str) -> Result<ReadAhead, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("adaptive") || t.eq_ignore_ascii_case("default") {
        return Ok(ReadAhead::default());
    }
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

/// `--limit-floor`: a duration (0: one round), or none.
fn parse_floor(s: &str) -> Result<Budget, String> {
    match s.trim() {
        "none" | "off" => Ok(Budget(None)),
        _ => parse_duration(s).map(|d| Budget(Some(d))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::parse_size;

    #[test]
    fn budgets_are_durations_or_none() {
        assert_eq!(parse_budget("none").unwrap().0, None);
        assert_eq!(parse_budget("2s").unwrap().0, Some(Duration::from_secs(2)));
        assert!(parse_budget("0s").unwrap_err().contains("use \"none\""));
        assert_eq!(parse_floor("none").unwrap().0, None);
        assert_eq!(parse_floor("0s").unwrap().0, Some(Duration::ZERO));
        assert_eq!(
            parse_floor("250ms").unwrap().0,
            Some(Duration::from_millis(250))
        );
        assert_eq!(parse_size("1KiB"), Ok(1024));
    }

    #[test]
    fn paths_may_be_named_and_urls_are_checked_at_once() {
        let named = parse_path("local=/tmp/f.bin").unwrap();
        assert_eq!(named.name.as_deref(), Some("local"));
        assert!(matches!(&named.target, Target::Local(p) if p == Path::new("/tmp/f.bin")));
        let plain = parse_path("/tmp/a=b.bin").unwrap();
        assert_eq!(plain.name, None, "a slash before the = is a path");
        let url = parse_path("disk=file:///tmp/x%20y").unwrap();
        assert!(matches!(&url.target, Target::Local(p) if p == Path::new("/tmp/x y")));
        let err = parse_path("s3=gopher://host/f").err().unwrap();
        assert!(
            err.starts_with("--path s3=gopher://host/f: unsupported URL scheme \"gopher\""),
            "{err}"
        );
        assert!(!is_name("2fast") && !is_name("") && is_name("nfs-4.2"));
    }

    #[test]
    fn readers_may_be_none() {
        assert!(parse_readers("none").unwrap().0.is_empty());
        assert_eq!(
            parse_readers("buffered, readahead").unwrap().0,
            [ReaderKind::Buffered, ReaderKind::BufferedReadAhead]
        );
        assert!(parse_readers("buffered,,x").is_err());
        assert_eq!(
            parse_tasks("0"),
            Err("a cell needs at least 1 task, got 0".to_string())
        );
    }

    #[test]
    fn the_arguments_are_consistent() {
        use clap::CommandFactory;
        Args::command().debug_assert();
    }
}
