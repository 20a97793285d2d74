//! The reference: Lucene's `DataInput` decoding over a plain `&[u8]`, written as plainly as
//! possible and independently of the crate's decoders.
//!
//! A varint is read as Lucene reads it: 7-bit groups, low first, until a byte without the
//! continuation bit, at most `max_len` bytes. Here the groups are summed into a `u128` and the
//! value then checked against the type's range, where the crate checks the last byte's bits:
//! the two agree exactly when both are right.

use std::io::ErrorKind;

use super::{IntoKind, ReadKind};

/// Why a reference read fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fail {
    /// The data ends before the value does: `UnexpectedEof`.
    Eof,
    /// The bytes are not a valid encoding: `InvalidData`.
    Invalid,
}

impl Fail {
    /// The kind of the error a read must fail with.
    pub fn kind(self) -> ErrorKind {
        match self {
            Fail::Eof => ErrorKind::UnexpectedEof,
            Fail::Invalid => ErrorKind::InvalidData,
        }
    }
}

/// A decoded value, to compare with what the input returned.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // each variant is a value of the type of its name
pub enum Val {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    Str(String),
    Bytes(Vec<u8>),
}

/// A value and how many bytes it took.
pub type Decoded = Result<(Val, u64), Fail>;

/// The `n` bytes at `pos`.
pub fn take(data: &[u8], pos: u64, n: u64) -> Result<&[u8], Fail> {
    let len = data.len() as u64;
    if pos > len || len - pos < n {
        return Err(Fail::Eof);
    }
    Ok(&data[pos as usize..(pos + n) as usize])
}

fn fixed<const N: usize>(data: &[u8], pos: u64) -> Result<[u8; N], Fail> {
    let mut out = [0u8; N];
    out.copy_from_slice(take(data, pos, N as u64)?);
    Ok(out)
}

/// A varint of at most `max_len` bytes whose value is at most `max`: its value and length.
pub fn varint(data: &[u8], pos: u64, max_len: u64, max: u128) -> Result<(u128, u64), Fail> {
    let mut value = 0u128;
    for i in 0..max_len {
        let b = take(data, pos.saturating_add(i), 1)?[0];
        value |= u128::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return if value <= max {
                Ok((value, i + 1))
            } else {
                Err(Fail::Invalid) // more bits than the type has
            };
        }
    }
    Err(Fail::Invalid) // no end within max_len bytes
}

/// `readVInt`: at most 5 bytes, at most 32 bits.
pub fn vint(data: &[u8], pos: u64) -> Result<(u32, u64), Fail> {
    let (v, n) = varint(data, pos, 5, u128::from(u32::MAX))?;
    Ok((v as u32, n))
}

/// `readString`: a vint byte length, then that many bytes of UTF-8.
pub fn string(data: &[u8], pos: u64) -> Result<(String, u64), Fail> {
    let (len, prefix) = vint(data, pos)?;
    let bytes = take(data, pos + prefix, u64::from(len))?;
    let s = std::str::from_utf8(bytes).map_err(|_| Fail::Invalid)?;
    Ok((s.to_owned(), prefix + u64::from(len)))
}

/// The most bytes from `pos` a read of `kind` fetches before it returns, failing or not: the
/// value's bytes, and for a string whose prefix decodes, the prefix and as much of its body as
/// the data holds (invalid UTF-8 shows only once the body is read whole).
pub fn extent(kind: ReadKind, data: &[u8], pos: u64) -> u64 {
    let there = (data.len() as u64).saturating_sub(pos);
    match (kind, read(kind, data, pos)) {
        (_, Ok((_, n))) => n,
        (ReadKind::String, Err(_)) => match vint(data, pos) {
            Ok((len, prefix)) => (prefix + u64::from(len)).min(there),
            Err(_) => 5,
        },
        // A varint of at most 10 bytes, or a fixed-width value of at most 8.
        (_, Err(_)) => 10,
    }
}

fn zigzag32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

fn zigzag64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// One typed read at `pos`.
pub fn read(kind: ReadKind, data: &[u8], pos: u64) -> Decoded {
    macro_rules! fixed {
        ($variant:ident, $ty:ty, $from:ident) => {{
            const N: usize = std::mem::size_of::<$ty>();
            fixed::<N>(data, pos).map(|b| (Val::$variant(<$ty>::$from(b)), N as u64))
        }};
    }
    match kind {
        ReadKind::Byte => fixed!(U8, u8, from_be_bytes),
        ReadKind::I8 => fixed!(I8, i8, from_be_bytes),
        ReadKind::U16 => fixed!(U16, u16, from_be_bytes),
        ReadKind::I16 => fixed!(I16, i16, from_be_bytes),
        ReadKind::U32 => fixed!(U32, u32, from_be_bytes),
        ReadKind::I32 => fixed!(I32, i32, from_be_bytes),
        ReadKind::U64 => fixed!(U64, u64, from_be_bytes),
        ReadKind::I64 => fixed!(I64, i64, from_be_bytes),
        ReadKind::U16Le => fixed!(U16, u16, from_le_bytes),
        ReadKind::I16Le => fixed!(I16, i16, from_le_bytes),
        ReadKind::U32Le => fixed!(U32, u32, from_le_bytes),
        ReadKind::I32Le => fixed!(I32, i32, from_le_bytes),
        ReadKind::U64Le => fixed!(U64, u64, from_le_bytes),
        ReadKind::I64Le => fixed!(I64, i64, from_le_bytes),
        ReadKind::VInt => vint(data, pos).map(|(v, n)| (Val::U32(v), n)),
        // Lucene's readVLong: 9 bytes at most, below 2^63.
        ReadKind::VLong => {
            varint(data, pos, 9, i64::MAX as u128).map(|(v, n)| (Val::U64(v as u64), n))
        }
        // Any u64: 10 bytes at most.
        ReadKind::VarintU64 => {
            varint(data, pos, 10, u128::from(u64::MAX)).map(|(v, n)| (Val::U64(v as u64), n))
        }
        ReadKind::ZInt => vint(data, pos).map(|(v, n)| (Val::I32(zigzag32(v)), n)),
        // Lucene's readZLong: zig-zag over a varint of up to 10 bytes.
        ReadKind::ZLong => varint(data, pos, 10, u128::from(u64::MAX))
            .map(|(v, n)| (Val::I64(zigzag64(v as u64)), n)),
        ReadKind::String => string(data, pos).map(|(s, n)| (Val::Str(s), n)),
    }
}

/// The width of one value of a bulk read, and whether it is little-endian.
pub fn into_width(kind: IntoKind) -> (u64, bool) {
    match kind {
        IntoKind::U16 => (2, false),
        IntoKind::U32 | IntoKind::I32 => (4, false),
        IntoKind::U64 | IntoKind::I64 => (8, false),
        IntoKind::U16Le => (2, true),
        IntoKind::U32Le | IntoKind::I32Le => (4, true),
        IntoKind::U64Le | IntoKind::I64Le => (8, true),
    }
}
