//! Lucene: directories (local and on servers), indexes written by Lucene, and interop vectors.

mod directory;
mod index;
mod interop;
mod remote_directory;
