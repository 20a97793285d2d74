//! Directories: one handle per index location that opens its files by name, in the manner of
//! Lucene's `Directory` (`openInput`, `listAll`, `fileLength`).
//!
//! A [`Directory`] is a local folder, a URL prefix on an HTTP server, an `s3://bucket/prefix/`
//! (feature `object-store`), or any `object_store` location. It holds what its inputs share:
//! one store client (one connection pool), the window size, the read-ahead default, a
//! [`MemoryBudget`](crate::MemoryBudget), and a `BlockCache` (feature `cache`). Every
//! file opens as the same type, an `AsyncBufferedInput<PositionalFetch<DynSource>>`, whatever the
//! backend. Lengths learned from
//! a [listing](Directory::list) are kept, so opening a listed file asks no `HEAD`. A
//! segment's compound file opens as a directory of its sub-files
//! ([`Directory::open_compound`]).
//!
//! ```
//! use async_buffered_input::lucene::Directory;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let dir = Directory::local(env!("CARGO_MANIFEST_DIR"));
//! assert!(dir.list().await?.iter().any(|name| name == "Cargo.toml"));
//! let mut input = dir.open("Cargo.toml").await?;
//! assert_eq!(input.known_length(), Some(dir.length("Cargo.toml").await?));
//! assert_eq!(&input.read_bytes_owned(9).await?[..], b"[package]");
//! # Ok(())
//! # }
//! ```

mod backend;
mod compound_file;
// One type per file, named after it.
#[allow(clippy::module_inception)]
mod directory;

pub use directory::Directory;
