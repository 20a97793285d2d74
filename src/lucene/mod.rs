//! Lucene's index structure, read through a [`Directory`]: the
//! latest commit (`segments_N`), each segment's `.si`, and compound files (`.cfs`/`.cfe`), as
//! library items, each file verified (its CRC32 footer) as it is read.
//!
//! Formats: `SegmentInfos` versions 7 to 10 (Lucene 7.0 to 8.x), `Lucene86SegmentInfoFormat`
//! and `Lucene50CompoundFormat`, as Lucene 8.6 to 8.11 write them (checked against indexes
//! written by Lucene itself: `tests/it/lucene/index.rs`). Lucene 9's formats (little-endian, other
//! codec names) are refused with a clear error naming the file.
//!
//! ```
//! use async_buffered_input::lucene::{verify_commit, Directory, SegmentInfos};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let dir = Directory::local(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/lucene-index/index"));
//! let commit = SegmentInfos::read_latest_commit(&dir).await?;
//! assert!(commit.segments.iter().any(|s| s.compound));
//! let bytes_read = verify_commit(&dir, &commit).await?; // every byte of every file, once
//! let mut total = 0;
//! for file in commit.files() {
//!     total += dir.length(&file).await?;
//! }
//! assert_eq!(bytes_read, total);
//! # Ok(())
//! # }
//! ```

//! Beside the index structure: [`codec`], Lucene's file framing (headers, footers, whole-file
//! checksums), and [`Directory`], an index location (or a compound file) whose files open by
//! name.

pub mod codec;
mod directory;
mod in_order;
mod segment_info;
mod segment_infos;
mod verify;

pub use directory::Directory;
pub use segment_infos::{SegmentCommitInfo, SegmentInfos};
pub use verify::verify_commit;
