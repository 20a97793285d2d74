//! The one conformance sweep, run against every family of input.

use std::io::{ErrorKind, SeekFrom};
use std::sync::Arc;

use abi_testkit::*;
use async_buffered_input::source::PositionalSource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{Fetch, PositionalFetch, StreamFetch};
use tokio::io::{AsyncRead, AsyncSeek, AsyncSeekExt};

use super::*;

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
