//! The harness: runs a case's operations on real inputs next to a model of each (the data, a
//! position, the bytes handed out, the checksum's start, an `End` seek left pending), and
//! checks after every operation:
//!
//! - values equal the [reference](abi_testkit::model::read)'s; an error has the reference's kind
//!   (`UnexpectedEof`, `InvalidData`, `InvalidInput`) or is an injected one, and carries an
//!   `InputError` naming the operation and the position the value started at;
//! - a failed or dropped operation consumed nothing: `position()` is where it started;
//! - for every input (the current one and its clones and slices): `position()`, `buffer()` (the
//!   data's bytes at the position), `window()` (at most the capacity, inside the data, consistent
//!   with `buffer()`), `known_length()`, `checksum_start()`, and `stats()`:
//!   `bytes_from_window + bytes_direct` is the bytes handed out, and for a stream the reads,
//!   seeks and bytes the stream itself counted.

use std::fmt::Debug;
use std::future::Future;
use std::io::{self, ErrorKind, SeekFrom};
use std::sync::atomic::Ordering;

use async_buffered_input::{AsyncBufferedInput, InputError, Stats, WindowView};
use async_buffered_input::{Fetch, PositionalFetch, ReadAhead, StreamFetch};
use bytes::{Buf, Bytes};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt};

use crate::case::{Case, IntoKind, Op, ReadKind, SeekSpec, Source, Target, ViewOp, MAX_ALLOC};
use crate::drive::{block_on, drive};
use crate::sources::{HostileSource, HostileStream, Injected, INJECTED_KINDS};
use abi_testkit::model::{self as reference, Decoded, Fail, Val};

/// The most inputs (the first, its clones and slices) a case keeps.
const MAX_INPUTS: usize = 4;

/// Runs a case: builds its input, runs its operations with every check, then reads each input
/// whole from 0.
pub fn run_case(case: &Case) {
    let data = Bytes::from(case.data());
    let injected = Injected::default();
    block_on(async {
        match case.source {
            Source::Stream => {
                let stream =
                    HostileStream::new(data.clone(), case.faults.clone(), injected.clone());
                let input = AsyncBufferedInput::with_capacity(case.capacity, stream);
                Harness::new(input, data, injected)
                    .retrying(case.faults.retry)
                    .run(&case.ops)
                    .await;
            }
            Source::Positional | Source::ReadAhead { .. } => {
                let source =
                    HostileSource::new(data.clone(), case.faults.clone(), injected.clone());
                let mut fetch = PositionalFetch::new(source);
                if let Source::ReadAhead { chunk, depth } = case.source {
                    fetch = fetch.with_read_ahead(ReadAhead::new(chunk, depth));
                }
                let input = AsyncBufferedInput::with_capacity(case.capacity, fetch);
                Harness::new(input, data, injected)
                    .retrying(case.faults.retry)
                    .run(&case.ops)
                    .await;
            }
        }
    });
}

/// What differs between the families of inputs.
pub trait Family: Fetch + Sized + 'static {
    /// Something done behind the input's back.
    fn disturb(input: &mut AsyncBufferedInput<Self>, arg: u16);

    /// `clone()`, where the family has it.
    fn clone_input(input: &AsyncBufferedInput<Self>) -> Option<AsyncBufferedInput<Self>>;

    /// `slice(offset, len)`, where the family has it.
    fn slice(
        input: &AsyncBufferedInput<Self>,
        offset: u64,
        len: u64,
    ) -> Option<impl Future<Output = io::Result<AsyncBufferedInput<Self>>> + '_>;

    /// Checks `stats` against what the source itself saw, where it can.
    fn check_source(input: &AsyncBufferedInput<Self>, stats: &Stats) -> Result<(), String>;
}

impl Family for StreamFetch<HostileStream> {
    /// Moves the stream's cursor through `get_mut()`.
    fn disturb(input: &mut AsyncBufferedInput<Self>, arg: u16) {
        input.get_mut().jump(u64::from(arg));
    }

    fn clone_input(_: &AsyncBufferedInput<Self>) -> Option<AsyncBufferedInput<Self>> {
        None
    }

    fn slice(
        _: &AsyncBufferedInput<Self>,
        _: u64,
        _: u64,
    ) -> Option<impl Future<Output = io::Result<AsyncBufferedInput<Self>>> + '_> {
        None::<std::future::Ready<_>>
    }

    fn check_source(input: &AsyncBufferedInput<Self>, stats: &Stats) -> Result<(), String> {
        let stream = input.get_ref();
        let seen = (stream.ready_reads, stream.seeks, stream.bytes);
        let counted = (
            stats.underlying_reads,
            stats.underlying_seeks,
            stats.bytes_from_source,
        );
        if seen != counted {
            return Err(format!(
                "stats {stats:?}: (underlying_reads, underlying_seeks, bytes_from_source) = \
                 {counted:?}, the stream saw {seen:?}"
            ));
        }
        Ok(())
    }
}

impl Family for PositionalFetch<HostileSource> {
    /// Keeps, turns off or changes the read-ahead through `fetch_mut()` (which discards what
    /// it holds).
    fn disturb(input: &mut AsyncBufferedInput<Self>, arg: u16) {
        let read_ahead = match arg % 3 {
            0 => input.fetch().read_ahead(),
            1 => None,
            _ => Some(ReadAhead::new(
                1 + arg as usize % 97,
                1 + (arg as usize / 97) % 4,
            )),
        };
        input.fetch_mut().set_read_ahead(read_ahead);
    }

    fn clone_input(input: &AsyncBufferedInput<Self>) -> Option<AsyncBufferedInput<Self>> {
        Some(input.clone())
    }

    fn slice(
        input: &AsyncBufferedInput<Self>,
        offset: u64,
        len: u64,
    ) -> Option<impl Future<Output = io::Result<AsyncBufferedInput<Self>>> + '_> {
        Some(input.slice(offset, len))
    }

    fn check_source(_: &AsyncBufferedInput<Self>, _: &Stats) -> Result<(), String> {
        Ok(())
    }
}

/// The checksum an input computes, in the model.
#[derive(Clone, Copy, Debug)]
struct ChecksumModel {
    start: u64,
    /// A seek went back since it started.
    void: bool,
}

/// One input and its model.
struct Slot<F> {
    input: AsyncBufferedInput<F>,
    /// The bytes the input reads (for a slice, the slice's).
    data: Bytes,
    pos: u64,
    /// Bytes handed to the caller since the input was made.
    handed: u64,
    checksum: Option<ChecksumModel>,
    /// An `End` seek whose future was dropped before it completed: its offset and the position
    /// it started at. The next `AsyncSeek` completes it if the position is still there.
    end_seek: Option<(i64, u64)>,
}

impl<F: Family> Slot<F> {
    fn new(input: AsyncBufferedInput<F>, data: Bytes, pos: u64) -> Self {
        Self {
            input,
            data,
            pos,
            handed: 0,
            checksum: None,
            end_seek: None,
        }
    }

    fn len(&self) -> u64 {
        self.data.len() as u64
    }

    /// The model of a move of the position by a seek: one back voids the checksum.
    fn move_to(&mut self, to: u64) {
        if let Some(checksum) = &mut self.checksum {
            if to < self.pos {
                checksum.void = true;
            }
        }
        self.pos = to;
    }

    /// The model of `seek_to` (and of `skip_bytes`).
    fn seek_to(&mut self, to: u64) {
        self.move_to(to);
        self.end_seek = None;
    }

    fn target(&self, target: Target) -> u64 {
        match target {
            Target::Abs(n) => n,
            Target::Rel(d) => self.pos.saturating_add_signed(d),
            Target::FromEnd(d) => self.len().saturating_add_signed(d),
            Target::InWindow(permille) => {
                let w = self.input.window();
                w.start + (w.end - w.start) * permille / 1000
            }
            Target::Huge(n) => u64::MAX - n,
        }
    }
}

/// The inputs of a case, their models, and what the source injected.
pub struct Harness<F> {
    slots: Vec<Slot<F>>,
    cur: usize,
    injected: Injected,
    injected_seen: u64,
    /// Set by `Op::Cancel` for the next asynchronous operation.
    cancel: Option<u8>,
    /// The operation running, for failure messages.
    step: String,
    /// Reads that fail with an injected error are retried until they complete (`Faults::retry`).
    retry: bool,
}

/// The largest read the retry mode retries: a retry copies what the failed attempts kept, so a
/// read of `n` bytes retried once per byte costs `n * n` bytes of copying (and, with debug
/// assertions, as many steps checking the kept parts). At 64 KiB such cases took 6 s each
/// and slowed the whole run; longer retried reads are `tests/it/input/progress.rs`'s.
const MAX_RETRIED: u64 = 1 << 14;

/// The most attempts a read that needs `needed` bytes from the position may take, through a
/// window of `capacity` bytes, when each is retried after an injected error.
///
/// Why: a failed attempt loses nothing it fetched (the progress guarantee), and the first
/// request or read call after a failed one succeeds (`fail_every` fails one call in at least
/// two; `fail_after`, a failed seek and a failed length request fire once each), so at least
/// every other attempt fetches a byte the read still lacks. The bytes a read may have to
/// fetch are its own, the window's alignment before it and the fill after it (a capacity
/// each); a few more attempts cover the faults that fire once.
pub fn attempt_bound(needed: u64, capacity: usize) -> u64 {
    8 + 2 * (needed + 2 * capacity as u64 + 64)
}

/// The `InputError` an error carries.
fn payload(e: &io::Error) -> Option<&InputError> {
    e.get_ref()?.downcast_ref::<InputError>()
}

fn fail_kind(fail: Fail) -> ErrorKind {
    match fail {
        Fail::Eof => ErrorKind::UnexpectedEof,
        Fail::Invalid => ErrorKind::InvalidData,
    }
}

fn read_name(kind: ReadKind) -> &'static str {
    match kind {
        ReadKind::Byte => "read_byte",
        ReadKind::I8 => "read_i8",
        ReadKind::U16 => "read_u16",
        ReadKind::I16 => "read_i16",
        ReadKind::U32 => "read_u32",
        ReadKind::I32 => "read_i32",
        ReadKind::U64 => "read_u64",
        ReadKind::I64 => "read_i64",
        ReadKind::U16Le => "read_u16_le",
        ReadKind::I16Le => "read_i16_le",
        ReadKind::U32Le => "read_u32_le",
        ReadKind::I32Le => "read_i32_le",
        ReadKind::U64Le => "read_u64_le",
        ReadKind::I64Le => "read_i64_le",
        ReadKind::VInt => "read_vint",
        ReadKind::VLong => "read_vlong",
        ReadKind::VarintU64 => "read_varint_u64",
        ReadKind::ZInt => "read_zint",
        ReadKind::ZLong => "read_zlong",
        ReadKind::String => "read_string",
    }
}

fn into_name(kind: IntoKind) -> &'static str {
    match kind {
        IntoKind::U16 => "read_u16_into",
        IntoKind::U32 => "read_u32_into",
        IntoKind::U64 => "read_u64_into",
        IntoKind::I32 => "read_i32_into",
        IntoKind::I64 => "read_i64_into",
        IntoKind::U16Le => "read_u16_le_into",
        IntoKind::U32Le => "read_u32_le_into",
        IntoKind::U64Le => "read_u64_le_into",
        IntoKind::I32Le => "read_i32_le_into",
        IntoKind::I64Le => "read_i64_le_into",
    }
}

/// One typed read, driven as `cancel` says.
async fn read_kind<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
    kind: ReadKind,
    cancel: Option<u8>,
) -> Option<io::Result<Val>> {
    macro_rules! go {
        ($call:expr, $variant:ident) => {
            drive($call, cancel).await.map(|r| r.map(Val::$variant))
        };
    }
    match kind {
        ReadKind::Byte => go!(input.read_byte(), U8),
        ReadKind::I8 => go!(input.read_i8(), I8),
        ReadKind::U16 => go!(input.read_u16(), U16),
        ReadKind::I16 => go!(input.read_i16(), I16),
        ReadKind::U32 => go!(input.read_u32(), U32),
        ReadKind::I32 => go!(input.read_i32(), I32),
        ReadKind::U64 => go!(input.read_u64(), U64),
        ReadKind::I64 => go!(input.read_i64(), I64),
        ReadKind::U16Le => go!(input.read_u16_le(), U16),
        ReadKind::I16Le => go!(input.read_i16_le(), I16),
        ReadKind::U32Le => go!(input.read_u32_le(), U32),
        ReadKind::I32Le => go!(input.read_i32_le(), I32),
        ReadKind::U64Le => go!(input.read_u64_le(), U64),
        ReadKind::I64Le => go!(input.read_i64_le(), I64),
        ReadKind::VInt => go!(input.read_vint(), U32),
        ReadKind::VLong => go!(input.read_vlong(), U64),
        ReadKind::VarintU64 => go!(input.read_varint_u64(), U64),
        ReadKind::ZInt => go!(input.read_zint(), I32),
        ReadKind::ZLong => go!(input.read_zlong(), I64),
        ReadKind::String => go!(input.read_string(), Str),
    }
}

/// One bulk read of `count` values, returned re-encoded as the bytes they came from.
async fn read_into<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
    kind: IntoKind,
    count: usize,
    cancel: Option<u8>,
) -> Option<io::Result<Val>> {
    macro_rules! go {
        ($ty:ty, $method:ident, $to:ident) => {{
            let mut dst = vec![<$ty>::default(); count];
            let got = drive(input.$method(&mut dst), cancel).await;
            got.map(|r| r.map(|()| Val::Bytes(dst.iter().flat_map(|v| v.$to()).collect())))
        }};
    }
    match kind {
        IntoKind::U16 => go!(u16, read_u16_into, to_be_bytes),
        IntoKind::U32 => go!(u32, read_u32_into, to_be_bytes),
        IntoKind::U64 => go!(u64, read_u64_into, to_be_bytes),
        IntoKind::I32 => go!(i32, read_i32_into, to_be_bytes),
        IntoKind::I64 => go!(i64, read_i64_into, to_be_bytes),
        IntoKind::U16Le => go!(u16, read_u16_le_into, to_le_bytes),
        IntoKind::U32Le => go!(u32, read_u32_le_into, to_le_bytes),
        IntoKind::U64Le => go!(u64, read_u64_le_into, to_le_bytes),
        IntoKind::I32Le => go!(i32, read_i32_le_into, to_le_bytes),
        IntoKind::I64Le => go!(i64, read_i64_le_into, to_le_bytes),
    }
}

/// Checks one `try_read_*` of a view against the reference over the view's bytes.
fn check_try<T: PartialEq + Debug>(
    view: &WindowView<'_>,
    at: u64,
    op: &str,
    got: io::Result<Option<T>>,
    want: Result<(T, u64), Fail>,
) -> Result<(), String> {
    let moved = view.position() - at;
    match (got, want) {
        (Ok(Some(v)), Ok((w, n))) if v == w && moved == n => Ok(()),
        (Ok(None), Err(Fail::Eof)) if moved == 0 => Ok(()),
        (Err(e), Err(Fail::Invalid)) if moved == 0 && e.kind() == ErrorKind::InvalidData => {
            match payload(&e) {
                Some(p) if p.operation() == op && p.position() == at => Ok(()),
                _ => Err(format!(
                    "view {op} at {at}: the error {e:?} does not name {op} at {at}"
                )),
            }
        }
        (got, want) => Err(format!(
            "view {op} at {at}: got {got:?} and moved {moved}, the reference says {want:?}"
        )),
    }
}

/// Runs `ops` on a view that starts at `start` of `data`, checking each against the reference
/// over the bytes the view holds.
fn run_view(
    view: &mut WindowView<'_>,
    data: &[u8],
    start: u64,
    ops: &[ViewOp],
) -> Result<(), String> {
    let len = view.remaining() as u64;
    match reference::take(data, start, len) {
        _ if len == 0 => {}
        Ok(bytes) if bytes == view.as_slice() => {}
        _ => {
            return Err(format!(
                "the view at {start} holds {len} bytes that are not the data's there"
            ))
        }
    }
    // The reference sees what the view sees: the data up to the view's end.
    let seen = if len == 0 {
        &[][..]
    } else {
        &data[..(start + len) as usize]
    };
    for &op in ops {
        let at = view.position();
        macro_rules! get {
            ($ty:ty, $get:ident, $from:ident) => {{
                const N: usize = std::mem::size_of::<$ty>();
                if view.remaining() >= N {
                    let got = view.$get();
                    let mut b = [0u8; N];
                    b.copy_from_slice(&seen[at as usize..at as usize + N]);
                    let want = <$ty>::$from(b);
                    if got != want || view.position() != at + N as u64 {
                        return Err(format!(
                            "view {} at {at}: got {got}, the data says {want}",
                            stringify!($get)
                        ));
                    }
                }
            }};
        }
        // A zig-zag varint read with `$try`, against the reference's `ReadKind::$kind`, whose
        // value is a `Val::$val`.
        macro_rules! zigzag {
            ($kind:ident, $val:ident, $try:ident, $name:literal) => {{
                let want = match reference::read(ReadKind::$kind, seen, at) {
                    Ok((Val::$val(v), n)) => Ok((v, n)),
                    Ok(other) => unreachable!("{other:?}"),
                    Err(f) => Err(f),
                };
                let got = view.$try();
                check_try(view, at, $name, got, want)?;
            }};
        }
        match op {
            ViewOp::I8 => {
                let want = reference::take(seen, at, 1).ok().map(|b| b[0] as i8);
                let got = view.try_read_i8();
                if got != want {
                    return Err(format!("view try_read_i8 at {at}: {got:?}, not {want:?}"));
                }
            }
            ViewOp::VInt => {
                let want = reference::vint(seen, at);
                let got = view.try_read_vint();
                check_try(view, at, "read_vint", got, want)?;
            }
            ViewOp::VLong => {
                let want =
                    reference::varint(seen, at, 9, i64::MAX as u128).map(|(v, n)| (v as u64, n));
                let got = view.try_read_vlong();
                check_try(view, at, "read_vlong", got, want)?;
            }
            ViewOp::ZInt => zigzag!(ZInt, I32, try_read_zint, "read_zint"),
            ViewOp::ZLong => zigzag!(ZLong, I64, try_read_zlong, "read_zlong"),
            ViewOp::String => {
                let want = reference::string(seen, at);
                let got = view.try_read_string();
                check_try(view, at, "read_string", got, want)?;
            }
            ViewOp::GetU8 => get!(u8, get_u8, from_be_bytes),
            ViewOp::GetU16 => get!(u16, get_u16, from_be_bytes),
            ViewOp::GetU32 => get!(u32, get_u32, from_be_bytes),
            ViewOp::GetU64 => get!(u64, get_u64, from_be_bytes),
            ViewOp::GetU16Le => get!(u16, get_u16_le, from_le_bytes),
            ViewOp::GetU32Le => get!(u32, get_u32_le, from_le_bytes),
            ViewOp::GetU64Le => get!(u64, get_u64_le, from_le_bytes),
            ViewOp::CopyToSlice(n) => {
                let n = n.min(view.remaining());
                let mut dst = vec![0u8; n];
                view.copy_to_slice(&mut dst);
                let want = if n == 0 {
                    Ok(&[][..])
                } else {
                    reference::take(seen, at, n as u64)
                };
                if want != Ok(&dst[..]) || view.position() != at + n as u64 {
                    return Err(format!("view copy_to_slice({n}) at {at}: wrong bytes"));
                }
            }
            ViewOp::Advance(n) => {
                let n = n.min(view.remaining());
                view.advance(n);
                if view.position() != at + n as u64 {
                    return Err(format!("view advance({n}) at {at}: at {}", view.position()));
                }
            }
        }
    }
    Ok(())
}

impl<F: Family> Harness<F> {
    pub fn new(input: AsyncBufferedInput<F>, data: Bytes, injected: Injected) -> Self {
        let harness = Self {
            slots: vec![Slot::new(input, data, 0)],
            cur: 0,
            injected,
            injected_seen: 0,
            cancel: None,
            step: "construction".into(),
            retry: false,
        };
        harness.check_all();
        harness
    }

    #[track_caller]
    fn fail(&self, msg: impl std::fmt::Display) -> ! {
        let slot = &self.slots[self.cur];
        panic!(
            "{}\n  input {} of {} (model position {}, data {} bytes, capacity {}, window {:?})\n  \
             {msg}",
            self.step,
            self.cur,
            self.slots.len(),
            slot.pos,
            slot.data.len(),
            slot.input.capacity(),
            slot.input.window(),
        );
    }

    /// Names the step that runs, for failure messages (a hang's too).
    fn begin(&mut self, step: String) {
        crate::drive::STEP.with_borrow_mut(|current| current.clone_from(&step));
        self.step = step;
    }

    /// Retries reads that fail with an injected error until they complete (builder style).
    pub fn retrying(mut self, retry: bool) -> Self {
        self.retry = retry;
        self
    }

    /// Runs the operations, checking every input after each, then reads every input whole.
    pub async fn run(&mut self, ops: &[Op]) {
        for (i, op) in ops.iter().enumerate() {
            self.begin(format!("op #{i}: {op:?}"));
            match self.retried(op) {
                None => {
                    self.op(op).await;
                    self.check_all();
                }
                Some(needed) => {
                    let capacity = self.slots[self.cur].input.capacity();
                    let bound = attempt_bound(needed, capacity);
                    let mut attempts = 0;
                    loop {
                        attempts += 1;
                        let seen = self.injected_seen;
                        self.op(op).await;
                        self.check_all();
                        if self.injected_seen == seen {
                            break; // completed, or failed as the model says
                        }
                        if attempts >= bound {
                            self.fail(format!(
                                "no progress: {attempts} attempts of a read of {needed} bytes \
                                 failed with injected errors (bound {bound})"
                            ));
                        }
                    }
                }
            }
        }
        self.finish().await;
    }

    /// The bytes `op` may fetch, if the retry mode retries it: a read (typed, `read_bytes`,
    /// owned, bulk) or a `checksum`, not to be dropped after a few polls, of at most
    /// [`MAX_RETRIED`] bytes. Those the read needs from the position (for a string, its whole
    /// body even when that turns out not to be UTF-8), and, checksumming, the bytes before the
    /// position it may have to fold first (those a seek skipped).
    fn retried(&self, op: &Op) -> Option<u64> {
        if !self.retry || self.cancel.is_some() {
            return None;
        }
        let slot = &self.slots[self.cur];
        let cap = slot.input.capacity();
        let needed = match *op {
            Op::Read(kind) => reference::extent(kind, &slot.data, slot.pos),
            Op::ReadBytes(size) => size.resolve(cap).min(MAX_ALLOC),
            Op::ReadBytesOwned(size) => size.resolve(cap),
            Op::ReadInto(kind, count) => count as u64 * reference::into_width(kind).0,
            Op::Checksum => 0, // only the bytes to fold, below
            _ => return None,
        };
        // Checksumming, a read first fetches the bytes a seek skipped since the checksum
        // started, to fold them: at most those from its start to the position.
        let folded = match slot.checksum {
            Some(c) if !c.void => slot.pos.min(slot.len()).saturating_sub(c.start),
            _ => 0,
        };
        let needed = needed.saturating_add(folded);
        (needed <= MAX_RETRIED).then_some(needed)
    }

    /// Reads each input whole from 0 (an injected error may interrupt: three tries).
    async fn finish(&mut self) {
        for i in 0..self.slots.len() {
            self.cur = i;
            self.begin(format!("final whole read of input {i}"));
            let slot = &mut self.slots[i];
            slot.input.seek_to(0);
            slot.seek_to(0);
            let len = slot.data.len();
            for _ in 0..3 {
                let slot = &mut self.slots[i];
                crate::count::op();
                let got = drive(slot.input.read_bytes_owned(len), None).await;
                let want = Ok((Val::Bytes(slot.data.to_vec()), len as u64));
                let done = matches!(got, Some(Ok(_)));
                self.settle(
                    "read_bytes_owned",
                    0,
                    want,
                    got.map(|r| r.map(|b| Val::Bytes(b.to_vec()))),
                );
                self.check_all();
                if done {
                    break;
                }
            }
        }
    }

    /// Checks every input against its model.
    fn check_all(&self) {
        for (i, slot) in self.slots.iter().enumerate() {
            if let Err(msg) = Self::check_slot(slot) {
                self.fail(format!("input {i}: {msg}"));
            }
        }
    }

    fn check_slot(slot: &Slot<F>) -> Result<(), String> {
        let input = &slot.input;
        let len = slot.len();
        reference::check_window(input, &slot.data, slot.pos)?;
        if let Some(known) = input.known_length() {
            if known != len {
                return Err(format!("known_length() is {known}, the data's {len}"));
            }
        }
        if input.checksum_start() != slot.checksum.map(|c| c.start) {
            return Err(format!(
                "checksum_start() is {:?}, the model's {:?}",
                input.checksum_start(),
                slot.checksum
            ));
        }
        reference::check_handed(input, slot.handed)?;
        F::check_source(input, &input.stats())
    }

    /// Checks the outcome of a read of the current input that started at `at`.
    fn settle(&mut self, op: &str, at: u64, want: Decoded, got: Option<io::Result<Val>>) {
        let slot = &mut self.slots[self.cur];
        let now = slot.input.position();
        match got {
            None => {
                if now != at {
                    self.fail(format!(
                        "a dropped {op} moved the position from {at} to {now}"
                    ));
                }
            }
            Some(Ok(value)) => match want {
                Ok((expected, n)) => {
                    if value != expected {
                        self.fail(format!(
                            "{op} at {at} returned {value:?}, the reference {expected:?}"
                        ));
                    }
                    if now != at + n {
                        self.fail(format!(
                            "{op} of {n} bytes at {at} left the position at {now}"
                        ));
                    }
                    slot.pos = at + n;
                    slot.handed += n;
                }
                Err(fail) => self.fail(format!(
                    "{op} at {at} returned {value:?}, the reference fails with {fail:?}"
                )),
            },
            Some(Err(e)) => {
                let want = want.err().map(fail_kind);
                self.settle_error(op, at, &e, want);
            }
        }
    }

    /// Checks an error of `op` on the current input: the position did not move, the payload
    /// names `op` at `at`, and the kind is `want` or an injected one.
    #[track_caller]
    fn settle_error(&mut self, op: &str, at: u64, e: &io::Error, want: Option<ErrorKind>) {
        let slot = &self.slots[self.cur];
        if slot.input.position() != slot.pos {
            self.fail(format!(
                "{op} failed with {e:?} and moved the position from {} to {}",
                slot.pos,
                slot.input.position()
            ));
        }
        match payload(e) {
            Some(p) if p.operation() == op && p.position() == at => {
                if !e.to_string().contains(&format!("at position {at}")) {
                    self.fail(format!(
                        "{op}: the message of {e:?} does not name position {at}"
                    ));
                }
                // A read past the end counts what was there from where it started.
                let there = slot.len().saturating_sub(at);
                if e.kind() == ErrorKind::UnexpectedEof && p.available() != Some(there) {
                    self.fail(format!(
                        "{op} at {at}: {e:?} says {:?} bytes available, {there} are there",
                        p.available()
                    ));
                }
            }
            _ => self.fail(format!(
                "{op}: the error {e:?} does not name {op} at position {at}"
            )),
        }
        if INJECTED_KINDS.contains(&e.kind()) {
            self.injected_seen += 1;
            let injected = self.injected.load(Ordering::SeqCst);
            if self.injected_seen > injected {
                self.fail(format!(
                    "{op}: {} errors of injected kinds, {injected} injected: {e:?}",
                    self.injected_seen
                ));
            }
            return;
        }
        if Some(e.kind()) != want {
            self.fail(format!("{op} at {at} failed with {e:?}, expected {want:?}"));
        }
    }

    fn expect_position(&self, at: u64, what: &str) {
        let now = self.slots[self.cur].input.position();
        if now != at {
            self.fail(format!("{what} moved the position from {at} to {now}"));
        }
    }

    async fn op(&mut self, op: &Op) {
        crate::count::op();
        let cancel = match op {
            Op::Cancel(n) => {
                self.cancel = Some(1 + n % 4);
                return;
            }
            _ => self.cancel.take(),
        };
        let slot = &mut self.slots[self.cur];
        let at = slot.pos;
        let cap = slot.input.capacity();
        match *op {
            Op::Read(kind) => {
                let want = reference::read(kind, &slot.data, at);
                let got = read_kind(&mut slot.input, kind, cancel).await;
                self.settle(read_name(kind), at, want, got);
            }
            Op::ReadBytes(size) => {
                let n = size.resolve(cap).min(MAX_ALLOC);
                let want = exact(&slot.data, at, n);
                let mut buf = vec![0xA5u8; n as usize];
                let got = drive(slot.input.read_bytes(&mut buf), cancel).await;
                let got = got.map(|r| r.map(|()| Val::Bytes(buf)));
                self.settle("read_bytes", at, want, got);
            }
            Op::ReadBytesOwned(size) => {
                let n = size.resolve(cap);
                let want = exact(&slot.data, at, n);
                let got = drive(slot.input.read_bytes_owned(n as usize), cancel).await;
                let got = got.map(|r| r.map(|b| Val::Bytes(b.to_vec())));
                self.settle("read_bytes_owned", at, want, got);
            }
            Op::ReadInto(kind, count) => {
                let (width, _) = reference::into_width(kind);
                let want = exact(&slot.data, at, count as u64 * width);
                let got = read_into(&mut slot.input, kind, count, cancel).await;
                self.settle(into_name(kind), at, want, got);
            }
            Op::View(ref ops) => {
                let data = slot.data.clone();
                let mut view = slot.input.view();
                let checked = run_view(&mut view, &data, at, ops);
                let consumed = view.position() - at;
                drop(view);
                if let Err(msg) = checked {
                    self.fail(msg);
                }
                let slot = &mut self.slots[self.cur];
                slot.pos = at + consumed;
                slot.handed += consumed;
                self.expect_position(at + consumed, "dropping a view");
            }
            Op::Fill(size) => {
                let min = usize::try_from(size.resolve(cap)).unwrap_or(usize::MAX);
                let avail = slot.len().saturating_sub(at);
                match drive(slot.input.fill(min), cancel).await {
                    None => self.expect_position(at, "a dropped fill"),
                    Some(Ok(n)) => {
                        let held = slot.input.buffer().len();
                        let least = (min.max(1) as u64).min(cap as u64).min(avail);
                        if n != held || n > cap || (n as u64) < least || n as u64 > avail {
                            self.fail(format!(
                                "fill({min}) returned {n} with {held} held, {avail} available"
                            ));
                        }
                        self.expect_position(at, "fill");
                    }
                    Some(Err(e)) => self.settle_error("fill", at, &e, None),
                }
            }
            Op::SeekTo(target) => {
                let to = slot.target(target);
                slot.input.seek_to(to);
                slot.seek_to(to);
            }
            Op::Skip(size) => {
                let n = size.resolve(cap);
                let result = slot.input.skip_bytes(n);
                match (at.checked_add(n), result) {
                    (Some(to), Ok(())) => slot.seek_to(to),
                    (None, Err(e)) => {
                        self.settle_error("skip_bytes", at, &e, Some(ErrorKind::InvalidInput))
                    }
                    (_, result) => self.fail(format!("skip_bytes({n}) at {at}: {result:?}")),
                }
            }
            Op::Seek(spec) => self.seek(spec, cancel).await,
            Op::AsyncRead(size) => {
                let n = size.resolve(cap).min(MAX_ALLOC) as usize;
                let mut buf = vec![0xA5u8; n];
                let got = drive(
                    AsyncReadExt::read(&mut slot.input.tokio_io(), &mut buf),
                    cancel,
                )
                .await;
                let avail = slot.len().saturating_sub(at);
                match got {
                    None => self.expect_position(at, "a dropped AsyncRead::read"),
                    Some(Ok(k)) => {
                        let short = n > 0 && avail > 0 && k == 0;
                        if k > n || k as u64 > avail || short {
                            self.fail(format!("read({n}) returned {k} with {avail} available"));
                        }
                        if k > 0 && reference::take(&slot.data, at, k as u64) != Ok(&buf[..k]) {
                            self.fail(format!("read({n}) at {at}: wrong bytes"));
                        }
                        slot.pos = at + k as u64;
                        slot.handed += k as u64;
                    }
                    Some(Err(e)) => self.settle_error("poll_read", at, &e, None),
                }
            }
            Op::FillBufConsume(fraction) => {
                let avail = slot.len().saturating_sub(at);
                let got = drive(
                    AsyncBufReadExt::fill_buf(&mut slot.input.tokio_io()),
                    cancel,
                )
                .await
                .map(|r| r.map(<[u8]>::to_vec));
                match got {
                    None => self.expect_position(at, "a dropped fill_buf"),
                    Some(Ok(bytes)) => {
                        let k = bytes.len();
                        if (avail == 0) != (k == 0) || k as u64 > avail || k > cap {
                            self.fail(format!(
                                "fill_buf returned {k} bytes with {avail} available"
                            ));
                        }
                        if k > 0 && reference::take(&slot.data, at, k as u64) != Ok(&bytes[..])
                            || slot.input.buffer() != bytes
                        {
                            self.fail(format!("fill_buf at {at}: wrong bytes"));
                        }
                        let amount = k * usize::from(fraction) / 255;
                        AsyncBufReadExt::consume(&mut slot.input.tokio_io(), amount);
                        slot.pos = at + amount as u64;
                        slot.handed += amount as u64;
                    }
                    Some(Err(e)) => self.settle_error("poll_fill_buf", at, &e, None),
                }
            }
            Op::Length => {
                let want = slot.len();
                match drive(slot.input.length(), cancel).await {
                    None => self.expect_position(at, "a dropped length"),
                    Some(Ok(len)) if len == want => {}
                    Some(Ok(len)) => self.fail(format!("length() is {len}, the data's {want}")),
                    Some(Err(e)) => self.settle_error("length", at, &e, None),
                }
            }
            Op::Disturb(arg) => F::disturb(&mut slot.input, arg),
            Op::Clone => {
                if let Some(input) = F::clone_input(&slot.input) {
                    let clone = Slot::new(input, slot.data.clone(), at);
                    self.add(clone);
                }
            }
            Op::Slice(offset, size) => {
                let offset = slot.target(offset);
                let len = size.resolve(cap);
                let data = slot.data.clone();
                let Some(slicing) = F::slice(&slot.input, offset, len) else {
                    return;
                };
                let inside = offset
                    .checked_add(len)
                    .is_some_and(|end| end <= data.len() as u64);
                let got = drive(slicing, cancel).await;
                self.expect_position(at, "slice");
                match got {
                    None => {}
                    Some(Ok(input)) => {
                        if !inside {
                            self.fail(format!(
                                "slice({offset}, {len}) of {} bytes succeeded",
                                data.len()
                            ));
                        }
                        if input.position() != 0 || input.known_length() != Some(len) {
                            self.fail(format!(
                                "slice({offset}, {len}) is at {} with known length {:?}",
                                input.position(),
                                input.known_length()
                            ));
                        }
                        let range = offset as usize..(offset + len) as usize;
                        self.add(Slot::new(input, data.slice(range), 0));
                    }
                    Some(Err(e)) => {
                        let want = (!inside).then_some(ErrorKind::InvalidInput);
                        self.settle_error("slice", offset, &e, want);
                    }
                }
            }
            Op::Switch(n) => self.cur = n as usize % self.slots.len(),
            Op::StartChecksum => {
                slot.input.start_checksum();
                slot.checksum = Some(ChecksumModel {
                    start: at,
                    void: false,
                });
            }
            Op::StopChecksum => {
                slot.input.stop_checksum();
                slot.checksum = None;
            }
            Op::Checksum => {
                let want = match slot.checksum {
                    None | Some(ChecksumModel { void: true, .. }) => Err(ErrorKind::InvalidInput),
                    Some(ChecksumModel { start, .. }) => {
                        assert!(
                            start <= at,
                            "the model's checksum starts after the position"
                        );
                        if start == at {
                            Ok(crc32fast::hash(&[]))
                        } else {
                            reference::take(&slot.data, start, at - start)
                                .map(crc32fast::hash)
                                .map_err(|_| ErrorKind::UnexpectedEof)
                        }
                    }
                };
                let start = slot.checksum.map_or(at, |c| c.start);
                match drive(slot.input.checksum(), cancel).await {
                    None => self.expect_position(at, "a dropped checksum"),
                    Some(Ok(crc)) if want.as_ref() == Ok(&crc) => {}
                    Some(Ok(crc)) => {
                        self.fail(format!("checksum() is {crc:#x}, the model's {want:x?}"))
                    }
                    Some(Err(e)) => {
                        let named = if e.kind() == ErrorKind::UnexpectedEof {
                            start
                        } else {
                            at
                        };
                        self.settle_error("checksum", named, &e, want.err());
                    }
                }
                self.expect_position(at, "checksum");
            }
            Op::Crc32Of(from, to) => {
                let (from, to) = (slot.target(from), slot.target(to));
                let want = if from >= to {
                    Ok(crc32fast::hash(&[]))
                } else {
                    reference::take(&slot.data, from, to - from)
                        .map(crc32fast::hash)
                        .map_err(|_| ErrorKind::UnexpectedEof)
                };
                match drive(slot.input.crc32_of(from..to), cancel).await {
                    None => {}
                    Some(Ok(crc)) if want.as_ref() == Ok(&crc) => {}
                    Some(Ok(crc)) => self.fail(format!(
                        "crc32_of({from}..{to}) is {crc:#x}, the model's {want:x?}"
                    )),
                    Some(Err(e)) => self.settle_error("for_each_chunk", from, &e, want.err()),
                }
                self.expect_position(at, "crc32_of");
            }
            Op::Release => slot.input.release(),
            Op::Cancel(_) => unreachable!("handled above"),
        }
    }

    /// Adds an input (replacing the last one when there are [`MAX_INPUTS`]) and makes it
    /// current.
    fn add(&mut self, slot: Slot<F>) {
        if self.slots.len() == MAX_INPUTS {
            self.slots.pop();
        }
        self.slots.push(slot);
        self.cur = self.slots.len() - 1;
    }

    /// `AsyncSeekExt::seek`, modelled on tokio's `Seek` future: it first completes a seek
    /// left in flight (`poll_complete`: an `End` seek whose future was dropped, if the position
    /// has not moved since), then starts its own (`start_seek`) and completes it.
    async fn seek(&mut self, spec: SeekSpec, cancel: Option<u8>) {
        let slot = &mut self.slots[self.cur];
        let at = slot.pos;
        let len = slot.len();
        let from = match spec {
            SeekSpec::Start(target) => SeekFrom::Start(slot.target(target)),
            SeekSpec::Current(d) => SeekFrom::Current(d),
            SeekSpec::End(d) => SeekFrom::End(d),
        };
        let pending = slot.end_seek.filter(|&(_, started)| started == at);
        let got = drive(AsyncSeekExt::seek(&mut slot.input.tokio_io(), from), cancel).await;
        match got {
            None => {
                self.expect_position(at, "a dropped seek");
                let slot = &mut self.slots[self.cur];
                match (pending, from) {
                    // Still asking the length for the pending one.
                    (Some(_), _) => {}
                    (None, SeekFrom::End(offset)) => slot.end_seek = Some((offset, at)),
                    (None, _) => self.fail(format!(
                        "{from:?} did not complete at once with no End seek pending"
                    )),
                }
            }
            Some(Err(e)) if INJECTED_KINDS.contains(&e.kind()) => {
                self.slots[self.cur].end_seek = None;
                self.settle_error("seek", at, &e, None);
            }
            Some(result) => {
                slot.end_seek = None;
                // The pending seek first, then this one; either may be out of range.
                // A seek back while checksumming is refused too.
                let checksumming = slot.checksum.is_some();
                let mut expected = Ok(());
                if let Some((offset, _)) = pending {
                    match len.checked_add_signed(offset) {
                        Some(to) if checksumming && to < slot.pos => expected = Err(()),
                        Some(to) => slot.move_to(to),
                        None => expected = Err(()),
                    }
                }
                let pos = slot.pos;
                let expected = expected.and_then(|()| {
                    match from {
                        SeekFrom::Start(n) => Some(n),
                        SeekFrom::Current(d) => pos.checked_add_signed(d),
                        SeekFrom::End(d) => len.checked_add_signed(d),
                    }
                    .filter(|&to| !(checksumming && to < pos))
                    .ok_or(())
                });
                match (result, expected) {
                    (Ok(landed), Ok(to)) if landed == to => {
                        slot.move_to(to);
                        self.expect_position(to, "seek");
                    }
                    (Err(e), Err(())) => {
                        self.expect_position(pos, "a failed seek");
                        self.settle_error("seek", pos, &e, Some(ErrorKind::InvalidInput));
                    }
                    (result, expected) => self.fail(format!(
                        "seek {from:?} from {at} (End seek pending: {pending:?}, length {len}): \
                         {result:?}, expected {expected:?}"
                    )),
                }
            }
        }
    }
}

/// The reference for a read of exactly `n` bytes at `at`: always fine for 0 bytes.
fn exact(data: &[u8], at: u64, n: u64) -> Decoded {
    if n == 0 {
        return Ok((Val::Bytes(Vec::new()), 0));
    }
    reference::take(data, at, n).map(|b| (Val::Bytes(b.to_vec()), n))
}
