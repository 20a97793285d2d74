//! What a fuzz input means: a setup (source family, window capacity, faults, data) and a
//! sequence of operations, decoded by hand from the bytes so that seeds can be written by hand
//! and every input is valid.
//!
//! The format, in order (little-endian; bytes past the end of the input read as 0):
//!
//! | bytes | field |
//! | --- | --- |
//! | 1 | source: `% 3` = stream, positional, positional with read-ahead |
//! | 1 | capacity: below 200, `1 + b % 64`; otherwise one of [`LARGE_CAPACITIES`] |
//! | 7 | [`Faults`]: chunk, pending, fail-after (2), flags, seek-fail index, seed |
//! |   | flags: bit 0 fail-after on, 1 seek-fail on, 2 refuse far seeks, 3-5 fail-every, 6 retry |
//! | 2 | read-ahead: chunk size (one of [`READ_AHEAD_CHUNKS`]), depth `1 + b % 4` |
//! | 1 | number of data segments, `% 9` |
//! | ... | the segments ([`Segment::parse`]) |
//! | ... | operations until the input ends ([`Op::parse`]), each an opcode byte and its arguments |
//!
//! `cargo fuzz fmt <target> <input>` prints the [`Case`] an input decodes to.

use std::fmt;

use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};

/// The capacities a capacity byte of 200 or more selects.
pub const LARGE_CAPACITIES: [usize; 11] =
    [65, 100, 127, 128, 255, 256, 1000, 1024, 4096, 8192, 65536];

/// The read-ahead chunk sizes.
pub const READ_AHEAD_CHUNKS: [usize; 8] = [1, 2, 7, 64, 100, 1024, 4096, 65536];

/// The most data a case holds.
pub const MAX_DATA: usize = 1 << 18;

/// The most operations a case runs.
pub const MAX_OPS: usize = 2000;

/// The most bytes an operation that allocates its destination (`read_bytes`, bulk reads,
/// `AsyncRead::read`) asks for; `read_bytes_owned`, `skip_bytes` and seeks take any size.
pub const MAX_ALLOC: u64 = 1 << 18;

/// The bytes of a fuzz input, read front to back; past the end, zeros.
pub struct Feed<'a>(&'a [u8]);

impl<'a> Feed<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self(bytes)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    pub fn u32(&mut self) -> u32 {
        u32::from(self.u16()) | u32::from(self.u16()) << 16
    }

    pub fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }

    /// Up to `n` bytes (fewer at the end of the input).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }
}

/// Where the input's bytes come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `AsyncBufferedInput::with_capacity(cap, HostileStream)`.
    Stream,
    /// `AsyncBufferedInput::with_capacity(cap, PositionalFetch::new(HostileSource))`.
    Positional,
    /// The same with `ReadAhead::new(chunk, depth)`.
    ReadAhead { chunk: usize, depth: usize },
}

/// How the source misbehaves. Every injected error has one of the kinds of
/// [`INJECTED_KINDS`](crate::sources::INJECTED_KINDS), which no correct read returns otherwise.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// Stream: each read returns 1 to `chunk` bytes (0: as many as asked). Positional: bytes
    /// "at hand" (`try_read_at`) come 0 to `chunk` at a time (0: none at hand).
    pub chunk: u8,
    /// `Pending` (waking itself) on every `pending + 1`-th poll of a read, a seek completion, a
    /// request or a length request; 0: never.
    pub pending: u8,
    /// One read error once this many bytes were delivered (a stream delivers exactly this many
    /// first; a positional source fails the request that would cross it).
    pub fail_after: Option<u16>,
    /// Every `fail_every + 1`-th read (stream read call or positional request) fails; 0: never.
    pub fail_every: u8,
    /// Stream: the k-th seek fails once (in `start_seek` for even k, in `poll_complete` for
    /// odd). Positional: the k-th length request fails once.
    pub seek_fail: Option<u8>,
    /// Stream: seeks further than 64 bytes past the end are refused with `InvalidInput` in
    /// `poll_complete`, as an operating system refuses a seek past its largest file.
    pub refuse_far_seeks: bool,
    /// Seeds the short-read sizes.
    pub seed: u8,
    /// Every read (typed, `read_bytes`, owned, bulk, `checksum`) that fails with an injected
    /// error is retried until it completes, as a caller would, and must make progress: it
    /// completes within [`attempt_bound`](crate::harness::attempt_bound) attempts.
    pub retry: bool,
}

impl Faults {
    fn parse(feed: &mut Feed<'_>) -> Self {
        let chunk = feed.u8();
        let pending = feed.u8() % 8;
        let fail_after = feed.u16();
        let flags = feed.u8();
        let seek_fail = feed.u8();
        let seed = feed.u8();
        Self {
            chunk,
            pending,
            fail_after: (flags & 1 != 0).then_some(fail_after),
            fail_every: (flags >> 3) & 7,
            seek_fail: (flags & 2 != 0).then_some(seek_fail % 16),
            refuse_far_seeks: flags & 4 != 0,
            seed,
            retry: flags & 0x40 != 0,
        }
    }
}

/// A piece of the data: raw bytes or a value in one of the encodings the decoders read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Raw(Vec<u8>),
    /// 7 bits per byte, low groups first, 1 to 10 bytes.
    Varint(u64),
    /// The zig-zag varint of the value.
    ZigZag(i64),
    /// A vint byte length, then the string's UTF-8.
    Str(String),
    /// A vint length that need not match the bytes after it.
    Prefixed {
        len: u32,
        bytes: Vec<u8>,
    },
    /// `count` copies of `byte`.
    Fill {
        byte: u8,
        count: u16,
    },
    /// `len` bytes of [`pattern`], continuing at the data's current offset.
    Pattern {
        len: u16,
    },
    /// `groups` bytes with their continuation bit set (`0x80 | low`), then `last`: varints that
    /// run long, or never end.
    Overlong {
        groups: u8,
        low: u8,
        last: u8,
    },
}

impl Segment {
    /// A segment: a kind byte (`% 8`), then its fields.
    pub fn parse(feed: &mut Feed<'_>) -> Self {
        match feed.u8() % 8 {
            0 => {
                let n = feed.u8() as usize;
                Segment::Raw(feed.bytes(n).to_vec())
            }
            1 => {
                let bits = u32::from(feed.u8() % 65);
                let raw = feed.u64();
                Segment::Varint(if bits == 0 { 0 } else { raw >> (64 - bits) })
            }
            2 => {
                let shift = u32::from(feed.u8() % 64);
                Segment::ZigZag((feed.u64() as i64) >> shift)
            }
            3 => {
                let n = feed.u8() as usize;
                Segment::Str(String::from_utf8_lossy(feed.bytes(n)).into_owned())
            }
            4 => {
                let shift = u32::from(feed.u8() % 32);
                let len = feed.u32() >> shift;
                let n = feed.u8() as usize;
                Segment::Prefixed {
                    len,
                    bytes: feed.bytes(n).to_vec(),
                }
            }
            5 => Segment::Fill {
                byte: feed.u8(),
                count: feed.u16(),
            },
            6 => Segment::Pattern { len: feed.u16() },
            _ => Segment::Overlong {
                groups: feed.u8() % 12,
                low: feed.u8(),
                last: feed.u8(),
            },
        }
    }

    /// Appends the segment's bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Segment::Raw(bytes) => out.extend_from_slice(bytes),
            Segment::Varint(v) => write_varint(out, *v),
            Segment::ZigZag(v) => write_varint(out, ((v << 1) ^ (v >> 63)) as u64),
            Segment::Str(s) => {
                write_varint(out, s.len() as u64);
                out.extend_from_slice(s.as_bytes());
            }
            Segment::Prefixed { len, bytes } => {
                write_varint(out, u64::from(*len));
                out.extend_from_slice(bytes);
            }
            Segment::Fill { byte, count } => out.resize(out.len() + *count as usize, *byte),
            Segment::Pattern { len } => {
                let at = out.len() as u64;
                out.extend((at..at + u64::from(*len)).map(pattern));
            }
            Segment::Overlong { groups, low, last } => {
                out.extend(std::iter::repeat_n(0x80 | low, *groups as usize));
                out.push(*last);
            }
        }
    }
}

/// Writes `v` as a varint: 7 bits per byte, low groups first.
pub fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The byte at offset `n` of a [`Segment::Pattern`]: the test kit's pattern, the low byte of
/// splitmix64(n).
pub use abi_testkit::pattern;

pub use abi_testkit::model::{IntoKind, ReadKind};

/// A decoder of a [`WindowView`](async_buffered_input::WindowView).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewOp {
    I8,
    VInt,
    VLong,
    ZInt,
    ZLong,
    String,
    GetU8,
    GetU16,
    GetU32,
    GetU64,
    GetU16Le,
    GetU32Le,
    GetU64Le,
    CopyToSlice(usize),
    Advance(usize),
}

impl ViewOp {
    fn parse(feed: &mut Feed<'_>) -> Self {
        match feed.u8() % 15 {
            0 => ViewOp::I8,
            1 => ViewOp::VInt,
            2 => ViewOp::VLong,
            3 => ViewOp::ZInt,
            4 => ViewOp::ZLong,
            5 => ViewOp::String,
            6 => ViewOp::GetU8,
            7 => ViewOp::GetU16,
            8 => ViewOp::GetU32,
            9 => ViewOp::GetU64,
            10 => ViewOp::GetU16Le,
            11 => ViewOp::GetU32Le,
            12 => ViewOp::GetU64Le,
            13 => ViewOp::CopyToSlice(feed.u8() as usize),
            _ => ViewOp::Advance(feed.u8() as usize),
        }
    }
}

/// A request size, resolved against the capacity when it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Small(u64),
    /// `mult * capacity + delta`, at least 0: around the window's edges.
    Cap {
        mult: u64,
        delta: i64,
    },
    Big(u64),
    /// `u64::MAX - n`, or `2^(32 + n % 32)`: corrupt lengths.
    Huge(u64),
}

impl Size {
    /// 3 bytes: a kind (`% 5`) and a `u16`.
    fn parse(feed: &mut Feed<'_>) -> Self {
        let kind = feed.u8();
        let v = u64::from(feed.u16());
        match kind % 5 {
            0 | 1 => Size::Small(v % 24),
            2 => Size::Cap {
                mult: v % 5,
                delta: ((v >> 3) % 7) as i64 - 3,
            },
            3 => Size::Big(v),
            _ => Size::Huge(v),
        }
    }

    pub fn resolve(self, cap: usize) -> u64 {
        match self {
            Size::Small(n) | Size::Big(n) => n,
            Size::Cap { mult, delta } => (mult * cap as u64).saturating_add_signed(delta),
            Size::Huge(n) if n % 2 == 0 => u64::MAX - n,
            Size::Huge(n) => 1 << (32 + n % 32),
        }
    }
}

/// An absolute position, resolved against the input's state when it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Abs(u64),
    /// Relative to the position (at least 0).
    Rel(i64),
    /// Relative to the end of the data (at least 0).
    FromEnd(i64),
    /// `window.start + window.len * permille / 1000`: inside the window.
    InWindow(u64),
    /// `u64::MAX - n`.
    Huge(u64),
}

impl Target {
    /// 3 bytes: a kind (`% 6`) and a `u16`.
    fn parse(feed: &mut Feed<'_>) -> Self {
        let kind = feed.u8();
        let v = feed.u16();
        match kind % 6 {
            0 | 5 => Target::Abs(u64::from(v)),
            1 => Target::Rel(i64::from(v as i16)),
            2 => Target::FromEnd(i64::from(v as i16)),
            3 => Target::InWindow(u64::from(v) % 1001),
            _ => Target::Huge(u64::from(v)),
        }
    }
}

/// The argument of a tokio `AsyncSeek`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeekSpec {
    Start(Target),
    Current(i64),
    End(i64),
}

impl SeekSpec {
    /// A kind byte (`% 8`), then a [`Target`] or a `u16` offset.
    fn parse(feed: &mut Feed<'_>) -> Self {
        match feed.u8() % 8 {
            0 | 1 => SeekSpec::Start(Target::parse(feed)),
            2 | 3 => SeekSpec::Current(i64::from(feed.u16() as i16)),
            4 => SeekSpec::End(i64::from(feed.u16() as i16)),
            5 => SeekSpec::End(-i64::from(feed.u16())),
            6 => SeekSpec::Current(i64::MIN + i64::from(feed.u16())),
            _ => SeekSpec::Current(i64::MAX - i64::from(feed.u16())),
        }
    }
}

/// One step of a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    // ----- the decode target's operations: typed reads, and moving around to read again -----
    Read(ReadKind),
    ReadBytes(Size),
    ReadBytesOwned(Size),
    ReadInto(IntoKind, usize),
    /// `view()`, these decoders on it, then drop it.
    View(Vec<ViewOp>),
    Fill(Size),
    SeekTo(Target),
    Skip(Size),
    // ----- the ops target's further operations -----
    /// `AsyncSeekExt::seek`.
    Seek(SeekSpec),
    /// `AsyncReadExt::read` into a buffer of this size.
    AsyncRead(Size),
    /// `fill_buf`, then `consume` of `returned * n / 255` bytes.
    FillBufConsume(u8),
    Length,
    /// Behind the input's back: a stream's cursor moved through `get_mut()`; a positional
    /// input's read-ahead changed through `fetch_mut()`.
    Disturb(u16),
    /// Positional inputs: `clone()`, which becomes the current input.
    Clone,
    /// Positional inputs: `slice(offset, len)`, which becomes the current input.
    Slice(Target, Size),
    /// Make input `n % inputs` current.
    Switch(u8),
    StartChecksum,
    StopChecksum,
    Checksum,
    Crc32Of(Target, Target),
    Release,
    /// Poll the next asynchronous operation `1 + n % 4` times (letting spawned requests run in
    /// between), then drop it if it has not completed.
    Cancel(u8),
}

/// How many opcodes the decode target uses: the first ones of [`Op::parse`].
pub const DECODE_OPCODES: u8 = 27;
/// How many opcodes the ops target uses.
pub const ALL_OPCODES: u8 = 41;

impl Op {
    /// An operation: an opcode byte (`% opcodes`), then its arguments.
    pub fn parse(feed: &mut Feed<'_>, opcodes: u8) -> Self {
        let code = feed.u8() % opcodes;
        if let Some(&kind) = ReadKind::ALL.get(code as usize) {
            return Op::Read(kind);
        }
        match code {
            20 => Op::ReadBytes(Size::parse(feed)),
            21 => Op::ReadBytesOwned(Size::parse(feed)),
            22 => {
                let kind = IntoKind::ALL[feed.u8() as usize % IntoKind::ALL.len()];
                Op::ReadInto(kind, feed.u16() as usize % 6000)
            }
            23 => {
                let n = feed.u8() % 17;
                Op::View((0..n).map(|_| ViewOp::parse(feed)).collect())
            }
            24 => Op::Fill(Size::parse(feed)),
            25 => Op::SeekTo(Target::parse(feed)),
            26 => Op::Skip(Size::parse(feed)),
            27 | 28 => Op::Seek(SeekSpec::parse(feed)),
            29 => Op::AsyncRead(Size::parse(feed)),
            30 => Op::FillBufConsume(feed.u8()),
            31 => Op::Length,
            32 => Op::Disturb(feed.u16()),
            33 => Op::Clone,
            34 => Op::Slice(Target::parse(feed), Size::parse(feed)),
            35 => Op::Switch(feed.u8()),
            36 => Op::StartChecksum,
            37 => Op::Checksum,
            38 => {
                if feed.u8().is_multiple_of(2) {
                    Op::StopChecksum
                } else {
                    Op::Release
                }
            }
            39 => Op::Crc32Of(Target::parse(feed), Target::parse(feed)),
            _ => Op::Cancel(feed.u8()),
        }
    }
}

/// A whole fuzz case: how the input is built, and what is done with it.
#[derive(Clone, PartialEq, Eq)]
pub struct Case {
    pub source: Source,
    pub capacity: usize,
    pub faults: Faults,
    pub segments: Vec<Segment>,
    pub ops: Vec<Op>,
}

impl Case {
    /// Decodes a case whose operations use the first `opcodes` opcodes.
    pub fn parse(bytes: &[u8], opcodes: u8) -> Self {
        let mut feed = Feed::new(bytes);
        let family = feed.u8();
        let cap = feed.u8();
        let faults = Faults::parse(&mut feed);
        let ra_chunk = READ_AHEAD_CHUNKS[feed.u8() as usize % READ_AHEAD_CHUNKS.len()];
        let ra_depth = 1 + feed.u8() as usize % 4;
        let source = match family % 3 {
            0 => Source::Stream,
            1 => Source::Positional,
            _ => Source::ReadAhead {
                chunk: ra_chunk,
                depth: ra_depth,
            },
        };
        let capacity = if cap < 200 {
            1 + cap as usize % 64
        } else {
            LARGE_CAPACITIES[(cap - 200) as usize % LARGE_CAPACITIES.len()]
        };
        let segments = (0..feed.u8() % 9)
            .map(|_| Segment::parse(&mut feed))
            .collect();
        let mut ops = Vec::new();
        while !feed.is_empty() && ops.len() < MAX_OPS {
            ops.push(Op::parse(&mut feed, opcodes));
        }
        Self {
            source,
            capacity,
            faults,
            segments,
            ops,
        }
    }

    /// The data the source serves: the segments' bytes, at most [`MAX_DATA`].
    pub fn data(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for segment in &self.segments {
            segment.encode(&mut out);
            if out.len() >= MAX_DATA {
                out.truncate(MAX_DATA);
                break;
            }
        }
        out
    }
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Case")
            .field("source", &self.source)
            .field("capacity", &self.capacity)
            .field("faults", &self.faults)
            .field("data_len", &self.data().len())
            .field("segments", &self.segments)
            .field("ops", &self.ops)
            .finish()
    }
}

/// A case of the decode target (typed reads only), decoded from the whole input.
#[derive(Debug)]
pub struct DecodeCase(pub Case);

/// A case of the ops target (every operation), decoded from the whole input.
#[derive(Debug)]
pub struct OpsCase(pub Case);

impl<'a> Arbitrary<'a> for DecodeCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Self(Case::parse(u.bytes(u.len())?, DECODE_OPCODES)))
    }

    fn arbitrary_take_rest(u: Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Self(Case::parse(u.take_rest(), DECODE_OPCODES)))
    }
}

impl<'a> Arbitrary<'a> for OpsCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Self(Case::parse(u.bytes(u.len())?, ALL_OPCODES)))
    }

    fn arbitrary_take_rest(u: Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Self(Case::parse(u.take_rest(), ALL_OPCODES)))
    }
}
