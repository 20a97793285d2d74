//! Reads the latest commit of a Lucene 8 index and verifies every file of it, reading each byte
//! once: what a search service does when it opens an index from slow storage.
//!
//! ```text
//! cargo run --example lucene_index -- DIR
//! cargo run --features object-store --example lucene_index -- http://HOST:PORT/index/
//! cargo run --features object-store --example lucene_index -- s3://BUCKET/index/
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

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |n: &String| n.parse::<u32>().ok();
    let (location, bench_mode) = match &args[..] {
        [dir] => (dir, None),
        [dir, flag, n] if flag == "--bench" => (dir, number(n).map(|n| (n, 1))),
        [dir, flag, n, tasks_flag, tasks] if flag == "--bench" && tasks_flag == "--tasks" => {
            (dir, number(n).zip(number(tasks).filter(|&t| t > 0)))
        }
        _ => return usage(),
    };
    if args.len() > 1 && bench_mode.is_none() {
        return usage();
    }
    let result = match Directory::at(location) {
        Ok(dir) => match bench_mode {
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

fn usage() -> ExitCode {
    eprintln!("usage: lucene_index DIR|URL [--bench ROUNDS [--tasks N]]");
    ExitCode::from(2)
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
            s.info.name, s.codec, s.info.docs, s.deleted, s.info.compound
        );
        println!(
            "  files: {}",
            s.files.iter().cloned().collect::<Vec<_>>().join(" ")
        );
    }
    // `bytes read` counts what was read from storage: each file's length, if each byte is
    // read once.
    let verified = verify_commit(dir, &commit).await?;
    println!(
        "verified {} files ({} bytes read) and {} compound sub-files",
        verified.files, verified.bytes_read, verified.sub_files
    );
    Ok(())
}
