//! Issue 6, bench 3: typed decoding from the window.
//!
//! A few MiB of pre-encoded values (seeded xorshift): vints and vlongs with a mix of lengths
//! weighted towards short ones (as postings deltas are), big-endian `u32`s, and ~20-byte strings
//! (vint length + UTF-8, as Lucene's `writeString`). Each iteration decodes all of one kind in
//! one `block_on` on a current-thread runtime, with a fresh 8 KiB-window reader built inside the
//! timed pass (the same set-up for every contender).
//!
//! Contenders, all in one group per kind:
//! - `ours/...`: `AsyncBufferedInput::read_vint` / `read_vlong` / `read_u32` / `read_string`
//!   (and `read_u32_into` in blocks of 1024, the bulk form);
//! - `tokio_bufreader/bytewise`: a byte-at-a-time decoder, `AsyncReadExt::read_u8` per byte over
//!   tokio `BufReader` (the goal's baseline);
//! - `tokio_bufreader/read_u32` (ints) and `tokio_bufreader/read_exact` (strings: vint length by
//!   `read_u8`, then one `read_exact`), tokio's best shape, for reference;
//! - `floor/slice`: the same decoder, synchronous, over a `&[u8]`, for reference;
//! - `ours/view` (vints, and 100-byte records): the synchronous view of the window
//!   (`AsyncBufferedInput::view`), one `.await` per refill (`fill`), not per value; against
//!   `std_bufreader/...`, a synchronous `std::io::BufReader` over the same bytes (vints decoded
//!   from its buffer, `fill_buf`, byte by byte only where one straddles its end; records by
//!   `read_exact`).
//!
//! Timed by `support/clock.rs`: the bench thread's CPU time (`ABI_BENCH_CLOCK=wall` for wall
//! time). Run: `cargo bench --bench decode`.

#[path = "support/clock.rs"]
mod clock;

use std::hint::black_box;
use std::io::Cursor;
use std::time::Duration;

use abi_testkit::XorShift64;
use async_buffered_input::StreamFetch;
use async_buffered_input::{AsyncBufferedInput, WindowView};
use bytes::Buf;
use clock::Clock;
use criterion::{BenchmarkId, Criterion, Throughput};
use tokio::io::{AsyncRead, AsyncReadExt, BufReader};
use tokio::runtime::Runtime;

const WINDOW: usize = 8192;
const VINTS: usize = 1 << 20;
const VLONGS: usize = 1 << 19;
const INTS: usize = 1 << 20;
const STRINGS: usize = 1 << 17;
const BULK: usize = 1024;

struct Rng(XorShift64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A value of `bits` random bits, with the top one set (so its varint has a known length).
    fn bits(&mut self, bits: u32) -> u64 {
        if bits == 0 {
            return 0;
        }
        let top = 1u64 << (bits - 1);
        (self.next() & (top - 1)) | top
    }
}

fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Varint lengths weighted towards short: half 1-byte, a quarter 2-byte, then fewer longer.
fn encoded_varints(count: usize, max_bytes: u32, seed: u64) -> Vec<u8> {
    let mut rng = Rng(XorShift64::new(seed));
    let mut out = Vec::new();
    for _ in 0..count {
        let r = rng.next() % 100;
        let len = match r {
            0..=49 => 1,
            50..=74 => 2,
            75..=89 => 3,
            90..=96 => 4,
            _ => max_bytes,
        };
        let bits = (7 * len).min(if max_bytes == 5 { 32 } else { 63 });
        let bits = bits - rng.next() as u32 % 7;
        write_varint(&mut out, rng.bits(bits));
    }
    out
}

fn encoded_ints(count: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(XorShift64::new(seed));
    (0..count)
        .flat_map(|_| (rng.next() as u32).to_be_bytes())
        .collect()
}

fn encoded_strings(count: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(XorShift64::new(seed));
    let alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_éü";
    let chars: Vec<char> = alphabet.chars().collect();
    let mut out = Vec::new();
    for _ in 0..count {
        let len = 12 + rng.next() as usize % 17; // 12..=28 chars, ~20 on average
        let s: String = (0..len)
            .map(|_| chars[rng.next() as usize % chars.len()])
            .collect();
        write_varint(&mut out, s.len() as u64);
        out.extend_from_slice(s.as_bytes());
    }
    out
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("current-thread runtime")
}

fn ours(data: &[u8]) -> AsyncBufferedInput<StreamFetch<Cursor<&[u8]>>> {
    AsyncBufferedInput::with_capacity(WINDOW, Cursor::new(data))
}

fn tokio_reader(data: &[u8]) -> BufReader<Cursor<&[u8]>> {
    BufReader::with_capacity(WINDOW, Cursor::new(data))
}

// ----- byte-at-a-time decoders over tokio BufReader -----

async fn bytewise_varint<R: AsyncRead + Unpin>(r: &mut R) -> u64 {
    let mut b = r.read_u8().await.unwrap();
    let mut value = u64::from(b & 0x7f);
    let mut shift = 7;
    while b & 0x80 != 0 {
        b = r.read_u8().await.unwrap();
        value |= u64::from(b & 0x7f) << shift;
        shift += 7;
    }
    value
}

async fn bytewise_u32<R: AsyncRead + Unpin>(r: &mut R) -> u32 {
    let mut value = 0u32;
    for _ in 0..4 {
        value = value << 8 | u32::from(r.read_u8().await.unwrap());
    }
    value
}

async fn bytewise_string<R: AsyncRead + Unpin>(r: &mut R) -> String {
    let len = bytewise_varint(r).await as usize;
    let mut bytes = Vec::with_capacity(len);
    for _ in 0..len {
        bytes.push(r.read_u8().await.unwrap());
    }
    String::from_utf8(bytes).unwrap()
}

async fn read_exact_string<R: AsyncRead + Unpin>(r: &mut R) -> String {
    let len = bytewise_varint(r).await as usize;
    let mut bytes = vec![0u8; len];
    r.read_exact(&mut bytes).await.unwrap();
    String::from_utf8(bytes).unwrap()
}

// ----- the same decoders, synchronous, over a slice -----

fn slice_varint(data: &[u8], at: &mut usize) -> u64 {
    let mut b = data[*at];
    *at += 1;
    let mut value = u64::from(b & 0x7f);
    let mut shift = 7;
    while b & 0x80 != 0 {
        b = data[*at];
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        shift += 7;
    }
    value
}

fn slice_string(data: &[u8], at: &mut usize) -> String {
    let len = slice_varint(data, at) as usize;
    let s = std::str::from_utf8(&data[*at..*at + len])
        .unwrap()
        .to_owned();
    *at += len;
    s
}

// ----- passes: each returns a checksum, checked equal across contenders before timing -----

async fn ours_vints(data: &[u8], count: usize) -> u64 {
    let mut input = ours(data);
    let mut sum = 0u64;
    for _ in 0..count {
        sum = sum.wrapping_add(u64::from(input.read_vint().await.unwrap()));
    }
    sum
}

async fn ours_vlongs(data: &[u8], count: usize) -> u64 {
    let mut input = ours(data);
    let mut sum = 0u64;
    for _ in 0..count {
        sum = sum.wrapping_add(input.read_vlong().await.unwrap());
    }
    sum
}

async fn bytewise_varints(data: &[u8], count: usize) -> u64 {
    let mut reader = tokio_reader(data);
    let mut sum = 0u64;
    for _ in 0..count {
        sum = sum.wrapping_add(bytewise_varint(&mut reader).await);
    }
    sum
}

fn slice_varints(data: &[u8], count: usize) -> u64 {
    let mut at = 0;
    let mut sum = 0u64;
    for _ in 0..count {
        sum = sum.wrapping_add(slice_varint(data, &mut at));
    }
    sum
}

async fn ours_ints(data: &[u8]) -> u64 {
    let mut input = ours(data);
    let mut sum = 0u64;
    for _ in 0..data.len() / 4 {
        sum = sum.wrapping_add(u64::from(input.read_u32().await.unwrap()));
    }
    sum
}

async fn ours_ints_bulk(data: &[u8]) -> u64 {
    let mut input = ours(data);
    let mut sum = 0u64;
    let mut block = [0u32; BULK];
    for _ in 0..data.len() / 4 / BULK {
        input.read_u32_into(&mut block).await.unwrap();
        for &v in &block {
            sum = sum.wrapping_add(u64::from(v));
        }
    }
    sum
}

async fn tokio_ints(data: &[u8]) -> u64 {
    let mut reader = tokio_reader(data);
    let mut sum = 0u64;
    for _ in 0..data.len() / 4 {
        sum = sum.wrapping_add(u64::from(reader.read_u32().await.unwrap()));
    }
    sum
}

async fn bytewise_ints(data: &[u8]) -> u64 {
    let mut reader = tokio_reader(data);
    let mut sum = 0u64;
    for _ in 0..data.len() / 4 {
        sum = sum.wrapping_add(u64::from(bytewise_u32(&mut reader).await));
    }
    sum
}

fn slice_ints(data: &[u8]) -> u64 {
    let mut sum = 0u64;
    for chunk in data.chunks_exact(4) {
        let v = u32::from_be_bytes(chunk.try_into().unwrap());
        sum = sum.wrapping_add(u64::from(black_box(v)));
    }
    sum
}

fn checksum(s: &str) -> u64 {
    s.len() as u64 + u64::from(s.as_bytes()[0])
}

async fn ours_strings(data: &[u8]) -> u64 {
    let mut input = ours(data);
    let mut sum = 0u64;
    for _ in 0..STRINGS {
        sum = sum.wrapping_add(checksum(&input.read_string().await.unwrap()));
    }
    sum
}

async fn bytewise_strings(data: &[u8]) -> u64 {
    let mut reader = tokio_reader(data);
    let mut sum = 0u64;
    for _ in 0..STRINGS {
        sum = sum.wrapping_add(checksum(&bytewise_string(&mut reader).await));
    }
    sum
}

async fn read_exact_strings(data: &[u8]) -> u64 {
    let mut reader = tokio_reader(data);
    let mut sum = 0u64;
    for _ in 0..STRINGS {
        sum = sum.wrapping_add(checksum(&read_exact_string(&mut reader).await));
    }
    sum
}

fn slice_strings(data: &[u8]) -> u64 {
    let mut at = 0;
    let mut sum = 0u64;
    for _ in 0..STRINGS {
        sum = sum.wrapping_add(checksum(&slice_string(data, &mut at)));
    }
    sum
}

/// Vints through the window's synchronous view: one `.await` per refill, not per value.
async fn view_vints(data: &[u8], count: usize) -> u64 {
    let mut input = ours(data);
    let (mut sum, mut left) = (0u64, count);
    while left > 0 {
        {
            let mut view = input.view();
            while left > 0 {
                match view.try_read_vint().unwrap() {
                    Some(v) => {
                        sum = sum.wrapping_add(u64::from(v));
                        left -= 1;
                    }
                    None => break,
                }
            }
        }
        if left > 0 {
            input.fill(5).await.unwrap();
        }
    }
    sum
}

/// Vints from a synchronous `std::io::BufReader`, decoded from its buffer (`fill_buf`) while
/// whole ones are there, and byte by byte where one straddles the buffer's end.
fn std_vints(data: &[u8], count: usize) -> u64 {
    use std::io::{BufRead, Read};
    let mut reader = std::io::BufReader::with_capacity(WINDOW, Cursor::new(data));
    let (mut sum, mut left) = (0u64, count);
    while left > 0 {
        let buf = reader.fill_buf().unwrap();
        let mut at = 0;
        while left > 0 && buf.len() - at >= 5 {
            sum = sum.wrapping_add(slice_varint(buf, &mut at));
            left -= 1;
        }
        reader.consume(at);
        if left > 0 {
            // Fewer than 5 bytes buffered: the next one may straddle; take it a byte at a time.
            let (mut value, mut shift) = (0u64, 0);
            loop {
                let mut b = [0u8; 1];
                reader.read_exact(&mut b).unwrap();
                value |= u64::from(b[0] & 0x7f) << shift;
                shift += 7;
                if b[0] & 0x80 == 0 {
                    break;
                }
            }
            sum = sum.wrapping_add(value);
            left -= 1;
        }
    }
    sum
}

const RECORD: usize = 100;

/// 100-byte records through the view: copied out of the window by a synchronous loop (in a
/// function of its own, as a decoder of a block would be), one `.await` per refill.
async fn view_records(data: &[u8]) -> u64 {
    /// Takes whole records from `view` while they are there, at most `left`.
    fn take(view: &mut WindowView<'_>, left: &mut usize, sum: &mut u64) {
        let mut record = [0u8; RECORD];
        while *left > 0 && view.remaining() >= RECORD {
            view.copy_to_slice(&mut record);
            *sum = sum.wrapping_add(u64::from(record[0]));
            *left -= 1;
        }
    }
    let mut input = ours(data);
    let (mut sum, mut left) = (0u64, data.len() / RECORD);
    while left > 0 {
        take(&mut input.view(), &mut left, &mut sum);
        if left > 0 {
            input.fill(RECORD).await.unwrap();
        }
    }
    sum
}

/// 100-byte records, one awaited `read_bytes` each.
async fn ours_records(data: &[u8]) -> u64 {
    let mut input = ours(data);
    let mut record = [0u8; RECORD];
    let mut sum = 0u64;
    for _ in 0..data.len() / RECORD {
        input.read_bytes(&mut record).await.unwrap();
        sum = sum.wrapping_add(u64::from(record[0]));
    }
    sum
}

/// 100-byte records from a synchronous `std::io::BufReader`, `read_exact` each.
fn std_records(data: &[u8]) -> u64 {
    use std::io::Read;
    let mut reader = std::io::BufReader::with_capacity(WINDOW, Cursor::new(data));
    let mut record = [0u8; RECORD];
    let mut sum = 0u64;
    for _ in 0..data.len() / RECORD {
        reader.read_exact(&mut record).unwrap();
        sum = sum.wrapping_add(u64::from(record[0]));
    }
    sum
}

fn configure(group: &mut criterion::BenchmarkGroup<'_, Clock>) {
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
}

fn decode(c: &mut Criterion<Clock>) {
    let rt = runtime();
    let vints = encoded_varints(VINTS, 5, 0x2545_F491_4F6C_DD1D);
    let vlongs = encoded_varints(VLONGS, 9, 0x9E37_79B9_7F4A_7C15);
    let ints = encoded_ints(INTS, 0xD1B5_4A32_D192_ED03);
    let strings = encoded_strings(STRINGS, 0x8CB9_2BA7_2F3D_8DD7);

    // Every contender decodes the same values.
    let expected = slice_varints(&vints, VINTS);
    assert_eq!(rt.block_on(ours_vints(&vints, VINTS)), expected);
    assert_eq!(rt.block_on(bytewise_varints(&vints, VINTS)), expected);
    assert_eq!(rt.block_on(view_vints(&vints, VINTS)), expected);
    assert_eq!(std_vints(&vints, VINTS), expected);
    let expected = slice_varints(&vlongs, VLONGS);
    assert_eq!(rt.block_on(ours_vlongs(&vlongs, VLONGS)), expected);
    assert_eq!(rt.block_on(bytewise_varints(&vlongs, VLONGS)), expected);
    let expected = slice_ints(&ints);
    assert_eq!(rt.block_on(ours_ints(&ints)), expected);
    assert_eq!(rt.block_on(ours_ints_bulk(&ints)), expected);
    assert_eq!(rt.block_on(tokio_ints(&ints)), expected);
    assert_eq!(rt.block_on(bytewise_ints(&ints)), expected);
    let expected = slice_strings(&strings);
    assert_eq!(rt.block_on(ours_strings(&strings)), expected);
    assert_eq!(rt.block_on(bytewise_strings(&strings)), expected);
    assert_eq!(rt.block_on(read_exact_strings(&strings)), expected);

    let mut group = c.benchmark_group("decode/vint");
    configure(&mut group);
    group.throughput(Throughput::Elements(VINTS as u64));
    group.bench_function(BenchmarkId::new("ours", "read_vint"), |b| {
        b.iter(|| rt.block_on(ours_vints(&vints, VINTS)))
    });
    group.bench_function(BenchmarkId::new("tokio_bufreader", "bytewise"), |b| {
        b.iter(|| rt.block_on(bytewise_varints(&vints, VINTS)))
    });
    group.bench_function(BenchmarkId::new("floor", "slice"), |b| {
        b.iter(|| slice_varints(&vints, VINTS))
    });
    group.bench_function(BenchmarkId::new("ours", "view"), |b| {
        b.iter(|| rt.block_on(view_vints(&vints, VINTS)))
    });
    group.bench_function(BenchmarkId::new("std_bufreader", "fill_buf"), |b| {
        b.iter(|| std_vints(&vints, VINTS))
    });
    group.finish();

    let records: Vec<u8> = (0..INTS * 4).map(|i| (i * 31 % 251) as u8).collect();
    let expected = std_records(&records);
    assert_eq!(rt.block_on(view_records(&records)), expected);
    assert_eq!(rt.block_on(ours_records(&records)), expected);
    let mut group = c.benchmark_group("decode/record100");
    configure(&mut group);
    group.throughput(Throughput::Elements((records.len() / RECORD) as u64));
    group.bench_function(BenchmarkId::new("ours", "view"), |b| {
        b.iter(|| rt.block_on(view_records(&records)))
    });
    group.bench_function(BenchmarkId::new("ours", "read_bytes"), |b| {
        b.iter(|| rt.block_on(ours_records(&records)))
    });
    group.bench_function(BenchmarkId::new("std_bufreader", "read_exact"), |b| {
        b.iter(|| std_records(&records))
    });
    group.finish();

    let mut group = c.benchmark_group("decode/vlong");
    configure(&mut group);
    group.throughput(Throughput::Elements(VLONGS as u64));
    group.bench_function(BenchmarkId::new("ours", "read_vlong"), |b| {
        b.iter(|| rt.block_on(ours_vlongs(&vlongs, VLONGS)))
    });
    group.bench_function(BenchmarkId::new("tokio_bufreader", "bytewise"), |b| {
        b.iter(|| rt.block_on(bytewise_varints(&vlongs, VLONGS)))
    });
    group.bench_function(BenchmarkId::new("floor", "slice"), |b| {
        b.iter(|| slice_varints(&vlongs, VLONGS))
    });
    group.finish();

    let mut group = c.benchmark_group("decode/u32");
    configure(&mut group);
    group.throughput(Throughput::Elements(INTS as u64));
    group.bench_function(BenchmarkId::new("ours", "read_u32"), |b| {
        b.iter(|| rt.block_on(ours_ints(&ints)))
    });
    group.bench_function(BenchmarkId::new("ours", "read_u32_into"), |b| {
        b.iter(|| rt.block_on(ours_ints_bulk(&ints)))
    });
    group.bench_function(BenchmarkId::new("tokio_bufreader", "bytewise"), |b| {
        b.iter(|| rt.block_on(bytewise_ints(&ints)))
    });
    group.bench_function(BenchmarkId::new("tokio_bufreader", "read_u32"), |b| {
        b.iter(|| rt.block_on(tokio_ints(&ints)))
    });
    group.bench_function(BenchmarkId::new("floor", "slice"), |b| {
        b.iter(|| slice_ints(&ints))
    });
    group.finish();

    let mut group = c.benchmark_group("decode/string");
    configure(&mut group);
    group.throughput(Throughput::Elements(STRINGS as u64));
    group.bench_function(BenchmarkId::new("ours", "read_string"), |b| {
        b.iter(|| rt.block_on(ours_strings(&strings)))
    });
    group.bench_function(BenchmarkId::new("tokio_bufreader", "bytewise"), |b| {
        b.iter(|| rt.block_on(bytewise_strings(&strings)))
    });
    group.bench_function(BenchmarkId::new("tokio_bufreader", "read_exact"), |b| {
        b.iter(|| rt.block_on(read_exact_strings(&strings)))
    });
    group.bench_function(BenchmarkId::new("floor", "slice"), |b| {
        b.iter(|| slice_strings(&strings))
    });
    group.finish();
}

clock::clock_main!(decode);
