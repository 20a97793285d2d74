//! The errors inputs and sources return, and what they carry.
//!
//! - `input_error`: [`InputError`], the context an input adds (what was asked, where, and for
//!   corruption found in a format, what was expected and found);
//! - `source_error`: [`SourceError`], what a source's failed request says (what, which range).

mod input_error;
pub(crate) mod source_error;

pub(crate) use input_error::*;
pub use input_error::{is_transient, InputError};
pub use source_error::SourceError;
