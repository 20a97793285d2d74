//! The integration tests of `async_buffered_input`, one binary laid out like the crate:
//! `input/`, `source/`, `layer/`, `cache/`, `lucene/` and `metrics`. Run one part with a filter:
//! `cargo test --all-features --test it -- layer::retries`.
//!
//! Shared helpers: `common` (the model-checked input and the conformance sweep), `servers`
//! (servers the remote tests start or find), `fault_proxy` (the network-fault proxy).

#[macro_use]
mod common;
// Used by the network tests only, which need `object-store` or `opendal`.
#[cfg(any(feature = "object-store", feature = "opendal"))]
mod fault_proxy;
mod servers;

mod cache;
mod input;
mod layer;
mod lucene;
mod metrics;
mod source;
