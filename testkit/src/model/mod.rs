//! The model an input is checked against, written once for the model tests and the fuzzer: the
//! data as a `Vec<u8>` and a position, what a typed read of it must return ([`read`], Lucene's
//! `DataInput` rules written independently of the crate's decoders, with the error kind a
//! failing one must have: [`Fail::kind`]), and what the input must show of its state after
//! each operation ([`check_window`], [`check_handed`]).
//!
//! A checker drives an input and this model side by side: before a read it asks the model
//! what the read must return (`read(kind, &data, pos)`), after it compares the value, or the
//! error's kind and the position it names, moves the model's position past what was handed
//! out, and checks the input's state with [`check_window`] and [`check_handed`]. The fuzz
//! targets' harness (`fuzz/src/harness.rs`) and the model tests' `Checked`
//! (`tests/it/common/checked.rs`) are such checkers.

mod check;
mod read_kind;
mod reference;

pub use check::{check_handed, check_window};
pub use read_kind::{IntoKind, ReadKind};
pub use reference::{extent, into_width, read, string, take, varint, vint, Decoded, Fail, Val};
