//! The input: reads, seeks, typed decoding, checksums, errors, cancellation, stats, against models and hostile sources.

mod budget;
mod cancel;
mod checksum;
mod conformance;
mod decode;
mod error_messages;
mod hostile;
mod interop;
mod io_shape;
mod memory;
mod model;
mod prefetch;
mod progress;
mod ranges;
mod reliability;
mod resources;
mod send_sync;
mod stats_group;
mod streaming;
mod window_view;
