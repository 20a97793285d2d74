//! Reads the latest commit of a Lucene 8 index and verifies every file of it, reading each byte
//! once: what a search service does when it opens an index from slow storage.
//!
//! ```text
//! cargo run --example lucene_index -- DIR
//! cargo run --features object-store --example lucene_index -- http://HOST:PORT/index/
//! cargo run --features object-store --example lucene_index -- s3://BUCKET/index/
//! cargo run --features cache --example lucene_index -- DIR|URL --cache 64MiB
//! cargo run --example lucene_index -- DIR|URL --concurrency 16
//! cargo run --release --example lucene_index -- DIR --bench 5 [--tasks 2]
//! ```
//!
//! The index is opened as a [`Directory`]: a local folder, or with the feature `object-store`
//! a folder on an HTTP server (listed over WebDAV: `scripts/http-server.sh` serves one) or an
//! S3 prefix (configured from the `AWS_*` variables). The commit is read with
//! [`SegmentInfos`] and the files verified with [`verify_commit`]: this example only parses
//! arguments and prints.
//!
//! Prints the commit (generation, user data, and per segment its name, codec, documents,
//! deletions, whether it is compound, and its files), then verifies the CRC32 footer of every
//! file and of every sub-file of compound files, and how many bytes it read: each byte of each
//! file once. `segments_N`, `.si` and `.cfe` files are parsed and verified in the same pass; a
//! `.cfs` file is read once for its own CRC and its sub-files'. On corruption it prints one error
//! naming the file (and the sub-file, as "slice NAME [a..b) of PATH") and exits with 1.
//! The `.si` files, then the other files, are read `--concurrency N` at a time (default 8, the
//! `Directory`'s; 1: one after another); the output and the error are the same whatever N.
//!
//! `--cache SIZE` (feature `cache`; `64MiB`, `100MB`, `1GiB`) reads every file through a
//! `BlockCache` of that size (`Directory::with_cache`), as a search service would; the output
//! is the same.
//!
//! With `--bench ROUNDS` it only verifies every file whole, `ROUNDS` times, the way Lucene's
//! `CodecUtil.checksumEntireFile` does, and prints each round as
//! `pass N files F bytes B seconds S checksum X` (the format of `tests/lucene/ChecksumIndex.java`,
//! which times Lucene itself: `scripts/bench-lucene-verify.sh` runs both). `--tasks N` verifies
//! N files at a time (default 1, as Lucene's loop does).
//!
//! Formats: those of [`async_buffered_input::lucene`] (Lucene 8.6 to 8.11).

use std::io;
use std::process::ExitCode;

use async_buffered_input::lucene::codec;
use async_buffered_input::lucene::Directory;
use async_buffered_input::lucene::{verify_commit, SegmentInfos};

const USAGE: &str =
    "usage: lucene_index DIR|URL [--cache SIZE] [--concurrency N] [--bench ROUNDS [--tasks N]]";

/// What the command line asks for.
struct Args {
    location: String,
    /// `--cache`: the cache's size in bytes.
    cache: Option<u64>,
    /// `--concurrency`: files read at once.
    concurrency: Option<usize>,
    /// `--bench ROUNDS` and `--tasks N`.
    bench: Option<(u32, u32)>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = match open(&args) {
        Ok(dir) => match args.bench {
            Some((rounds, tasks)) => bench(dir, rounds, tasks).await,
            None => run(&dir).await,
        },
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The error and its causes, each once.
            let mut message = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                message.push_str(": ");
                message.push_str(&c.to_string());
                cause = c.source();
            }
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Reads the command line: a location, then flags in any order, each at most once.
fn parse(mut words: impl Iterator<Item = String>) -> Result<Args, String> {
    let location = words
        .next()
        .filter(|w| !w.starts_with("--"))
        .ok_or("no index given")?;
    let mut args = Args {
        location,
        cache: None,
        concurrency: None,
        bench: None,
    };
    let (mut rounds, mut tasks) = (None, None);
    let positive = |flag: &str, value: &str| match value.parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{flag} {value:?}: expected a whole number of at least 1"
        )),
    };
    while let Some(flag) = words.next() {
        let value = words
            .next()
            .ok_or_else(|| format!("{flag} needs a value"))?;
        let twice = match flag.as_str() {
            "--cache" => args.cache.replace(cache_size(&value)?).is_some(),
            "--concurrency" => {
                let n = positive(&flag, &value)? as usize;
                args.concurrency.replace(n).is_some()
            }
            "--bench" => rounds.replace(positive(&flag, &value)?).is_some(),
            "--tasks" => tasks.replace(positive(&flag, &value)?).is_some(),
            _ => return Err(format!("unknown flag {flag:?}")),
        };
        if twice {
            return Err(format!("{flag} given twice"));
        }
    }
    args.bench = match (rounds, tasks) {
        (Some(rounds), tasks) => Some((rounds, tasks.unwrap_or(1))),
        (None, Some(_)) => return Err("--tasks needs --bench".to_owned()),
        (None, None) => None,
    };
    Ok(args)
}

/// `--cache`'s value: a size of at least 1 byte (`64MiB`: binary; `64MB`: decimal).
fn cache_size(value: &str) -> Result<u64, String> {
    match parse_size::parse_size(value) {
        Ok(0) => Err(format!(
            "--cache {value:?}: the cache needs at least 1 byte"
        )),
        Ok(bytes) => Ok(bytes),
        Err(e) => Err(format!(
            "--cache {value:?}: {e} (expected a size like 64MiB or 100MB)"
        )),
    }
}

/// The index's directory, with the cache and the concurrency asked for.
fn open(args: &Args) -> io::Result<Directory> {
    let mut dir = Directory::at(&args.location)?;
    if let Some(files) = args.concurrency {
        dir = dir.with_concurrency(files);
    }
    if let Some(bytes) = args.cache {
        #[cfg(feature = "cache")]
        {
            dir = dir.with_cache(async_buffered_input::cache::BlockCache::new(bytes));
        }
        #[cfg(not(feature = "cache"))]
        {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("--cache {bytes}: this build has no block cache (cargo --features cache)"),
            ));
        }
    }
    Ok(dir)
}

/// Verifies every file of `dir` whole, `rounds` times, `tasks` files at a time, printing each
/// round.
async fn bench(dir: Directory, rounds: u32, tasks: u32) -> io::Result<()> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let mut files = dir.list().await?;
    files.retain(|name| name != "write.lock" && !name.starts_with("pending_"));
    let files = Arc::new(files);
    for pass in 1..=rounds {
        let started = std::time::Instant::now();
        // Each task takes the next file to verify; results are folded in file order, as
        // Lucene's loop folds them.
        let next = Arc::new(AtomicUsize::new(0));
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..tasks {
            let (files, next, dir) = (Arc::clone(&files), Arc::clone(&next), dir.clone());
            workers.spawn(async move {
                let mut done = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(name) = files.get(i) else {
                        return Ok::<_, io::Error>(done);
                    };
                    let mut input = dir.open(name).await?;
                    let crc = codec::checksum_entire_file(&mut input).await?;
                    done.push((i, input.known_length().unwrap_or(0), crc));
                }
            });
        }
        let mut results = Vec::new();
        while let Some(joined) = workers.join_next().await {
            results.extend(joined.map_err(io::Error::other)??);
        }
        results.sort_unstable_by_key(|&(i, _, _)| i);
        let (mut bytes, mut folded) = (0u64, 0u64);
        for (_, length, crc) in results {
            bytes += length;
            folded = folded.wrapping_mul(31).wrapping_add(u64::from(crc));
        }
        println!(
            "pass {pass} files {} bytes {bytes} seconds {:.6} checksum {folded:x}",
            files.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// Prints the latest commit, then verifies every file of it.
async fn run(dir: &Directory) -> io::Result<()> {
    let commit = SegmentInfos::read_latest_commit(dir).await?;
    println!("commit {} (generation {})", commit.file, commit.generation);
    for (key, value) in &commit.user_data {
        println!("  user data {key}={value}");
    }
    for s in &commit.segments {
        println!(
            "segment {} codec={} docs={} deleted={} compound={}",
            s.name, s.codec, s.docs, s.deleted, s.compound
        );
        println!(
            "  files: {}",
            s.files.iter().cloned().collect::<Vec<_>>().join(" ")
        );
    }
    // `bytes read` counts what was read from storage: each file's length, if each byte is
    // read once.
    let bytes_read = verify_commit(dir, &commit).await?;
    let compound = commit.segments.iter().filter(|s| s.compound).count();
    println!(
        "verified {} files ({bytes_read} bytes read), the sub-files of {compound} compound files",
        commit.files().len()
    );
    Ok(())
}
