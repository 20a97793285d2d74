//! The memory budget's bound: what an input's read-ahead takes of its
//! [`MemoryBudget`](async_buffered_input::MemoryBudget) stays within the read-ahead's
//! `memory_bound()` (`chunk_size * depth`) after every operation, for every window and chunk
//! size, with clones, slices and a source that fails now and then; all of it comes back once
//! the inputs are dropped.

use std::io::ErrorKind;

use abi_testkit::poll_once_then_drop as poll_once;
use abi_testkit::*;
use async_buffered_input::source::{MemorySource, PositionalSource};
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{MemoryBudget, PositionalFetch, ReadAhead};
use proptest::prelude::*;

/// Issue 32's first case: chunks of 7 bytes, 1 at a time, under a 33-byte window, the same
/// reads. The fill at 157 refills the window from 165, gets 7 bytes from the chunk read ahead
/// there, and the request after it asks for all the window still has room for (the 18 bytes
/// up to 190: chunks under 4 KiB cover what a read lacks). That request reserved all 18 bytes
/// of the budget, where a chunk's share is 7: 18 bytes held after the read (26 in the issue's
/// run), the bound being 7.
#[tokio::test(flavor = "current_thread")]
async fn a_refill_from_chunks_smaller_than_the_window_stays_within_the_bound() {
    let data = pattern_vec(400);
    let read_ahead = ReadAhead::new(7, 1);
    let budget = MemoryBudget::new(1 << 20);
    let fetch = PositionalFetch::new(MemorySource::new(data.clone()))
        .with_read_ahead(read_ahead)
        .with_budget(budget.clone());
    let mut input = AsyncBufferedInput::with_capacity(33, fetch);
    let bound = read_ahead.memory_bound();
    let check = |input: &AsyncBufferedInput<_>, after: &str| {
        assert!(
            budget.used() <= bound,
            "after {after}: {} bytes of budget held, the bound is {bound}: {:?}",
            budget.used(),
            input.fetch()
        );
    };

    input.seek_to(121);
    let four = input.read_u32().await.unwrap();
    assert_eq!(four.to_be_bytes(), data[121..125]);
    check(&input, "a 4-byte read at 121");
    let two = input.read_u16().await.unwrap();
    assert_eq!(two.to_be_bytes(), data[125..127]);
    check(&input, "a 2-byte read at 125");
    input.seek_to(153);
    input.read_vint().await.unwrap();
    check(&input, "a varint at 153");
    // The varint at 153 (of this data) is 4 bytes long; the window holds [132, 165).
    let at = input.position();
    assert_eq!(at, 157);
    assert!(input.fill(9).await.unwrap() >= 9);
    let mut view = input.view();
    let mut nine = [0u8; 9];
    bytes::Buf::copy_to_slice(&mut view, &mut nine);
    drop(view);
    assert_eq!(nine, data[157..166]);
    check(&input, "a fill and consume of 9 bytes at 157");

    drop(input);
    assert_eq!(budget.used(), 0, "all of it back once the input is dropped");
}

/// One step of the property test, on the input it is at (`Switch` moves to another).
#[derive(Clone, Debug)]
enum Op {
    ReadBytes(usize),
    ReadByte,
    ReadU16,
    ReadU32,
    ReadVint,
    ReadOwned(usize),
    /// `read_u32_into` of this many values: long reads go straight into the caller's buffer.
    ReadU32Into(usize),
    /// `fill(min)`, then this many of its bytes consumed through `view()`.
    FillConsume(usize, usize),
    /// `read_bytes` polled once with a waker that does nothing, then dropped.
    Dropped(usize),
    /// To `len * permille / 1000` (up to 1100: past the end too).
    SeekTo(u64),
    Skip(u64),
    Release,
    Clone,
    /// A slice from `len * a / 1000`, `(len - offset) * b / 1000` long.
    Slice(u64, u64),
    Switch(usize),
    /// Drops the input it is at, unless it is the last one.
    Drop,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => prop_oneof![1usize..=8, 1usize..=150].prop_map(Op::ReadBytes),
        3 => Just(Op::ReadByte),
        2 => Just(Op::ReadU16),
        2 => Just(Op::ReadU32),
        3 => Just(Op::ReadVint),
        2 => (1usize..=200).prop_map(Op::ReadOwned),
        2 => (0usize..=300).prop_map(Op::ReadU32Into),
        4 => (1usize..=70, 0usize..=70).prop_map(|(min, n)| Op::FillConsume(min, n)),
        2 => (1usize..=150).prop_map(Op::Dropped),
        4 => (0u64..=1100).prop_map(Op::SeekTo),
        1 => (0u64..=100).prop_map(Op::Skip),
        1 => Just(Op::Release),
        1 => Just(Op::Clone),
        1 => (0u64..=1000, 0u64..=1000).prop_map(|(a, b)| Op::Slice(a, b)),
        2 => (0usize..8).prop_map(Op::Switch),
        1 => Just(Op::Drop),
    ]
}

/// Where the bytes come from: a source that fails every `every`-th request (never if 0),
/// answering at once or after a few yields (`pending`: requests in flight run as tasks), or
/// one only partly at hand (bytes read at hand into the fetcher's chunk buffer).
#[derive(Clone, Debug)]
enum Source {
    FailEvery { every: u64, pending: bool },
    PartlyAtHand { seed: u64 },
}

#[derive(Clone, Debug)]
struct Case {
    window: usize,
    chunk: usize,
    depth: usize,
    len: usize,
    source: Source,
    ops: Vec<Op>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![1usize..=4, 1usize..=64],
        prop_oneof![1usize..=8, 1usize..=128],
        1usize..=4,
        prop_oneof![1 => 0usize..=20, 4 => 0usize..=2000],
        prop_oneof![
            3 => (prop_oneof![Just(0u64), 2u64..=9], any::<bool>())
                .prop_map(|(every, pending)| Source::FailEvery { every, pending }),
            1 => any::<u64>().prop_map(|seed| Source::PartlyAtHand { seed }),
        ],
        prop::collection::vec(op(), 0..=40),
    )
        .prop_map(|(window, chunk, depth, len, source, ops)| Case {
            window,
            chunk,
            depth,
            len,
            source,
            ops,
        })
}

/// An input of the case and where its bytes start in the data (a slice's offset).
struct Open<S: PositionalSource> {
    input: AsyncBufferedInput<PositionalFetch<S>>,
    base: usize,
}

/// Runs the case's steps over inputs that share one budget, checking after each that the
/// budget holds at most `memory_bound()` per open input, and that bytes read are right; then
/// that dropping the inputs gives all of it back.
async fn run<S: PositionalSource>(source: S, case: &Case) {
    let data = pattern_vec(case.len);
    let read_ahead = ReadAhead::new(case.chunk, case.depth);
    let budget = MemoryBudget::new(usize::MAX);
    let fetch = PositionalFetch::new(source)
        .with_read_ahead(read_ahead)
        .with_budget(budget.clone());
    let mut open = vec![Open {
        input: AsyncBufferedInput::with_capacity(case.window, fetch),
        base: 0,
    }];
    let mut at = 0;
    for (step, op) in case.ops.iter().enumerate() {
        let Open { input, base } = &mut open[at];
        let base = *base;
        let len = input.length().await.unwrap() as usize;
        let pos = input.position() as usize;
        // The data from the position on, as the input sees it.
        let expect = |n: usize| -> &[u8] {
            let from = (base + pos).min(base + len);
            &data[from..(base + pos + n).min(base + len)]
        };
        match op {
            Op::ReadBytes(n) => {
                let mut buf = vec![0u8; *n];
                if input.read_bytes(&mut buf).await.is_ok() {
                    assert_eq!(buf, expect(*n), "step {step}: {op:?} at {pos}");
                }
            }
            Op::ReadByte => {
                if let Ok(b) = input.read_byte().await {
                    assert_eq!([b], expect(1), "step {step}: {op:?} at {pos}");
                }
            }
            Op::ReadU16 => {
                if let Ok(v) = input.read_u16().await {
                    assert_eq!(v.to_be_bytes(), expect(2), "step {step}: {op:?} at {pos}");
                }
            }
            Op::ReadU32 => {
                if let Ok(v) = input.read_u32().await {
                    assert_eq!(v.to_be_bytes(), expect(4), "step {step}: {op:?} at {pos}");
                }
            }
            Op::ReadVint => {
                let _ = input.read_vint().await;
            }
            Op::ReadOwned(n) => {
                if let Ok(bytes) = input.read_bytes_owned(*n).await {
                    assert_eq!(&bytes[..], expect(*n), "step {step}: {op:?} at {pos}");
                }
            }
            Op::ReadU32Into(count) => {
                let mut values = vec![0u32; *count];
                if input.read_u32_into(&mut values).await.is_ok() {
                    let got: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
                    assert_eq!(got, expect(4 * count), "step {step}: {op:?} at {pos}");
                }
            }
            Op::FillConsume(min, n) => {
                if let Ok(held) = input.fill(*min).await {
                    let mut view = input.view();
                    let n = (*n).min(held);
                    let mut got = vec![0u8; n];
                    bytes::Buf::copy_to_slice(&mut view, &mut got);
                    drop(view);
                    assert_eq!(got, expect(n), "step {step}: {op:?} at {pos}");
                }
            }
            Op::Dropped(n) => {
                let mut buf = vec![0u8; *n];
                let _ = poll_once(input.read_bytes(&mut buf));
            }
            Op::SeekTo(permille) => input.seek_to(len as u64 * permille / 1000),
            Op::Skip(n) => {
                let _ = input.skip_bytes(*n);
            }
            Op::Release => input.release(),
            Op::Clone => {
                let clone = Open {
                    input: input.clone(),
                    base,
                };
                open.push(clone);
                at = open.len() - 1;
            }
            Op::Slice(a, b) => {
                let offset = len as u64 * a / 1000;
                let slice_len = (len as u64 - offset) * b / 1000;
                let slice = input.slice(offset, slice_len).await.unwrap();
                open.push(Open {
                    input: slice,
                    base: base + offset as usize,
                });
                at = open.len() - 1;
            }
            Op::Switch(to) => at = to % open.len(),
            Op::Drop => {
                if open.len() > 1 {
                    open.swap_remove(at);
                    at = 0;
                }
            }
        }
        let bound = open.len() * read_ahead.memory_bound();
        assert!(
            budget.used() <= bound,
            "after step {step} ({op:?}): {} bytes of budget held by {} inputs (windows {:?}), \
             the bound is {bound}",
            budget.used(),
            open.len(),
            open.iter().map(|o| o.input.window()).collect::<Vec<_>>()
        );
    }
    drop(open);
    assert_eq!(
        budget.used(),
        0,
        "budget held after every input was dropped"
    );
}

fn run_case(case: &Case) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let data = pattern_vec(case.len);
    runtime.block_on(async {
        match case.source {
            Source::FailEvery { every, pending } => {
                // Every `every`-th request fails with `ConnectionReset`; with `pending`, answers
                // wait a few yields (failures one), so later chunks are still in flight.
                let mut source = Scripted::new(data)
                    .fail_every(every)
                    .error(ErrorKind::ConnectionReset, "fails now and then");
                if pending {
                    source = source.delay_with(|r| Delay::Yields(if r.fails { 1 } else { 4 }));
                }
                run(source, case).await;
            }
            Source::PartlyAtHand { seed } => run(PartlyAtHand::new(data, seed), case).await,
        }
    });
}

proptest! {
    #![proptest_config(crate::common::xorshift_cases(1000))]

    /// Issue 32's bound, after every step: windows of 1 to 64 bytes, chunks of 1 to 128 bytes,
    /// 1 to 4 at a time, every kind of read (window refills, reads straight into the caller's
    /// buffer, reads dropped while in flight), seeks, `release`, clones and slices sharing the
    /// budget, over a source that fails now and then (answering at once or later) or has some
    /// of its bytes at hand.
    #[test]
    fn the_budget_holds_at_most_the_read_aheads_bound_per_input(case in case()) {
        run_case(&case);
    }
}
