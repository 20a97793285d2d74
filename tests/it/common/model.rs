//! Lucene's `DataInput` decoding, written plainly for the model's side of typed reads.

use std::io::ErrorKind;

/// The Lucene varint at `pos` of `data` (at most `max_len` bytes, the last carrying at most
/// `last_bits` bits), as `DataInput.readVInt`/`readVLong` decode it: its value and length, or
/// the error kind a read of it must fail with (`UnexpectedEof` if the data ends inside it,
/// `InvalidData` if it is malformed).
pub fn model_varint(
    data: &[u8],
    pos: u64,
    max_len: usize,
    last_bits: u32,
) -> Result<(u64, usize), ErrorKind> {
    let bytes = usize::try_from(pos)
        .ok()
        .and_then(|p| data.get(p..))
        .unwrap_or(&[]);
    let mut value = 0u64;
    for i in 0..max_len {
        let &b = bytes.get(i).ok_or(ErrorKind::UnexpectedEof)?;
        if i == max_len - 1 {
            if u32::from(b) >> last_bits != 0 {
                return Err(ErrorKind::InvalidData);
            }
            return Ok((value | u64::from(b) << (7 * i), max_len));
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    unreachable!("a varint of at most {max_len} bytes")
}

/// The Lucene string at `pos` of `data` (a vint byte length, then UTF-8), as
/// `DataInput.readString` decodes it: the string and its length with the prefix, or the error
/// kind a read of it must fail with.
pub fn model_string(data: &[u8], pos: u64) -> Result<(String, usize), ErrorKind> {
    let (len, prefix) = model_varint(data, pos, 5, 4)?;
    let start = pos as usize + prefix;
    let end = start as u64 + len;
    if end > data.len() as u64 {
        return Err(ErrorKind::UnexpectedEof);
    }
    let s = std::str::from_utf8(&data[start..end as usize]).map_err(|_| ErrorKind::InvalidData)?;
    Ok((s.to_owned(), prefix + len as usize))
}
