//! Random operation sequences with injected faults and dropped futures, against a model: see
//! `fuzz/README.md`.
#![no_main]

use async_buffered_input_fuzz::case::OpsCase;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|case: OpsCase| async_buffered_input_fuzz::ops(&case));
