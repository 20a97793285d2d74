//! The synchronous view of the window: decoding runs of values with `view()` and `fill()`
//! gives what the awaited reads give, commits the position and the stats, and reports
//! malformed data where it starts.

use std::io::{Cursor, ErrorKind};

use abi_testkit::*;
use async_buffered_input::source::MemorySource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{Fetch, PositionalFetch, ReadAhead};
use bytes::Buf;

fn write_vint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[derive(Debug, PartialEq)]
enum Value {
    VInt(u32),
    VLong(u64),
    ZInt(i32),
    Str(String),
    U32(u32),
    I8(i8),
}

fn values(n: usize) -> Vec<Value> {
    let mut rng = Rng::new(7);
    (0..n)
        .map(|i| match i % 6 {
            0 => Value::VInt((rng.next_u64() >> (rng.below(32) + 32)) as u32),
            1 => Value::VLong(rng.next_u64() >> (rng.below(63) + 1)),
            2 => Value::ZInt(rng.next_u64() as i32 >> rng.below(31)),
            3 => Value::Str("é€".repeat(rng.below(6) as usize) + "x"),
            4 => Value::U32(rng.next_u64() as u32),
            _ => Value::I8(rng.next_u64() as i8),
        })
        .collect()
}

fn encode(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        match v {
            Value::VInt(x) => write_vint(&mut out, u64::from(*x)),
            Value::VLong(x) => write_vint(&mut out, *x),
            Value::ZInt(x) => write_vint(&mut out, ((x << 1) ^ (x >> 31)) as u32 as u64),
            Value::Str(s) => {
                write_vint(&mut out, s.len() as u64);
                out.extend_from_slice(s.as_bytes());
            }
            Value::U32(x) => out.extend_from_slice(&x.to_be_bytes()),
            Value::I8(x) => out.push(*x as u8),
        }
    }
    out
}

/// Decodes `like.len()` values with the view, refilling only when a value does not fit.
async fn decode<F: Fetch>(input: &mut AsyncBufferedInput<F>, like: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut refills = 0;
    while out.len() < like.len() {
        {
            let mut view = input.view();
            while let Some(next) = like.get(out.len()) {
                let got = match next {
                    Value::VInt(_) => view.try_read_vint().unwrap().map(Value::VInt),
                    Value::VLong(_) => view.try_read_vlong().unwrap().map(Value::VLong),
                    Value::ZInt(_) => view.try_read_zint().unwrap().map(Value::ZInt),
                    Value::Str(_) => view.try_read_string().unwrap().map(Value::Str),
                    Value::U32(_) => (view.remaining() >= 4).then(|| Value::U32(view.get_u32())),
                    Value::I8(_) => view.try_read_i8().map(Value::I8),
                };
                match got {
                    Some(value) => out.push(value),
                    None => break,
                }
            }
        }
        if out.len() < like.len() {
            // The next value straddles the window's end: refill from it. Every value fits in
            // 32 bytes, so after a refill the next one decodes.
            refills += 1;
            let before = out.len();
            let held = input.fill(32).await.unwrap();
            assert!(held > 0, "the data ended early");
            assert!(
                refills <= 2 * like.len(),
                "no progress at value {before}: {:?}",
                like[before]
            );
        }
    }
    assert!(refills <= like.len(), "a refill per value at most");
    out
}

#[tokio::test]
async fn view_decodes_what_the_awaited_reads_decode_at_every_window_size() {
    let like = values(3000);
    let data = encode(&like);
    for capacity in [32, 64, 1000, 8192] {
        for positional in [false, true] {
            let check = |got: Vec<Value>, input_pos: u64, stats: async_buffered_input::Stats| {
                assert_eq!(got, like, "capacity {capacity}");
                assert_eq!(input_pos, data.len() as u64, "capacity {capacity}");
                assert_eq!(
                    stats.bytes_from_window + stats.bytes_direct,
                    data.len() as u64,
                    "capacity {capacity}: {stats:?}"
                );
            };
            if positional {
                let fetch = PositionalFetch::new(MemorySource::new(data.clone()))
                    .with_read_ahead(ReadAhead::new(500, 2));
                let mut input = AsyncBufferedInput::with_capacity(capacity, fetch);
                let got = decode(&mut input, &like).await;
                check(got, input.position(), input.stats());
            } else {
                let mut input =
                    AsyncBufferedInput::with_capacity(capacity, Cursor::new(data.clone()));
                let got = decode(&mut input, &like).await;
                check(got, input.position(), input.stats());
            }
        }
    }
}

#[tokio::test]
async fn malformed_values_name_their_position_and_consume_nothing() {
    // A vint at 2 with a fifth byte too large, then invalid UTF-8 at 7.
    let bytes = vec![1, 1, 0xff, 0xff, 0xff, 0xff, 0x1f, 2, 0xc3, 0x28];
    let mut input = AsyncBufferedInput::with_capacity(64, Cursor::new(bytes));
    input.fill(64).await.unwrap();
    let mut view = input.view();
    assert_eq!(view.try_read_vint().unwrap(), Some(1));
    assert_eq!(view.try_read_vint().unwrap(), Some(1));
    let e = view.try_read_vint().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidData);
    assert!(
        e.to_string()
            .starts_with("stream: read_vint of up to 5 bytes at position 2"),
        "{e}"
    );
    assert_eq!(view.position(), 2, "nothing consumed");
    view.advance(5);
    let e = view.try_read_string().unwrap_err();
    assert!(e.to_string().contains("position 7"), "{e}");
    assert!(e.to_string().contains("not UTF-8"), "{e}");
    drop(view);
    assert_eq!(input.position(), 7);
}

#[tokio::test]
async fn a_view_holds_only_the_window_and_commits_what_it_consumed() {
    let data = pattern_vec(100);
    let mut input = AsyncBufferedInput::with_capacity(8, Cursor::new(data.clone()));
    assert_eq!(input.view().remaining(), 0, "nothing buffered yet");
    assert_eq!(input.fill(3).await.unwrap(), 8);
    input.seek_to(2);
    {
        let mut view = input.view();
        assert_eq!(view.remaining(), 6);
        assert_eq!(view.chunk(), &data[2..8]);
        let mut two = [0; 2];
        view.copy_to_slice(&mut two);
        assert_eq!(two, data[2..4]);
        assert_eq!(view.position(), 4);
        assert_eq!(view.as_slice(), &data[4..8]);
    }
    assert_eq!(input.position(), 4);
    assert_eq!(input.read_byte().await.unwrap(), data[4]);
    // A string longer than the window never fits in a view: the awaited read takes it.
    let mut long = vec![20];
    long.extend_from_slice(&[b'y'; 20]);
    let mut input = AsyncBufferedInput::with_capacity(8, Cursor::new(long));
    input.fill(8).await.unwrap();
    assert_eq!(input.view().try_read_string().unwrap(), None);
    assert_eq!(input.read_string().await.unwrap(), "y".repeat(20));
    assert_eq!(input.fill(1).await.unwrap(), 0, "the end");
}

#[test]
#[should_panic(expected = "past the view")]
fn advancing_past_the_view_panics_as_buf_requires() {
    let mut input = AsyncBufferedInput::with_capacity(8, Cursor::new(vec![1, 2, 3]));
    let mut view = input.view();
    view.advance(1);
}
