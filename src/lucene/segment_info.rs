use std::collections::{BTreeMap, BTreeSet};
use std::io;

use crate::lucene::codec::{self, ID_LENGTH};
use crate::lucene::Directory;

/// What a segment's `.si` file says of it (Lucene's `SegmentInfo`, as
/// `Lucene86SegmentInfoFormat` writes it): the half of a
/// [`SegmentCommitInfo`](super::SegmentCommitInfo) that the commit file does not hold.
#[derive(Debug)]
pub(super) struct SegmentInfo {
    /// The segment's name (`_0`, `_1a`, ...).
    pub(super) name: String,
    /// The segment's id, as the commit and the `.si` header hold it.
    pub(super) id: [u8; ID_LENGTH],
    /// The Lucene version that wrote the segment (major, minor, bugfix).
    pub(super) version: (u32, u32, u32),
    /// The oldest Lucene version that wrote a part of it, if recorded.
    pub(super) min_version: Option<(u32, u32, u32)>,
    /// The number of documents.
    pub(super) docs: u32,
    /// Whether its files are in a compound file (`.cfs`/`.cfe`).
    pub(super) compound: bool,
    /// Diagnostics: how and by what it was written (`source`, `os`, `java.version`, ...).
    pub(super) diagnostics: BTreeMap<String, String>,
    /// Its files, the `.si` itself included.
    pub(super) files: BTreeSet<String>,
    /// Codec attributes.
    pub(super) attributes: BTreeMap<String, String>,
    /// Whether the segment is sorted (its sort fields are not decoded).
    pub(super) sorted: bool,
    /// The bytes read from storage for the `.si`.
    pub(super) bytes_read: u64,
}

impl SegmentInfo {
    /// Reads and verifies segment `name`'s `.si` in `dir`, in one pass: its header (which
    /// must carry `id`), its fields, and its CRC32 footer.
    ///
    /// # Errors
    ///
    /// The directory's error naming the file if it cannot be opened or read; `InvalidData`
    /// with a [`InputError`](crate::InputError) (corruption) naming the file and the position for a
    /// wrong header, id, field or checksum.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is kept but the input, which is dropped.
    pub(super) async fn read(
        dir: &Directory,
        name: &str,
        id: &[u8; ID_LENGTH],
    ) -> io::Result<Self> {
        let mut input = dir.open(&format!("{name}.si")).await?;
        input.start_checksum();
        codec::check_index_header(&mut input, "Lucene86SegmentInfo", 0, 0, id, "").await?;
        let version = (
            input.read_u32().await?,
            input.read_u32().await?,
            input.read_u32().await?,
        );
        let has_min_at = input.position();
        let min_version = match input.read_i8().await? {
            0 => None,
            1 => Some((
                input.read_u32().await?,
                input.read_u32().await?,
                input.read_u32().await?,
            )),
            other => {
                return Err(input.corrupt_at(has_min_at, "a boolean, 0 or 1", other.to_string()))
            }
        };
        let docs_at = input.position();
        let docs = input.read_i32().await?;
        let docs = u32::try_from(docs)
            .map_err(|_| input.corrupt_at(docs_at, "a document count", docs.to_string()))?;
        let compound = input.read_i8().await? == 1;
        let diagnostics = codec::read_map_of_strings(&mut input).await?;
        let files = codec::read_set_of_strings(&mut input).await?;
        let attributes = codec::read_map_of_strings(&mut input).await?;
        let sort_fields = input.read_vint().await?;
        if sort_fields > 0 {
            // Index sorts are written by their own providers: skip them (checksumming what is
            // skipped) to the footer.
            let length = input.length().await?;
            input.seek_to(length.saturating_sub(codec::FOOTER_LENGTH));
        }
        codec::check_footer(&mut input).await?;
        Ok(Self {
            name: name.to_owned(),
            id: *id,
            version,
            min_version,
            docs,
            compound,
            diagnostics,
            files,
            attributes,
            sorted: sort_fields > 0,
            bytes_read: input.stats().bytes_from_source,
        })
    }
}
