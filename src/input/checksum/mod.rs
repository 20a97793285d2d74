//! Checksummed reading: the CRC32 of what an input consumes, and passes over a range in large
//! steps (whole-file verification).
//!
//! - `checksummed`: the public API (`start_checksum`, `checksum`);
//! - `chunks`: `for_each_chunk` and `crc32_of`;
//! - `lazy_crc`: the running CRC32, folded lazily over what the window hands out.

mod checksummed;
mod chunks;
pub(crate) mod lazy_crc;
