//! The bytes of one block on disk: a header, the source's name, the block.
//!
//! ```text
//! 0   magic        8 bytes  "ABIDISK1"
//! 8   header_crc   u32 LE   CRC32 of bytes 12..40 and the name
//! 12  name_len     u16 LE   at most MAX_NAME
//! 14  reserved     u16      0
//! 16  index        u64 LE   the block's number in its source
//! 24  source_len   u64 LE   the source's length when the block was read
//! 32  data_len     u32 LE   the block's length (1..=block size)
//! 36  data_crc     u32 LE   CRC32 of the block
//! 40  name         name_len bytes, UTF-8
//! ..  data         data_len bytes
//! ```
//!
//! A record is written with one positional write. A write cut short (a crash) or a byte that
//! changed on disk fails one of the two checksums, so the record is never served.

use std::sync::Arc;

use bytes::Bytes;

/// The first 8 bytes of every record: the format, version 1.
pub(super) const MAGIC: [u8; 8] = *b"ABIDISK1";

/// The header's length: the bytes before the name.
pub(super) const HEADER: usize = 40;

/// The longest source name a record holds, in bytes: blocks of sources with longer names are
/// not written to disk.
pub(super) const MAX_NAME: usize = 512;

/// What a block is kept under on disk: its source's name and length, and its number.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct DiskKey {
    pub(crate) name: Arc<str>,
    pub(crate) source_len: u64,
    pub(crate) index: u64,
}

/// A record's header, as read back (the name included).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Header {
    pub(super) key: DiskKey,
    pub(super) data_len: u32,
    pub(super) data_crc: u32,
}

impl Header {
    /// The record's length on disk.
    pub(super) fn record_len(&self) -> usize {
        HEADER + self.key.name.len() + self.data_len as usize
    }
}

/// The record of `data` under `key`: header, name, data. `None` if the name is longer than
/// [`MAX_NAME`] or `data` is empty or longer than `u32::MAX`.
pub(super) fn encode(key: &DiskKey, data: &[u8]) -> Option<Vec<u8>> {
    let name = key.name.as_bytes();
    if name.len() > MAX_NAME || data.is_empty() || data.len() > u32::MAX as usize {
        return None;
    }
    let mut out = Vec::with_capacity(HEADER + name.len() + data.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&[0; 4]); // header_crc, below
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(&[0; 2]);
    out.extend_from_slice(&key.index.to_le_bytes());
    out.extend_from_slice(&key.source_len.to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    out.extend_from_slice(name);
    let header_crc = crc32fast::hash(&out[12..]);
    out[8..12].copy_from_slice(&header_crc.to_le_bytes());
    out.extend_from_slice(data);
    debug_assert_eq!(out.len(), HEADER + name.len() + data.len());
    Some(out)
}

/// The header at the start of `bytes` (which hold at least the header and the name), if its
/// magic, lengths and checksum are right. `max_data` is the block size: a longer block is a
/// broken header.
pub(super) fn decode_header(bytes: &[u8], max_data: usize) -> Option<Header> {
    if bytes.len() < HEADER || bytes[..8] != MAGIC || bytes[14..16] != [0, 0] {
        return None;
    }
    let u16_at = |at: usize| u16::from_le_bytes(bytes[at..at + 2].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let name_len = u16_at(12) as usize;
    let data_len = u32_at(32);
    if name_len > MAX_NAME
        || bytes.len() < HEADER + name_len
        || data_len == 0
        || data_len as usize > max_data
    {
        return None;
    }
    if crc32fast::hash(&bytes[12..HEADER + name_len]) != u32_at(8) {
        return None;
    }
    let name = std::str::from_utf8(&bytes[HEADER..HEADER + name_len]).ok()?;
    Some(Header {
        key: DiskKey {
            name: name.into(),
            source_len: u64_at(24),
            index: u64_at(16),
        },
        data_len,
        data_crc: u32_at(36),
    })
}

/// The block in `record` (a whole record as read back), if it is a valid record of `key` with
/// data of `data_len` bytes whose checksum matches.
pub(super) fn decode(record: Bytes, key: &DiskKey, max_data: usize) -> Option<Bytes> {
    let header = decode_header(&record, max_data)?;
    if header.key != *key || record.len() != header.record_len() {
        return None;
    }
    let data = record.slice(HEADER + key.name.len()..);
    (crc32fast::hash(&data) == header.data_crc).then_some(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> DiskKey {
        DiskKey {
            name: "http://host/segment_7.cfs".into(),
            source_len: 123_456,
            index: 9,
        }
    }

    #[test]
    fn a_record_reads_back() {
        let data: Vec<u8> = (0..1000).map(|i| (i * 31) as u8).collect();
        let record = encode(&key(), &data).unwrap();
        let header = decode_header(&record, 1000).unwrap();
        assert_eq!(header.key, key());
        assert_eq!(header.record_len(), record.len());
        assert_eq!(decode(record.into(), &key(), 1000).unwrap(), data);
    }

    #[test]
    fn every_flipped_byte_and_every_cut_is_caught() {
        let data: Vec<u8> = (0..300).map(|i| (i * 7) as u8).collect();
        let record = encode(&key(), &data).unwrap();
        for at in 0..record.len() {
            for bit in [0x01, 0x80] {
                let mut broken = record.clone();
                broken[at] ^= bit;
                assert_eq!(
                    decode(broken.into(), &key(), 300),
                    None,
                    "byte {at} ^ {bit:#x}"
                );
            }
        }
        for len in 0..record.len() {
            assert_eq!(
                decode(Bytes::copy_from_slice(&record[..len]), &key(), 300),
                None
            );
        }
    }

    #[test]
    fn another_key_or_a_long_block_is_refused() {
        let record = Bytes::from(encode(&key(), b"abc").unwrap());
        let other = DiskKey {
            source_len: 123_457,
            ..key()
        };
        assert_eq!(decode(record.clone(), &other, 3), None);
        assert_eq!(decode(record, &key(), 2), None, "longer than a block");
        let long = DiskKey {
            name: "x".repeat(MAX_NAME + 1).into(),
            ..key()
        };
        assert_eq!(encode(&long, b"abc"), None);
        assert_eq!(encode(&key(), b""), None);
    }
}
