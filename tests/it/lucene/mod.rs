//! Lucene: directories (local and on servers), indexes written by Lucene, interop vectors, and
//! whole-commit verification reading several files at once.

mod directory;
mod index;
mod interop;
mod remote_directory;
mod verify;
