//! The fault proxy, from the `abi-fault-proxy` workspace crate (`fault-proxy/`), which the
//! throughput harness's CI run also uses as a binary.

pub use ::fault_proxy::*;
