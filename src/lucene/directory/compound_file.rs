//! A segment's compound file, read: what a compound [`Directory`](crate::lucene::Directory)
//! opens its sub-files in, and what `verify_commit` checks in one pass.

use std::fmt;
use std::io;

use crate::input::fetch::PositionalFetch;
use crate::input::AsyncBufferedInput;
use crate::lucene::codec::{self, ID_LENGTH};
use crate::source::DynSource;

/// An input as a directory opens it.
pub(crate) type Input = AsyncBufferedInput<PositionalFetch<DynSource>>;

/// How much of a `.cfs` is prefetched for its index header (which is about 50 bytes).
const HEADER_PREFETCH: u64 = 256;

/// A sub-file of a compound file: its name and where it lies in the `.cfs`.
#[derive(Debug)]
struct CompoundEntry {
    /// Its file name (the segment's name and the entry's suffix: `_0.fdt`).
    name: String,
    /// Its offset in the `.cfs`.
    offset: u64,
    /// Its length.
    length: u64,
}

/// A segment's compound file (`.cfs` with its entries in `.cfe`, `Lucene50CompoundFormat`),
/// read: Lucene's `CompoundDirectory` behind
/// [`Directory::open_compound`](crate::lucene::Directory::open_compound).
///
/// [`read`](Self::read) verifies the `.cfe` whole (its CRC32 footer), checks the `.cfs`'s
/// header (codec and segment id) and that every entry lies between it and the `.cfs`'s
/// footer. [`open`](Self::open) then gives a sub-file as a slice of the `.cfs` (no I/O),
/// named in errors as "slice NAME [a..b) of PATH". [`verify`](Self::verify) reads the `.cfs`
/// once and checks its footer and every sub-file's.
pub(crate) struct CompoundFile {
    // The `.cfs`, its header read (so its window holds the file's start, which `verify`
    // reads from rather than fetching again).
    input: Input,
    length: u64,
    // Sorted by name; each inside `[0, length - FOOTER_LENGTH)` and at least a footer long.
    entries: Vec<CompoundEntry>,
    cfe_bytes_read: u64,
}

impl CompoundFile {
    /// Reads segment `segment`'s `.cfe`, opened as `cfe`, and checks the `.cfs`, opened as
    /// `cfs`; `id` is the segment's id, which both headers must carry. The `.cfs`'s header is
    /// asked for first, so that its request overlaps the `.cfe`'s.
    ///
    /// # Errors
    ///
    /// The directory's error naming the file if one cannot be read; `InvalidData` with a
    /// [`InputError`](crate::InputError) (corruption) naming the file for a wrong header, id or
    /// `.cfe` checksum, an entry outside the `.cfs`, or a `.cfs` shorter than a footer.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is kept but the inputs, which are dropped.
    pub(crate) async fn read(
        mut cfe: Input,
        mut input: Input,
        segment: &str,
        id: &[u8; ID_LENGTH],
    ) -> io::Result<Self> {
        // The two first requests overlap (a round trip saved per segment on remote storage).
        input.prefetch(0, HEADER_PREFETCH);
        let file = format!("{segment}.cfs");
        cfe.start_checksum();
        codec::check_index_header(&mut cfe, "Lucene50CompoundEntries", 0, 0, id, "").await?;
        let count_at = cfe.position();
        let count = cfe.read_vint().await?;
        // Each entry takes at least 17 bytes (a string and two longs).
        let left = cfe.length().await?.saturating_sub(cfe.position());
        if u64::from(count) > left / 17 {
            return Err(cfe.corrupt_at(
                count_at,
                format!("at most {} entries in {left} bytes", left / 17),
                count.to_string(),
            ));
        }
        let mut entries = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let suffix = cfe.read_string().await?;
            let offset = cfe.read_u64().await?;
            let length = cfe.read_u64().await?;
            entries.push(CompoundEntry {
                name: format!("{segment}{suffix}"),
                offset,
                length,
            });
        }
        codec::check_footer(&mut cfe).await?;
        let cfe_bytes_read = cfe.stats().bytes_from_source;

        let length = input.length().await?;
        if length < codec::FOOTER_LENGTH {
            return Err(input.corrupt_at(
                0,
                format!("at least a footer ({} bytes)", codec::FOOTER_LENGTH),
                format!("a file of {length} bytes (truncated?)"),
            ));
        }
        for entry in &entries {
            if entry.length < codec::FOOTER_LENGTH
                || entry
                    .offset
                    .checked_add(entry.length)
                    .is_none_or(|end| end > length - codec::FOOTER_LENGTH)
            {
                return Err(input.corrupt_at(
                    entry.offset,
                    format!("sub-file {} inside the {length}-byte {file}", entry.name),
                    format!("{} bytes at offset {}", entry.length, entry.offset),
                ));
            }
        }
        codec::check_index_header(&mut input, "Lucene50CompoundData", 0, 0, id, "").await?;
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        Ok(Self {
            input,
            length,
            entries,
            cfe_bytes_read,
        })
    }

    /// The sub-files' names and lengths, sorted by name.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (String, u64)> + '_ {
        self.entries.iter().map(|e| (e.name.clone(), e.length))
    }

    /// The `.cfs`, as errors name it.
    pub(crate) fn resource(&self) -> &str {
        self.input.resource()
    }

    /// The length of sub-file `name`.
    ///
    /// # Errors
    ///
    /// `NotFound` naming the sub-file and the compound file if it holds none of that name.
    pub(crate) fn length(&self, name: &str) -> io::Result<u64> {
        Ok(self.entry(name)?.length)
    }

    /// Sub-file `name`, as a slice of the `.cfs` (no I/O): an input of its own, named
    /// "slice NAME [a..b) of PATH" in errors.
    ///
    /// # Errors
    ///
    /// `NotFound` naming the sub-file and the compound file if it holds none of that name.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe.
    pub(crate) async fn open(&self, name: &str) -> io::Result<Input> {
        let entry = self.entry(name)?;
        self.input
            .slice_named(&entry.name, entry.offset, entry.length)
            .await
    }

    /// Verifies the `.cfs` and each sub-file, reading each byte once: one pass computes the
    /// file's CRC and every sub-file's, and keeps every footer as it goes by. Returns the
    /// number of sub-files.
    ///
    /// # Errors
    ///
    /// The read's error if the `.cfs` cannot be read; `InvalidData` with a
    /// [`InputError`](crate::InputError) (corruption) for a footer or checksum that is wrong: a
    /// sub-file's first (named as its slice, "slice NAME [a..b) of PATH"), then the file's own.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: the pass starts again from the start of the file on the next call.
    pub(crate) async fn verify(&mut self) -> io::Result<usize> {
        let length = self.length;
        let input = &mut self.input;
        // One pass over the file, itself included as the first of the files it holds: each
        // one's CRC over its bytes but its last 8, and its footer, its last 16.
        let files: Vec<(u64, u64)> = std::iter::once((0, length))
            .chain(self.entries.iter().map(|e| (e.offset, e.length)))
            .collect();
        let mut crcs: Vec<(crc32fast::Hasher, [u8; 16])> = files
            .iter()
            .map(|_| (crc32fast::Hasher::new(), [0u8; 16]))
            .collect();
        input
            .for_each_chunk(0..length, |at, bytes| {
                let end = at + bytes.len() as u64;
                for (&(offset, len), (hasher, footer)) in files.iter().zip(&mut crcs) {
                    let (body_end, stop) = (offset + len - 8, offset + len);
                    if at < body_end && end > offset {
                        let from = offset.max(at) - at;
                        let to = body_end.min(end) - at;
                        hasher.update(&bytes[from as usize..to as usize]);
                    }
                    let footer_at = stop - codec::FOOTER_LENGTH;
                    if at < stop && end > footer_at {
                        let from = footer_at.max(at);
                        let to = stop.min(end);
                        footer[(from - footer_at) as usize..(to - footer_at) as usize]
                            .copy_from_slice(&bytes[(from - at) as usize..(to - at) as usize]);
                    }
                }
            })
            .await?;
        let mut crcs = crcs.into_iter();
        let (whole, whole_footer) = crcs.next().expect("the file's own");
        // The sub-files first: a corrupt one is the more precise answer. Each is checked as
        // its slice, which names it and costs no I/O. What they do not cover (the file's
        // header, padding between them, its footer) is the file's own CRC's to catch.
        for (entry, (hasher, footer)) in self.entries.iter().zip(crcs) {
            let sub = input
                .slice_named(&entry.name, entry.offset, entry.length)
                .await?;
            codec::check_footer_bytes(
                &sub,
                entry.length - codec::FOOTER_LENGTH,
                &footer,
                hasher.finalize(),
            )?;
        }
        codec::check_footer_bytes(
            input,
            length - codec::FOOTER_LENGTH,
            &whole_footer,
            whole.finalize(),
        )?;
        Ok(self.entries.len())
    }

    /// The bytes read from storage so far: the `.cfe`, and what was read of the `.cfs` (by
    /// [`read`](Self::read) and [`verify`](Self::verify); not by the sub-files'
    /// inputs).
    pub(crate) fn bytes_read(&self) -> u64 {
        self.cfe_bytes_read + self.input.stats().bytes_from_source
    }

    fn entry(&self, name: &str) -> io::Result<&CompoundEntry> {
        match self.entries.binary_search_by(|e| e.name.as_str().cmp(name)) {
            Ok(i) => Ok(&self.entries[i]),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no sub-file {name} in {}", self.input.resource()),
            )),
        }
    }
}

impl fmt::Debug for CompoundFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompoundFile")
            .field("file", &self.input.resource())
            .field("length", &self.length)
            .field("entries", &self.entries.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use crate::lucene::{Directory, SegmentInfos};

    #[tokio::test]
    async fn entries_lie_where_the_cfe_says() {
        let index = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/lucene-index/index"
        );
        let dir = Directory::local(index);
        let commit = SegmentInfos::read_latest_commit(&dir).await.unwrap();
        let mut compound = 0;
        for segment in commit.segments.iter().filter(|s| s.compound) {
            let (name, id) = (&segment.name, &segment.id);
            let cfs = dir.compound_file(name, id).await.unwrap();
            let whole = std::fs::read(format!("{index}/{name}.cfs")).unwrap();
            assert!(!cfs.entries.is_empty(), "{name}");
            for entry in &cfs.entries {
                let mut sub = cfs.open(&entry.name).await.unwrap();
                let bytes = sub.read_bytes_owned(entry.length as usize).await.unwrap();
                let at = entry.offset as usize;
                let expected = &whole[at..at + entry.length as usize];
                assert!(bytes[..] == *expected, "{}", entry.name);
            }
            compound += 1;
        }
        assert!(compound > 0, "a compound segment in the fixture");
    }
}
