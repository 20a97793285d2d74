//! Shared helpers for the integration tests of `async_buffered_input`.
//!
//! Every test binary (`tests/*.rs`) includes this module with `mod common;` and uses only a
//! subset of it, hence the module-wide `dead_code` allowance.
//!
//! Contents:
//! * [`pattern`] / [`pattern_vec`]: deterministic, non-periodic synthetic file content.
//! * [`Rng`]: a tiny deterministic PRNG (splitmix64) for reproducible "random" sweeps.
//! * [`Counting`]: wraps any `AsyncRead + AsyncSeek` and counts what the input asks of it.
//! * [`Hostile`]: an in-memory source that short-reads, returns `Pending`, and injects one read
//!   error and/or one seek error, all deterministically.
//! * [`Gated`]: an in-memory source whose reads and seeks stay `Pending` until the test releases
//!   them (for cancellation tests).
//! * [`temp_tokio_file`]: a real `tokio::fs::File` over given bytes; [`temp_std_file`] the same
//!   as a `std::fs::File`.
//! * [`PartlyAtHand`]: a positional source only part of which `try_read_at` can serve (like a
//!   file partly in the page cache), with short answers at every gap.
//! * [`CountingPositional`]: wraps a positional source and counts the requests that reach it
//!   (and those still alive), the reads of bytes at hand, and the bytes.
//! * [`Checked`]: drives an `AsyncBufferedInput` next to a trivial model (`Vec<u8>` + position) and
//!   checks bytes, decoded values, errors (kind and position), `position()`, `buffer()`,
//!   `window()` and `stats()` after every call; [`model_varint`] and [`model_string`] decode as
//!   Lucene's `DataInput` does, for the model's side of typed reads.
//! * [`conformance_input`] / `conformance_tests!`: the one conformance sweep, run against every
//!   family of input: streams ([`stream_conformance`]), positional sources
//!   ([`positional_conformance`]), slices ([`slice_conformance`]) and clones
//!   ([`clone_conformance`]).
#![allow(dead_code)]

use std::fmt::Write as _;
use std::io::{self, ErrorKind, SeekFrom};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use async_buffered_input::fetch::{Fetch, PositionalFetch, StreamFetch};
use async_buffered_input::source::PositionalSource;
use async_buffered_input::{AsyncBufferedInput, InputError};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncSeek, AsyncSeekExt, ReadBuf};

// ---------------------------------------------------------------------------------------------
// Synthetic content
// ---------------------------------------------------------------------------------------------

/// The byte stored at file offset `n`: the low byte of splitmix64(n). Not periodic at any small
/// power of two, so reading from a wrong offset (off by one, off by a window) is always caught
/// within a few bytes.
pub fn pattern(n: u64) -> u8 {
    let mut x = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)) as u8
}

/// `len` bytes of [`pattern`], starting at offset 0.
pub fn pattern_vec(len: usize) -> Vec<u8> {
    (0..len as u64).map(pattern).collect()
}

/// Small deterministic PRNG (splitmix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `0..n` (0 when `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

/// Compares `actual` with `expected` (the file bytes starting at `offset`) and panics with the
/// first differing file offset instead of dumping megabytes of bytes.
#[track_caller]
pub fn assert_bytes(actual: &[u8], expected: &[u8], offset: u64, ctx: &str) {
    if actual == expected {
        return;
    }
    if let Some(i) = actual.iter().zip(expected).position(|(a, b)| a != b) {
        panic!(
            "{ctx}: byte mismatch at file offset {} (index {i}): got {:#04x}, expected {:#04x} \
             (lengths: got {}, expected {})",
            offset + i as u64,
            actual[i],
            expected[i],
            actual.len(),
            expected.len()
        );
    }
    panic!(
        "{ctx}: length mismatch at file offset {offset}: got {} bytes, expected {}",
        actual.len(),
        expected.len()
    );
}

/// True when the error carries the crate's `InputError` payload (API.md: "payload inside
/// io::Error, via get_ref().downcast_ref").
pub fn has_input_error_payload(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<InputError>())
        .is_some()
}

/// The error's message and the message of every cause under it (`source()`, recursively),
/// joined with ": ": where a cause's text (a path, a URL, an OS message) is found now that an
/// error names its cause only as its `source()`.
pub fn chain(e: &io::Error) -> String {
    let mut out = e.to_string();
    let mut next = std::error::Error::source(e);
    while let Some(cause) = next {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        next = cause.source();
    }
    out
}

/// Asserts that the error's message contains `n` written in decimal.
#[track_caller]
pub fn assert_msg_mentions(e: &io::Error, n: u64, what: &str, ctx: &str) {
    let msg = e.to_string();
    assert!(
        msg.contains(&n.to_string()),
        "{ctx}: error message should mention the {what} {n}, got: {msg:?} ({e:?})"
    );
}

/// Asserts that `e` is a source error of `kind` reported by the input at position `pos`: same
/// `ErrorKind`, message mentions the position in decimal, `InputError` payload present.
#[track_caller]
pub fn assert_source_error(e: &io::Error, kind: ErrorKind, pos: u64, ctx: &str) {
    assert_eq!(e.kind(), kind, "{ctx}: error kind of {e:?}");
    assert_msg_mentions(e, pos, "position", ctx);
    assert!(
        has_input_error_payload(e),
        "{ctx}: source errors should be wrapped with an InputError payload, got {e:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Counting wrapper
// ---------------------------------------------------------------------------------------------

/// Counters shared between a [`Counting`] source and the test.
#[derive(Debug, Default)]
pub struct Counts {
    /// `poll_read` calls that returned `Ready` (Ok or Err), including 0-byte (EOF) reads.
    pub reads: AtomicU64,
    /// `poll_read` calls that returned `Ready(Ok)` with 0 bytes.
    pub zero_reads: AtomicU64,
    /// `poll_read` calls that returned `Ready(Err)`.
    pub read_errors: AtomicU64,
    /// `poll_read` calls that returned `Pending`.
    pub pending_reads: AtomicU64,
    /// Bytes delivered by `Ready(Ok)` reads.
    pub bytes: AtomicU64,
    /// `start_seek` calls (whatever their outcome).
    pub seeks: AtomicU64,
    /// Every `start_seek` argument, in order.
    pub seek_log: Mutex<Vec<SeekFrom>>,
}

/// A point-in-time copy of [`Counts`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountSnapshot {
    pub reads: u64,
    pub zero_reads: u64,
    pub read_errors: u64,
    pub bytes: u64,
    pub seeks: u64,
}

impl Counts {
    pub fn snapshot(&self) -> CountSnapshot {
        CountSnapshot {
            reads: self.reads.load(Ordering::SeqCst),
            zero_reads: self.zero_reads.load(Ordering::SeqCst),
            read_errors: self.read_errors.load(Ordering::SeqCst),
            bytes: self.bytes.load(Ordering::SeqCst),
            seeks: self.seeks.load(Ordering::SeqCst),
        }
    }

    pub fn seek_log(&self) -> Vec<SeekFrom> {
        self.seek_log.lock().unwrap().clone()
    }
}

/// Wraps an `AsyncRead + AsyncSeek` and counts the calls made on it. The counters live in an
/// `Arc<Counts>` returned by [`Counting::new`], so the test keeps a handle after moving the
/// reader into the input.
#[derive(Debug)]
pub struct Counting<R> {
    inner: R,
    counts: Arc<Counts>,
}

impl<R> Counting<R> {
    pub fn new(inner: R) -> (Self, Arc<Counts>) {
        let counts = Arc::new(Counts::default());
        (
            Counting {
                inner,
                counts: counts.clone(),
            },
            counts,
        )
    }

    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The wrapped source; operations on it are not counted.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Counting<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let res = Pin::new(&mut this.inner).poll_read(cx, buf);
        let c = &this.counts;
        match &res {
            Poll::Ready(Ok(())) => {
                let n = (buf.filled().len() - before) as u64;
                c.reads.fetch_add(1, Ordering::SeqCst);
                c.bytes.fetch_add(n, Ordering::SeqCst);
                if n == 0 {
                    c.zero_reads.fetch_add(1, Ordering::SeqCst);
                }
            }
            Poll::Ready(Err(_)) => {
                c.reads.fetch_add(1, Ordering::SeqCst);
                c.read_errors.fetch_add(1, Ordering::SeqCst);
            }
            Poll::Pending => {
                c.pending_reads.fetch_add(1, Ordering::SeqCst);
            }
        }
        res
    }
}

impl<R: AsyncSeek + Unpin> AsyncSeek for Counting<R> {
    fn start_seek(mut self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        self.counts.seeks.fetch_add(1, Ordering::SeqCst);
        self.counts.seek_log.lock().unwrap().push(position);
        Pin::new(&mut self.inner).start_seek(position)
    }

    fn poll_complete(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        Pin::new(&mut self.inner).poll_complete(cx)
    }
}

// ---------------------------------------------------------------------------------------------
// Shared seek arithmetic of the in-memory sources
// ---------------------------------------------------------------------------------------------

fn resolve_seek(from: SeekFrom, pos: u64, len: u64) -> io::Result<u64> {
    let target: i128 = match from {
        SeekFrom::Start(x) => x as i128,
        SeekFrom::Current(d) => pos as i128 + d as i128,
        SeekFrom::End(d) => len as i128 + d as i128,
    };
    if target < 0 || target > u64::MAX as i128 {
        Err(io::Error::new(
            ErrorKind::InvalidInput,
            format!("invalid seek to a negative or overflowing position ({from:?})"),
        ))
    } else {
        Ok(target as u64)
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile source
// ---------------------------------------------------------------------------------------------

/// `ErrorKind` of the read error a [`Hostile`] injects.
pub const HOSTILE_READ_ERROR: ErrorKind = ErrorKind::ConnectionReset;
/// `ErrorKind` of the seek error a [`Hostile`] injects.
pub const HOSTILE_SEEK_ERROR: ErrorKind = ErrorKind::TimedOut;

/// Where a [`Hostile`] injected seek failure surfaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeekFail {
    /// `start_seek` returns the error (no seek is then in flight).
    InStart,
    /// `start_seek` succeeds and the following `poll_complete` returns the error; the source
    /// position is left unchanged.
    InComplete,
}

/// Misbehaviour switches of a [`Hostile`] source. `Default` is a well-behaved source.
#[derive(Clone, Debug, Default)]
pub struct HostileConfig {
    /// Deliver between 1 and 13 bytes per `poll_read` (sequence determined by `seed`), never
    /// more than asked for.
    pub short_reads: bool,
    /// Return `Pending` (after `cx.waker().wake_by_ref()`) on every other call of `poll_read`
    /// (with a non-empty buffer) and of `poll_complete`, starting with the first one.
    pub pending: bool,
    /// Seed of the short-read length sequence.
    pub seed: u64,
    /// Fail one `poll_read` with [`HOSTILE_READ_ERROR`] as soon as this many bytes have been
    /// delivered in total (counting all reads since creation). Reads before that are capped so
    /// exactly this many bytes are delivered before the error. Afterwards the source works
    /// normally; its position is unaffected by the error.
    pub fail_read_after: Option<u64>,
    /// Fail the k-th (0-based, counting every `start_seek` call) seek once, with
    /// [`HOSTILE_SEEK_ERROR`], either in `start_seek` or in `poll_complete`.
    pub fail_seek: Option<(u64, SeekFail)>,
}

impl HostileConfig {
    /// Short reads and `Pending` everywhere, no errors.
    pub fn short_and_pending(seed: u64) -> Self {
        HostileConfig {
            short_reads: true,
            pending: true,
            seed,
            ..Default::default()
        }
    }
}

/// What a [`Hostile`] did, shared with the test.
#[derive(Debug, Default)]
pub struct HostileLog {
    pub read_error_fired: AtomicBool,
    pub seek_error_fired: AtomicBool,
    /// `start_seek` calls.
    pub seeks: AtomicU64,
    /// Bytes delivered.
    pub delivered: AtomicU64,
}

/// An in-memory `AsyncRead + AsyncSeek` over a `Vec<u8>` with configurable misbehaviour (see
/// [`HostileConfig`]).
///
/// It is also strict about the `AsyncSeek` protocol, like `tokio::fs::File`:
/// * `start_seek` while a previous seek has not been completed by `poll_complete` fails with
///   `ErrorKind::Other` (tokio's File does exactly this);
/// * `poll_read` while a seek is in flight fails with `ErrorKind::Other` (a caller must drive
///   `poll_complete` to completion before reading, otherwise it would read at the old position).
///
/// Seeking past the end is allowed (reads there return 0 bytes); seeking before 0 fails with
/// `InvalidInput`.
#[derive(Debug)]
pub struct Hostile {
    data: Vec<u8>,
    pos: u64,
    cfg: HostileConfig,
    rng: Rng,
    read_polls: u64,
    complete_polls: u64,
    delivered: u64,
    read_failed: bool,
    seeks_started: u64,
    seek_failed: bool,
    in_flight: Option<(u64, SeekFrom)>,
    log: Arc<HostileLog>,
}

impl Hostile {
    pub fn new(data: Vec<u8>, cfg: HostileConfig) -> Self {
        Hostile {
            data,
            pos: 0,
            rng: Rng::new(cfg.seed),
            cfg,
            read_polls: 0,
            complete_polls: 0,
            delivered: 0,
            read_failed: false,
            seeks_started: 0,
            seek_failed: false,
            in_flight: None,
            log: Arc::new(HostileLog::default()),
        }
    }

    /// Handle on what the source did (keep it before moving the source into the input).
    pub fn log(&self) -> Arc<HostileLog> {
        self.log.clone()
    }

    /// Current source position (the "inner cursor").
    pub fn pos(&self) -> u64 {
        self.pos
    }
}

impl AsyncRead for Hostile {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        if this.cfg.pending {
            this.read_polls += 1;
            if this.read_polls % 2 == 1 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        if let Some((_, from)) = this.in_flight {
            return Poll::Ready(Err(io::Error::other(format!(
                "Hostile: poll_read while a seek ({from:?}) is in flight; poll_complete must \
                 return Ready first"
            ))));
        }
        let mut limit = usize::MAX;
        if let Some(after) = this.cfg.fail_read_after {
            if !this.read_failed {
                if this.delivered >= after {
                    this.read_failed = true;
                    this.log.read_error_fired.store(true, Ordering::SeqCst);
                    return Poll::Ready(Err(io::Error::new(
                        HOSTILE_READ_ERROR,
                        "Hostile: injected read error (no digits here, so position checks cannot match it)",
                    )));
                }
                limit = (after - this.delivered) as usize;
            }
        }
        let len = this.data.len() as u64;
        let start = this.pos.min(len) as usize;
        let mut n = buf.remaining().min(this.data.len() - start).min(limit);
        if this.cfg.short_reads {
            n = n.min(1 + this.rng.below(13) as usize);
        }
        buf.put_slice(&this.data[start..start + n]);
        this.pos += n as u64;
        this.delivered += n as u64;
        this.log.delivered.fetch_add(n as u64, Ordering::SeqCst);
        Poll::Ready(Ok(()))
    }
}

impl AsyncSeek for Hostile {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let this = self.get_mut();
        if let Some((_, prev)) = this.in_flight {
            return Err(io::Error::other(format!(
                "Hostile: start_seek({position:?}) while another seek ({prev:?}) is in flight; \
                 call poll_complete first"
            )));
        }
        let idx = this.seeks_started;
        this.seeks_started += 1;
        this.log.seeks.fetch_add(1, Ordering::SeqCst);
        if this.cfg.fail_seek == Some((idx, SeekFail::InStart)) && !this.seek_failed {
            this.seek_failed = true;
            this.log.seek_error_fired.store(true, Ordering::SeqCst);
            return Err(io::Error::new(
                HOSTILE_SEEK_ERROR,
                "Hostile: injected start_seek failure",
            ));
        }
        this.in_flight = Some((idx, position));
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let this = self.get_mut();
        if this.cfg.pending {
            this.complete_polls += 1;
            if this.complete_polls % 2 == 1 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        let Some((idx, from)) = this.in_flight.take() else {
            return Poll::Ready(Ok(this.pos));
        };
        if this.cfg.fail_seek == Some((idx, SeekFail::InComplete)) && !this.seek_failed {
            this.seek_failed = true;
            this.log.seek_error_fired.store(true, Ordering::SeqCst);
            return Poll::Ready(Err(io::Error::new(
                HOSTILE_SEEK_ERROR,
                "Hostile: injected seek failure in poll_complete",
            )));
        }
        let res = resolve_seek(from, this.pos, this.data.len() as u64);
        if let Ok(p) = res {
            this.pos = p;
        }
        Poll::Ready(res)
    }
}

// ---------------------------------------------------------------------------------------------
// Gated source (for cancellation)
// ---------------------------------------------------------------------------------------------

/// Control handle of a [`Gated`] source.
#[derive(Debug)]
pub struct GateCtl {
    /// Bytes the source may still deliver; `u64::MAX` means unlimited. At 0 reads are Pending.
    budget: AtomicU64,
    /// While false, `poll_complete` of an in-flight seek is Pending.
    seeks_open: AtomicBool,
    waker: Mutex<Option<Waker>>,
    /// `start_seek` calls.
    pub seeks: AtomicU64,
    /// Ready `poll_read` calls.
    pub reads: AtomicU64,
}

impl GateCtl {
    fn wake(&self) {
        if let Some(w) = self.waker.lock().unwrap().take() {
            w.wake();
        }
    }

    /// Lets the source deliver `n` more bytes, then reads are Pending again.
    pub fn set_read_budget(&self, n: u64) {
        self.budget.store(n, Ordering::SeqCst);
        self.wake();
    }

    pub fn open_reads(&self) {
        self.set_read_budget(u64::MAX);
    }

    pub fn close_reads(&self) {
        self.set_read_budget(0);
    }

    pub fn open_seeks(&self) {
        self.seeks_open.store(true, Ordering::SeqCst);
        self.wake();
    }

    pub fn close_seeks(&self) {
        self.seeks_open.store(false, Ordering::SeqCst);
    }

    pub fn open_all(&self) {
        self.open_seeks();
        self.open_reads();
    }
}

/// An in-memory source whose reads and seek completions stay `Pending` until released through
/// its [`GateCtl`]. Reads deliver at most `max_read` bytes each (short reads) and at most the
/// remaining budget. Like [`Hostile`] (and `tokio::fs::File`), `start_seek` while a seek is in
/// flight fails with `ErrorKind::Other`, and so does `poll_read`.
#[derive(Debug)]
pub struct Gated {
    data: Vec<u8>,
    pos: u64,
    max_read: usize,
    in_flight: Option<SeekFrom>,
    ctl: Arc<GateCtl>,
}

impl Gated {
    /// A source with reads and seeks open (unlimited).
    pub fn new(data: Vec<u8>, max_read: usize) -> (Self, Arc<GateCtl>) {
        let ctl = Arc::new(GateCtl {
            budget: AtomicU64::new(u64::MAX),
            seeks_open: AtomicBool::new(true),
            waker: Mutex::new(None),
            seeks: AtomicU64::new(0),
            reads: AtomicU64::new(0),
        });
        (
            Gated {
                data,
                pos: 0,
                max_read: max_read.max(1),
                in_flight: None,
                ctl: ctl.clone(),
            },
            ctl,
        )
    }
}

impl AsyncRead for Gated {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(from) = this.in_flight {
            return Poll::Ready(Err(io::Error::other(format!(
                "Gated: poll_read while a seek ({from:?}) is in flight"
            ))));
        }
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        let budget = this.ctl.budget.load(Ordering::SeqCst);
        if budget == 0 {
            *this.ctl.waker.lock().unwrap() = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let start = this.pos.min(this.data.len() as u64) as usize;
        let n = buf
            .remaining()
            .min(this.data.len() - start)
            .min(this.max_read)
            .min(budget.min(usize::MAX as u64) as usize);
        if budget != u64::MAX {
            this.ctl.budget.fetch_sub(n as u64, Ordering::SeqCst);
        }
        buf.put_slice(&this.data[start..start + n]);
        this.pos += n as u64;
        this.ctl.reads.fetch_add(1, Ordering::SeqCst);
        Poll::Ready(Ok(()))
    }
}

impl AsyncSeek for Gated {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let this = self.get_mut();
        if let Some(prev) = this.in_flight {
            return Err(io::Error::other(format!(
                "Gated: start_seek({position:?}) while another seek ({prev:?}) is in flight; \
                 call poll_complete first"
            )));
        }
        this.ctl.seeks.fetch_add(1, Ordering::SeqCst);
        this.in_flight = Some(position);
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let this = self.get_mut();
        let Some(from) = this.in_flight else {
            return Poll::Ready(Ok(this.pos));
        };
        if !this.ctl.seeks_open.load(Ordering::SeqCst) {
            *this.ctl.waker.lock().unwrap() = Some(cx.waker().clone());
            return Poll::Pending;
        }
        this.in_flight = None;
        let res = resolve_seek(from, this.pos, this.data.len() as u64);
        if let Ok(p) = res {
            this.pos = p;
        }
        Poll::Ready(res)
    }
}

// ---------------------------------------------------------------------------------------------
// Real files
// ---------------------------------------------------------------------------------------------

/// Writes `data` to a uniquely named file in `std::env::temp_dir()`, opens it and unlinks it
/// right away (the open handle keeps the data alive on Unix, so nothing is left behind even if
/// the test panics).
pub fn temp_tokio_file(data: Vec<u8>) -> tokio::fs::File {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let path = std::env::temp_dir().join(format!(
        "async-buffered-input-test-{}-{}-{}.bin",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst),
        nanos
    ));
    std::fs::write(&path, &data).expect("write temp file");
    let file = std::fs::File::open(&path).expect("open temp file");
    let _ = std::fs::remove_file(&path);
    tokio::fs::File::from_std(file)
}

/// Writes `data` to a uniquely named file in cargo's temp folder for integration tests
/// (`target/tmp`, on the build's disk: unlike a tmpfs `/tmp`, a file system with page cache reads
/// and eviction), opens it and unlinks it at once; returns the open file and the path it had.
pub fn temp_std_file(data: &[u8]) -> (std::fs::File, std::path::PathBuf) {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "async-buffered-input-test-std-{}-{}.bin",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst),
    ));
    std::fs::write(&path, data).expect("write temp file");
    let file = std::fs::File::open(&path).expect("open temp file");
    let _ = std::fs::remove_file(&path);
    (file, path)
}

// ---------------------------------------------------------------------------------------------
// Counting positional source
// ---------------------------------------------------------------------------------------------

/// Wraps a [`PositionalSource`] and counts what reaches it, the positional counterpart of
/// [`Counting`]:
///
/// - [`requests`](Self::requests): `read_at` requests, counted when the request starts (its
///   future is first polled), whatever their outcome, plus the `try_read_at` calls that read
///   something (a page cache read is a read of the file);
/// - [`immediate`](Self::immediate): of those, the `try_read_at` calls that read something;
/// - [`live`](Self::live): `read_at` requests started and neither completed nor dropped (in
///   flight);
/// - [`bytes`](Self::bytes): bytes the source returned;
/// - [`length_requests`](Self::length_requests): `len` calls.
pub struct CountingPositional<S> {
    inner: S,
    requests: AtomicU64,
    immediate: AtomicU64,
    live: AtomicU64,
    bytes: AtomicU64,
    length_requests: AtomicU64,
}

impl<S> CountingPositional<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            requests: AtomicU64::new(0),
            immediate: AtomicU64::new(0),
            live: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            length_requests: AtomicU64::new(0),
        }
    }

    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    pub fn immediate(&self) -> u64 {
        self.immediate.load(Ordering::SeqCst)
    }

    pub fn live(&self) -> u64 {
        self.live.load(Ordering::SeqCst)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::SeqCst)
    }

    pub fn length_requests(&self) -> u64 {
        self.length_requests.load(Ordering::SeqCst)
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

/// Books a request as alive until dropped (completed or abandoned).
struct LiveRequest<'a>(&'a AtomicU64);

impl<'a> LiveRequest<'a> {
    fn new(live: &'a AtomicU64) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Self(live)
    }
}

impl Drop for LiveRequest<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl<S: PositionalSource> PositionalSource for CountingPositional<S> {
    async fn read_at(&self, offset: u64, len: usize) -> io::Result<bytes::Bytes> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let _live = LiveRequest::new(&self.live);
        let read = self.inner.read_at(offset, len).await;
        if let Ok(bytes) = &read {
            self.bytes.fetch_add(bytes.len() as u64, Ordering::SeqCst);
        }
        read
    }

    async fn len(&self) -> io::Result<u64> {
        self.length_requests.fetch_add(1, Ordering::SeqCst);
        self.inner.len().await
    }

    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        let n = self.inner.try_read_at(offset, buf);
        if n > 0 {
            self.requests.fetch_add(1, Ordering::SeqCst);
            self.immediate.fetch_add(1, Ordering::SeqCst);
            self.bytes.fetch_add(n as u64, Ordering::SeqCst);
        }
        n
    }
}

impl<S> std::fmt::Debug for CountingPositional<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountingPositional")
            .field("requests", &self.requests())
            .field("immediate", &self.immediate())
            .field("live", &self.live())
            .field("bytes", &self.bytes())
            .field("length_requests", &self.length_requests())
            .finish_non_exhaustive()
    }
}

// ---------------------------------------------------------------------------------------------
// A positional source partly at hand
// ---------------------------------------------------------------------------------------------

/// A [`MemorySource`](async_buffered_input::source::MemorySource) of which only some 64-byte
/// blocks are "at hand" to `try_read_at`, like a file partly in the page cache. Which blocks are
/// is a hash of the block number and `seed` (about two thirds of them). `try_read_at` copies from
/// `offset` to the end of the run of at-hand blocks (so its answers are often short) and returns
/// 0 in a gap and at the end; `read_at` serves every byte. Counts both.
#[derive(Debug)]
pub struct PartlyAtHand {
    inner: async_buffered_input::source::MemorySource,
    seed: u64,
    pub immediate_calls: AtomicU64,
    pub immediate_bytes: AtomicU64,
    pub requests: AtomicU64,
}

impl PartlyAtHand {
    pub const BLOCK: u64 = 64;

    pub fn new(data: Vec<u8>, seed: u64) -> Self {
        Self {
            inner: async_buffered_input::source::MemorySource::new(data),
            seed,
            immediate_calls: AtomicU64::new(0),
            immediate_bytes: AtomicU64::new(0),
            requests: AtomicU64::new(0),
        }
    }

    pub fn at_hand(&self, offset: u64) -> bool {
        let block = offset / Self::BLOCK;
        let mut x = (block ^ self.seed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        x ^= x >> 29;
        x % 3 != 0
    }
}

impl async_buffered_input::source::PositionalSource for PartlyAtHand {
    fn read_at(
        &self,
        offset: u64,
        len: usize,
    ) -> impl std::future::Future<Output = io::Result<bytes::Bytes>> + Send {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.inner.read_at(offset, len)
    }

    fn len(&self) -> impl std::future::Future<Output = io::Result<u64>> + Send {
        self.inner.len()
    }

    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        self.immediate_calls.fetch_add(1, Ordering::Relaxed);
        let data = self.inner.bytes();
        let mut end = offset;
        while end < offset.saturating_add(buf.len() as u64)
            && end < data.len() as u64
            && self.at_hand(end)
        {
            end = (end / Self::BLOCK + 1) * Self::BLOCK;
        }
        let end = end
            .min(offset.saturating_add(buf.len() as u64))
            .min(data.len() as u64);
        let n = end.saturating_sub(offset) as usize;
        if n == 0 {
            return 0; // a gap, or at or past the end
        }
        buf[..n].copy_from_slice(&data[offset as usize..end as usize]);
        self.immediate_bytes.fetch_add(n as u64, Ordering::Relaxed);
        n
    }
}

/// Which reading of the `window()` contract the checks use.
///
/// API.md only says `window()` is "the file range the window holds" and `buffer()` "the unread
/// part of the window". The stricter reading, `window().start <= position() <= window().end`
/// at all times, does not hold for an input that keeps its window when the position is moved
/// outside it (so that seeking out and back costs no I/O); with that design `position()` may lie
/// outside `window()`, and `buffer()` is then empty. `true` accepts that design; `false` demands
/// the stricter invariant.
pub const POSITION_MAY_LEAVE_WINDOW: bool = true;

/// Checks an input's observable state against the file contents and the expected position:
/// `position() == pos`; if `window().start <= pos <= window().end` then
/// `buffer().len() == window().end - pos`, otherwise `buffer()` is empty (and, unless
/// [`POSITION_MAY_LEAVE_WINDOW`], that case is an error); the window is at most `capacity()`
/// long; a non-empty window lies inside the file; `buffer()` holds the file's bytes at `pos`.
#[track_caller]
pub fn check_window<F: Fetch>(input: &AsyncBufferedInput<F>, data: &[u8], pos: u64, ctx: &str) {
    assert_eq!(input.position(), pos, "position(): {ctx}");
    let w = input.window();
    let buf = input.buffer();
    let inside = w.start <= pos && pos <= w.end;
    assert!(
        inside || POSITION_MAY_LEAVE_WINDOW,
        "window() {w:?} must contain position() {pos}: {ctx}"
    );
    if inside {
        assert_eq!(
            buf.len() as u64,
            w.end - pos,
            "buffer().len() must be window().end - position() (window {w:?}): {ctx}"
        );
    } else {
        assert!(
            buf.is_empty(),
            "buffer() must be empty when position() {pos} is outside window() {w:?}, has {} \
             bytes: {ctx}",
            buf.len()
        );
    }
    assert!(
        w.end - w.start <= input.capacity() as u64,
        "window {w:?} larger than capacity {}: {ctx}",
        input.capacity()
    );
    if w.start < w.end {
        assert!(
            w.end <= data.len() as u64,
            "non-empty window {w:?} extends past the end of the file ({}): {ctx}",
            data.len()
        );
    }
    if !buf.is_empty() {
        let p = pos as usize;
        assert_bytes(
            buf,
            &data[p..p + buf.len()],
            pos,
            &format!("buffer(): {ctx}"),
        );
    }
}

/// True when `pos` lies inside (or at the end of) the input's window.
pub fn in_window<F: Fetch>(input: &AsyncBufferedInput<F>, pos: u64) -> bool {
    let w = input.window();
    w.start <= pos && pos <= w.end
}

// ---------------------------------------------------------------------------------------------
// Checked: the input next to a model
// ---------------------------------------------------------------------------------------------

/// Result of one checked operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Succeeded and matched the model.
    Ok,
    /// Failed with `UnexpectedEof`, as the model required.
    Eof,
    /// Failed with one of the tolerated (injected) error kinds; the model was not advanced.
    Injected,
    /// A seek to a negative position was rejected with `InvalidInput`, as required.
    Rejected,
    /// Failed with `InvalidData` (a malformed varint, invalid UTF-8), as the model required.
    Invalid,
}

/// Polls `future` once with a waker that does nothing, and drops it; its output if it
/// completed.
pub fn poll_once_then_drop<F: std::future::Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

/// The Lucene varint at `pos` of `data` (at most `max_len` bytes, the last carrying at most
/// `last_bits` bits), as `DataInput.readVInt`/`readVLong` decode it: its value and length, or
/// the error kind a read of it must fail with (`UnexpectedEof` if the data ends inside it,
/// `InvalidData` if it is malformed).
pub fn model_varint(
    data: &[u8],
    pos: u64,
    max_len: usize,
    last_bits: u32,
) -> Result<(u64, usize), ErrorKind> {
    let bytes = usize::try_from(pos)
        .ok()
        .and_then(|p| data.get(p..))
        .unwrap_or(&[]);
    let mut value = 0u64;
    for i in 0..max_len {
        let &b = bytes.get(i).ok_or(ErrorKind::UnexpectedEof)?;
        if i == max_len - 1 {
            if u32::from(b) >> last_bits != 0 {
                return Err(ErrorKind::InvalidData);
            }
            return Ok((value | u64::from(b) << (7 * i), max_len));
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    unreachable!("a varint of at most {max_len} bytes")
}

/// The Lucene string at `pos` of `data` (a vint byte length, then UTF-8), as
/// `DataInput.readString` decodes it: the string and its length with the prefix, or the error
/// kind a read of it must fail with.
pub fn model_string(data: &[u8], pos: u64) -> Result<(String, usize), ErrorKind> {
    let (len, prefix) = model_varint(data, pos, 5, 4)?;
    let start = pos as usize + prefix;
    let end = start as u64 + len;
    if end > data.len() as u64 {
        return Err(ErrorKind::UnexpectedEof);
    }
    let s = std::str::from_utf8(&data[start..end as usize]).map_err(|_| ErrorKind::InvalidData)?;
    Ok((s.to_owned(), prefix + len as usize))
}

/// An `AsyncBufferedInput` driven next to a model (`data` + `pos`). Every method performs the
/// operation, checks its result against the model (bytes, EOF-exactly-when-expected, error
/// messages), advances the model, and then checks `position()`, `buffer()` and `window()`.
pub struct Checked<F> {
    pub input: AsyncBufferedInput<F>,
    pub data: Vec<u8>,
    /// The model position.
    pub pos: u64,
    /// Error kinds an injecting source may produce; such errors leave the model unchanged.
    pub tolerated: Vec<ErrorKind>,
    /// How many tolerated errors were seen.
    pub injected_seen: u64,
    /// Free-form context prepended to assertion messages (e.g. capacity and step).
    pub label: String,
    /// Log of the operations so far (printed on failure).
    pub history: String,
    /// Bytes successfully handed to the caller so far (by reads that succeeded and by
    /// `consume`); must equal `stats().bytes_from_window + stats().bytes_direct`.
    pub handed: u64,
    /// When the source is wrapped in [`Counting`]: its counters, compared with `stats()`.
    pub counts: Option<Arc<Counts>>,
    /// A `SeekFrom::End(offset)` whose future was dropped before it completed, started at
    /// position `from`: the next `AsyncSeekExt::seek` completes it first if the position is
    /// still `from`, and abandons it otherwise.
    pub pending_end: Option<(i64, u64)>,
}

impl<F: Fetch> Checked<F> {
    pub fn new(input: AsyncBufferedInput<F>, data: Vec<u8>) -> Self {
        let c = Checked {
            input,
            data,
            pos: 0,
            tolerated: Vec::new(),
            injected_seen: 0,
            label: String::new(),
            history: String::new(),
            handed: 0,
            counts: None,
            pending_end: None,
        };
        c.check("construction");
        c
    }

    pub fn len(&self) -> u64 {
        self.data.len() as u64
    }

    /// Goes on with another input (a clone, a slice) over `data`, at `pos`; its stats start
    /// afresh.
    pub fn replace(&mut self, input: AsyncBufferedInput<F>, data: Vec<u8>, pos: u64) {
        self.input = input;
        self.data = data;
        self.pos = pos;
        self.handed = 0;
        self.counts = None;
        self.pending_end = None;
        self.check("replaced by a clone or a slice");
    }

    /// The model's side of an operation whose future completed outside (polled once, then
    /// dropped): `Ok(n)` handed out the `n` bytes at the position in `got`.
    pub fn completed(&mut self, result: io::Result<usize>, got: &[u8], eof: bool, ctx: &str) {
        match result {
            Ok(n) => {
                if n > 0 {
                    let p = self.pos as usize;
                    assert_bytes(&got[..n], &self.data[p..p + n], self.pos, &self.ctx(ctx));
                }
                self.pos += n as u64;
                self.handed += n as u64;
                self.check(ctx);
            }
            Err(e) => {
                self.on_error(e, eof, ctx);
            }
        }
    }

    /// Moves the model past `n` bytes handed to the caller by a read that succeeded, and checks.
    fn consumed(&mut self, n: u64, ctx: &str) -> Outcome {
        self.pos += n;
        self.handed += n;
        self.check(ctx);
        Outcome::Ok
    }

    /// Bytes between the model position and the end of the file.
    pub fn avail(&self) -> u64 {
        self.len().saturating_sub(self.pos)
    }

    fn begin(&mut self, op: std::fmt::Arguments<'_>) -> String {
        // Keep the history bounded.
        if self.history.len() > 4000 {
            let cut = self.history.len() - 2000;
            let cut = (cut..self.history.len())
                .find(|&i| self.history.is_char_boundary(i))
                .unwrap_or(0);
            self.history.drain(..cut);
        }
        let _ = write!(self.history, "\n  @{} {}", self.pos, op);
        format!("{} {} at model position {}", self.label, op, self.pos)
    }

    fn ctx(&self, what: &str) -> String {
        format!("{what}\n  recent ops:{}", self.history)
    }

    /// Checks `position()`, `window()` and `buffer()` against the model.
    #[track_caller]
    pub fn check(&self, after: &str) {
        let ctx = self.ctx(&format!("{} after {after}", self.label));
        check_window(&self.input, &self.data, self.pos, &ctx);
        let s = self.input.stats();
        assert_eq!(
            s.bytes_from_window + s.bytes_direct,
            self.handed,
            "stats {s:?}: bytes_from_window + bytes_direct must equal the bytes handed to the \
             caller ({}): {ctx}",
            self.handed
        );
        assert!(
            s.bytes_direct <= s.bytes_from_source,
            "stats {s:?}: more direct bytes than source bytes: {ctx}"
        );
        if let Some(counts) = &self.counts {
            let c = counts.snapshot();
            assert_eq!(
                (s.underlying_reads, s.underlying_seeks, s.bytes_from_source),
                (c.reads, c.seeks, c.bytes),
                "stats {s:?} disagree with what the source saw {c:?} \
                 (reads, seeks, bytes): {ctx}"
            );
        }
    }

    /// Common error handling. Returns the outcome for an error result; panics if the error is
    /// neither tolerated nor the expected EOF.
    #[track_caller]
    fn on_error(&mut self, e: io::Error, eof_expected: bool, ctx: &str) -> Outcome {
        let expected = eof_expected.then_some(ErrorKind::UnexpectedEof);
        self.on_error_of(e, expected, ctx)
    }

    /// The payload every error of the input carries, asserting that it names `pos` (where the
    /// failed operation started).
    #[track_caller]
    fn assert_names_position(&self, e: &io::Error, pos: u64, ctx: &str) {
        let payload = e
            .get_ref()
            .and_then(|i| i.downcast_ref::<InputError>())
            .unwrap_or_else(|| {
                panic!(
                    "the error {e:?} ({e}) carries no InputError: {}",
                    self.ctx(ctx)
                )
            });
        assert_eq!(
            payload.position(),
            pos,
            "the error {e} names another position than the operation's: {}",
            self.ctx(ctx)
        );
        assert_msg_mentions(e, pos, "position", &self.ctx(ctx));
    }

    /// Error handling for an operation that, by the model, fails with `expected` (`None`: must
    /// not fail, unless the error is injected). Every error names the position the operation
    /// started at, which is still the position.
    #[track_caller]
    fn on_error_of(&mut self, e: io::Error, expected: Option<ErrorKind>, ctx: &str) -> Outcome {
        self.assert_names_position(&e, self.pos, ctx);
        if self.tolerated.contains(&e.kind()) {
            self.injected_seen += 1;
            assert_eq!(
                self.input.position(),
                self.pos,
                "position() changed by a failed op: {}",
                self.ctx(ctx)
            );
            self.check(ctx);
            return Outcome::Injected;
        }
        let Some(kind) = expected else {
            panic!("unexpected error {e:?} ({e}): {}", self.ctx(ctx));
        };
        assert_eq!(
            e.kind(),
            kind,
            "the error must be {kind:?}, got {e:?}: {}",
            self.ctx(ctx)
        );
        self.check(ctx);
        match kind {
            ErrorKind::UnexpectedEof => Outcome::Eof,
            _ => Outcome::Invalid,
        }
    }

    /// `read_vint()`, against [`model_varint`].
    pub async fn read_vint(&mut self) -> Outcome {
        let ctx = self.begin(format_args!("read_vint()"));
        let res = self.input.read_vint().await;
        let expected = model_varint(&self.data, self.pos, 5, 4);
        match (res, expected) {
            (Ok(v), Ok((value, len))) => {
                assert_eq!(u64::from(v), value, "read_vint value: {}", self.ctx(&ctx));
                self.consumed(len as u64, &ctx)
            }
            (Ok(v), Err(kind)) => {
                panic!("read_vint gave {v}, the model {kind:?}: {}", self.ctx(&ctx))
            }
            (Err(e), expected) => self.on_error_of(e, expected.err(), &ctx),
        }
    }

    /// `read_string()`, against [`model_string`].
    pub async fn read_string(&mut self) -> Outcome {
        let ctx = self.begin(format_args!("read_string()"));
        let res = self.input.read_string().await;
        let expected = model_string(&self.data, self.pos);
        match (res, expected) {
            (Ok(s), Ok((value, len))) => {
                assert_eq!(s, value, "read_string value: {}", self.ctx(&ctx));
                self.consumed(len as u64, &ctx)
            }
            (Ok(s), Err(kind)) => {
                panic!(
                    "read_string gave {s:?}, the model {kind:?}: {}",
                    self.ctx(&ctx)
                )
            }
            (Err(e), expected) => self.on_error_of(e, expected.err(), &ctx),
        }
    }

    /// `read_u32_into` of `count` values: all or nothing.
    pub async fn read_u32_into(&mut self, count: usize) -> Outcome {
        let ctx = self.begin(format_args!("read_u32_into({count} values)"));
        let mut values = vec![0xA5A5_A5A5u32; count];
        let res = self.input.read_u32_into(&mut values).await;
        let eof = count > 0 && self.pos + 4 * count as u64 > self.len();
        match res {
            Ok(()) => {
                assert!(
                    !eof,
                    "read_u32_into succeeded past the end: {}",
                    self.ctx(&ctx)
                );
                let p = self.pos as usize;
                for (i, (&v, b)) in values
                    .iter()
                    .zip(self.data[p.min(self.data.len())..].chunks_exact(4))
                    .enumerate()
                {
                    let expected = u32::from_be_bytes(b.try_into().unwrap());
                    assert_eq!(v, expected, "value {i}: {}", self.ctx(&ctx));
                }
                self.consumed(4 * count as u64, &ctx)
            }
            Err(e) => self.on_error(e, eof, &ctx),
        }
    }

    /// `length()` polled once with a waker that does nothing, then dropped.
    pub fn length_polled_once(&mut self) {
        let ctx = self.begin(format_args!("length() polled once"));
        match poll_once_then_drop(self.input.length()) {
            Some(Ok(l)) => {
                assert_eq!(l, self.len(), "length(): {}", self.ctx(&ctx));
                self.check(&ctx);
            }
            Some(Err(e)) => {
                self.on_error(e, false, &ctx);
            }
            None => self.check(&format!("{ctx}, then dropped")),
        }
    }

    /// `read_bytes_owned(n)` polled once with a waker that does nothing, then dropped.
    pub fn read_bytes_owned_polled_once(&mut self, n: usize) {
        let ctx = self.begin(format_args!("read_bytes_owned({n}) polled once"));
        match poll_once_then_drop(self.input.read_bytes_owned(n)) {
            Some(res) => {
                self.owned_outcome(n, res, &ctx);
            }
            None => self.check(&format!("{ctx}, then dropped")),
        }
    }

    /// `AsyncSeekExt::seek(End(offset))` polled once with a waker that does nothing, then
    /// dropped; if it did not complete, it is pending (see [`pending_end`](Self::pending_end)).
    /// With a seek already pending, an ordinary `seek` instead (which completes that one).
    pub async fn seek_end_polled_once(&mut self, offset: i64) {
        if self.pending_end.is_some() {
            self.seek(SeekFrom::End(offset)).await;
            return;
        }
        let ctx = self.begin(format_args!("seek(End({offset})) polled once"));
        let from = self.pos;
        match poll_once_then_drop(AsyncSeekExt::seek(&mut self.input, SeekFrom::End(offset))) {
            Some(res) => {
                self.seek_outcome(SeekFrom::End(offset), res, &ctx);
            }
            None => {
                self.pending_end = Some((offset, from));
                self.check(&format!("{ctx}, then dropped"));
            }
        }
    }

    /// `read_bytes(n)`: all or nothing.
    pub async fn read_bytes(&mut self, n: usize) -> Outcome {
        let ctx = self.begin(format_args!("read_bytes({n})"));
        let mut buf = vec![0xA5u8; n];
        let res = self.input.read_bytes(&mut buf).await;
        // A zero-length read past the end is not specified: accept both Ok and EOF.
        let lenient = n == 0 && self.pos > self.len();
        let eof = n > 0 && self.pos + n as u64 > self.len();
        match res {
            Ok(()) => {
                assert!(
                    !eof,
                    "read_bytes succeeded past the end: {}",
                    self.ctx(&ctx)
                );
                if n > 0 {
                    let p = self.pos as usize;
                    assert_bytes(&buf, &self.data[p..p + n], self.pos, &self.ctx(&ctx));
                }
                self.pos += n as u64;
                self.handed += n as u64;
                self.check(&ctx);
                Outcome::Ok
            }
            Err(e) => self.on_error(e, eof || lenient, &ctx),
        }
    }

    /// `read_byte()`.
    pub async fn read_byte(&mut self) -> Outcome {
        let ctx = self.begin(format_args!("read_byte()"));
        let res = self.input.read_byte().await;
        let eof = self.pos >= self.len();
        match res {
            Ok(b) => {
                assert!(!eof, "read_byte succeeded past the end: {}", self.ctx(&ctx));
                assert_eq!(
                    b,
                    self.data[self.pos as usize],
                    "read_byte value: {}",
                    self.ctx(&ctx)
                );
                self.pos += 1;
                self.handed += 1;
                self.check(&ctx);
                Outcome::Ok
            }
            Err(e) => self.on_error(e, eof, &ctx),
        }
    }

    /// `read_bytes_owned(n)`.
    pub async fn read_bytes_owned(&mut self, n: usize) -> Outcome {
        let ctx = self.begin(format_args!("read_bytes_owned({n})"));
        let res = self.input.read_bytes_owned(n).await;
        self.owned_outcome(n, res, &ctx)
    }

    /// The model's side of `read_bytes_owned(n)`, which returned `res`.
    #[track_caller]
    fn owned_outcome(&mut self, n: usize, res: io::Result<bytes::Bytes>, ctx: &str) -> Outcome {
        let lenient = n == 0 && self.pos > self.len();
        let eof = n > 0 && self.pos + n as u64 > self.len();
        match res {
            Ok(bytes) => {
                assert!(
                    !eof,
                    "read_bytes_owned succeeded past the end: {}",
                    self.ctx(ctx)
                );
                assert_eq!(bytes.len(), n, "read_bytes_owned length: {}", self.ctx(ctx));
                if n > 0 {
                    let p = self.pos as usize;
                    assert_bytes(&bytes, &self.data[p..p + n], self.pos, &self.ctx(ctx));
                }
                self.consumed(n as u64, ctx)
            }
            Err(e) => self.on_error(e, eof || lenient, ctx),
        }
    }

    /// `seek_to(p)`: lazy, never fails.
    pub fn seek_to(&mut self, p: u64) {
        let ctx = self.begin(format_args!("seek_to({p})"));
        self.input.seek_to(p);
        self.pos = p;
        self.pending_end = None;
        self.check(&ctx);
    }

    /// `skip_bytes(n)` (no overflow expected).
    pub fn skip_bytes(&mut self, n: u64) {
        let ctx = self.begin(format_args!("skip_bytes({n})"));
        let res = self.input.skip_bytes(n);
        assert!(
            res.is_ok(),
            "skip_bytes failed: {res:?}: {}",
            self.ctx(&ctx)
        );
        self.pos += n;
        self.pending_end = None;
        self.check(&ctx);
    }

    /// `length()`.
    pub async fn length(&mut self) -> Outcome {
        let ctx = self.begin(format_args!("length()"));
        match self.input.length().await {
            Ok(l) => {
                assert_eq!(l, self.len(), "length(): {}", self.ctx(&ctx));
                self.check(&ctx);
                Outcome::Ok
            }
            Err(e) => self.on_error(e, false, &ctx),
        }
    }

    /// Tokio's `AsyncSeekExt::seek`. Seeking to a negative position must fail with
    /// `InvalidInput` and leave the position unchanged; seeking past the end is allowed.
    pub async fn seek(&mut self, from: SeekFrom) -> Outcome {
        let ctx = self.begin(format_args!("AsyncSeekExt::seek({from:?})"));
        let res = AsyncSeekExt::seek(&mut self.input, from).await;
        self.seek_outcome(from, res, &ctx)
    }

    /// The model's side of a seek to `from` that returned `res`: a pending `End` seek (see
    /// [`pending_end`](Self::pending_end)) is completed first if the position has not moved
    /// since it started; if that one fails, the new seek is not started.
    #[track_caller]
    fn seek_outcome(&mut self, from: SeekFrom, res: io::Result<u64>, ctx: &str) -> Outcome {
        let mut start = self.pos as i128;
        let mut pending_fails = false;
        if let Some((offset, started)) = self.pending_end.take() {
            if started == self.pos {
                let target = self.len() as i128 + offset as i128;
                if target < 0 {
                    pending_fails = true;
                } else {
                    start = target;
                }
            }
        }
        let target: i128 = match from {
            _ if pending_fails => -1,
            SeekFrom::Start(x) => x as i128,
            SeekFrom::Current(d) => start + d as i128,
            SeekFrom::End(d) => self.len() as i128 + d as i128,
        };
        match res {
            Ok(p) => {
                assert!(
                    target >= 0,
                    "seek to a negative position succeeded: {}",
                    self.ctx(ctx)
                );
                assert_eq!(p as i128, target, "seek result: {}", self.ctx(ctx));
                self.pos = p;
                self.check(ctx);
                Outcome::Ok
            }
            Err(e) => {
                if self.tolerated.contains(&e.kind()) {
                    return self.on_error(e, false, ctx);
                }
                assert!(
                    target < 0,
                    "seek failed unexpectedly: {e:?}: {}",
                    self.ctx(ctx)
                );
                assert_eq!(
                    e.kind(),
                    ErrorKind::InvalidInput,
                    "negative seek error kind: {}",
                    self.ctx(ctx)
                );
                // The pending seek, if it succeeded, moved the position before the new one
                // failed.
                self.pos = start as u64;
                self.assert_names_position(&e, self.pos, ctx);
                self.check(ctx);
                Outcome::Rejected
            }
        }
    }

    /// Tokio's `AsyncReadExt::read` into a buffer of `n` bytes: must return between 1 and
    /// `min(n, available)` bytes when both are non-zero, and `Ok(0)` at or past the end.
    pub async fn read_partial(&mut self, n: usize) -> Outcome {
        let ctx = self.begin(format_args!("AsyncReadExt::read(buf of {n})"));
        let mut buf = vec![0xA5u8; n];
        match AsyncReadExt::read(&mut self.input, &mut buf).await {
            Ok(k) => {
                let avail = self.avail();
                assert!(k <= n, "read returned {k} > {n}: {}", self.ctx(&ctx));
                assert!(
                    k as u64 <= avail,
                    "read returned {k} bytes but only {avail} remain: {}",
                    self.ctx(&ctx)
                );
                if n > 0 && avail > 0 {
                    assert!(k > 0, "read returned 0 before the end: {}", self.ctx(&ctx));
                }
                let p = self.pos as usize;
                if k > 0 {
                    assert_bytes(&buf[..k], &self.data[p..p + k], self.pos, &self.ctx(&ctx));
                }
                self.pos += k as u64;
                self.handed += k as u64;
                self.check(&ctx);
                Outcome::Ok
            }
            Err(e) => self.on_error(e, false, &ctx),
        }
    }

    /// Tokio's `AsyncBufReadExt::fill_buf` followed by `consume(amount)` where
    /// `amount = returned_len * permille / 1000`. `fill_buf` must return a non-empty prefix of the
    /// remaining file (equal to `buffer()` afterwards), or an empty slice at/past the end.
    pub async fn fill_buf_consume(&mut self, permille: u64) -> Outcome {
        let ctx = self.begin(format_args!("fill_buf()+consume({permille}‰)"));
        let got = match self.input.fill_buf().await {
            Ok(b) => b.to_vec(),
            Err(e) => return self.on_error(e, false, &ctx),
        };
        let avail = self.avail();
        if avail == 0 {
            assert!(
                got.is_empty(),
                "fill_buf returned {} bytes at/past the end: {}",
                got.len(),
                self.ctx(&ctx)
            );
        } else {
            assert!(
                !got.is_empty(),
                "fill_buf returned nothing before the end: {}",
                self.ctx(&ctx)
            );
            assert!(
                got.len() as u64 <= avail,
                "fill_buf too long: {}",
                self.ctx(&ctx)
            );
            assert!(
                got.len() <= self.input.capacity(),
                "fill_buf returned more than capacity: {}",
                self.ctx(&ctx)
            );
            let p = self.pos as usize;
            assert_bytes(
                &got,
                &self.data[p..p + got.len()],
                self.pos,
                &self.ctx(&ctx),
            );
            assert_bytes(
                self.input.buffer(),
                &got,
                self.pos,
                &self.ctx(&format!("buffer() right after {ctx}")),
            );
        }
        self.check(&ctx);
        let amount = (got.len() as u64 * permille.min(1000) / 1000) as usize;
        self.input.consume(amount);
        self.pos += amount as u64;
        self.handed += amount as u64;
        self.check(&format!("{ctx}: consume({amount})"));
        Outcome::Ok
    }
}

// ---------------------------------------------------------------------------------------------
// Conformance
// ---------------------------------------------------------------------------------------------

/// Window capacities every source is checked with.
pub const CONFORMANCE_CAPACITIES: [usize; 6] = [1, 7, 8, 64, 1024, 8192];

/// Synthetic file length used for `cap`: a few windows plus an odd tail; 24 699 bytes for
/// capacities 64 and 1024, 98 427 for 8192, small for tiny capacities to keep runtime sane.
pub fn conformance_len(cap: usize) -> usize {
    (12 * cap).max((400 * cap).min(3 * 8192)) + 123
}

/// Request sizes around and across window boundaries, from 1 up to 10 × capacity, in a
/// deterministic mixed order.
pub fn request_sizes(cap: usize) -> Vec<usize> {
    let c = cap;
    let raw = [
        1,
        c.saturating_sub(1),
        c,
        c + 1,
        3,
        2 * c - 1,
        2 * c,
        2 * c + 1,
        c / 2 + 1,
        13,
        3 * c + 5,
        5 * c - 1,
        2,
        7 * c + 3,
        10 * c,
        4 * c + 1,
        c / 3 + 2,
        9 * c,
        6 * c + 7,
    ];
    let mut out = Vec::new();
    for n in raw {
        if n > 0 && n <= 10 * c + 7 && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// What the conformance sweep does to an input behind its back, per family.
pub trait Disturb: Fetch + Sized {
    /// For a stream: moves its cursor to the end through `get_mut()` (uncounted); for a
    /// positional source: drops the read-ahead chunks and requests the fetcher holds.
    fn disturb(input: &mut AsyncBufferedInput<Self>) -> impl std::future::Future<Output = ()>;
}

impl<R: AsyncRead + AsyncSeek + Unpin> Disturb for StreamFetch<Counting<R>> {
    async fn disturb(input: &mut AsyncBufferedInput<Self>) {
        AsyncSeekExt::seek(input.get_mut().get_mut(), SeekFrom::End(0))
            .await
            .expect("seek the inner source");
    }
}

impl<S: PositionalSource> Disturb for PositionalFetch<S> {
    async fn disturb(input: &mut AsyncBufferedInput<Self>) {
        let read_ahead = input.fetch().read_ahead();
        input.fetch_mut().set_read_ahead(read_ahead);
    }
}

/// The sweep over a stream made by `make` (positioned anywhere: the input seeks to 0 first),
/// wrapped in [`Counting`] so that `stats()` is checked against what the stream saw.
pub async fn stream_conformance<R, M>(make: &M, cap: usize)
where
    M: Fn(Vec<u8>) -> R,
    R: AsyncRead + AsyncSeek + Unpin,
{
    let data = pattern_vec(conformance_len(cap));
    let (source, counts) = Counting::new(make(data.clone()));
    let input = AsyncBufferedInput::with_capacity(cap, source);
    conformance_input(input, data, Some(counts)).await;
}

/// The sweep over a positional fetcher made by `make` over exactly the given bytes.
pub async fn positional_conformance<S, M>(make: &M, cap: usize)
where
    M: Fn(Vec<u8>) -> PositionalFetch<S>,
    S: PositionalSource,
{
    let data = pattern_vec(conformance_len(cap));
    let input = AsyncBufferedInput::with_capacity(cap, make(data.clone()));
    conformance_input(input, data, None).await;
}

/// The sweep over a slice: `make` gets the data with other bytes before and after it, and the
/// sweep runs on the slice of the data, taken from a parent that has read around it first; a
/// slice of a slice, too. The parent's position and bytes stay its own.
pub async fn slice_conformance<S, M>(make: &M, cap: usize)
where
    M: Fn(Vec<u8>) -> PositionalFetch<S>,
    S: PositionalSource,
{
    const BEFORE: usize = 37;
    const AFTER: usize = 53;
    let data = pattern_vec(conformance_len(cap));
    let mut padded: Vec<u8> = (0..BEFORE as u64).map(|i| pattern(i + 1_000_000)).collect();
    padded.extend_from_slice(&data);
    padded.extend((0..AFTER as u64).map(|i| pattern(i + 2_000_000)));
    let mut parent = AsyncBufferedInput::with_capacity(cap, make(padded.clone()));
    let mut head = vec![0u8; BEFORE + 3];
    parent.read_bytes(&mut head).await.expect("parent read");
    assert_bytes(&head, &padded[..BEFORE + 3], 0, "parent before slicing");

    // A slice of a slice: the outer one keeps a byte of padding on each side.
    let outer = parent
        .slice(BEFORE as u64 - 1, data.len() as u64 + 2)
        .await
        .expect("outer slice");
    assert_eq!(outer.known_length(), Some(data.len() as u64 + 2));
    let slice = outer
        .slice(1, data.len() as u64)
        .await
        .expect("inner slice");
    let Err(e) = outer.slice(2, data.len() as u64 + 1).await else {
        panic!("a slice past its parent's end");
    };
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");

    conformance_input(slice, data, None).await;
    assert_eq!(
        parent.position(),
        BEFORE as u64 + 3,
        "the parent did not move"
    );
    let mut rest = vec![0u8; padded.len() - BEFORE - 3];
    parent.read_bytes(&mut rest).await.expect("parent read");
    assert_bytes(
        &rest,
        &padded[BEFORE + 3..],
        BEFORE as u64 + 3,
        "parent after",
    );
}

/// The sweep over a clone, made from a parent that has read part of the data and then went
/// back to 0. The parent's position and bytes stay its own.
pub async fn clone_conformance<S, M>(make: &M, cap: usize)
where
    M: Fn(Vec<u8>) -> PositionalFetch<S>,
    S: PositionalSource,
{
    let data = pattern_vec(conformance_len(cap));
    let mut parent = AsyncBufferedInput::with_capacity(cap, make(data.clone()));
    let mut head = vec![0u8; 2 * cap + 1];
    parent.read_bytes(&mut head).await.expect("parent read");
    parent.seek_to(0);
    let clone = parent.clone();
    assert_eq!(clone.capacity(), cap);
    conformance_input(clone, data.clone(), None).await;
    assert_eq!(parent.position(), 0, "the parent did not move");
    assert_eq!(parent.read_byte().await.expect("parent read"), data[0]);
}

/// The conformance sweep: every kind of read, seek and past-the-end request, checked against a
/// model of `data` after each step. `input` holds exactly `data` and is at position 0;
/// `counts`, if given, are the counts of the stream under it.
pub async fn conformance_input<F: Disturb>(
    input: AsyncBufferedInput<F>,
    data: Vec<u8>,
    counts: Option<Arc<Counts>>,
) {
    let cap = input.capacity();
    let len = data.len();
    assert_eq!(input.position(), 0, "fresh input position");
    let mut t = Checked::new(input, data);
    t.counts = counts;
    let len = len as u64;
    let sizes = request_sizes(cap);
    let ucap = cap as u64;

    // Phase A: a forward sweep with every request size, interleaved with other operations.
    t.label = format!("[cap {cap}, len {len}, phase A]");
    let mut step = 0usize;
    let mut eof_probes = 0usize;
    while t.pos < len {
        let n = sizes[step % sizes.len()];
        match step % 8 {
            // (The loop condition guarantees `t.pos < len` here.)
            0 => {
                assert_eq!(t.read_byte().await, Outcome::Ok);
            }
            1 => {
                // Backward inside the window: must not touch the source, then re-read the gap.
                let w = t.input.window();
                if w.start < t.pos && t.pos <= w.end {
                    let back_to = w.start + (t.pos - w.start) / 2;
                    let gap = (t.pos - back_to) as usize;
                    let before = t.input.stats();
                    t.seek_to(back_to);
                    assert_eq!(t.read_bytes(gap).await, Outcome::Ok);
                    let after = t.input.stats();
                    assert_eq!(
                        (after.underlying_reads, after.underlying_seeks),
                        (before.underlying_reads, before.underlying_seeks),
                        "{}: re-reading {gap} bytes inside the window after a backward seek_to \
                         must not touch the source",
                        t.label
                    );
                }
            }
            2 => {
                let k = ucap / 2 + 3;
                if t.pos + k <= len {
                    t.skip_bytes(k);
                }
            }
            3 => {
                let m = sizes[(step * 3 + 1) % sizes.len()];
                if t.pos + m as u64 <= len {
                    assert_eq!(t.read_bytes_owned(m).await, Outcome::Ok);
                }
            }
            4 => {
                // Forward, outside the window.
                let target = t.input.window().end.max(t.pos) + ucap + 17;
                if target <= len {
                    t.seek_to(target);
                }
            }
            5 => {
                // Back to the start, read a window and a bit, come back.
                let here = t.pos;
                t.seek_to(0);
                assert_eq!(t.read_bytes((cap + 1).min(len as usize)).await, Outcome::Ok);
                t.seek_to(here);
            }
            6 => {
                assert_eq!(t.length().await, Outcome::Ok);
            }
            _ => {}
        }
        if t.pos >= len {
            break;
        }
        if t.pos + n as u64 > len {
            // Does not fit: must fail with EOF and change nothing; then go on with other sizes.
            assert_eq!(t.read_bytes(n).await, Outcome::Eof);
            eof_probes += 1;
            if eof_probes > 2 * sizes.len() {
                break;
            }
        } else {
            assert_eq!(t.read_bytes(n).await, Outcome::Ok);
        }
        step += 1;
    }
    let rest = (len - t.pos.min(len)) as usize;
    assert_eq!(t.read_bytes(rest).await, Outcome::Ok);
    assert_eq!(t.pos, len);
    assert_eq!(t.read_byte().await, Outcome::Eof);

    // Phase B: deterministic pseudo-random mix of positions, sizes and operations.
    t.label = format!("[cap {cap}, len {len}, phase B]");
    let mut rng = Rng::new(0xC0FF_EE00 ^ cap as u64);
    for _ in 0..150 {
        let size = if rng.below(3) == 0 {
            rng.below(2 * ucap + 3) as usize
        } else {
            sizes[rng.below(sizes.len() as u64) as usize]
        };
        match rng.below(9) {
            0 => {
                t.seek_to(rng.below(len + 1));
                t.read_bytes(size).await;
            }
            1 => {
                t.read_byte().await;
            }
            2 => {
                t.read_bytes_owned(size).await;
            }
            3 => t.skip_bytes(rng.below(2 * ucap + 1)),
            4 => {
                let w = t.input.window();
                if w.start < w.end && in_window(&t.input, t.pos) {
                    t.seek_to(w.start + rng.below(t.pos - w.start + 1));
                } else {
                    t.seek_to(rng.below(len));
                }
                t.read_bytes(size.min(cap)).await;
            }
            5 => t.seek_to(t.pos.min(len) + rng.below(3 * ucap)),
            6 => {
                t.read_bytes(size).await;
            }
            7 => {
                t.length().await;
            }
            _ => {
                t.seek_to(rng.below(len + 1));
            }
        }
    }

    // Phase C: reading past the end, then still usable.
    t.label = format!("[cap {cap}, len {len}, phase C]");
    let tail = 97u64;
    for request in [tail + 1, (tail + 1).max(ucap + 5), 10 * ucap + 200] {
        let p = len - tail;
        t.seek_to(p);
        let ctx = format!(
            "{} read_bytes({request}) at {p} with {tail} available",
            t.label
        );
        let mut buf = vec![0u8; request as usize];
        let e = t
            .input
            .read_bytes(&mut buf)
            .await
            .expect_err(&format!("{ctx}: must fail"));
        assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{ctx}: {e:?}");
        assert_msg_mentions(&e, p, "position", &ctx);
        assert_msg_mentions(&e, request, "requested length", &ctx);
        assert_msg_mentions(&e, tail, "available length", &ctx);
        t.check(&ctx);
        // Still usable: the bytes that do exist are there.
        assert_eq!(t.read_bytes(tail as usize).await, Outcome::Ok);
        assert_eq!(t.read_byte().await, Outcome::Eof);
        assert_eq!(t.read_bytes_owned(1).await, Outcome::Eof);
        assert_eq!(t.read_bytes(1).await, Outcome::Eof);
    }
    // The whole file plus one byte, from the start.
    t.seek_to(0);
    assert_eq!(t.read_bytes_owned(len as usize + 1).await, Outcome::Eof);
    assert_eq!(t.read_bytes(len as usize + 1).await, Outcome::Eof);
    // Past the end: lazy seek, failure at the next read, position unchanged.
    t.seek_to(len + 10);
    assert_eq!(t.read_byte().await, Outcome::Eof);
    assert_eq!(t.read_bytes(3).await, Outcome::Eof);
    assert_eq!(t.read_bytes(cap + 3).await, Outcome::Eof);
    // A seek back and a read work.
    t.seek_to(1);
    assert_eq!(t.read_byte().await, Outcome::Ok);
    assert_eq!(t.read_bytes_owned(len as usize - 3).await, Outcome::Ok);
    assert_eq!(t.read_byte().await, Outcome::Ok);
    assert_eq!(t.read_byte().await, Outcome::Eof);

    // Phase D: what the family allows behind the input's back (a stream's cursor moved through
    // get_mut(), a positional source's read-ahead dropped).
    t.label = format!("[cap {cap}, len {len}, phase D]");
    t.seek_to(len / 3);
    assert_eq!(t.read_bytes(1).await, Outcome::Ok);
    F::disturb(&mut t.input).await;
    t.check("disturbed");
    let n = (2 * cap + 5).min((len - t.pos) as usize);
    assert_eq!(t.read_bytes(n).await, Outcome::Ok);
    t.seek_to(5);
    assert_eq!(
        t.read_bytes((cap + 3).min(len as usize - 5)).await,
        Outcome::Ok
    );

    // Finally the whole file in one owned read.
    t.seek_to(0);
    assert_eq!(t.read_bytes_owned(len as usize).await, Outcome::Ok);
}

/// Generates one `#[tokio::test]` per capacity in [`CONFORMANCE_CAPACITIES`] inside a module
/// named `$name`, running the sweep of one family: `stream` (`$make` builds an
/// `AsyncRead + AsyncSeek` over the given bytes), `positional`, `slice` or `clone` (`$make`
/// builds a `PositionalFetch`). `$make` is evaluated inside the test (so it may use the
/// runtime). Example:
///
/// ```ignore
/// conformance_tests!(stream cursor, |data: Vec<u8>| std::io::Cursor::new(data));
/// conformance_tests!(slice memory, |data: Vec<u8>| PositionalFetch::new(MemorySource::new(data)));
/// ```
#[allow(unused_macros)]
macro_rules! conformance_tests {
    (@run stream, $make:expr, $cap:expr) => {
        $crate::common::stream_conformance(&$make, $cap).await
    };
    (@run positional, $make:expr, $cap:expr) => {
        $crate::common::positional_conformance(&$make, $cap).await
    };
    (@run slice, $make:expr, $cap:expr) => {
        $crate::common::slice_conformance(&$make, $cap).await
    };
    (@run clone, $make:expr, $cap:expr) => {
        $crate::common::clone_conformance(&$make, $cap).await
    };
    ($family:ident $name:ident, $make:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn run(cap: usize) {
                let make = $make;
                conformance_tests!(@run $family, make, cap);
            }

            #[tokio::test]
            async fn capacity_1() {
                run(1).await
            }

            #[tokio::test]
            async fn capacity_7() {
                run(7).await
            }

            #[tokio::test]
            async fn capacity_8() {
                run(8).await
            }

            #[tokio::test]
            async fn capacity_64() {
                run(64).await
            }

            #[tokio::test]
            async fn capacity_1024() {
                run(1024).await
            }

            #[tokio::test]
            async fn capacity_8192() {
                run(8192).await
            }
        }
    };
}

// ---------------------------------------------------------------------------------------------
// A positional source failing every n-th request
// ---------------------------------------------------------------------------------------------

/// An in-memory positional source whose every `every`-th request (`read_at`, counted from 1 as
/// they start) fails with `kind`; nothing is at hand (`try_read_at` reads nothing), so every
/// fetch is a request. `every == 0` never fails. Counts the requests and the failures.
#[derive(Debug)]
pub struct FailEvery {
    data: bytes::Bytes,
    every: u64,
    kind: ErrorKind,
    requests: AtomicU64,
    failures: AtomicU64,
}

impl FailEvery {
    pub fn new(data: Vec<u8>, every: u64, kind: ErrorKind) -> Self {
        Self {
            data: data.into(),
            every,
            kind,
            requests: AtomicU64::new(0),
            failures: AtomicU64::new(0),
        }
    }

    /// Requests started so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// Requests failed so far.
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::SeqCst)
    }
}

impl PositionalSource for FailEvery {
    fn read_at(
        &self,
        offset: u64,
        len: usize,
    ) -> impl std::future::Future<Output = io::Result<bytes::Bytes>> + Send {
        let n = self.requests.fetch_add(1, Ordering::SeqCst) + 1;
        let answer = if self.every > 0 && n % self.every == 0 {
            self.failures.fetch_add(1, Ordering::SeqCst);
            Err(io::Error::new(
                self.kind,
                format!(
                    "request {n} (at {offset}) fails: every {}th does",
                    self.every
                ),
            ))
        } else {
            let size = self.data.len() as u64;
            let start = offset.min(size) as usize;
            let end = offset.saturating_add(len as u64).min(size) as usize;
            Ok(self.data.slice(start..end))
        };
        std::future::ready(answer)
    }

    fn len(&self) -> impl std::future::Future<Output = io::Result<u64>> + Send {
        std::future::ready(Ok(self.data.len() as u64))
    }
}
