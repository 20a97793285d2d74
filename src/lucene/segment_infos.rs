use std::collections::{BTreeMap, BTreeSet};
use std::io;

use super::segment_info::SegmentInfo;
use crate::lucene::codec::{self, ID_LENGTH};
use crate::lucene::in_order::try_join_in_order;
use crate::lucene::Directory;

/// A commit of a Lucene index: what a `segments_N` file holds (Lucene's `SegmentInfos`), with
/// each segment's `.si` read too.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SegmentInfos {
    /// The commit's file: `segments_N`.
    pub file: String,
    /// Its generation, `N` in base 36.
    pub generation: u64,
    /// The commit's id.
    pub id: [u8; ID_LENGTH],
    /// The Lucene version that wrote the commit (major, minor, bugfix).
    pub lucene_version: (u32, u32, u32),
    /// The major version of Lucene that created the index.
    pub created_major: u32,
    /// The commit's version (incremented on every change).
    pub version: i64,
    /// The counter that names new segments.
    pub counter: u64,
    /// The segments, in the commit's order.
    pub segments: Vec<SegmentCommitInfo>,
    /// The commit's user data.
    pub user_data: BTreeMap<String, String>,
    /// The bytes read from storage for `segments_N` and every `.si`.
    pub bytes_read: u64,
}

/// One segment of a commit: what its `.si` says and what the commit adds (Lucene's
/// `SegmentCommitInfo`, with the fields of its `SegmentInfo`).
///
/// Lucene keeps the `.si`'s fields apart (a `SegmentInfo`, shared by the commits of a live
/// `IndexWriter`) from the commit's (deletions and updates); a commit read here is one value,
/// so each segment is one record, and `files` is every file of the segment in this commit.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SegmentCommitInfo {
    /// The segment's name (`_0`, `_1a`, ...).
    pub name: String,
    /// The segment's id, as the commit and the `.si` header hold it.
    pub id: [u8; ID_LENGTH],
    /// The codec that wrote the segment (`Lucene87`, ...).
    pub codec: String,
    /// The Lucene version that wrote the segment (major, minor, bugfix).
    pub version: (u32, u32, u32),
    /// The oldest Lucene version that wrote a part of it, if recorded.
    pub min_version: Option<(u32, u32, u32)>,
    /// The number of documents.
    pub docs: u32,
    /// Deleted documents.
    pub deleted: u32,
    /// Soft-deleted documents.
    pub soft_deleted: u32,
    /// Whether its files are in a compound file (`.cfs`/`.cfe`).
    pub compound: bool,
    /// Whether the segment is sorted (its sort fields are not decoded).
    pub sorted: bool,
    /// Diagnostics: how and by what it was written (`source`, `os`, `java.version`, ...).
    pub diagnostics: BTreeMap<String, String>,
    /// Codec attributes.
    pub attributes: BTreeMap<String, String>,
    /// The generation of its live docs (`.liv`), -1 if it has no deletions.
    pub del_gen: i64,
    /// The generation of its field infos updates, -1 if none.
    pub field_infos_gen: i64,
    /// The generation of its doc-values updates, -1 if none.
    pub doc_values_gen: i64,
    /// Every file of the segment in this commit: the `.si` and those it names, its live docs,
    /// and its field infos and doc-values updates.
    pub files: BTreeSet<String>,
}

impl SegmentInfos {
    /// The generation of a commit file's name: `segments_N` gives `N` in base 36, and the
    /// pre-generation `segments` gives 0. `None` for any other name.
    pub fn generation_of(file: &str) -> Option<u64> {
        match file.strip_prefix("segments_") {
            Some(generation) => u64::from_str_radix(generation, 36).ok(),
            None if file == "segments" => Some(0),
            None => None,
        }
    }

    /// Lists `dir` and reads its latest commit: the `segments_N` with the highest generation,
    /// and every segment's `.si` (Lucene's `SegmentInfos.readLatestCommit`). The listing gives
    /// the directory every file's length, so no file of the index needs a `HEAD` afterwards.
    ///
    /// # Errors
    ///
    /// `NotFound` naming the directory if it holds no `segments_N`; otherwise as
    /// [`read`](Self::read).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is kept but the lengths the listing taught the directory.
    pub async fn read_latest_commit(dir: &Directory) -> io::Result<Self> {
        let latest = dir
            .list()
            .await?
            .into_iter()
            .filter_map(|name| Some((Self::generation_of(&name)?, name)))
            .max();
        let Some((_, file)) = latest else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "no segments_N file in {}: not a Lucene index",
                    dir.location()
                ),
            ));
        };
        Self::read(dir, &file).await
    }

    /// Reads and verifies the commit file `file` (`segments_N`) of `dir` in one pass, then each
    /// of its segments' `.si`, up to [`dir.concurrency()`](Directory::concurrency) at once.
    ///
    /// # Errors
    ///
    /// The directory's error naming the file if one cannot be opened or read; `InvalidData`
    /// with an [`InputError`](crate::InputError) (corruption) naming the file and the
    /// position for a wrong header, generation, field or checksum. The commit file's own errors
    /// come first, then those of the `.si` files in the commit's order.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is kept but the inputs, which are dropped (a `.si` being read is
    /// abandoned).
    pub async fn read(dir: &Directory, file: &str) -> io::Result<Self> {
        let generation = Self::generation_of(file).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{file} in {}: not a segments_N file", dir.location()),
            )
        })?;
        let mut input = dir.open(file).await?;
        input.start_checksum();
        // Lucene reads the magic itself, to tell an index too old from a corrupt one.
        let magic = input.read_u32().await?;
        if magic != codec::CODEC_MAGIC {
            return Err(input.corrupt_at(
                0,
                format!("the codec header magic {:#010x}", codec::CODEC_MAGIC),
                format!("{magic:#010x} (an index older than Lucene 4?)"),
            ));
        }
        let format = codec::check_header_no_magic(&mut input, "segments", 7, 10).await?;
        let mut id = [0u8; ID_LENGTH];
        input.read_bytes(&mut id).await?;
        let suffix_at = input.position();
        let suffix_len = input.read_byte().await?;
        let suffix = input.read_bytes_owned(usize::from(suffix_len)).await?;
        let expected_suffix = radix36(generation);
        if suffix[..] != *expected_suffix.as_bytes() {
            return Err(input.corrupt_at(
                suffix_at,
                format!("the generation {expected_suffix:?} as the header's suffix"),
                format!("{:?}", String::from_utf8_lossy(&suffix)),
            ));
        }
        let lucene_version = (
            input.read_vint().await?,
            input.read_vint().await?,
            input.read_vint().await?,
        );
        let created_major = input.read_vint().await?;
        let version = input.read_i64().await?;
        let counter = if format > 7 {
            input.read_vlong().await?
        } else {
            u64::from(input.read_u32().await?)
        };
        let count_at = input.position();
        let count = input.read_i32().await?;
        if count < 0 {
            return Err(input.corrupt_at(count_at, "a segment count", count.to_string()));
        }
        if count > 0 {
            let _min_version = (
                input.read_vint().await?,
                input.read_vint().await?,
                input.read_vint().await?,
            );
        }
        // The commit's entries first, and its footer: the `.si` files it names are read
        // only once the commit is known to be whole, all at once.
        let mut entries = Vec::new();
        for _ in 0..count {
            let name = input.read_string().await?;
            let mut id = [0u8; ID_LENGTH];
            input.read_bytes(&mut id).await?;
            let codec = input.read_string().await?;
            let del_gen = input.read_i64().await?;
            let deleted_at = input.position();
            let deleted = input.read_i32().await?;
            let field_infos_gen = input.read_i64().await?;
            let doc_values_gen = input.read_i64().await?;
            let soft_deleted = if format > 8 {
                input.read_i32().await?
            } else {
                0
            };
            if format > 9 {
                let marker_at = input.position();
                match input.read_i8().await? {
                    0 => {}
                    1 => input.read_bytes(&mut [0u8; ID_LENGTH]).await?,
                    other => {
                        return Err(input.corrupt_at(
                            marker_at,
                            "a commit id marker, 0 or 1",
                            other.to_string(),
                        ))
                    }
                }
            }
            let mut files = codec::read_set_of_strings(&mut input).await?;
            let dv_fields = input.read_i32().await?;
            for _ in 0..dv_fields.max(0) {
                let _field = input.read_i32().await?;
                files.extend(codec::read_set_of_strings(&mut input).await?);
            }
            if del_gen != -1 {
                files.insert(format!("{name}_{}.liv", radix36(del_gen as u64)));
            }
            entries.push(Entry {
                name,
                id,
                codec,
                del_gen,
                deleted_at,
                deleted,
                soft_deleted,
                field_infos_gen,
                doc_values_gen,
                files,
            });
        }
        let user_data = codec::read_map_of_strings(&mut input).await?;
        codec::check_footer(&mut input).await?;

        let infos = entries.iter().map(|entry| {
            let (dir, name, id) = (dir.clone(), entry.name.clone(), entry.id);
            async move { SegmentInfo::read(&dir, &name, &id).await }
        });
        let infos = try_join_in_order(dir.concurrency(), infos).await?;
        let mut segments = Vec::with_capacity(entries.len());
        let mut bytes_read = 0;
        for (entry, info) in entries.into_iter().zip(infos) {
            bytes_read += info.bytes_read;
            let (deleted, soft_deleted) = (entry.deleted, entry.soft_deleted);
            if deleted < 0
                || soft_deleted < 0
                || i64::from(deleted) + i64::from(soft_deleted) > i64::from(info.docs)
            {
                return Err(input.corrupt_at(
                    entry.deleted_at,
                    format!("at most {} deletions", info.docs),
                    format!("{deleted} deleted and {soft_deleted} soft-deleted"),
                ));
            }
            let mut files = entry.files;
            files.extend(info.files);
            segments.push(SegmentCommitInfo {
                name: info.name,
                id: info.id,
                codec: entry.codec,
                version: info.version,
                min_version: info.min_version,
                docs: info.docs,
                deleted: deleted as u32,
                soft_deleted: soft_deleted as u32,
                compound: info.compound,
                sorted: info.sorted,
                diagnostics: info.diagnostics,
                attributes: info.attributes,
                del_gen: entry.del_gen,
                field_infos_gen: entry.field_infos_gen,
                doc_values_gen: entry.doc_values_gen,
                files,
            });
        }
        Ok(Self {
            file: file.to_owned(),
            generation,
            id,
            lucene_version,
            created_major,
            version,
            counter,
            segments,
            user_data,
            bytes_read: bytes_read + input.stats().bytes_from_source,
        })
    }

    /// Every file of the commit, `segments_N` included, sorted.
    pub fn files(&self) -> BTreeSet<String> {
        let mut files: BTreeSet<String> = self
            .segments
            .iter()
            .flat_map(|s| s.files.iter().cloned())
            .collect();
        files.insert(self.file.clone());
        files
    }
}

/// A segment as the commit file names it, before its `.si` is read.
struct Entry {
    name: String,
    id: [u8; ID_LENGTH],
    codec: String,
    del_gen: i64,
    // Where the deletion count is, for the error if the `.si` says it is too many.
    deleted_at: u64,
    deleted: i32,
    soft_deleted: i32,
    field_infos_gen: i64,
    doc_values_gen: i64,
    // The commit's files of the segment (the `.si`'s are added to them).
    files: BTreeSet<String>,
}

/// `n` in base 36, as Java's `Long.toString(n, Character.MAX_RADIX)` writes generations.
pub(crate) fn radix36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_are_base_36_both_ways() {
        for n in [0u64, 1, 35, 36, 1295, 1296, u64::MAX] {
            let name = format!("segments_{}", radix36(n));
            assert_eq!(SegmentInfos::generation_of(&name), Some(n), "{name}");
        }
        assert_eq!(radix36(36 * 36 + 10), "10a");
        assert_eq!(SegmentInfos::generation_of("segments"), Some(0));
        for other in [
            "segments_",
            "segments_!",
            "_0.si",
            "pending_segments_2",
            "write.lock",
        ] {
            assert_eq!(SegmentInfos::generation_of(other), None, "{other}");
        }
    }
}
