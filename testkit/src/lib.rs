//! The test kit of `async-buffered-input`: the helpers its tests, benches, fuzzer and throughput
//! harness share, written once (a data pattern written seven times is seven chances to
//! disagree). Not published; a workspace member, and a path dependency of `fuzz/`.
//!
//! - **Content**: [`pattern`] / [`pattern_vec`] (a byte per offset) and [`fill_word_pattern`] /
//!   [`word_pattern_vec`] (the harness's, a word at a time): deterministic, non-periodic file content;
//!   [`splitmix64`] and [`Rng`] for reproducible sweeps, [`XorShift64`] for the benches' data,
//!   [`Zipf`] for the term-lookup workloads' skew.
//! - **Reading texts**: [`value_of`] (a `key=value` word of a header or a script's output).
//! - **Writing texts**: [`binary_size`] (`8 KiB`, `1.50 MiB`: the reports' byte counts).
//! - **Checks**: [`assert_bytes`] names the first differing offset; [`assert_contains`] and
//!   [`assert_count`] print the whole text they looked in; [`chain`], [`causes`],
//!   [`has_input_error_payload`], [`input_error`], [`assert_msg_mentions`] and
//!   [`assert_source_error`] look into the errors an input returns.
//! - **Counting wrappers**: [`Counting`] (a stream; its [`Counts`], or the caller's own
//!   [`CountSink`]) and [`CountingPositional`] (a positional source) count what reaches the
//!   source under an input.
//! - **Scripted positional source**: [`Scripted`], the one source for a test that needs a
//!   request to be slow ([`Delay`]), to fail (by rules over each [`ScriptedRequest`]), to wait
//!   at a gate, or to be logged.
//! - **Hostile and failing sources**: [`Hostile`] (a stream with short reads, `Pending` and
//!   injected errors, set by [`HostileConfig`], reported in [`HostileLog`]; or, made by
//!   [`Hostile::gated`], held `Pending` until its [`GateCtl`] lets it through), [`Faulty`] (a
//!   `Cursor` whose reads fail from a position, whose seeks pend or are refused, set by
//!   [`FaultyConfig`]) and [`PartlyAtHand`] (a positional source partly in "page cache").
//! - **The model**: [`model`], what an input is checked against by the model tests and the
//!   fuzzer: Lucene's decoding of a `Vec<u8>` at a position ([`model::read`]), the error kind a
//!   failing read must have, and the checks of an input's state ([`model::check_window`],
//!   [`model::check_handed`]).
//! - **Harness pieces**: [`temp_tokio_file`] / [`temp_std_file_in`] (real files, unlinked at
//!   once), [`server_var`] / [`object_file`] (what the server tests read from the environment), [`poll_once_then_drop`] (for cancellation tests), [`ExampleBuild`] (builds an
//!   example from inside a test, in the test's target folder, without the package variables
//!   that would make cargo rebuild).
#![deny(
    missing_docs,
    missing_debug_implementations,
    rust_2018_idioms,
    unreachable_pub
)]
#![forbid(unsafe_code)]

mod assert_bytes;
mod assert_text;
mod binary_size;
mod count_sink;
mod counting;
mod counting_positional;
mod counts;
mod error_chain;
mod example_build;
mod faulty;
mod gate_ctl;
mod hostile;
mod hostile_config;
mod hostile_log;
mod key_value;
pub mod model;
mod partly_at_hand;
mod pattern;
mod poll;
mod rng;
mod scripted;
mod seek;
mod server_env;
mod temp_file;
mod xorshift;
mod zipf;

pub use assert_bytes::assert_bytes;
pub use assert_text::{assert_contains, assert_count};
/// A simulated network link (per-request latency, shared bandwidth) over any positional
/// source, deterministic under tokio's paused time: the crate's, kept out of its public API.
pub use async_buffered_input::layer::SlowLink;
pub use binary_size::binary_size;
pub use count_sink::{CountSink, ReadOutcome};
pub use counting::Counting;
pub use counting_positional::CountingPositional;
pub use counts::{CountSnapshot, Counts};
pub use error_chain::{
    assert_msg_mentions, assert_source_error, causes, chain, has_input_error_payload, input_error,
};
pub use example_build::ExampleBuild;
pub use faulty::{Faulty, FaultyConfig};
pub use gate_ctl::GateCtl;
pub use hostile::Hostile;
pub use hostile_config::{HostileConfig, SeekFail, HOSTILE_READ_ERROR, HOSTILE_SEEK_ERROR};
pub use hostile_log::HostileLog;
pub use key_value::value_of;
pub use partly_at_hand::PartlyAtHand;
pub use pattern::{fill_word_pattern, pattern, pattern_vec, word_pattern_vec};
pub use poll::poll_once_then_drop;
pub use rng::{splitmix64, Rng};
pub use scripted::{Delay, Scripted, ScriptedCounts, ScriptedRequest};
pub use server_env::{object_file, server_var};
pub use temp_file::{temp_std_file_in, temp_tokio_file};
pub use xorshift::XorShift64;
pub use zipf::Zipf;
