//! The helpers of the integration tests of `async_buffered_input` that only tests use: the
//! model-checked input and the conformance sweep. The helpers tests, benches, the fuzzer and the
//! harness share (the data pattern, the PRNG, counting wrappers, hostile and failing sources,
//! temp files) are the `abi_testkit` crate's (`testkit/`).
//!
//! Every test binary (`tests/*.rs`) includes this module with `mod common;` and uses only a
//! subset of it, hence the module-wide `dead_code` allowance.
//!
//! Contents:
//! * [`check_window`] / [`in_window`] / [`read_ok`] (`window`): an input's position, `buffer()`
//!   and `window()` against the file contents (the test kit's model checks, panicking), and a
//!   read checked with them.
//! * [`Checked`] (`checked`): drives an `AsyncBufferedInput` next to the test kit's model
//!   (`abi_testkit::model`: a `Vec<u8>` + position, Lucene's decoding) and checks bytes,
//!   decoded values, errors (kind and position), `position()`, `buffer()`, `window()` and
//!   `stats()` after every call, as the fuzzer's harness does with the same model.
//! * [`conformance_input`] / `conformance_tests!` (`conformance`): the one conformance sweep, run
//!   against every family of input: streams ([`stream_conformance`]), positional sources
//!   ([`positional_conformance`]), slices ([`slice_conformance`]) and clones
//!   ([`clone_conformance`]).
//! * [`temp_std_file`]: a real file in cargo's temp folder for integration tests.
//! * [`read_in_random_sizes`]: an input read to its end in requests of random sizes.
//! * [`xorshift_cases`]: the proptest config of the model tests.
#![allow(dead_code)]

mod checked;
#[macro_use]
mod conformance;
mod window;

// Each test binary uses a subset of these.
#[allow(unused_imports)]
pub use checked::*;
#[allow(unused_imports)]
pub use conformance::*;
#[allow(unused_imports)]
pub use window::*;

/// Writes `data` to a uniquely named file in cargo's temp folder for integration tests
/// (`target/tmp`, on the build's disk: unlike a tmpfs `/tmp`, a file system with page cache reads
/// and eviction), opens it and unlinks it at once; returns the open file and the path it had.
pub fn temp_std_file(data: &[u8]) -> (std::fs::File, std::path::PathBuf) {
    abi_testkit::temp_std_file_in(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")), data)
}

/// Reads `len` bytes of `input` from its position in requests of 1 to `max` bytes (sizes drawn
/// from `seed`), each one `read_bytes` that must succeed; the bytes read.
pub async fn read_in_random_sizes<F: async_buffered_input::Fetch>(
    input: &mut async_buffered_input::AsyncBufferedInput<F>,
    len: usize,
    max: u64,
    seed: u64,
) -> Vec<u8> {
    let mut all = vec![0u8; len];
    let (mut at, mut rng) = (0, abi_testkit::Rng::new(seed));
    while at < len {
        let n = (1 + rng.below(max) as usize).min(len - at);
        input.read_bytes(&mut all[at..at + n]).await.unwrap();
        at += n;
    }
    all
}

/// A proptest config of `cases` cases drawn by XorShift: the default ChaCha generator,
/// unoptimized in a debug build, took most of a model test's run.
pub fn xorshift_cases(cases: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        rng_algorithm: proptest::test_runner::RngAlgorithm::XorShift,
        ..proptest::test_runner::Config::default()
    }
}
