//! The limit row of a source: one sequential pass of 1 MiB reads straight from the source, the
//! `dd bs=1M` of that backend, which every reader's figure is a fraction of.
//!
//! "Straight from the source" is the source's raw form ([`Source`]): for a local file,
//! `read` calls of 1 MiB on a blocking thread into one reused buffer, exactly what `dd` does
//! (the whole pass runs on that thread, so no thread hop is timed); for memory, copies into
//! such a buffer; for an object store or a simulated link, 1 MiB requests to its positional
//! form, one at a time; for a custom stream, 1 MiB reads of the stream. The timed pass only
//! looks at each read, as the readers' passes do; its verification pass reads the same requests
//! again, untimed, and computes the checksum and whether the file holds the harness's pattern.
//!
//! With a time floor ([`Plan::limit_floor`](crate::Plan::limit_floor)) the passes are timed in
//! [`Rounds`] until the floor has passed; the row reports the median round, and a round whose
//! bytes differ from the first's (the first and last byte of each read) fails it.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use abi_testkit::CountingPositional;
use async_buffered_input::source::PositionalSource;
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use crate::counting::{CountingSource, StreamCounts};
use crate::error::context;
use crate::pass_state::PassState;
use crate::sources::{Raw, Source};
use crate::timing::{median_index, Meter, Rounds};
use crate::truth::PatternCheck;
use crate::verify::{Checksum, Fingerprint};

/// The size of the limit row's reads.
pub(crate) const LIMIT_READ: usize = 1 << 20;

/// What the timed passes of a limit row (or of the stream row) measured: the median round's
/// figures, every round's latency samples.
#[derive(Debug)]
pub(crate) struct LimitTimed {
    pub(crate) bytes: u64,
    pub(crate) requests: u64,
    pub(crate) elapsed: Duration,
    pub(crate) samples: Vec<u64>,
    pub(crate) fingerprint: Fingerprint,
    pub(crate) reads: u64,
    /// The rounds timed (1 without a time floor).
    pub(crate) rounds: u32,
    /// Whether every round looked at the same bytes as the first.
    pub(crate) steady: bool,
}

impl LimitTimed {
    /// The timed round a pass was, with its `requests`.
    pub(crate) fn of_pass(state: PassState, requests: u64) -> Self {
        Self::round(
            state.bytes,
            requests,
            state.elapsed,
            state.meter.map(Meter::into_samples).unwrap_or_default(),
            state.fingerprint,
            state.reads,
        )
    }

    /// One round's figures.
    pub(crate) fn round(
        bytes: u64,
        requests: u64,
        elapsed: Duration,
        samples: Vec<u64>,
        fingerprint: Fingerprint,
        reads: u64,
    ) -> Self {
        Self {
            bytes,
            requests,
            elapsed,
            samples,
            fingerprint,
            reads,
            rounds: 1,
            steady: true,
        }
    }

    /// The rounds as one row: the median round (by time), with every round's samples.
    pub(crate) fn of_rounds(mut rounds: Vec<LimitTimed>) -> Self {
        let times: Vec<Duration> = rounds.iter().map(|r| r.elapsed).collect();
        let median = median_index(&times).expect("at least one round");
        let steady = rounds
            .iter()
            .all(|r| r.fingerprint == rounds[0].fingerprint);
        let count = rounds.len() as u32;
        let samples: Vec<u64> = rounds
            .iter_mut()
            .flat_map(|r| r.samples.drain(..))
            .collect();
        let mut row = rounds.swap_remove(median);
        row.samples = samples;
        row.rounds = count;
        row.steady = steady;
        row
    }
}

/// Runs `round` (given the budget it has) in [`Rounds`] until `floor` has passed, within
/// `budget`; `whole` says whether a round read all it was to read.
pub(crate) async fn in_rounds<F, Fut>(
    floor: Option<Duration>,
    budget: Option<Duration>,
    whole: impl Fn(&LimitTimed) -> bool,
    mut round: F,
) -> io::Result<LimitTimed>
where
    F: FnMut(Option<Duration>, u64) -> Fut,
    Fut: std::future::Future<Output = io::Result<LimitTimed>>,
{
    let rounds = Rounds::new(floor, budget);
    let mut done: Vec<LimitTimed> = Vec::new();
    let mut last_whole = true;
    while let Some(left) = rounds.next(done.len(), last_whole) {
        let timed = round(left, done.len() as u64).await?;
        last_whole = whole(&timed);
        // A later round cut short by the budget is left out: the others read all.
        if last_whole || done.is_empty() {
            done.push(timed);
        }
    }
    Ok(LimitTimed::of_rounds(done))
}

/// What the limit's verification pass found, over the same requests (or the stream row's, over
/// the same bytes).
#[derive(Debug)]
pub(crate) struct LimitVerified {
    pub(crate) checksum: Checksum,
    pub(crate) fingerprint: Fingerprint,
    pub(crate) pattern: PatternCheck,
    pub(crate) reads: u64,
}

impl LimitVerified {
    /// What a verifying pass found.
    pub(crate) fn of_pass(state: PassState) -> Self {
        let (checksum, pattern) = state.verify.expect("a verifying pass");
        Self {
            checksum,
            fingerprint: state.fingerprint,
            pattern,
            reads: state.reads,
        }
    }
}

/// The timed passes: `passes` times `file_len` bytes in 1 MiB reads, until done or out of the
/// budget `deadline_after`; again, in rounds, until `floor` has passed.
pub(crate) async fn time_limit(
    source: &Source,
    file_len: u64,
    passes: u32,
    deadline_after: Option<Duration>,
    floor: Option<Duration>,
    seed: u64,
) -> io::Result<LimitTimed> {
    let whole = |t: &LimitTimed| t.bytes == file_len * u64::from(passes);
    in_rounds(floor, deadline_after, whole, |left, round| async move {
        let state = PassState::timed(left, seed.wrapping_add(round));
        let pass = Pass::new(file_len, passes, u64::MAX, state);
        let pass = run(source, pass).await?;
        Ok(LimitTimed::of_pass(pass.state, pass.requests))
    })
    .await
}

/// The verification pass: the first `requests` reads of the timed pass again, untimed.
pub(crate) async fn verify_limit(
    source: &Source,
    file_len: u64,
    requests: u64,
) -> io::Result<LimitVerified> {
    let pass = Pass::new(file_len, u32::MAX, requests, PassState::verifying());
    let pass = run(source, pass).await?;
    Ok(LimitVerified::of_pass(pass.state))
}

/// Passes over the source, timed or verifying, whatever the raw form.
struct Pass {
    file_len: u64,
    passes: u32,
    // Where the next read starts, and in which pass.
    pos: u64,
    pass: u32,
    // Verifying: the most requests to make (the timed pass's).
    max_requests: u64,
    requests: u64,
    state: PassState,
}

impl Pass {
    /// `passes` passes over a file of `file_len` bytes, at most `max_requests` requests.
    fn new(file_len: u64, passes: u32, max_requests: u64, state: PassState) -> Self {
        Self {
            file_len,
            passes,
            pos: 0,
            pass: 0,
            max_requests,
            requests: 0,
            state,
        }
    }

    /// Whether to make another request, and where and how many bytes: `(offset, len)`; an
    /// offset of 0 after the first request starts a pass again.
    #[inline]
    fn next(&mut self) -> Option<(u64, usize)> {
        if self.pos >= self.file_len {
            self.pass += 1;
            self.pos = 0;
        }
        if self.pass >= self.passes || self.requests >= self.max_requests {
            return None;
        }
        if let Some(meter) = &mut self.state.meter {
            if !meter.before() {
                return None;
            }
        }
        Some((
            self.pos,
            (self.file_len - self.pos).min(LIMIT_READ as u64) as usize,
        ))
    }

    /// The request's bytes arrived.
    #[inline]
    fn took(&mut self, bytes: &[u8]) {
        if let Some(meter) = &mut self.state.meter {
            meter.after();
        }
        self.state.fingerprint.look(bytes);
        if let Some((checksum, pattern)) = &mut self.state.verify {
            checksum.update(bytes);
            pattern.check(self.pos, bytes);
        }
        self.pos += bytes.len() as u64;
        self.state.bytes += bytes.len() as u64;
        self.requests += 1;
    }
}

async fn run(source: &Source, pass: Pass) -> io::Result<Pass> {
    let failed = |e: io::Error, at: u64| {
        context(
            e,
            format!(
                "the limit row of {}: 1 MiB read at offset {at}",
                source.label()
            ),
        )
    };
    match source.raw() {
        Raw::File { path, direct } => {
            // The whole pass on one blocking thread, as `dd` runs.
            tokio::task::spawn_blocking(move || read_file(&path, direct, pass))
                .await
                .map_err(io::Error::other)?
        }
        Raw::Memory(data) => {
            let mut pass = pass;
            let mut buf = vec![0u8; LIMIT_READ];
            let start = pass.state.start();
            while let Some((at, n)) = pass.next() {
                let at = at as usize;
                buf[..n].copy_from_slice(&data[at..at + n]);
                pass.state.reads += 1;
                pass.took(&buf[..n]);
            }
            pass.state.elapsed = start.elapsed();
            Ok(pass)
        }
        Raw::Positional => {
            let counted = CountingPositional::new(source.open_positional().await?);
            let mut pass = pass;
            let start = pass.state.start();
            while let Some((at, n)) = pass.next() {
                let bytes = counted.read_at(at, n).await.map_err(|e| failed(e, at))?;
                if bytes.is_empty() {
                    return Err(failed(ended_early(at), at));
                }
                pass.took(&bytes);
            }
            pass.state.elapsed = start.elapsed();
            pass.state.reads = counted.requests();
            Ok(pass)
        }
        Raw::Stream => {
            let stream = source.open_at(0).await?;
            let mut stream = CountingSource::with_counts(stream, StreamCounts::default());
            let mut buf = vec![0u8; LIMIT_READ];
            let mut pass = pass;
            let start = pass.state.start();
            while let Some((at, n)) = pass.next() {
                if at == 0 && pass.requests > 0 {
                    stream
                        .seek(SeekFrom::Start(0))
                        .await
                        .map_err(|e| failed(e, at))?;
                }
                let mut filled = 0;
                while filled < n {
                    match stream.read(&mut buf[filled..n]).await {
                        Ok(0) => return Err(failed(ended_early(at + filled as u64), at)),
                        Ok(k) => filled += k,
                        Err(e) => return Err(failed(e, at)),
                    }
                }
                pass.took(&buf[..n]);
            }
            pass.state.elapsed = start.elapsed();
            pass.state.reads = stream.counts().reads;
            Ok(pass)
        }
    }
}

/// The pass over a local file: `read` calls of 1 MiB into one buffer (aligned to 4 KiB, which
/// `O_DIRECT` needs).
fn read_file(path: &Path, direct: bool, mut pass: Pass) -> io::Result<Pass> {
    let file = open_raw(path, direct)?;
    let mut file = &file;
    let mut storage = vec![0u8; LIMIT_READ + 4096];
    let align = storage.as_ptr().align_offset(4096).min(4096);
    let buf = &mut storage[align..align + LIMIT_READ];
    let failed = |e: io::Error, at: u64| {
        context(
            e,
            format!(
                "the limit row of {}: 1 MiB read at offset {at}",
                path.display()
            ),
        )
    };
    let start = pass.state.start();
    while let Some((at, n)) = pass.next() {
        if at == 0 && pass.requests > 0 {
            file.seek(SeekFrom::Start(0)).map_err(|e| failed(e, at))?;
        }
        // `O_DIRECT` reads must keep their aligned length; the end of the file cuts them short.
        let want = if direct { LIMIT_READ } else { n };
        let mut filled = 0;
        while filled < n {
            match file.read(&mut buf[filled..want]) {
                Ok(0) => return Err(failed(ended_early(at + filled as u64), at)),
                Ok(k) => filled += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(failed(e, at)),
            }
            pass.state.reads += 1;
        }
        pass.took(&buf[..n]);
    }
    pass.state.elapsed = start.elapsed();
    Ok(pass)
}

#[cfg(target_os = "linux")]
fn open_raw(path: &Path, direct: bool) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;

    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    if direct {
        options.custom_flags(libc::O_DIRECT);
    }
    options
        .open(path)
        .map_err(|e| context(e, format!("cannot open {}", path.display())))
}

#[cfg(not(target_os = "linux"))]
fn open_raw(path: &Path, direct: bool) -> io::Result<File> {
    if direct {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "cannot open {} with O_DIRECT: it needs Linux",
                path.display()
            ),
        ));
    }
    File::open(path).map_err(|e| context(e, format!("cannot open {}", path.display())))
}

fn ended_early(at: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the source ended at {at}, before its length: has it changed during the run?"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi_testkit::word_pattern_vec as pattern;

    async fn timed_then_verified(source: &Source, len: u64) -> (LimitTimed, LimitVerified) {
        let timed = time_limit(source, len, 1, None, None, 1).await.unwrap();
        let verified = verify_limit(source, len, timed.requests).await.unwrap();
        (timed, verified)
    }

    #[tokio::test]
    async fn every_raw_form_reads_the_file_in_1_mib_requests() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        let data = pattern((5 << 20) / 2 + 7);
        std::fs::write(&path, &data).unwrap();
        let len = data.len() as u64;
        let stream_only = {
            let data = data.clone();
            Source::custom("stream", move || {
                let data = data.clone();
                async move { Ok(Box::new(io::Cursor::new(data)) as crate::BoxSource) }
            })
        };
        for source in [
            Source::file(&path),
            Source::memory(data.clone()),
            Source::slow_link(&path, Duration::ZERO, 0),
            stream_only,
        ] {
            let (timed, verified) = timed_then_verified(&source, len).await;
            assert_eq!((timed.bytes, timed.requests), (len, 3), "{source:?}");
            assert!(timed.reads >= 3, "{source:?}: {timed:?}");
            assert!(!timed.samples.is_empty());
            assert_eq!(
                verified.checksum.finish(),
                Checksum::of(&data),
                "{source:?}"
            );
            assert_eq!(verified.fingerprint, timed.fingerprint);
            assert_eq!(
                verified.pattern.mismatch(),
                None,
                "the file holds the pattern"
            );
            // Several passes read the file again from the start.
            let twice = time_limit(&source, len, 2, None, None, 1).await.unwrap();
            assert_eq!((twice.bytes, twice.requests), (2 * len, 6), "{source:?}");
            let again = verify_limit(&source, len, twice.requests).await.unwrap();
            let mut sum = Checksum::new();
            sum.update(&data);
            sum.update(&data);
            assert_eq!(again.checksum.finish(), sum.finish(), "{source:?}");
            assert_eq!(again.pattern.mismatch(), None);
        }
    }

    #[tokio::test]
    async fn a_budget_cuts_the_pass_and_the_verification_follows_it() {
        let data = pattern(4 << 20);
        let source = Source::memory(data.clone());
        let timed = time_limit(&source, data.len() as u64, 1, Some(Duration::ZERO), None, 1)
            .await
            .unwrap();
        assert_eq!((timed.bytes, timed.requests), (0, 0));
        let verified = verify_limit(&source, data.len() as u64, 2).await.unwrap();
        assert_eq!(verified.checksum.finish(), Checksum::of(&data[..2 << 20]));
    }

    #[tokio::test]
    async fn other_bytes_than_the_pattern_are_found_and_short_files_are_errors() {
        let mut data = pattern(3 << 20);
        data[2_500_000] ^= 0x10;
        let source = Source::memory(data.clone());
        let (_, verified) = timed_then_verified(&source, data.len() as u64).await;
        assert!(matches!(
            verified.pattern.mismatch(),
            Some(crate::Mismatch::Byte {
                offset: 2_500_000,
                ..
            })
        ));

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("short.bin");
        std::fs::write(&path, &data[..1000]).unwrap();
        let err = time_limit(&Source::file(&path), 5000, 1, None, None, 1)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{err}");
        assert!(err.to_string().contains("the limit row of"), "{err}");
    }
}
