//! The decoders over a hostile source, against a reference decoder: see `fuzz/README.md`.
#![no_main]

use async_buffered_input_fuzz::case::DecodeCase;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|case: DecodeCase| async_buffered_input_fuzz::decode(&case));
