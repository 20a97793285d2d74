//! Model-based property test: random operation sequences against a `Vec<u8>` model, over random
//! capacities (1..=64 and 8192), file lengths (0..=3000) and every family of input:
//!
//! - streams: `Cursor`; `Hostile` with short reads and `Pending`; `Hostile` that also injects a
//!   read error and a seek error;
//! - positional sources: memory with and without read-ahead (random chunk shapes), a source
//!   that fails every k-th request, and one only partly at hand (page-cache-like).
//!
//! Operations: every read, typed reads (`read_vint`, `read_string`, `read_u32_into` of up to
//! three bulk steps), seeks of every kind, futures polled once and dropped (`read_bytes`, a
//! large `read_bytes_owned`, `length()`, a `SeekFrom::End` seek, which the next seek completes
//! unless the position moved), the source's cursor moved behind the input's back (`get_mut`
//! on streams; the read-ahead dropped on positional sources), clones and slices (positional).
//! After every step (`common::Checked`): returned data and decoded values equal the model's,
//! errors occur exactly when the model says (EOF; malformed varints and invalid UTF-8;
//! negative seeks) or are injected, every error carries an `InputError` naming the position
//! its operation started at (which is still the position), `buffer()` and `window()` agree
//! with the model, and `stats()` agrees with the bytes handed out and, over streams, with what
//! the stream saw (via `Counting`).

use crate::common;

use std::io::{self, Cursor, ErrorKind, SeekFrom};

use abi_testkit::poll_once_then_drop as poll_once;
use abi_testkit::*;
use async_buffered_input::source::{MemorySource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{Fetch, PositionalFetch, ReadAhead, StreamFetch};
use common::*;
use proptest::prelude::*;
use tokio::io::{AsyncRead, AsyncSeek, AsyncSeekExt};

/// A request size, resolved against the capacity at run time.
#[derive(Clone, Debug)]
enum Size {
    Small(usize),
    /// `mult * capacity + delta` (clamped at 0): around window boundaries.
    Cap(usize, i8),
    Big(usize),
}

impl Size {
    fn get(&self, cap: usize) -> usize {
        match *self {
            Size::Small(n) | Size::Big(n) => n,
            Size::Cap(mult, delta) => ((mult * cap) as i64 + delta as i64).max(0) as usize,
        }
    }
}

/// An absolute seek target, resolved against the model at run time.
#[derive(Clone, Debug)]
enum Target {
    /// Relative to the position (clamped at 0).
    Rel(i64),
    /// `len * permille / 1000`; up to 1100‰, i.e. past the end too.
    OfLen(u64),
    /// `window.start + window_len * permille / 1000`: inside the window.
    InWindow(u64),
}

#[derive(Clone, Debug)]
enum Op {
    ReadBytes(Size),
    ReadByte,
    ReadOwned(Size),
    SeekTo(Target),
    SeekStart(Target),
    SeekCurrent(i64),
    SeekEnd(i64),
    Skip(u64),
    Read(Size),
    FillConsume(u64),
    Length,
    /// `read_bytes` polled once with a waker that does nothing, then dropped.
    Dropped(Size),
    /// `read_bytes_owned` polled once, then dropped.
    DroppedOwned(Size),
    /// `length()` polled once, then dropped.
    DroppedLength,
    /// `seek(End(offset))` polled once, then dropped.
    DroppedSeekEnd(i64),
    ReadVint,
    ReadString,
    /// `read_u32_into` of this many values.
    ReadU32Into(usize),
    /// The source's cursor moved behind the input's back (streams), or the read-ahead dropped
    /// (positional sources).
    MoveCursor(Target),
    /// The input replaced by its clone (positional sources; a no-op on streams).
    Clone,
    /// The input replaced by its slice `[len * a / 1000, + rest * b / 1000)` (positional).
    Slice(u64, u64),
}

#[derive(Clone, Copy, Debug)]
enum Source {
    Cursor,
    /// Short reads + Pending, no errors.
    Hostile,
    /// Short reads + Pending + one read error + one seek error.
    HostileErrors,
    /// Memory, with read-ahead of `chunk` bytes, `depth` at a time, if `chunk > 0`.
    Memory {
        chunk: usize,
        depth: usize,
    },
    /// Memory behind a source that fails every `every`-th request, with read-ahead.
    Flaky {
        every: u64,
        chunk: usize,
    },
    /// A source only partly at hand to `try_read_at`, with read-ahead if `chunk > 0`.
    PartlyAtHand {
        chunk: usize,
    },
}

#[derive(Clone, Debug)]
struct Case {
    cap: usize,
    len: usize,
    source: Source,
    seed: u64,
    fail_read_after: u64,
    fail_seek: (u64, bool),
    ops: Vec<Op>,
}

fn size() -> impl Strategy<Value = Size> {
    prop_oneof![
        3 => (0usize..=16).prop_map(Size::Small),
        3 => (0usize..=3, -2i8..=2).prop_map(|(m, d)| Size::Cap(m, d)),
        1 => (0usize..=3500).prop_map(Size::Big),
    ]
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        (-80i64..=80).prop_map(Target::Rel),
        (0u64..=1100).prop_map(Target::OfLen),
        (0u64..=1000).prop_map(Target::InWindow),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => size().prop_map(Op::ReadBytes),
        3 => Just(Op::ReadByte),
        2 => size().prop_map(Op::ReadOwned),
        3 => target().prop_map(Op::SeekTo),
        1 => target().prop_map(Op::SeekStart),
        1 => prop_oneof![-200i64..=200, -5000i64..=-3000].prop_map(Op::SeekCurrent),
        1 => (-3100i64..=100).prop_map(Op::SeekEnd),
        1 => (0u64..=100).prop_map(Op::Skip),
        2 => size().prop_map(Op::Read),
        2 => (0u64..=1000).prop_map(Op::FillConsume),
        1 => Just(Op::Length),
        2 => size().prop_map(Op::Dropped),
        1 => size().prop_map(Op::DroppedOwned),
        1 => Just(Op::DroppedLength),
        1 => (-3100i64..=100).prop_map(Op::DroppedSeekEnd),
        2 => Just(Op::ReadVint),
        1 => Just(Op::ReadString),
        2 => prop_oneof![0usize..=8, 0usize..=800, 900usize..=3000].prop_map(Op::ReadU32Into),
        1 => target().prop_map(Op::MoveCursor),
        1 => Just(Op::Clone),
        1 => (0u64..=1000, 0u64..=1000).prop_map(|(a, b)| Op::Slice(a, b)),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![3 => 1usize..=64, 1 => Just(8192usize)],
        // Up to 12,000 bytes sometimes, so that bulk reads take several 4 KiB steps.
        prop_oneof![1 => 0usize..=20, 4 => 0usize..=3000, 1 => 3000usize..=12_000],
        prop_oneof![
            Just(Source::Cursor),
            Just(Source::Hostile),
            Just(Source::HostileErrors),
            (prop_oneof![Just(0usize), 1usize..=300], 1usize..=4)
                .prop_map(|(chunk, depth)| Source::Memory { chunk, depth }),
            (2u64..=9, 1usize..=300).prop_map(|(every, chunk)| Source::Flaky { every, chunk }),
            prop_oneof![Just(0usize), 1usize..=300]
                .prop_map(|chunk| Source::PartlyAtHand { chunk }),
        ],
        any::<u64>(),
        0u64..=4000,
        (0u64..=6, any::<bool>()),
        prop::collection::vec(op(), 0..=60),
    )
        .prop_map(
            |(cap, len, source, seed, fail_read_after, fail_seek, ops)| Case {
                cap,
                len,
                source,
                seed,
                fail_read_after,
                fail_seek,
                ops,
            },
        )
}

/// What the model does that only one family of input can, or does its own way.
trait Family: Fetch + Sized {
    /// Moves the source's cursor behind the input's back: through `get_mut` on a stream
    /// (whatever the stream says is ignored: a strict one may refuse, a seek being in flight);
    /// drops the read-ahead of a positional source.
    async fn move_cursor(input: &mut AsyncBufferedInput<Self>, to: u64);

    /// A clone (`None`) or a slice of the input, if the family has them.
    async fn derive(
        input: &AsyncBufferedInput<Self>,
        slice: Option<(u64, u64)>,
    ) -> Option<io::Result<AsyncBufferedInput<Self>>>;
}

impl<R: AsyncRead + AsyncSeek + Unpin> Family for StreamFetch<Counting<R>> {
    async fn move_cursor(input: &mut AsyncBufferedInput<Self>, to: u64) {
        let _ = AsyncSeekExt::seek(input.get_mut().get_mut(), SeekFrom::Start(to)).await;
    }

    async fn derive(
        _: &AsyncBufferedInput<Self>,
        _: Option<(u64, u64)>,
    ) -> Option<io::Result<AsyncBufferedInput<Self>>> {
        None
    }
}

impl<S: PositionalSource> Family for PositionalFetch<S> {
    async fn move_cursor(input: &mut AsyncBufferedInput<Self>, _: u64) {
        let read_ahead = input.fetch().read_ahead();
        input.fetch_mut().set_read_ahead(read_ahead);
    }

    async fn derive(
        input: &AsyncBufferedInput<Self>,
        slice: Option<(u64, u64)>,
    ) -> Option<io::Result<AsyncBufferedInput<Self>>> {
        Some(match slice {
            None => Ok(input.clone()),
            Some((offset, len)) => input.slice(offset, len).await,
        })
    }
}

async fn drive<F: Family>(mut t: Checked<F>, case: &Case) {
    let cap = case.cap;
    for (i, op) in case.ops.iter().enumerate() {
        t.label = format!("[{:?} cap {cap} len {} step {i}]", case.source, case.len);
        let len = t.len();
        let target = |t: &Checked<F>, tg: &Target| match *tg {
            Target::Rel(d) => (t.pos as i64 + d).max(0) as u64,
            Target::OfLen(pm) => len * pm / 1000,
            Target::InWindow(pm) => {
                let w = t.input.window();
                w.start + (w.end - w.start) * pm / 1000
            }
        };
        match op {
            Op::ReadBytes(s) => {
                t.read_bytes(s.get(cap)).await;
            }
            Op::ReadByte => {
                t.read_byte().await;
            }
            Op::ReadOwned(s) => {
                t.read_bytes_owned(s.get(cap)).await;
            }
            Op::SeekTo(tg) | Op::SeekStart(tg) => {
                let p = target(&t, tg);
                if matches!(op, Op::SeekTo(_)) {
                    t.seek_to(p);
                } else {
                    t.seek(SeekFrom::Start(p)).await;
                }
            }
            Op::SeekCurrent(d) => {
                t.seek(SeekFrom::Current(*d)).await;
            }
            Op::SeekEnd(d) => {
                t.seek(SeekFrom::End(*d)).await;
            }
            Op::Skip(n) => t.skip_bytes(*n),
            Op::Read(s) => {
                t.read_partial(s.get(cap)).await;
            }
            Op::FillConsume(pm) => {
                t.fill_buf_consume(*pm).await;
            }
            Op::Length => {
                t.length().await;
            }
            Op::Dropped(s) => {
                let n = s.get(cap);
                let ctx = format!("{} read_bytes({n}) polled once at {}", t.label, t.pos);
                let mut buf = vec![0u8; n];
                let eof = n > 0 && t.pos + n as u64 > len;
                match poll_once(t.input.read_bytes(&mut buf)) {
                    Some(result) => t.completed(result.map(|()| n), &buf, eof, &ctx),
                    None => t.check(&format!("{ctx}, then dropped")),
                }
            }
            Op::DroppedOwned(s) => t.read_bytes_owned_polled_once(s.get(cap)),
            Op::DroppedLength => t.length_polled_once(),
            Op::DroppedSeekEnd(d) => t.seek_end_polled_once(*d).await,
            Op::ReadVint => {
                t.read_vint().await;
            }
            Op::ReadString => {
                t.read_string().await;
            }
            Op::ReadU32Into(count) => {
                t.read_u32_into(*count).await;
            }
            Op::MoveCursor(tg) => {
                let p = target(&t, tg);
                F::move_cursor(&mut t.input, p).await;
                t.check("the cursor moved behind the input's back");
            }
            Op::Clone => {
                if let Some(clone) = F::derive(&t.input, None).await {
                    let clone = clone.expect("a clone never fails");
                    let (data, pos) = (t.data.clone(), t.pos);
                    t.replace(clone, data, pos);
                }
            }
            Op::Slice(a, b) => {
                let offset = len * a / 1000;
                let slice_len = (len - offset) * b / 1000;
                if let Some(slice) = F::derive(&t.input, Some((offset, slice_len))).await {
                    match slice {
                        Ok(slice) => {
                            let data =
                                t.data[offset as usize..(offset + slice_len) as usize].to_vec();
                            t.replace(slice, data, 0);
                        }
                        // Asking the source's length may fail like any request.
                        Err(e) => assert!(t.tolerated.contains(&e.kind()), "slice: {e}"),
                    }
                }
            }
        }
    }
    // The whole data, from the start, in one go (an injected error may still be pending).
    // Retries keep what earlier attempts received, so a source that fails every other request
    // still gets through: in at most about one attempt per byte (1-byte chunks), plus slack.
    t.label = format!("[{:?} cap {cap} len {} final]", case.source, case.len);
    t.seek_to(0);
    let len = t.len() as usize;
    for attempt in 0.. {
        match t.read_bytes_owned(len).await {
            Outcome::Ok => break,
            Outcome::Injected if attempt < 100 + len => continue,
            other => panic!("final full read: {other:?}"),
        }
    }
}

async fn drive_stream<R: AsyncRead + AsyncSeek + Unpin>(
    source: R,
    case: &Case,
    tolerated: Vec<ErrorKind>,
) {
    let (source, counts) = Counting::new(source);
    let input = AsyncBufferedInput::with_capacity(case.cap, source);
    let mut t = Checked::new(input, pattern_vec(case.len));
    t.counts = Some(counts);
    t.tolerated = tolerated;
    drive(t, case).await;
}

async fn drive_positional<S: PositionalSource>(
    source: S,
    chunk: usize,
    depth: usize,
    case: &Case,
    tolerated: Vec<ErrorKind>,
) {
    let mut fetch = PositionalFetch::new(source);
    if chunk > 0 {
        fetch.set_read_ahead(Some(ReadAhead::new(chunk, depth)));
    }
    let input = AsyncBufferedInput::with_capacity(case.cap, fetch);
    let mut t = Checked::new(input, pattern_vec(case.len));
    t.tolerated = tolerated;
    drive(t, case).await;
}

fn run_case(case: &Case) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let data = pattern_vec(case.len);
        match case.source {
            Source::Cursor => drive_stream(Cursor::new(data), case, Vec::new()).await,
            Source::Hostile => {
                let src = Hostile::new(data, HostileConfig::short_and_pending(case.seed));
                drive_stream(src, case, Vec::new()).await;
            }
            Source::HostileErrors => {
                let (k, in_start) = case.fail_seek;
                let cfg = HostileConfig {
                    fail_read_after: Some(case.fail_read_after),
                    fail_seek: Some((
                        k,
                        if in_start {
                            SeekFail::InStart
                        } else {
                            SeekFail::InComplete
                        },
                    )),
                    ..HostileConfig::short_and_pending(case.seed)
                };
                let src = Hostile::new(data, cfg);
                drive_stream(src, case, vec![HOSTILE_READ_ERROR, HOSTILE_SEEK_ERROR]).await;
            }
            Source::Memory { chunk, depth } => {
                drive_positional(MemorySource::new(data), chunk, depth, case, Vec::new()).await;
            }
            Source::Flaky { every, chunk } => {
                // Every `every`-th request fails, `len` calls counted too.
                let src = Scripted::new(data)
                    .length_is_a_request()
                    .fail_every(every)
                    .error(HOSTILE_READ_ERROR, "injected");
                drive_positional(src, chunk, 3, case, vec![HOSTILE_READ_ERROR]).await;
            }
            Source::PartlyAtHand { chunk } => {
                let src = PartlyAtHand::new(data, case.seed);
                drive_positional(src, chunk, 2, case, Vec::new()).await;
            }
        }
    });
}

proptest! {
    #![proptest_config(common::xorshift_cases(2000))]

    /// Random operation sequences on every family of input, compared step by step with the
    /// model (see the file's docs).
    #[test]
    fn model(case in case()) {
        run_case(&case);
    }
}

/// A few fixed cases that exercise the boundaries deterministically (also a quick smoke test
/// when the property test is filtered out).
#[test]
fn fixed_cases() {
    let ops = vec![
        Op::ReadBytes(Size::Cap(1, -1)),
        Op::ReadBytes(Size::Cap(1, 1)),
        Op::SeekTo(Target::InWindow(0)),
        Op::ReadByte,
        Op::FillConsume(500),
        Op::Read(Size::Cap(2, 0)),
        Op::SeekEnd(-3),
        Op::ReadBytes(Size::Small(4)),
        Op::SeekCurrent(-10_000),
        Op::SeekTo(Target::OfLen(1100)),
        Op::ReadByte,
        Op::Read(Size::Small(5)),
        Op::FillConsume(1000),
        Op::Skip(7),
        Op::SeekStart(Target::Rel(-5000)),
        Op::ReadOwned(Size::Cap(3, 2)),
        Op::Length,
        Op::Dropped(Size::Cap(2, 3)),
        Op::MoveCursor(Target::OfLen(500)),
        Op::ReadBytes(Size::Cap(1, 5)),
        Op::Clone,
        Op::Dropped(Size::Small(3)),
        Op::Slice(250, 500),
        Op::ReadBytes(Size::Big(3000)),
        Op::ReadBytes(Size::Small(10)),
        Op::SeekTo(Target::OfLen(0)),
        Op::ReadVint,
        Op::ReadString,
        Op::ReadU32Into(1500),
        Op::DroppedSeekEnd(-5),
        Op::ReadByte,
        Op::SeekCurrent(0),
        Op::DroppedSeekEnd(-7),
        Op::SeekCurrent(1),
        Op::DroppedLength,
        Op::DroppedOwned(Size::Big(2500)),
        Op::MoveCursor(Target::OfLen(900)),
        Op::ReadU32Into(3),
        Op::ReadString,
        Op::ReadVint,
    ];
    for cap in [1usize, 2, 3, 16, 64, 8192] {
        for len in [0usize, 1, 17, 1000, 3000, 9000] {
            for source in [
                Source::Cursor,
                Source::Hostile,
                Source::HostileErrors,
                Source::Memory { chunk: 0, depth: 1 },
                Source::Memory { chunk: 7, depth: 3 },
                Source::Flaky {
                    every: 3,
                    chunk: 64,
                },
                Source::PartlyAtHand { chunk: 100 },
            ] {
                run_case(&Case {
                    cap,
                    len,
                    source,
                    seed: (cap * 31 + len) as u64,
                    fail_read_after: len as u64 / 2,
                    fail_seek: (2, cap % 2 == 0),
                    ops: ops.clone(),
                });
            }
        }
    }
}
