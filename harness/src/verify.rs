//! Proving the bytes: every cell is read again by fresh readers making the same requests, in a
//! pass that is not timed, and every byte they hand out is compared with the
//! [truth](crate::truth), while the timed pass only looks at its requests.
//!
//! - [`Fingerprint`]: what the timed pass does with a request, as a reader's user would: it
//!   looks at the first and the last byte (as Lucene's own benchmarks do). The verification
//!   pass folds the same, so a timed pass that saw other bytes than its verification pass is
//!   caught too.
//! - [`TaskVerifier`]: one task's comparison, [`Checksum`], fingerprint, and first
//!   [`Mismatch`].
//! - [`verify_cells`]: the verification passes of a run's cells, on a pool of threads (they
//!   are not timed, so they may use every core), once every cell has been timed.

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex};

use crate::error::context;
use crate::mismatch::Mismatch;
use crate::plan::Cell;
use crate::plan::DiskCacheSpec;
use crate::readers::{each_reader, Counts, Readers, RequestReader};
use crate::sources::Source;
use crate::tasks::{all_tasks, failed_request};
use crate::truth::{Truth, TruthCursor};
use crate::workload::Requests;

/// A cheap, order-sensitive 64-bit checksum of a byte stream, to prove that two readers read the
/// same bytes.
///
/// The stream is mixed eight bytes at a time (FxHash-style: rotate, xor, multiply) and finished
/// with the SplitMix64 finalizer and the stream's length. The result depends only on the bytes
/// and their order, not on how the stream was split into [`update`](Self::update) calls, so a
/// reader that reads one byte at a time and one that reads 64 KiB at a time agree. It is fast
/// (one multiply per eight bytes) and not cryptographic.
///
/// # Examples
///
/// ```
/// use throughput_harness::Checksum;
///
/// let mut whole = Checksum::new();
/// whole.update(b"hello, world");
///
/// let mut pieces = Checksum::new();
/// for piece in [&b"hel"[..], b"lo, w", b"", b"orld"] {
///     pieces.update(piece);
/// }
/// assert_eq!(whole.finish(), pieces.finish());
/// assert_ne!(whole.finish(), Checksum::of(b"world, hello"));
/// ```
#[derive(Clone)]
pub struct Checksum {
    // Invariants: `tail_len < 8`; `tail` holds the last `tail_len` bytes of the stream (little
    // endian, the earliest byte lowest) that do not fill a word yet, and is 0 above them; `state`
    // has mixed every full word before them; `len` counts every byte.
    state: u64,
    tail: u64,
    tail_len: u32,
    len: u64,
}

const SEED: u64 = 0xcbf2_9ce4_8422_2325;
const MULTIPLIER: u64 = 0x517c_c1b7_2722_0a95;

impl Checksum {
    /// An empty checksum (of no bytes).
    pub const fn new() -> Self {
        Self {
            state: SEED,
            tail: 0,
            tail_len: 0,
            len: 0,
        }
    }

    /// The checksum of `bytes`, in one call.
    pub fn of(bytes: &[u8]) -> u64 {
        let mut sum = Self::new();
        sum.update(bytes);
        sum.finish()
    }

    /// Appends `bytes` to the stream.
    #[inline]
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.tail_len > 0 {
            while self.tail_len < 8 {
                let Some((&b, rest)) = bytes.split_first() else {
                    return;
                };
                self.tail |= u64::from(b) << (8 * self.tail_len);
                self.tail_len += 1;
                bytes = rest;
            }
            self.mix(self.tail);
            self.tail = 0;
            self.tail_len = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let word: [u8; 8] = word.try_into().expect("chunks_exact(8) yields 8 bytes");
            self.mix(u64::from_le_bytes(word));
        }
        for (i, &b) in words.remainder().iter().enumerate() {
            self.tail |= u64::from(b) << (8 * i);
        }
        self.tail_len = words.remainder().len() as u32;
        debug_assert!(self.tail_len < 8);
    }

    /// The checksum of every byte appended so far. The stream can go on after this.
    pub fn finish(&self) -> u64 {
        let mut h = self.state;
        if self.tail_len > 0 {
            h = (h.rotate_left(5) ^ self.tail).wrapping_mul(MULTIPLIER);
        }
        h ^= self.len;
        // SplitMix64's finalizer, so that nearby streams give far-apart sums.
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    }

    /// How many bytes the stream has had.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the stream has had no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    // ----- private helpers -----

    #[inline(always)]
    fn mix(&mut self, word: u64) {
        self.state = (self.state.rotate_left(5) ^ word).wrapping_mul(MULTIPLIER);
    }
}

impl Default for Checksum {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checksum")
            .field("len", &self.len)
            .field("sum", &format_args!("{:#018x}", self.finish()))
            .finish()
    }
}

/// What a timed pass does with each request: it looks at the first and the last byte, folded
/// into a value that the optimizer cannot drop. Cheap (a rotate and a xor per request), and
/// order-sensitive, so that the verification pass, which folds the same bytes of the same
/// requests, proves the timed pass saw what it verified.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fingerprint(u64);

impl Fingerprint {
    /// Looks at `request` (at least 1 byte).
    #[inline(always)]
    pub(crate) fn look(&mut self, request: &[u8]) {
        let first = request.first().copied().unwrap_or(0);
        let last = request.last().copied().unwrap_or(0);
        self.0 = self.0.rotate_left(5) ^ (u64::from(first) << 8 | u64::from(last));
    }

    /// Folds in another task's fingerprint, in task order.
    pub(crate) fn combine(&mut self, other: Fingerprint) {
        self.0 = self.0.rotate_left(17) ^ other.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// One task's verification pass: compares every request with the truth and folds it into the
/// checksum and the fingerprint.
///
/// A request inside the block of truth the cursor holds is compared in place, synchronously
/// ([`check_now`](Self::check_now): a bounds check and a compare, so that replaying a million
/// 1-byte requests costs about what timing them did); the checksum is then taken in bulk over
/// the truth's bytes, which the requests were proven equal to, one contiguous run at a time.
/// Only a request outside the block waits for the next one ([`check`](Self::check)).
pub(crate) struct TaskVerifier {
    task: usize,
    truth: TruthCursor,
    // The bytes verified and not checksummed yet: `[run_at, run_at + run_len)`, inside the
    // cursor's block.
    run_at: u64,
    run_len: usize,
    checksum: Checksum,
    fingerprint: Fingerprint,
    mismatch: Option<Mismatch>,
}

impl TaskVerifier {
    /// A verifier of task `task` against `truth`.
    pub(crate) fn new(task: usize, truth: TruthCursor) -> Self {
        Self {
            task,
            truth,
            run_at: 0,
            run_len: 0,
            checksum: Checksum::new(),
            fingerprint: Fingerprint::default(),
            mismatch: None,
        }
    }

    /// Checks the request `bytes`, read at `offset`, if the truth is at hand: `Some(true)` if
    /// it matches, `Some(false)` once a byte differed (the pass can stop: the first difference
    /// is what the report shows), `None` if the truth must be read first ([`check`](Self::check)).
    #[inline]
    pub(crate) fn check_now(&mut self, offset: u64, bytes: &[u8]) -> Option<bool> {
        let truth = self.truth.at_hand(offset, bytes.len())?;
        if !same(truth, bytes) {
            self.mismatch = Some(first_difference(self.task, offset, truth, bytes));
            return Some(false);
        }
        self.fingerprint.look(bytes);
        if offset != self.run_at + self.run_len as u64 {
            self.checksum_run();
            self.run_at = offset;
        }
        self.run_len += bytes.len();
        Some(true)
    }

    /// Checks the request `bytes` read at `offset`, reading the truth if need be: `Ok(false)`
    /// once a byte differed.
    ///
    /// # Errors
    ///
    /// Reading the truth failed (with what was being verified in the message).
    pub(crate) async fn check(&mut self, offset: u64, bytes: &[u8]) -> io::Result<bool> {
        if let Some(same) = self.check_now(offset, bytes) {
            return Ok(same);
        }
        // The run lies in the block about to be replaced: checksum it first.
        self.checksum_run();
        self.truth.load(offset, bytes.len()).await.map_err(|e| {
            context(
                e,
                format!(
                    "cannot read the {} bytes at {offset} to verify against",
                    bytes.len()
                ),
            )
        })?;
        Ok(self
            .check_now(offset, bytes)
            .expect("the truth was just loaded"))
    }

    /// The checksum, the fingerprint and the first mismatch.
    pub(crate) fn finish(mut self) -> (Checksum, Fingerprint, Option<Mismatch>) {
        self.checksum_run();
        (self.checksum, self.fingerprint, self.mismatch)
    }

    // ----- private helpers -----

    /// Folds the run verified so far into the checksum.
    fn checksum_run(&mut self) {
        if self.run_len > 0 {
            let run = self
                .truth
                .at_hand(self.run_at, self.run_len)
                .expect("a run stays inside the block it was verified against");
            self.checksum.update(run);
            self.run_len = 0;
        }
    }
}

/// The first byte where `got` differs from `truth` (they differ), read at `offset` by `task`.
#[cold]
#[inline(never)]
fn first_difference(task: usize, offset: u64, truth: &[u8], got: &[u8]) -> Mismatch {
    let i = truth
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .expect("the slices differ");
    Mismatch::Byte {
        task,
        offset: offset + i as u64,
        expected: truth[i],
        found: got[i],
    }
}

/// Whether `a` and `b` (of the same length) are equal, without a call for the smallest.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() <= 8 {
        a.iter().zip(b).all(|(x, y)| x == y)
    } else {
        a == b
    }
}

// ----- the verification passes -----

/// A cell to verify, with everything its pass needs, owned, so that it can run on a worker
/// thread.
pub(crate) struct CellCheck {
    pub(crate) cell: Cell,
    pub(crate) source: Source,
    pub(crate) cache_capacity: u64,
    pub(crate) disk_cache: Option<DiskCacheSpec>,
    pub(crate) requests: Arc<Requests>,
    /// The requests each task made in the timed pass.
    pub(crate) made: Vec<u64>,
    pub(crate) truth: Truth,
    pub(crate) file_len: u64,
}

/// What a cell's verification pass found.
#[derive(Debug)]
pub(crate) struct CellVerified {
    /// Over the tasks' checksums in task order, for several tasks.
    pub(crate) checksum: u64,
    pub(crate) fingerprint: Fingerprint,
    pub(crate) mismatch: Option<Mismatch>,
    /// Source reads the pass made.
    pub(crate) reads: u64,
}

/// Runs the verification passes of `checks` on up to `workers` threads, each with a tokio
/// runtime of its own, and hands each result (a pass that failed too) to `done` on the calling
/// task, with its index in `checks`, as they finish. The first error `done` returns stops the
/// passes not started yet and is returned once the others are over.
pub(crate) async fn verify_cells(
    checks: Vec<CellCheck>,
    workers: usize,
    mut done: impl FnMut(usize, io::Result<CellVerified>) -> io::Result<()>,
) -> io::Result<()> {
    let total = checks.len();
    if total == 0 {
        return Ok(());
    }
    let queue: Arc<Mutex<VecDeque<(usize, CellCheck)>>> =
        Arc::new(Mutex::new(checks.into_iter().enumerate().collect()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut threads = Vec::new();
    for worker in 0..workers.clamp(1, total) {
        let (queue, tx) = (Arc::clone(&queue), tx.clone());
        let thread = std::thread::Builder::new()
            .name(format!("abi-verify-{worker}"))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                let runtime = match runtime {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some((index, check)) = next else {
                        break;
                    };
                    let verified = runtime.block_on(verify_cell(check));
                    if tx.send(Ok((index, verified))).is_err() {
                        break;
                    }
                }
            })?;
        threads.push(thread);
    }
    drop(tx);
    let mut first_error = None;
    let mut received = 0;
    while let Some(message) = rx.recv().await {
        let outcome = message.and_then(|(index, verified)| {
            received += 1;
            done(index, verified)
        });
        if let Err(e) = outcome {
            queue.lock().unwrap_or_else(|e| e.into_inner()).clear();
            first_error.get_or_insert(e);
        }
    }
    // Every sender is gone: the threads are over (or about to return).
    for thread in threads {
        if thread.join().is_err() {
            first_error.get_or_insert(io::Error::other("a verification thread panicked"));
        }
    }
    match first_error {
        Some(e) => Err(e),
        None if received < total => Err(io::Error::other(format!(
            "only {received} of {total} verification passes reported"
        ))),
        None => Ok(()),
    }
}

/// A cell's verification pass: fresh readers, the same requests (`made` per task, as the timed
/// pass got through), every byte compared with the truth.
async fn verify_cell(check: CellCheck) -> io::Result<CellVerified> {
    let CellCheck {
        cell,
        source,
        cache_capacity,
        disk_cache,
        requests,
        made,
        truth,
        file_len,
    } = check;
    let verified = async {
        let starts = requests.starts();
        // A cached reader's cache is new here too: the pass reads through it from cold.
        let disk_cache = disk_cache.as_ref();
        let readers = Readers::open(cell, &source, cache_capacity, disk_cache, &starts).await?;
        let mut cursors = Vec::with_capacity(made.len());
        for _ in &made {
            cursors.push(truth.cursor(file_len).await?);
        }
        each_reader!(readers, |readers| {
            verify_tasks(readers, &requests, &made, cursors).await
        })
    };
    verified
        .await
        .map_err(|e| context(e, format!("{cell}, verification pass")))
}

/// Replays each task's `made[task]` requests through its reader, comparing every byte with the
/// truth.
async fn verify_tasks<R: RequestReader>(
    readers: Vec<R>,
    requests: &Arc<Requests>,
    made: &[u64],
    cursors: Vec<TruthCursor>,
) -> io::Result<CellVerified> {
    let jobs: Vec<(R, TruthCursor, u64)> = readers
        .into_iter()
        .zip(cursors)
        .zip(made)
        .map(|((reader, cursor), &made)| (reader, cursor, made))
        .collect();
    let results = all_tasks(jobs, |task, (reader, cursor, made)| {
        verify_task(reader, Arc::clone(requests), task, made, cursor)
    })
    .await?;
    let tasks = results.len();
    let mut checksum = Checksum::new();
    let mut fingerprint = Fingerprint::default();
    let mut mismatch = None;
    let mut reads = 0;
    for (sum, print, wrong, counts) in results {
        if tasks == 1 {
            checksum = sum;
        } else {
            checksum.update(&sum.finish().to_le_bytes());
        }
        fingerprint.combine(print);
        mismatch = mismatch.or(wrong);
        reads += counts.reads;
    }
    Ok(CellVerified {
        checksum: checksum.finish(),
        fingerprint,
        mismatch,
        reads,
    })
}

/// One task's verification: its first `made` requests (over as many passes as that takes).
async fn verify_task<R: RequestReader>(
    mut reader: R,
    requests: Arc<Requests>,
    task: usize,
    made: u64,
    truth: TruthCursor,
) -> io::Result<(Checksum, Fingerprint, Option<Mismatch>, Counts)> {
    let mut buf = vec![0u8; requests.largest()];
    let mut verifier = TaskVerifier::new(task, truth);
    let mut done = 0u64;
    let mut pass = 0;
    'passes: while done < made {
        let before = done;
        for (offset, len) in requests.walk(task) {
            if done == made {
                break 'passes;
            }
            let request = &mut buf[..len];
            if let Err(e) = reader.read_at(offset, request).await {
                return Err(failed_request(e, task, offset, pass));
            }
            done += 1;
            // In place and synchronous while the truth is at hand; awaits only to load more.
            let same = match verifier.check_now(offset, request) {
                Some(same) => same,
                None => verifier.check(offset, request).await?,
            };
            if !same {
                break 'passes;
            }
        }
        if done == before {
            break; // a task without requests
        }
        pass += 1;
    }
    let (checksum, fingerprint, mismatch) = verifier.finish();
    Ok((checksum, fingerprint, mismatch, reader.counts()))
}

#[cfg(test)]
mod tests {
    use super::*;
    // Varied, non-periodic bytes: the kit's byte pattern.
    use abi_testkit::pattern_vec as data;

    #[test]
    fn a_checksum_is_independent_of_how_the_stream_is_split() {
        let data = data(1000);
        let whole = Checksum::of(&data);
        for step in [1, 2, 3, 7, 8, 9, 15, 64, 999, 1000] {
            let mut sum = Checksum::new();
            for chunk in data.chunks(step) {
                sum.update(chunk);
                assert!(sum.tail_len < 8);
            }
            assert_eq!(sum.finish(), whole, "step {step}");
            assert_eq!(sum.len(), 1000);
        }
    }

    #[test]
    fn a_checksum_is_sensitive_to_order_length_and_content() {
        let data = data(64);
        let base = Checksum::of(&data);
        let mut swapped = data.clone();
        swapped.swap(3, 40);
        assert_ne!(Checksum::of(&swapped), base);
        assert_ne!(Checksum::of(&data[..63]), base);
        let mut zeros = Checksum::new();
        zeros.update(&[0; 8]);
        assert_ne!(zeros.finish(), Checksum::of(&[0; 7]));
        assert_ne!(zeros.finish(), Checksum::of(&[]));
        let mut flipped = data.clone();
        flipped[63] ^= 1;
        assert_ne!(Checksum::of(&flipped), base);
    }

    #[test]
    fn finishing_a_checksum_does_not_end_the_stream() {
        let mut sum = Checksum::new();
        sum.update(b"abc");
        let _ = sum.finish();
        sum.update(b"def");
        assert_eq!(sum.finish(), Checksum::of(b"abcdef"));
        assert!(!sum.is_empty());
        assert!(Checksum::default().is_empty());
    }

    #[test]
    fn a_fingerprint_sees_first_and_last_bytes_in_order() {
        let fold = |requests: &[&[u8]]| {
            let mut f = Fingerprint::default();
            requests.iter().for_each(|r| f.look(r));
            f
        };
        let base = fold(&[b"abc", b"def"]);
        assert_eq!(base, fold(&[b"abc", b"def"]));
        assert_ne!(base, fold(&[b"abd", b"def"]), "a last byte");
        assert_ne!(base, fold(&[b"def", b"abc"]), "the order");
        // What it does not look at, it does not see: the middle bytes.
        assert_eq!(base, fold(&[b"axc", b"def"]));
    }

    #[tokio::test]
    async fn the_pattern_truth_needs_no_io_and_finds_the_first_wrong_byte() {
        let data = abi_testkit::word_pattern_vec(5000);
        let truth = Truth::Pattern;
        let mut verifier = TaskVerifier::new(0, truth.cursor(5000).await.unwrap());
        assert!(verifier.check(0, &data[..100]).await.unwrap());
        assert!(verifier.check(4000, &data[4000..]).await.unwrap());
        let mut wrong = data[100..300].to_vec();
        wrong[57] ^= 1;
        assert!(!verifier.check(100, &wrong).await.unwrap());
        let (checksum, _, mismatch) = verifier.finish();
        // The bytes proven right: the mismatching request is not checksummed.
        assert_eq!(checksum.len(), 100 + 1000);
        assert_eq!(
            mismatch,
            Some(Mismatch::Byte {
                task: 0,
                offset: 157,
                expected: data[157],
                found: data[157] ^ 1
            })
        );
        assert_eq!(truth.reads(), 0);
        assert!(mismatch.unwrap().to_string().starts_with("byte 157 is 0x"));
    }
}
