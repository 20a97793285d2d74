//! Typed decoding: round trips at every 7-bit boundary across window sizes, and malformed input.

use std::io::{Cursor, ErrorKind};

use abi_testkit::{Hostile, HostileConfig};
use async_buffered_input::Fetch;
use async_buffered_input::{AsyncBufferedInput, InputError};

const CAPACITIES: [usize; 6] = [1, 2, 5, 8, 13, 4096];

fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// 0, 2^k - 1, 2^k, 2^k + 1 for every k, and the type's extremes, within `max`.
fn boundaries(max: u64) -> Vec<u64> {
    let mut v = vec![0, 1, max, max - 1];
    for k in 1..64 {
        let p = 1u64 << k;
        for x in [p - 1, p, p + 1] {
            if x <= max {
                v.push(x);
            }
        }
    }
    v
}

fn signed_boundaries(min: i64, max: i64) -> Vec<i64> {
    let mut v = vec![0, 1, -1, min, max, min + 1, max - 1];
    for k in 1..63 {
        let p = 1i64 << k;
        for x in [p - 1, p, p + 1, -(p - 1), -p, -(p + 1)] {
            if (min..=max).contains(&x) {
                v.push(x);
            }
        }
    }
    v
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    VInt(u32),
    VLong(u64),
    VarU64(u64),
    ZInt(i32),
    ZLong(i64),
    U16(u16),
    I32(i32),
    U64(u64),
    I16Le(i16),
    U32Le(u32),
    I64Le(i64),
    Str(String),
}

fn encode(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        match v {
            Value::VInt(x) => write_varint(&mut out, u64::from(*x)),
            Value::VLong(x) | Value::VarU64(x) => write_varint(&mut out, *x),
            Value::ZInt(x) => write_varint(&mut out, zigzag(i64::from(*x)) as u32 as u64),
            Value::ZLong(x) => write_varint(&mut out, zigzag(*x)),
            Value::U16(x) => out.extend_from_slice(&x.to_be_bytes()),
            Value::I32(x) => out.extend_from_slice(&x.to_be_bytes()),
            Value::U64(x) => out.extend_from_slice(&x.to_be_bytes()),
            Value::I16Le(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::U32Le(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::I64Le(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::Str(s) => {
                write_varint(&mut out, s.len() as u64);
                out.extend_from_slice(s.as_bytes());
            }
        }
    }
    out
}

async fn decode_one<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
    like: &Value,
) -> std::io::Result<Value> {
    Ok(match like {
        Value::VInt(_) => Value::VInt(input.read_vint().await?),
        Value::VLong(_) => Value::VLong(input.read_vlong().await?),
        Value::VarU64(_) => Value::VarU64(input.read_varint_u64().await?),
        Value::ZInt(_) => Value::ZInt(input.read_zint().await?),
        Value::ZLong(_) => Value::ZLong(input.read_zlong().await?),
        Value::U16(_) => Value::U16(input.read_u16().await?),
        Value::I32(_) => Value::I32(input.read_i32().await?),
        Value::U64(_) => Value::U64(input.read_u64().await?),
        Value::I16Le(_) => Value::I16Le(input.read_i16_le().await?),
        Value::U32Le(_) => Value::U32Le(input.read_u32_le().await?),
        Value::I64Le(_) => Value::I64Le(input.read_i64_le().await?),
        Value::Str(_) => Value::Str(input.read_string().await?),
    })
}

fn all_values() -> Vec<Value> {
    let mut values = Vec::new();
    for x in boundaries(u64::from(u32::MAX)) {
        values.push(Value::VInt(x as u32));
        values.push(Value::U32Le(x as u32));
    }
    for x in boundaries(i64::MAX as u64) {
        values.push(Value::VLong(x));
    }
    for x in boundaries(u64::MAX) {
        values.push(Value::VarU64(x));
        values.push(Value::U64(x));
    }
    for x in signed_boundaries(i64::from(i32::MIN), i64::from(i32::MAX)) {
        values.push(Value::ZInt(x as i32));
        values.push(Value::I32(x as i32));
    }
    for x in signed_boundaries(i64::MIN, i64::MAX) {
        values.push(Value::ZLong(x));
        values.push(Value::I64Le(x));
    }
    for x in boundaries(u64::from(u16::MAX)) {
        values.push(Value::U16(x as u16));
        values.push(Value::I16Le(x as u16 as i16));
    }
    for s in [
        "",
        "a",
        "é",
        "€",
        "😀",
        &"x".repeat(127),
        &"é".repeat(64),
        &"😀".repeat(5000),
    ] {
        values.push(Value::Str(s.to_string()));
    }
    values
}

/// Encodes every value after `pad` filler bytes (shifting the values against the window edges),
/// then decodes them at every capacity through the source `wrap` makes of the data, checking
/// each value, the position after it, and that a read past the end errors and consumes nothing.
async fn round_trip<R, F>(wrap: F)
where
    R: tokio::io::AsyncRead + tokio::io::AsyncSeek + Unpin,
    F: Fn(Vec<u8>, u64) -> R,
{
    let values = all_values();
    for pad in 0..3 {
        let mut data = vec![0xAA; pad];
        data.extend(encode(&values));
        for cap in CAPACITIES {
            let seed = (pad * 31 + cap) as u64;
            let mut input = AsyncBufferedInput::with_capacity(cap, wrap(data.clone(), seed));
            input.skip_bytes(pad as u64).unwrap();
            let mut expected_pos = pad as u64;
            for v in &values {
                let got = decode_one(&mut input, v).await.unwrap();
                assert_eq!(&got, v, "capacity {cap} pad {pad} at {expected_pos}");
                expected_pos += encode(std::slice::from_ref(v)).len() as u64;
                assert_eq!(input.position(), expected_pos, "capacity {cap}");
            }
            for err in [
                input.read_vint().await.unwrap_err(),
                input.read_string().await.unwrap_err(),
            ] {
                assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
                assert_eq!(input.position(), expected_pos);
            }
        }
    }
}

#[tokio::test]
async fn round_trip_every_boundary_every_capacity() {
    round_trip(|data, _| Cursor::new(data)).await;
}

/// The slow paths of every typed read, resumed after `Pending` and continued across short
/// reads: a source that returns `Pending` on every other poll and 1–13 bytes per read.
#[tokio::test]
async fn round_trip_through_short_reads_and_pending() {
    round_trip(|data, seed| Hostile::new(data, HostileConfig::short_and_pending(seed))).await;
}

#[tokio::test]
async fn lucene_nine_byte_vlong_decodes() {
    // i64::MAX as Lucene writes it: 9 bytes, the last without a continuation bit.
    let mut data = Vec::new();
    write_varint(&mut data, i64::MAX as u64);
    assert_eq!(data.len(), 9);
    for cap in CAPACITIES {
        let mut input = AsyncBufferedInput::with_capacity(cap, Cursor::new(data.clone()));
        assert_eq!(input.read_vlong().await.unwrap(), i64::MAX as u64);
    }
}

#[tokio::test]
async fn bulk_reads_match_single_reads() {
    let n = 5000;
    let mut data = Vec::new();
    for i in 0..n as u32 {
        data.extend_from_slice(&(i.wrapping_mul(2_654_435_761)).to_be_bytes());
    }
    for i in 0..n as u64 {
        data.extend_from_slice(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_le_bytes());
    }
    for cap in CAPACITIES {
        let mut input = AsyncBufferedInput::with_capacity(cap, Cursor::new(data.clone()));
        let mut ints = vec![0u32; n];
        input.read_u32_into(&mut ints).await.unwrap();
        let mut longs = vec![0u64; n];
        input.read_u64_le_into(&mut longs).await.unwrap();
        for i in 0..n {
            assert_eq!(ints[i], (i as u32).wrapping_mul(2_654_435_761));
            assert_eq!(longs[i], (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        }
        assert_eq!(input.position(), data.len() as u64);
        // One value too many: nothing consumed, error names the whole request.
        input.seek_to(4);
        let mut too_many = vec![0u32; data.len() / 4];
        let err = input.read_u32_into(&mut too_many).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
        let detail = detail(&err);
        assert_eq!(detail.position(), 4);
        assert_eq!(detail.requested(), data.len() as u64);
        assert_eq!(detail.available(), Some(data.len() as u64 - 4));
        assert_eq!(input.position(), 4);
    }
}

fn detail(err: &std::io::Error) -> &InputError {
    err.get_ref()
        .and_then(|e| e.downcast_ref::<InputError>())
        .unwrap_or_else(|| panic!("no InputError in {err:?}"))
}

/// Reads `bytes` as a value like `like` ([`decode_one`]) at `pad` with every capacity and
/// checks the error kind, the position named in the message, and that nothing was consumed (a
/// later read still sees the same bytes).
async fn assert_malformed(bytes: &[u8], kind: ErrorKind, like: Value) {
    for cap in CAPACITIES {
        for pad in [0usize, 3] {
            let mut data = vec![0x55; pad];
            data.extend_from_slice(bytes);
            let mut input = AsyncBufferedInput::with_capacity(cap, Cursor::new(data.clone()));
            input.seek_to(pad as u64);
            let err = decode_one(&mut input, &like).await.unwrap_err();
            assert_eq!(err.kind(), kind, "{like:?}, capacity {cap}: {err}");
            assert_eq!(detail(&err).position(), pad as u64, "{err}");
            assert!(
                err.to_string().contains(&format!("position {pad}")),
                "{err}"
            );
            assert_eq!(input.position(), pad as u64, "capacity {cap}");
            let mut again = vec![0u8; bytes.len()];
            input.read_bytes(&mut again).await.unwrap();
            assert_eq!(again, bytes, "capacity {cap}: bytes lost after the error");
        }
    }
}

#[tokio::test]
async fn overlong_vint_is_invalid_data() {
    let bytes = [0x80, 0x80, 0x80, 0x80, 0x80, 0x01];
    assert_malformed(&bytes, ErrorKind::InvalidData, Value::VInt(0)).await;
    assert_malformed(&bytes, ErrorKind::InvalidData, Value::ZInt(0)).await;
}

#[tokio::test]
async fn vint_with_bits_beyond_32_is_invalid_data() {
    let bytes = [0xff, 0xff, 0xff, 0xff, 0x10];
    assert_malformed(&bytes, ErrorKind::InvalidData, Value::VInt(0)).await;
}

/// `read_vlong` is as strict as Lucene's `readVLong`: 9 bytes at most, so values of 2^63 and
/// above (10 bytes) are corrupt; `read_varint_u64` reads every `u64`.
#[tokio::test]
async fn vlong_is_as_strict_as_lucene_and_varint_u64_is_not() {
    let mut two_to_63 = Vec::new();
    write_varint(&mut two_to_63, 1 << 63);
    assert_eq!(two_to_63.len(), 10);
    assert_malformed(&two_to_63, ErrorKind::InvalidData, Value::VLong(0)).await;
    let mut max = Vec::new();
    write_varint(&mut max, u64::MAX);
    assert_malformed(&max, ErrorKind::InvalidData, Value::VLong(0)).await;
    for cap in CAPACITIES {
        for (bytes, value) in [(&two_to_63, 1 << 63), (&max, u64::MAX)] {
            let mut input = AsyncBufferedInput::with_capacity(cap, Cursor::new(bytes.clone()));
            assert_eq!(input.read_varint_u64().await.unwrap(), value, "cap {cap}");
        }
    }
}

#[tokio::test]
async fn overlong_vlong_is_invalid_data() {
    let bytes = [0x80; 11];
    assert_malformed(&bytes, ErrorKind::InvalidData, Value::VLong(0)).await;
    let beyond_64 = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
    assert_malformed(&beyond_64, ErrorKind::InvalidData, Value::ZLong(0)).await;
    assert_malformed(&beyond_64, ErrorKind::InvalidData, Value::VarU64(0)).await;
}

#[tokio::test]
async fn unterminated_varint_is_unexpected_eof() {
    assert_malformed(&[0x80, 0x80], ErrorKind::UnexpectedEof, Value::VInt(0)).await;
    assert_malformed(&[0xff; 7], ErrorKind::UnexpectedEof, Value::VLong(0)).await;
}

#[tokio::test]
async fn fixed_width_past_end_is_unexpected_eof() {
    assert_malformed(&[1, 2, 3], ErrorKind::UnexpectedEof, Value::U64(0)).await;
    assert_malformed(&[1], ErrorKind::UnexpectedEof, Value::I16Le(0)).await;
}

#[tokio::test]
async fn string_length_past_end_errors_before_allocating() {
    // A length prefix of u32::MAX (4 GiB) over a 10-byte file: must fail fast, allocating
    // nothing like 4 GiB, with the lengths in the message.
    let mut bytes = Vec::new();
    write_varint(&mut bytes, u64::from(u32::MAX));
    bytes.extend_from_slice(b"short");
    assert_malformed(&bytes, ErrorKind::UnexpectedEof, Value::Str(String::new())).await;
    // Also a length just one byte too long, both inside and beyond the window.
    for len in [4usize, 40_000] {
        let mut bytes = Vec::new();
        write_varint(&mut bytes, len as u64 + 1);
        bytes.extend(std::iter::repeat_n(b'a', len));
        assert_malformed(&bytes, ErrorKind::UnexpectedEof, Value::Str(String::new())).await;
    }
}

#[tokio::test]
async fn invalid_utf8_string_is_invalid_data() {
    for payload in [
        &[0xc3, 0x28][..],
        &[0xf0, 0x9f, 0x98][..],
        &[b'a'; 9000][..],
    ] {
        let mut payload = payload.to_vec();
        if payload.len() > 100 {
            payload[8000] = 0xff;
        }
        let mut bytes = Vec::new();
        write_varint(&mut bytes, payload.len() as u64);
        bytes.extend_from_slice(&payload);
        assert_malformed(&bytes, ErrorKind::InvalidData, Value::Str(String::new())).await;
    }
}

#[tokio::test]
async fn malformed_string_prefix_is_invalid_data() {
    let bytes = [0x80, 0x80, 0x80, 0x80, 0x7f, b'x'];
    assert_malformed(&bytes, ErrorKind::InvalidData, Value::Str(String::new())).await;
}
