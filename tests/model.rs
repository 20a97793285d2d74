//! Model-based property test: random operation sequences against a `Vec<u8>` model, over random
//! capacities (1..=64 and 8192), file lengths (0..=3000) and sources (Cursor, Hostile with short
//! reads + Pending, Hostile that also injects one read error and one seek error).
//!
//! After every step (see `common::Checked`): returned data equals the model, errors occur
//! exactly when the model says (EOF; negative seeks), `position()` equals the model position,
//! `buffer()` holds the file bytes at the position, `window()` is consistent with both, and
//! `stats()` agrees with the bytes handed out and with what the source saw (via `Counting`).

mod common;

use std::io::{Cursor, ErrorKind, SeekFrom};

use async_buffered_input::AsyncBufferedInput;
use common::*;
use proptest::prelude::*;
use tokio::io::{AsyncRead, AsyncSeek};

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
}

#[derive(Clone, Copy, Debug)]
enum Source {
    Cursor,
    /// Short reads + Pending, no errors.
    Hostile,
    /// Short reads + Pending + one read error + one seek error.
    HostileErrors,
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
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![3 => 1usize..=64, 1 => Just(8192usize)],
        prop_oneof![1 => 0usize..=20, 4 => 0usize..=3000],
        prop_oneof![
            Just(Source::Cursor),
            Just(Source::Hostile),
            Just(Source::HostileErrors)
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

async fn drive<R: AsyncRead + AsyncSeek + Unpin>(
    source: R,
    case: &Case,
    tolerated: Vec<ErrorKind>,
) {
    let data = pattern_vec(case.len);
    let cap = case.cap;
    let (source, counts) = Counting::new(source);
    let input = AsyncBufferedInput::with_capacity(cap, source);
    let mut t = Checked::new(input, data);
    t.counts = Some(counts);
    t.tolerated = tolerated;
    for (i, op) in case.ops.iter().enumerate() {
        t.label = format!("[{:?} cap {cap} len {} step {i}]", case.source, case.len);
        let len = t.len();
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
                let p = match *tg {
                    Target::Rel(d) => (t.pos as i64 + d).max(0) as u64,
                    Target::OfLen(pm) => len * pm / 1000,
                    Target::InWindow(pm) => {
                        let w = t.input.window();
                        w.start + (w.end - w.start) * pm / 1000
                    }
                };
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
        }
    }
    assert!(
        t.injected_seen <= 2,
        "at most one read error and one seek error were injected, saw {}",
        t.injected_seen
    );
    // The whole file, from the start, in one go (an injected error may still be pending).
    t.label = format!("[{:?} cap {cap} len {} final]", case.source, case.len);
    t.seek_to(0);
    let len = t.len() as usize;
    let mut done = false;
    for _ in 0..3 {
        match t.read_bytes_owned(len).await {
            Outcome::Ok => {
                done = true;
                break;
            }
            Outcome::Injected => continue,
            other => panic!("final full read: {other:?}"),
        }
    }
    assert!(done, "final full read kept failing");
}

fn run_case(case: &Case) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let data = pattern_vec(case.len);
        match case.source {
            Source::Cursor => {
                drive(Cursor::new(data), case, Vec::new()).await;
            }
            Source::Hostile => {
                let src = Hostile::new(data, HostileConfig::short_and_pending(case.seed));
                drive(src, case, Vec::new()).await;
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
                drive(src, case, vec![HOSTILE_READ_ERROR, HOSTILE_SEEK_ERROR]).await;
            }
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

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
        Op::ReadBytes(Size::Big(3000)),
    ];
    for cap in [1usize, 2, 3, 16, 64, 8192] {
        for len in [0usize, 1, 17, 1000, 3000] {
            for source in [Source::Cursor, Source::Hostile, Source::HostileErrors] {
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
