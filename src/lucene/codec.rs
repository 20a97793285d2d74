//! Lucene's codec framing (`CodecUtil`): the header every index file starts with, the index
//! header that ties a file to its segment, the footer that ends it with a CRC32, and the sets
//! and maps of strings segment files hold.
//!
//! Parse and verify a file in one pass: start checksumming where the file starts, read the
//! header, the body, then [`check_footer`]: its CRC is the one of every byte consumed before it.
//!
//! ```
//! use async_buffered_input::lucene::codec;
//! use async_buffered_input::AsyncBufferedInput;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! // A header for codec "demo", version 3, then 2 bytes of body, then the footer.
//! let mut file = Vec::new();
//! file.extend_from_slice(&codec::CODEC_MAGIC.to_be_bytes());
//! file.push(4);
//! file.extend_from_slice(b"demo");
//! file.extend_from_slice(&3u32.to_be_bytes());
//! file.extend_from_slice(&[7, 8]);
//! file.extend_from_slice(&codec::FOOTER_MAGIC.to_be_bytes());
//! file.extend_from_slice(&0u32.to_be_bytes());
//! let crc = crc32fast::hash(&file);
//! file.extend_from_slice(&u64::from(crc).to_be_bytes());
//!
//! let mut input = AsyncBufferedInput::new(std::io::Cursor::new(file));
//! input.start_checksum();
//! assert_eq!(codec::check_header(&mut input, "demo", 1, 3).await?, 3);
//! assert_eq!(input.read_u16().await?, 0x0708);
//! assert_eq!(codec::check_footer(&mut input).await?, crc);
//! # Ok(())
//! # }
//! ```
//!
//! Every check fails with an `InvalidData` error carrying a [`InputError`](crate::InputError) (corruption): the resource,
//! the position, what was expected and what was found, like Lucene's `CorruptIndexException`.

use std::collections::{BTreeMap, BTreeSet};
use std::io;

use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

/// The first 4 bytes of every Lucene index file (`CodecUtil.CODEC_MAGIC`).
pub const CODEC_MAGIC: u32 = 0x3fd7_6c17;
/// The first 4 bytes of every footer: the codec magic, bit-inverted.
pub const FOOTER_MAGIC: u32 = !CODEC_MAGIC;
/// The length of a footer: magic, algorithm id, CRC32 as a long.
pub const FOOTER_LENGTH: u64 = 16;
/// The length of segment and commit ids (`StringHelper.ID_LENGTH`).
pub const ID_LENGTH: usize = 16;

/// What an index header holds beyond the codec and version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IndexHeader {
    /// The codec version.
    pub(crate) version: u32,
    /// The segment or commit id.
    pub(crate) id: [u8; ID_LENGTH],
    /// The suffix (a generation in base 36 for `segments_N`, often empty).
    pub(crate) suffix: String,
}

/// Reads a codec header (`CodecUtil.checkHeader`): the magic, the codec's name, and its
/// version, which must lie in `min_version..=max_version`. Returns the version.
///
/// # Errors
///
/// `InvalidData` with a [`InputError`](crate::InputError) (corruption) for a wrong magic, codec name or version; the read's
/// own error if the data ends or the source fails.
///
/// # Cancel safety
///
/// Not cancel safe: a header read in part stays read; seek back to its start to read it again.
pub async fn check_header<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
    codec: &str,
    min_version: u32,
    max_version: u32,
) -> io::Result<u32> {
    let at = input.position();
    let magic = input.read_u32().await?;
    if magic != CODEC_MAGIC {
        return Err(input.corrupt_at(
            at,
            format!("the codec header magic {CODEC_MAGIC:#010x}"),
            format!("{magic:#010x}"),
        ));
    }
    check_header_no_magic(input, codec, min_version, max_version).await
}

/// [`check_header`] after the magic, for readers that read it themselves.
///
/// # Errors
///
/// As [`check_header`].
///
/// # Cancel safety
///
/// As [`check_header`].
pub async fn check_header_no_magic<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
    codec: &str,
    min_version: u32,
    max_version: u32,
) -> io::Result<u32> {
    let at = input.position();
    let name = input.read_string().await?;
    if name != codec {
        return Err(input.corrupt_at(at, format!("codec {codec:?}"), format!("codec {name:?}")));
    }
    let at = input.position();
    let version = input.read_u32().await?;
    if !(min_version..=max_version).contains(&version) {
        return Err(input.corrupt_at(
            at,
            format!("a {codec} version in {min_version}..={max_version}"),
            format!("version {version}"),
        ));
    }
    Ok(version)
}

/// Reads an index header (`CodecUtil.writeIndexHeader`'s layout): a codec header, then the id
/// and the suffix, whatever they are.
///
/// # Errors
///
/// As [`check_header`].
///
/// # Cancel safety
///
/// As [`check_header`].
pub(crate) async fn read_index_header<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
    codec: &str,
    min_version: u32,
    max_version: u32,
) -> io::Result<IndexHeader> {
    let version = check_header(input, codec, min_version, max_version).await?;
    let mut id = [0u8; ID_LENGTH];
    input.read_bytes(&mut id).await?;
    let at = input.position();
    let len = input.read_byte().await?;
    let suffix = input.read_bytes_owned(usize::from(len)).await?;
    let suffix = String::from_utf8(suffix.to_vec())
        .map_err(|_| input.corrupt_at(at, "an ASCII suffix", format!("bytes {suffix:02x?}")))?;
    Ok(IndexHeader {
        version,
        id,
        suffix,
    })
}

/// Reads and checks an index header (`CodecUtil.checkIndexHeader`): the codec header, then the
/// `id` and `suffix` the file must carry. Returns the version.
///
/// # Errors
///
/// As [`check_header`], and for an id or suffix other than the expected ones.
///
/// # Cancel safety
///
/// As [`check_header`].
pub async fn check_index_header<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
    codec: &str,
    min_version: u32,
    max_version: u32,
    id: &[u8; ID_LENGTH],
    suffix: &str,
) -> io::Result<u32> {
    let at = input.position();
    let header = read_index_header(input, codec, min_version, max_version).await?;
    if &header.id != id {
        return Err(input.corrupt_at(
            at,
            format!("id {}", hex(id)),
            format!("id {}", hex(&header.id)),
        ));
    }
    if header.suffix != suffix {
        return Err(input.corrupt_at(
            at,
            format!("suffix {suffix:?}"),
            format!("suffix {:?}", header.suffix),
        ));
    }
    Ok(header.version)
}

/// Reads the footer and checks it (`CodecUtil.checkFooter`): it must start where the input is,
/// end the file, carry the footer magic and algorithm 0, and its CRC32 must be the input's
/// [`checksum`](AsyncBufferedInput::checksum) of every byte before the CRC. Returns the CRC.
///
/// Start checksumming at the start of the file
/// ([`start_checksum`](AsyncBufferedInput::start_checksum)) and read the whole file before.
///
/// # Errors
///
/// `InvalidData` with a [`InputError`](crate::InputError) (corruption) for a misplaced or malformed footer or a CRC that
/// differs; `InvalidInput` if the input is not checksumming from 0 or a seek went back; the
/// source's own error kind if it fails.
///
/// # Cancel safety
///
/// Not cancel safe: a footer read in part stays read.
pub async fn check_footer<F: Fetch>(input: &mut AsyncBufferedInput<F>) -> io::Result<u32> {
    if input.checksum_start() != Some(0) {
        let start = match input.checksum_start() {
            Some(start) => format!("from {start}"),
            None => "at all".to_owned(),
        };
        return Err(input.invalid_input(
            "check_footer",
            input.position(),
            format!(
                "the footer's CRC covers the whole file, but the input is not checksumming \
                 {start}: call start_checksum at position 0"
            ),
        ));
    }
    validate_footer(input).await?;
    let actual = input.checksum().await?;
    let expected = read_crc(input).await?;
    check_crc(input, input.position() - 8, expected, actual)
}

/// Reads the CRC32 a file's footer holds (`CodecUtil.retrieveChecksum`), checking the footer's
/// structure but not the bytes: seeks to the footer and leaves the input after it.
///
/// # Errors
///
/// `InvalidData` with a [`InputError`](crate::InputError) (corruption) for a file shorter than a footer or a malformed one;
/// the source's own error kind if it fails.
///
/// # Cancel safety
///
/// Not cancel safe: the position may be anywhere in the footer.
pub async fn retrieve_checksum<F: Fetch>(input: &mut AsyncBufferedInput<F>) -> io::Result<u32> {
    let length = input.length().await?;
    check_room_for_footer(input, length)?;
    input.seek_to(length - FOOTER_LENGTH);
    validate_footer(input).await?;
    read_crc(input).await
}

/// Verifies a whole file (`CodecUtil.checksumEntireFile`): the CRC32 of every byte but the last
/// 8 must be the one its footer holds, and the footer must be well formed. One pass in large
/// steps ([`for_each_chunk`](AsyncBufferedInput::for_each_chunk)), at memory speed for cached
/// files: each byte comes from the source once (none the window already holds), the footer
/// is checked from the last 16 bytes as they go by. Neither the position nor the window
/// change, so a [checksum](AsyncBufferedInput::start_checksum) in progress goes on. Returns the
/// CRC.
///
/// # Errors
///
/// `InvalidData` with a [`InputError`](crate::InputError) (corruption) for a file shorter than a footer, a
/// malformed footer or a CRC that differs; the source's own error kind if it fails.
///
/// # Cancel safety
///
/// Cancel safe: nothing is consumed.
///
/// # Examples
///
/// ```
/// use async_buffered_input::lucene::codec;
/// use async_buffered_input::AsyncBufferedInput;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let mut file = b"any bytes".to_vec();
/// file.extend_from_slice(&codec::FOOTER_MAGIC.to_be_bytes());
/// file.extend_from_slice(&0u32.to_be_bytes());
/// let crc = crc32fast::hash(&file);
/// file.extend_from_slice(&u64::from(crc).to_be_bytes());
///
/// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(file.clone()));
/// assert_eq!(codec::checksum_entire_file(&mut input).await?, crc);
/// assert_eq!(input.stats().bytes_from_source, file.len() as u64); // each byte once
/// # Ok(())
/// # }
/// ```
pub async fn checksum_entire_file<F: Fetch>(input: &mut AsyncBufferedInput<F>) -> io::Result<u32> {
    let length = input.length().await?;
    check_room_for_footer(input, length)?;
    let footer_at = length - FOOTER_LENGTH;
    let crc_at = length - 8;
    let mut hasher = crc32fast::Hasher::new();
    let mut footer = [0u8; FOOTER_LENGTH as usize];
    input
        .for_each_chunk(0..length, |at, bytes| {
            let end = at + bytes.len() as u64;
            if at < crc_at {
                hasher.update(&bytes[..(crc_at.min(end) - at) as usize]);
            }
            if end > footer_at {
                let from = footer_at.max(at);
                footer[(from - footer_at) as usize..(end - footer_at) as usize]
                    .copy_from_slice(&bytes[(from - at) as usize..]);
            }
        })
        .await?;
    check_footer_bytes(input, footer_at, &footer, hasher.finalize())
}

/// Checks a footer read by other means (`footer`, found at `footer_at` in `input`'s bytes)
/// against `actual`, the CRC32 of every byte before its CRC: the footer magic, algorithm 0,
/// a CRC32 in the long, equal to `actual`. For passes that compute CRCs themselves, such as
/// one over a compound file that verifies every sub-file on the way: the errors name
/// `input`'s [`resource`](AsyncBufferedInput::resource) (use the sub-file's
/// [slice](AsyncBufferedInput::slice_named), which costs no I/O, to name the sub-file).
/// Returns the CRC.
///
/// # Errors
///
/// `InvalidData` with a [`InputError`](crate::InputError) (corruption) for a malformed footer or a CRC
/// that differs.
pub fn check_footer_bytes<F: Fetch>(
    input: &AsyncBufferedInput<F>,
    footer_at: u64,
    footer: &[u8; FOOTER_LENGTH as usize],
    actual: u32,
) -> io::Result<u32> {
    let [magic, algorithm] = [0, 4]
        .map(|i| u32::from_be_bytes(footer[i..i + 4].try_into().expect("4 bytes of the footer")));
    let value = u64::from_be_bytes(footer[8..].try_into().expect("8 bytes of the footer"));
    check_footer_head(input, footer_at, magic, algorithm)?;
    let stored = crc_of_long(input, footer_at + 8, value)?;
    check_crc(input, footer_at + 8, stored, actual)
}

/// Reads a set of strings as Lucene's `DataOutput.writeSetOfStrings` writes it: a vint count,
/// then the strings.
///
/// # Errors
///
/// As [`read_string`](AsyncBufferedInput::read_string), and `InvalidData` for a count larger
/// than the bytes left could hold.
///
/// # Cancel safety
///
/// Not cancel safe: strings read before the future is dropped stay read.
pub async fn read_set_of_strings<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
) -> io::Result<BTreeSet<String>> {
    let count = read_count(input, 1).await?;
    let mut set = BTreeSet::new();
    for _ in 0..count {
        set.insert(input.read_string().await?);
    }
    Ok(set)
}

/// Reads a map of strings as Lucene's `DataOutput.writeMapOfStrings` writes it: a vint count,
/// then each key and its value.
///
/// # Errors
///
/// As [`read_set_of_strings`].
///
/// # Cancel safety
///
/// As [`read_set_of_strings`].
pub async fn read_map_of_strings<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
) -> io::Result<BTreeMap<String, String>> {
    let count = read_count(input, 2).await?;
    let mut map = BTreeMap::new();
    for _ in 0..count {
        let key = input.read_string().await?;
        let value = input.read_string().await?;
        map.insert(key, value);
    }
    Ok(map)
}

/// A vint count of entries of at least `min_bytes` each, checked against what is left.
async fn read_count<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
    min_bytes: u64,
) -> io::Result<u32> {
    let at = input.position();
    let count = input.read_vint().await?;
    let left = input.length().await?.saturating_sub(input.position());
    if u64::from(count) * min_bytes > left {
        return Err(input.corrupt_at(
            at,
            format!(
                "at most {} entries in the {left} bytes left",
                left / min_bytes
            ),
            format!("a count of {count}"),
        ));
    }
    Ok(count)
}

/// Checks the footer's place and its first two fields (`CodecUtil.validateFooter`).
async fn validate_footer<F: Fetch>(input: &mut AsyncBufferedInput<F>) -> io::Result<()> {
    let at = input.position();
    let remaining = input.length().await?.saturating_sub(at);
    if remaining != FOOTER_LENGTH {
        let what = if remaining < FOOTER_LENGTH {
            "truncated"
        } else {
            "extended"
        };
        return Err(input.corrupt_at(
            at,
            format!("the {FOOTER_LENGTH}-byte footer here, at the end"),
            format!("{remaining} bytes left (file {what}?)"),
        ));
    }
    let magic = input.read_u32().await?;
    let algorithm = input.read_u32().await?;
    check_footer_head(input, at, magic, algorithm)
}

/// The CRC32 stored as a long (`CodecUtil.readCRC`): its upper 32 bits must be 0.
async fn read_crc<F: Fetch>(input: &mut AsyncBufferedInput<F>) -> io::Result<u32> {
    let at = input.position();
    let value = input.read_u64().await?;
    crc_of_long(input, at, value)
}

/// A file of `length` bytes must hold at least a footer.
fn check_room_for_footer<F: Fetch>(input: &AsyncBufferedInput<F>, length: u64) -> io::Result<()> {
    if length < FOOTER_LENGTH {
        return Err(input.corrupt_at(
            0,
            format!("at least a footer ({FOOTER_LENGTH} bytes)"),
            format!("a file of {length} bytes (truncated?)"),
        ));
    }
    Ok(())
}

/// The footer's first two fields, read at `at`: [`FOOTER_MAGIC`], then algorithm 0 (CRC32).
fn check_footer_head<F: Fetch>(
    input: &AsyncBufferedInput<F>,
    at: u64,
    magic: u32,
    algorithm: u32,
) -> io::Result<()> {
    if magic != FOOTER_MAGIC {
        return Err(input.corrupt_at(
            at,
            format!("the footer magic {FOOTER_MAGIC:#010x}"),
            format!("{magic:#010x}"),
        ));
    }
    if algorithm != 0 {
        return Err(input.corrupt_at(
            at + 4,
            "checksum algorithm 0 (CRC32)",
            format!("algorithm {algorithm}"),
        ));
    }
    Ok(())
}

/// The CRC32 in a long read at `at`: its upper 32 bits must be 0.
fn crc_of_long<F: Fetch>(input: &AsyncBufferedInput<F>, at: u64, value: u64) -> io::Result<u32> {
    u32::try_from(value)
        .map_err(|_| input.corrupt_at(at, "a CRC32 (32 bits)", format!("{value:#018x}")))
}

/// The CRC the footer stores (read at `at`) must be the `actual` CRC of the bytes before it;
/// returns it.
fn check_crc<F: Fetch>(
    input: &AsyncBufferedInput<F>,
    at: u64,
    stored: u32,
    actual: u32,
) -> io::Result<u32> {
    if stored != actual {
        return Err(input.corrupt_at(
            at,
            format!("checksum {stored:#010x}, as the footer says"),
            format!("checksum {actual:#010x} (hardware problem?)"),
        ));
    }
    Ok(actual)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
