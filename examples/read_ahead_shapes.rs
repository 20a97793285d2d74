//! Times the default (adaptive) read-ahead against fixed shapes on one real source: a sequential
//! read of the whole object with 64 KiB `read_bytes` requests, through every configuration, in
//! interleaved rounds, with ratios against baselines measured in the same run.
//!
//! ```text
//! cargo run --release --features object-store --example read_ahead_shapes -- --path FILE
//! cargo run --release --features object-store --example read_ahead_shapes -- \
//!     --url http://127.0.0.1:PORT/file.bin [--delay 2ms]
//! ```
//!
//! Options: `--rounds N` (default 5), `--request-size BYTES` (default 65536), `--delay DUR`
//! (`2ms`, `500us`, `0`; URLs only): puts an in-process TCP proxy on 127.0.0.1 in front of the
//! server that holds each request from the client for `DUR` before forwarding it (keep-alive
//! connections, responses forwarded at once, no throughput cap).
//!
//! The configurations, each over a fresh input (`AsyncBufferedInput::new`, 8 KiB window) on a
//! `PositionalFetch` of the source (`FileSource` for a path, `ObjectStoreSource` for a URL, all
//! passes sharing one store, so one connection pool):
//!
//! - `default`: `ReadAhead::default()`, adaptive from 64 KiB x 2 up to 4 MiB x 4;
//! - the fixed shapes `ReadAhead::new(chunk, depth)`: 64 KiB x 2, 256 KiB x 4, 1 MiB x 4,
//!   1 MiB x 8, 4 MiB x 4;
//! - `none`: no read-ahead;
//! - for URLs, `object_store::buffered::BufReader` with its default capacity (1 MiB in
//!   object_store 0.14) and with 4 MiB, read with `read_exact` of the same request size.
//!
//! Each round runs every configuration once, the order rotated by one each round. A timed pass
//! reads every request into one request-sized buffer used again and again, as a consumer does
//! (a buffer as large as the object would time the first touch of its memory, not the reader),
//! and folds each request's first and last byte, as the throughput harness's timed loop does;
//! the fold is compared with the content's. Before the rounds, an untimed pass of each
//! configuration reads the whole object into a buffer set to the complement of the content
//! (read once up front, with `std::fs::read` or one `GET` of the object) and compares every
//! byte, so a wrong, missing or misplaced read fails the run (exit 1).
//!
//! The table gives per configuration the median MB/s (10^6 bytes per second) over the rounds,
//! the slowest and fastest pass, the ratio to the best fixed shape and (URLs) to `BufReader`
//! with its default capacity, and what the input asked of its source per pass: requests
//! (`read_at` calls), their largest size, and the bytes copied at hand (`try_read_at`, page
//! cache reads of a local file). Then the issue's goals: default >= 0.8x the best fixed shape,
//! and (URLs) default >= 2x `BufReader`.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_buffered_input::fetch::{PositionalFetch, ReadAhead};
use async_buffered_input::source::{FileSource, ObjectStoreSource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use bytes::Bytes;
use object_store::buffered::BufReader;
use object_store::{ObjectMeta, ObjectStoreExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// The command line.
#[derive(Debug)]
struct Args {
    /// What to read: a local path or an http(s) URL.
    target: Target,
    /// How long the proxy holds each request (URLs only).
    delay: Option<Duration>,
    /// Passes per configuration.
    rounds: usize,
    /// The size of each read.
    request_size: usize,
}

/// What to read.
#[derive(Debug)]
enum Target {
    /// A local file or a file on a mount.
    Path(String),
    /// An object on an HTTP server.
    Url(String),
}

const USAGE: &str =
    "usage: read_ahead_shapes (--path FILE | --url http://HOST:PORT/OBJECT [--delay DUR]) \
[--rounds N] [--request-size BYTES]";

impl Args {
    /// Parses the arguments after the program name.
    fn parse(mut argv: impl Iterator<Item = String>) -> Result<Self, String> {
        let (mut path, mut url, mut delay) = (None, None, None);
        let (mut rounds, mut request_size) = (5, 64 * KIB);
        while let Some(flag) = argv.next() {
            let mut value = || {
                argv.next()
                    .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
            };
            match flag.as_str() {
                "--path" => path = Some(value()?),
                "--url" => url = Some(value()?),
                "--delay" => delay = Some(parse_duration(&value()?)?),
                "--rounds" => rounds = parse_count("--rounds", &value()?)?,
                "--request-size" => request_size = parse_count("--request-size", &value()?)?,
                "-h" | "--help" => return Err(USAGE.to_owned()),
                other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
            }
        }
        let target = match (path, url) {
            (Some(p), None) => Target::Path(p),
            (None, Some(u)) => Target::Url(u),
            _ => return Err(format!("give exactly one of --path and --url\n{USAGE}")),
        };
        if delay.is_some() && matches!(target, Target::Path(_)) {
            return Err("--delay only applies to --url".to_owned());
        }
        Ok(Self {
            target,
            delay,
            rounds,
            request_size,
        })
    }
}

/// A positive integer argument.
fn parse_count(flag: &str, s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{flag} needs a positive integer, got {s:?}")),
    }
}

/// `0`, or a number with `us`, `ms` or `s`: `2ms`, `1.5ms`, `500us`.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("--delay needs a duration like 2ms, 500us or 0, got {s:?}");
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let (num, scale) = if let Some(n) = s.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else {
        return Err(bad());
    };
    let v: f64 = num.parse().map_err(|_| bad())?;
    if !(0.0..=60.0).contains(&(v * scale)) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(v * scale))
}

// ----- the delaying proxy -----

/// Starts a TCP proxy on 127.0.0.1 (a free port) to `upstream`, on a thread of its own, that
/// holds each chunk the client sends (an HTTP request) for `delay` before forwarding it, and
/// forwards the server's answers at once. Returns its address.
fn start_proxy(upstream: SocketAddr, delay: Duration) -> io::Result<SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("delay-proxy".to_owned())
        .spawn(move || {
            runtime.block_on(async move {
                let listener = match TcpListener::from_std(listener) {
                    Ok(l) => l,
                    Err(e) => return eprintln!("proxy: listen on {addr}: {e}"),
                };
                loop {
                    match listener.accept().await {
                        Ok((client, _)) => {
                            tokio::spawn(async move {
                                if let Err(e) = relay(client, upstream, delay).await {
                                    eprintln!("proxy: connection to {upstream}: {e}");
                                }
                            });
                        }
                        Err(e) => eprintln!("proxy: accept: {e}"),
                    }
                }
            })
        })?;
    Ok(addr)
}

/// One proxied connection: client to server delayed by `delay` per chunk, server to client
/// as it comes.
async fn relay(mut client: TcpStream, upstream: SocketAddr, delay: Duration) -> io::Result<()> {
    let mut server = TcpStream::connect(upstream).await?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let (mut client_rx, mut client_tx) = client.split();
    let (mut server_rx, mut server_tx) = server.split();
    let requests = async {
        let mut buf = vec![0u8; 64 * KIB];
        loop {
            let n = client_rx.read(&mut buf).await?;
            if n == 0 {
                return server_tx.shutdown().await;
            }
            tokio::time::sleep(delay).await;
            server_tx.write_all(&buf[..n]).await?;
        }
    };
    let answers = async {
        let mut buf = vec![0u8; 256 * KIB];
        loop {
            let n = server_rx.read(&mut buf).await?;
            if n == 0 {
                return client_tx.shutdown().await;
            }
            client_tx.write_all(&buf[..n]).await?;
        }
    };
    // A connection reset by either side ends the connection; report only other errors.
    match tokio::try_join!(requests, answers) {
        Err(e) if e.kind() == io::ErrorKind::ConnectionReset => Ok(()),
        other => other.map(|_| ()),
    }
}

// ----- what the input asks of its source -----

/// Counts what a source is asked: `read_at` calls and their sizes, bytes copied at hand.
#[derive(Debug, Default)]
struct Trace {
    requests: AtomicU64,
    largest: AtomicUsize,
    at_hand: AtomicU64,
    /// `read_at` sizes rounded up to a power of two, and how many of each.
    sizes: Mutex<BTreeMap<usize, u64>>,
}

impl Trace {
    fn record(&self, len: usize) {
        self.requests.fetch_add(1, Relaxed);
        self.largest.fetch_max(len, Relaxed);
        if let Ok(mut sizes) = self.sizes.lock() {
            *sizes.entry(len.next_power_of_two()).or_default() += 1;
        }
    }
}

/// A source that forwards everything to `inner` and counts it in `trace`.
#[derive(Debug)]
struct Traced<S> {
    inner: S,
    trace: Arc<Trace>,
}

impl<S: PositionalSource> PositionalSource for Traced<S> {
    fn read_at(&self, offset: u64, len: usize) -> impl Future<Output = io::Result<Bytes>> + Send {
        self.trace.record(len);
        self.inner.read_at(offset, len)
    }

    fn len(&self) -> impl Future<Output = io::Result<u64>> + Send {
        self.inner.len()
    }

    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        let n = self.inner.try_read_at(offset, buf);
        self.trace.at_hand.fetch_add(n as u64, Relaxed);
        n
    }

    fn resource(&self) -> Option<String> {
        self.inner.resource()
    }

    fn release_buffers(&self) {
        self.inner.release_buffers()
    }
}

// ----- the configurations -----

/// One way of reading the object.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Config {
    /// `ReadAhead::default()`.
    Default,
    /// `ReadAhead::new(chunk, depth)`.
    Fixed(usize, usize),
    /// No read-ahead.
    None,
    /// `object_store::buffered::BufReader` with this capacity (`None`: its default).
    BufReader(Option<usize>),
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = |n: usize| {
            if n >= MIB {
                format!("{} MiB", n / MIB)
            } else {
                format!("{} KiB", n / KIB)
            }
        };
        match self {
            Config::Default => write!(f, "default (adaptive)"),
            Config::Fixed(chunk, depth) => write!(f, "fixed {} x {depth}", size(*chunk)),
            Config::None => write!(f, "no read-ahead"),
            Config::BufReader(None) => write!(
                f,
                "object_store BufReader (default, {})",
                size(object_store::buffered::DEFAULT_BUFFER_SIZE)
            ),
            Config::BufReader(Some(c)) => write!(f, "object_store BufReader {}", size(*c)),
        }
    }
}

/// The source the configurations read.
enum Source {
    File(FileSource),
    Store {
        source: ObjectStoreSource,
        meta: ObjectMeta,
    },
}

impl Source {
    async fn open(args: &Args) -> Result<(Self, Bytes), String> {
        match &args.target {
            Target::Path(path) => {
                let file = FileSource::open(path)
                    .await
                    .map_err(|e| format!("cannot open {path}: {}", chain(&e)))?;
                let content =
                    std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
                Ok((Source::File(file), Bytes::from(content)))
            }
            Target::Url(url) => {
                let url = match args.delay {
                    Some(delay) => {
                        let proxied = proxied_url(url, delay)?;
                        eprintln!("proxy: {proxied} -> {url}, {delay:?} per request");
                        proxied
                    }
                    None => url.clone(),
                };
                let source = ObjectStoreSource::from_url(&url)
                    .await
                    .map_err(|e| format!("cannot open {url}: {}", chain(&e)))?;
                let store = source.store();
                let meta = store
                    .head(source.location())
                    .await
                    .map_err(|e| format!("HEAD {url}: {}", chain(&e)))?;
                let content = async { store.get(source.location()).await?.bytes().await }
                    .await
                    .map_err(|e| format!("GET {url}: {}", chain(&e)))?;
                Ok((Source::Store { source, meta }, content))
            }
        }
    }

    fn configs(&self) -> Vec<Config> {
        let mut configs = vec![
            Config::Default,
            Config::Fixed(64 * KIB, 2),
            Config::Fixed(256 * KIB, 4),
            Config::Fixed(MIB, 4),
            Config::Fixed(MIB, 8),
            Config::Fixed(4 * MIB, 4),
            Config::None,
        ];
        if let Source::Store { .. } = self {
            configs.extend([Config::BufReader(None), Config::BufReader(Some(4 * MIB))]);
        }
        configs
    }

    /// Reads the whole object into `dest` with `request`-byte reads through `config`: the time
    /// it took, and what the input asked of its source (`None` for `BufReader`).
    async fn read_all(
        &self,
        config: Config,
        dest: &mut Dest<'_>,
        request: usize,
    ) -> io::Result<(Duration, Option<Arc<Trace>>)> {
        let read_ahead = match config {
            Config::Default => Some(ReadAhead::default()),
            Config::Fixed(chunk, depth) => Some(ReadAhead::try_new(chunk, depth)?),
            Config::None => None,
            Config::BufReader(capacity) => {
                let Source::Store { source, meta } = self else {
                    return Err(io::Error::other("BufReader needs a URL"));
                };
                let store = Arc::clone(source.store());
                let mut reader = match capacity {
                    None => BufReader::new(store, meta),
                    Some(c) => BufReader::with_capacity(store, meta, c),
                };
                let started = Instant::now();
                dest.fill(request, &mut reader).await?;
                return Ok((started.elapsed(), None));
            }
        };
        let trace = Arc::<Trace>::default();
        let elapsed = match self {
            Source::File(file) => {
                let traced = Traced {
                    inner: file.clone(),
                    trace: Arc::clone(&trace),
                };
                read_input(traced, read_ahead, dest, request).await?
            }
            Source::Store { source, meta } => {
                let fresh = ObjectStoreSource::with_length(
                    Arc::clone(source.store()),
                    source.location().clone(),
                    source.url(),
                    meta.size,
                );
                let traced = Traced {
                    inner: fresh,
                    trace: Arc::clone(&trace),
                };
                read_input(traced, read_ahead, dest, request).await?
            }
        };
        Ok((elapsed, Some(trace)))
    }
}

/// Reads the object from the start of `source` into `dest` with `request`-byte `read_bytes`
/// calls on a fresh input; returns the time it took.
async fn read_input<S: PositionalSource>(
    source: S,
    read_ahead: Option<ReadAhead>,
    dest: &mut Dest<'_>,
    request: usize,
) -> io::Result<Duration> {
    let mut fetch = PositionalFetch::new(source);
    fetch.set_read_ahead(read_ahead);
    let mut input = AsyncBufferedInput::new(fetch);
    let started = Instant::now();
    dest.fill(request, &mut input).await?;
    Ok(started.elapsed())
}

/// Where a pass puts what it reads.
enum Dest<'a> {
    /// The whole object, compared byte for byte after the pass (the untimed verification).
    Whole(&'a mut [u8]),
    /// One request-sized buffer for every request (a timed pass): `fold` gathers each request's
    /// first and last byte, for [`fold_of`] to check.
    Reused {
        buf: &'a mut [u8],
        len: usize,
        fold: u64,
    },
}

impl Dest<'_> {
    /// Reads the object through `reader`, `request` bytes at a time.
    async fn fill(&mut self, request: usize, reader: &mut impl ReadPart) -> io::Result<()> {
        match self {
            Dest::Whole(dst) => {
                for part in dst.chunks_mut(request) {
                    reader.read_part(part).await?;
                }
            }
            Dest::Reused { buf, len, fold } => {
                let mut left = *len;
                while left > 0 {
                    let part = &mut buf[..request.min(left)];
                    reader.read_part(part).await?;
                    *fold = fold_step(*fold, part);
                    left -= part.len();
                }
            }
        }
        Ok(())
    }
}

/// A reader that fills a buffer or fails: the inputs' `read_bytes`, `BufReader`'s `read_exact`.
trait ReadPart {
    async fn read_part(&mut self, part: &mut [u8]) -> io::Result<()>;
}

impl ReadPart for BufReader {
    async fn read_part(&mut self, part: &mut [u8]) -> io::Result<()> {
        self.read_exact(part).await.map(drop)
    }
}

impl<S: PositionalSource> ReadPart for AsyncBufferedInput<PositionalFetch<S>> {
    async fn read_part(&mut self, part: &mut [u8]) -> io::Result<()> {
        self.read_bytes(part).await
    }
}

/// One request's share of a timed pass's fold: its first and last byte.
fn fold_step(fold: u64, part: &[u8]) -> u64 {
    let (first, last) = (part[0], part[part.len() - 1]);
    fold.rotate_left(5) ^ (u64::from(first) << 8 | u64::from(last))
}

/// The fold a timed pass of `request`-byte reads over `content` must end with.
fn fold_of(content: &[u8], request: usize) -> u64 {
    content.chunks(request).fold(0, fold_step)
}

/// The URL with its host and port replaced by a delaying proxy's to them.
fn proxied_url(url: &str, delay: Duration) -> Result<String, String> {
    let mut parsed = url::Url::parse(url).map_err(|e| format!("invalid URL {url:?}: {e}"))?;
    if parsed.scheme() != "http" {
        return Err(format!(
            "--delay needs an http:// URL (the proxy forwards plain TCP), got {url:?}"
        ));
    }
    let upstream = parsed
        .socket_addrs(|| Some(80))
        .map_err(|e| format!("cannot resolve {url}: {e}"))?
        .into_iter()
        .next()
        .ok_or_else(|| format!("{url} resolves to no address"))?;
    let proxy = start_proxy(upstream, delay).map_err(|e| format!("cannot start the proxy: {e}"))?;
    parsed
        .set_ip_host(proxy.ip())
        .and_then(|()| parsed.set_port(Some(proxy.port())))
        .map_err(|()| format!("cannot point {url} at the proxy"))?;
    Ok(parsed.into())
}

// ----- the run -----

/// One configuration's passes.
#[derive(Debug, Default)]
struct Results {
    mb_s: Vec<f64>,
    requests: Vec<u64>,
    largest: usize,
    at_hand: Vec<u64>,
    sizes: BTreeMap<usize, u64>,
}

/// An error and its causes, `: `-separated (the crate's errors keep the cause in `source()`).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let c_text = c.to_string();
        if !s.contains(&c_text) {
            s = format!("{s}: {c_text}");
        }
        cause = c.source();
    }
    s
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn median_u64(values: &[u64]) -> u64 {
    median(&values.iter().map(|&v| v as f64).collect::<Vec<_>>()).round() as u64
}

fn human(n: usize) -> String {
    if n >= MIB && n % MIB == 0 {
        format!("{} MiB", n / MIB)
    } else if n >= KIB {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} B")
    }
}

async fn run(args: Args) -> Result<(), String> {
    let (source, expected) = Source::open(&args).await?;
    if expected.is_empty() {
        return Err("the object is empty: nothing to time".to_owned());
    }
    let configs = source.configs();
    let mut results: Vec<Results> = configs.iter().map(|_| Results::default()).collect();
    let mut dst = vec![0u8; expected.len()];
    let mut buf = vec![0u8; args.request_size];
    let expected_fold = fold_of(&expected, args.request_size);
    let what = match &args.target {
        Target::Path(p) => p.clone(),
        Target::Url(u) => match args.delay {
            Some(d) => format!("{u} behind a {d:?} proxy"),
            None => u.clone(),
        },
    };
    eprintln!(
        "{what}: {} bytes, {} rounds of {} configurations, {} reads",
        expected.len(),
        args.rounds,
        configs.len(),
        human(args.request_size)
    );
    // Untimed: every configuration reads every byte right once.
    for config in &configs {
        // Every byte starts wrong, so a read that misses a byte fails below.
        for (d, e) in dst.iter_mut().zip(expected.iter()) {
            *d = !e;
        }
        source
            .read_all(*config, &mut Dest::Whole(&mut dst), args.request_size)
            .await
            .map_err(|e| format!("{config} (verification): {}", chain(&e)))?;
        if let Some(at) = dst.iter().zip(expected.iter()).position(|(d, e)| d != e) {
            return Err(format!(
                "{config} (verification): wrong byte at offset {at}: read {:#04x}, expected {:#04x}",
                dst[at], expected[at]
            ));
        }
    }
    eprintln!("verified: every configuration read every byte right");
    drop(dst);
    for round in 0..args.rounds {
        for k in 0..configs.len() {
            let i = (k + round) % configs.len();
            let mut dest = Dest::Reused {
                buf: &mut buf,
                len: expected.len(),
                fold: 0,
            };
            let (elapsed, trace) = source
                .read_all(configs[i], &mut dest, args.request_size)
                .await
                .map_err(|e| format!("{} (round {}): {}", configs[i], round + 1, chain(&e)))?;
            if let Dest::Reused { fold, .. } = dest {
                if fold != expected_fold {
                    return Err(format!(
                        "{} (round {}): the requests' first and last bytes differ from the \
                         content's (fold {fold:#x}, expected {expected_fold:#x})",
                        configs[i],
                        round + 1
                    ));
                }
            }
            let r = &mut results[i];
            r.mb_s
                .push(expected.len() as f64 / elapsed.as_secs_f64() / 1e6);
            if let Some(t) = trace {
                r.requests.push(t.requests.load(Relaxed));
                r.at_hand.push(t.at_hand.load(Relaxed));
                r.largest = r.largest.max(t.largest.load(Relaxed));
                if let Ok(sizes) = t.sizes.lock() {
                    for (size, n) in sizes.iter() {
                        *r.sizes.entry(*size).or_default() += n;
                    }
                }
            }
        }
        eprintln!("round {} of {} done", round + 1, args.rounds);
    }
    report(&what, &args, &configs, &results);
    Ok(())
}

fn report(what: &str, args: &Args, configs: &[Config], results: &[Results]) {
    let medians: Vec<f64> = results.iter().map(|r| median(&r.mb_s)).collect();
    let best_fixed = configs
        .iter()
        .zip(&medians)
        .filter(|(c, _)| matches!(c, Config::Fixed(..)))
        .max_by(|a, b| a.1.total_cmp(b.1));
    let buf_reader = configs
        .iter()
        .zip(&medians)
        .find(|(c, _)| **c == Config::BufReader(None));
    let default = configs
        .iter()
        .zip(&medians)
        .find(|(c, _)| **c == Config::Default)
        .map(|(_, m)| *m);

    println!(
        "\n### {what}\n\n{} reads, {} rounds; MB/s = 10^6 bytes/s, median (slowest-fastest pass)\n",
        human(args.request_size),
        args.rounds
    );
    println!("| configuration | MB/s | range | / best fixed | / BufReader | requests/pass | largest | at hand/pass |");
    println!("|---|---:|---|---:|---:|---:|---:|---:|");
    for ((config, r), m) in configs.iter().zip(results).zip(&medians) {
        let lo = r.mb_s.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = r.mb_s.iter().copied().fold(0.0, f64::max);
        let ratio = |base: Option<(&Config, &f64)>| {
            base.map_or("-".to_owned(), |(_, b)| format!("{:.2}", m / b))
        };
        let (requests, largest, at_hand) = if r.requests.is_empty() {
            ("-".to_owned(), "-".to_owned(), "-".to_owned())
        } else {
            (
                median_u64(&r.requests).to_string(),
                human(r.largest),
                human(median_u64(&r.at_hand) as usize),
            )
        };
        println!(
            "| {config} | {m:.0} | {lo:.0}-{hi:.0} | {} | {} | {requests} | {largest} | {at_hand} |",
            ratio(best_fixed),
            ratio(buf_reader),
        );
    }
    if let Some((_, r)) = configs
        .iter()
        .zip(results)
        .find(|(c, _)| **c == Config::Default)
    {
        let sizes: Vec<String> = r
            .sizes
            .iter()
            .map(|(size, n)| format!("<={}: {}", human(*size), n))
            .collect();
        println!(
            "\ndefault's read_at sizes over all passes: {}",
            if sizes.is_empty() {
                "none (all at hand)".to_owned()
            } else {
                sizes.join(", ")
            }
        );
    }
    println!();
    if let (Some(d), Some((c, b))) = (default, best_fixed) {
        let ratio = d / b;
        println!(
            "goal: default / best fixed ({c}) = {ratio:.2} (>= 0.8: {})",
            if ratio >= 0.8 { "met" } else { "NOT met" }
        );
    }
    if let (Some(d), Some((_, b))) = (default, buf_reader) {
        let ratio = d / b;
        println!(
            "goal: default / object_store BufReader = {ratio:.2} (>= 2: {})",
            if ratio >= 2.0 { "met" } else { "NOT met" }
        );
    }
}

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("read_ahead_shapes: {e}");
            ExitCode::FAILURE
        }
    }
}
