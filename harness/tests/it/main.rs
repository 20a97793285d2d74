//! The throughput harness's integration tests, one binary: `run` (the library's runs and
//! reports), `cli` (the `throughput` example as a user runs it), `terms` (the term-lookup
//! workload), `layers` (sources behind layers) and `object_store` (HTTP and S3 servers).

#[allow(dead_code)]
mod common;

mod cli;
mod layers;
mod object_store;
mod run;
mod terms;
