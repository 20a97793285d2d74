//! Reads the latest commit of a Lucene 8 index and verifies every file of it, reading each byte
//! once: what a search service does when it opens an index from slow storage.
//!
//! ```text
//! cargo run --example lucene_index -- DIR
//! cargo run --release --example lucene_index -- DIR --bench 5 [--tasks 2]
//! ```
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
//! Formats: `SegmentInfos` (`segments_N`, versions 7 to 10: Lucene 7.0 to 8.x),
//! `Lucene86SegmentInfoFormat` (`.si`) and `Lucene50CompoundFormat` (`.cfe`/`.cfs`), as Lucene
//! 8.6 to 8.11 write them.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use async_buffered_input::codec::{self, ID_LENGTH};
use async_buffered_input::fetch::PositionalFetch;
use async_buffered_input::source::FileSource;
use async_buffered_input::AsyncBufferedInput;

type Input = AsyncBufferedInput<PositionalFetch<FileSource>>;

/// One segment of a commit, as `segments_N` and its `.si` describe it.
#[derive(Debug)]
struct Segment {
    name: String,
    id: [u8; ID_LENGTH],
    codec: String,
    docs: u32,
    deleted: u32,
    compound: bool,
    /// The segment's own files (`.si` says which), plus the commit's: live docs, field infos and
    /// doc-values updates.
    files: BTreeSet<String>,
}

/// The latest commit.
#[derive(Debug)]
struct Commit {
    file: String,
    generation: u64,
    segments: Vec<Segment>,
    user_data: BTreeMap<String, String>,
    /// The bytes read from storage for `segments_N` and every `.si`.
    fetched: u64,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let number = |n: &std::ffi::OsString| n.to_str().and_then(|n| n.parse::<u32>().ok());
    let (dir, bench_mode) = match &args[..] {
        [dir] => (PathBuf::from(dir), None),
        [dir, flag, n] if flag == "--bench" => (PathBuf::from(dir), number(n).map(|n| (n, 1))),
        [dir, flag, n, tasks_flag, tasks] if flag == "--bench" && tasks_flag == "--tasks" => (
            PathBuf::from(dir),
            number(n).zip(number(tasks).filter(|&t| t > 0)),
        ),
        _ => return usage(),
    };
    if args.len() > 1 && bench_mode.is_none() {
        return usage();
    }
    let result = match bench_mode {
        Some((rounds, tasks)) => bench(&dir, rounds, tasks).await,
        None => run(&dir).await,
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
    eprintln!("usage: lucene_index DIR [--bench ROUNDS [--tasks N]]");
    ExitCode::from(2)
}

/// Verifies every file of `dir` whole, `rounds` times, `tasks` files at a time, printing each
/// round.
async fn bench(dir: &Path, rounds: u32, tasks: u32) -> io::Result<()> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<io::Result<_>>()?;
    files.retain(|p| {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        name != "write.lock" && !name.starts_with("pending_")
    });
    files.sort();
    let files = Arc::new(files);
    for pass in 1..=rounds {
        let started = std::time::Instant::now();
        // Each task takes the next file to verify; results are folded in file order, as
        // Lucene's loop folds them.
        let next = Arc::new(AtomicUsize::new(0));
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..tasks {
            let (files, next) = (Arc::clone(&files), Arc::clone(&next));
            workers.spawn(async move {
                let mut done = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(i) else {
                        return Ok::<_, io::Error>(done);
                    };
                    let mut input = Input::open(path).await?;
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

async fn run(dir: &Path) -> io::Result<()> {
    let commit = read_commit(dir).await?;
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

    // Verify: segments_N, the .si and .cfe files were verified as they were parsed; every other
    // file is verified whole, and compound files with their sub-files. `bytes` counts what was
    // read from storage: each file's length, if each byte is read once.
    let mut bytes = commit.fetched;
    let (mut files, mut sub_files) = (1usize, 0usize);
    for s in &commit.segments {
        for file in &s.files {
            files += 1;
            if file.ends_with(".si") || file.ends_with(".cfe") {
                continue; // counted by `read_commit` and below
            }
            let mut input = Input::open(dir.join(file)).await?;
            if file.ends_with(".cfs") {
                let (entries, fetched) = read_compound_entries(dir, s).await?;
                bytes += fetched;
                sub_files += verify_compound(&mut input, file, s, &entries).await?;
            } else {
                codec::checksum_entire_file(&mut input).await?;
            }
            bytes += input.stats().bytes_from_source;
        }
    }
    println!("verified {files} files ({bytes} bytes read) and {sub_files} compound sub-files");
    Ok(())
}

/// Finds the latest `segments_N` and reads it, and every segment's `.si`.
async fn read_commit(dir: &Path) -> io::Result<Commit> {
    let mut latest: Option<(u64, String)> = None;
    for entry in std::fs::read_dir(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("listing {}: {e}", dir.display())))?
    {
        let name = entry?.file_name().to_string_lossy().into_owned();
        let generation = match name.strip_prefix("segments_") {
            Some(gen) => u64::from_str_radix(gen, 36).ok(),
            None if name == "segments" => Some(0),
            None => None,
        };
        if let Some(generation) = generation {
            if latest.as_ref().is_none_or(|(g, _)| generation > *g) {
                latest = Some((generation, name));
            }
        }
    }
    let Some((generation, file)) = latest else {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "no segments_N file in {}: not a Lucene index",
                dir.display()
            ),
        ));
    };

    let mut input = Input::open(dir.join(&file)).await?;
    input.start_checksum();
    // Lucene reads the magic itself, to tell an index too old from a corrupt one.
    let magic = input.read_u32().await?;
    if magic != codec::CODEC_MAGIC {
        return Err(input.corrupt_at(
            0,
            format!("the codec header magic {:#010x}", codec::CODEC_MAGIC),
            format!("{magic:#010x} (an index older than Lucene 4?)"),
        ));
    }
    let format = codec::check_header_no_magic(&mut input, "segments", 7, 10).await?;
    let mut id = [0u8; ID_LENGTH];
    input.read_bytes(&mut id).await?;
    let suffix_at = input.position();
    let suffix_len = input.read_byte().await?;
    let suffix = input.read_bytes_owned(usize::from(suffix_len)).await?;
    let expected_suffix = radix36(generation);
    if suffix[..] != *expected_suffix.as_bytes() {
        return Err(input.corrupt_at(
            suffix_at,
            format!("the generation {expected_suffix:?} as the header's suffix"),
            format!("{:?}", String::from_utf8_lossy(&suffix)),
        ));
    }
    let _lucene_version = (
        input.read_vint().await?,
        input.read_vint().await?,
        input.read_vint().await?,
    );
    let _created_major = input.read_vint().await?;
    let _version = input.read_i64().await?;
    let _counter = if format > 7 {
        input.read_vlong().await?
    } else {
        u64::from(input.read_u32().await?)
    };
    let count_at = input.position();
    let count = input.read_i32().await?;
    if count < 0 {
        return Err(input.corrupt_at(count_at, "a segment count", count.to_string()));
    }
    if count > 0 {
        let _min_version = (
            input.read_vint().await?,
            input.read_vint().await?,
            input.read_vint().await?,
        );
    }
    let mut segments = Vec::new();
    let mut fetched = 0;
    for _ in 0..count {
        let name = input.read_string().await?;
        let mut id = [0u8; ID_LENGTH];
        input.read_bytes(&mut id).await?;
        let codec = input.read_string().await?;
        let del_gen = input.read_i64().await?;
        let deleted_at = input.position();
        let deleted = input.read_i32().await?;
        let field_infos_gen = input.read_i64().await?;
        let _dv_gen = input.read_i64().await?;
        let soft_deleted = if format > 8 {
            input.read_i32().await?
        } else {
            0
        };
        if format > 9 {
            let marker_at = input.position();
            match input.read_i8().await? {
                0 => {}
                1 => input.read_bytes(&mut [0u8; ID_LENGTH]).await?,
                other => {
                    return Err(input.corrupt_at(
                        marker_at,
                        "a commit id marker, 0 or 1",
                        other.to_string(),
                    ))
                }
            }
        }
        let mut files = codec::read_set_of_strings(&mut input).await?;
        let dv_fields = input.read_i32().await?;
        for _ in 0..dv_fields.max(0) {
            let _field = input.read_i32().await?;
            files.extend(codec::read_set_of_strings(&mut input).await?);
        }
        let _ = field_infos_gen;
        if del_gen != -1 {
            files.insert(format!("{name}_{}.liv", radix36(del_gen as u64)));
        }
        let info = read_segment_info(dir, &name, &id).await?;
        fetched += info.fetched;
        if deleted < 0
            || soft_deleted < 0
            || i64::from(deleted) + i64::from(soft_deleted) > i64::from(info.docs)
        {
            return Err(input.corrupt_at(
                deleted_at,
                format!("at most {} deletions", info.docs),
                format!("{deleted} deleted and {soft_deleted} soft-deleted"),
            ));
        }
        files.extend(info.files);
        segments.push(Segment {
            name,
            id,
            codec,
            docs: info.docs,
            deleted: deleted as u32,
            compound: info.compound,
            files,
        });
    }
    let user_data = codec::read_map_of_strings(&mut input).await?;
    codec::check_footer(&mut input).await?;
    Ok(Commit {
        file,
        generation,
        segments,
        user_data,
        fetched: fetched + input.stats().bytes_from_source,
    })
}

/// What a `.si` file says of its segment.
struct SegmentInfo {
    docs: u32,
    compound: bool,
    files: BTreeSet<String>,
    /// The bytes read from storage for the `.si`.
    fetched: u64,
}

/// Reads and verifies a segment's `.si` (Lucene86SegmentInfoFormat), in one pass.
async fn read_segment_info(
    dir: &Path,
    name: &str,
    id: &[u8; ID_LENGTH],
) -> io::Result<SegmentInfo> {
    let mut input = Input::open(dir.join(format!("{name}.si"))).await?;
    input.start_checksum();
    codec::check_index_header(&mut input, "Lucene86SegmentInfo", 0, 0, id, "").await?;
    let _version = (
        input.read_u32().await?,
        input.read_u32().await?,
        input.read_u32().await?,
    );
    let has_min_at = input.position();
    match input.read_i8().await? {
        0 => {}
        1 => {
            let _min_version = (
                input.read_u32().await?,
                input.read_u32().await?,
                input.read_u32().await?,
            );
        }
        other => return Err(input.corrupt_at(has_min_at, "a boolean, 0 or 1", other.to_string())),
    }
    let docs_at = input.position();
    let docs = input.read_i32().await?;
    let docs = u32::try_from(docs)
        .map_err(|_| input.corrupt_at(docs_at, "a document count", docs.to_string()))?;
    let compound = input.read_i8().await? == 1;
    let _diagnostics = codec::read_map_of_strings(&mut input).await?;
    let files = codec::read_set_of_strings(&mut input).await?;
    let _attributes = codec::read_map_of_strings(&mut input).await?;
    let sort_fields = input.read_vint().await?;
    if sort_fields > 0 {
        // Index sorts are written by their own providers: skip them (checksumming what is
        // skipped) to the footer.
        let length = input.length().await?;
        input.seek_to(length.saturating_sub(codec::FOOTER_LENGTH));
    }
    codec::check_footer(&mut input).await?;
    Ok(SegmentInfo {
        docs,
        compound,
        files,
        fetched: input.stats().bytes_from_source,
    })
}

/// A sub-file of a compound file: its name, offset and length in the `.cfs`.
struct Entry {
    name: String,
    offset: u64,
    length: u64,
}

/// Reads and verifies a segment's `.cfe` (Lucene50CompoundFormat), in one pass. Returns the
/// entries and the bytes read from storage.
async fn read_compound_entries(dir: &Path, segment: &Segment) -> io::Result<(Vec<Entry>, u64)> {
    let mut input = Input::open(dir.join(format!("{}.cfe", segment.name))).await?;
    input.start_checksum();
    codec::check_index_header(&mut input, "Lucene50CompoundEntries", 0, 0, &segment.id, "").await?;
    let count = input.read_vint().await?;
    let mut entries = Vec::new();
    for _ in 0..count {
        let id = input.read_string().await?;
        let offset = input.read_u64().await?;
        let length = input.read_u64().await?;
        entries.push(Entry {
            name: format!("{}{id}", segment.name),
            offset,
            length,
        });
    }
    codec::check_footer(&mut input).await?;
    Ok((entries, input.stats().bytes_from_source))
}

/// Verifies a `.cfs` and each of its sub-files, reading each byte once: one pass computes the
/// file's CRC and every sub-file's, and keeps every footer as it goes by. Returns the number of
/// sub-files.
async fn verify_compound(
    input: &mut Input,
    file: &str,
    segment: &Segment,
    entries: &[Entry],
) -> io::Result<usize> {
    let length = input.length().await?;
    if length < codec::FOOTER_LENGTH {
        return Err(input.corrupt_at(
            0,
            format!("at least a footer ({} bytes)", codec::FOOTER_LENGTH),
            format!("a file of {length} bytes (truncated?)"),
        ));
    }
    for entry in entries {
        if entry.length < codec::FOOTER_LENGTH
            || entry
                .offset
                .checked_add(entry.length)
                .is_none_or(|end| end > length - codec::FOOTER_LENGTH)
        {
            return Err(input.corrupt_at(
                entry.offset,
                format!("sub-file {} inside the {length}-byte {file}", entry.name),
                format!("{} bytes at offset {}", entry.length, entry.offset),
            ));
        }
    }
    // The file's own header first: it fills the window, which the pass below reads from
    // rather than fetching those bytes again.
    codec::check_index_header(input, "Lucene50CompoundData", 0, 0, &segment.id, "").await?;

    // One pass over the file, itself included as the first of the files it holds: each one's
    // CRC over its bytes but its last 8, and its footer, its last 16.
    let files: Vec<(u64, u64)> = std::iter::once((0, length))
        .chain(entries.iter().map(|e| (e.offset, e.length)))
        .collect();
    let mut crcs: Vec<(crc32fast::Hasher, [u8; 16])> = files
        .iter()
        .map(|_| (crc32fast::Hasher::new(), [0u8; 16]))
        .collect();
    input
        .for_each_chunk(0..length, |at, bytes| {
            let end = at + bytes.len() as u64;
            for (&(offset, len), (hasher, footer)) in files.iter().zip(&mut crcs) {
                let (body_end, stop) = (offset + len - 8, offset + len);
                if at < body_end && end > offset {
                    let from = offset.max(at) - at;
                    let to = body_end.min(end) - at;
                    hasher.update(&bytes[from as usize..to as usize]);
                }
                let footer_at = stop - codec::FOOTER_LENGTH;
                if at < stop && end > footer_at {
                    let from = footer_at.max(at);
                    let to = stop.min(end);
                    footer[(from - footer_at) as usize..(to - footer_at) as usize]
                        .copy_from_slice(&bytes[(from - at) as usize..(to - at) as usize]);
                }
            }
        })
        .await?;
    let mut crcs = crcs.into_iter();
    let (whole, whole_footer) = crcs.next().expect("the file's own");
    // The sub-files first: a corrupt one is the more precise answer. Each is checked as its
    // slice, which names it ("slice NAME [a..b) of PATH") and costs no I/O. What they do not
    // cover (the file's header, padding between them, its footer) is the file's own CRC's to
    // catch.
    for (entry, (hasher, footer)) in entries.iter().zip(crcs) {
        let sub = input
            .slice_named(&entry.name, entry.offset, entry.length)
            .await?;
        codec::check_footer_bytes(
            &sub,
            entry.length - codec::FOOTER_LENGTH,
            &footer,
            hasher.finalize(),
        )?;
    }
    codec::check_footer_bytes(
        input,
        length - codec::FOOTER_LENGTH,
        &whole_footer,
        whole.finalize(),
    )?;
    Ok(entries.len())
}

/// `n` in base 36, as Java's `Long.toString(n, Character.MAX_RADIX)`.
fn radix36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}
