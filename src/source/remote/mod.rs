//! Remote sources: object stores through `object_store`, other services through OpenDAL.
//!
//! - `object_store_source`, `object_store_error`: [`ObjectStoreSource`] and how its errors read;
//! - `opendal_source`, `opendal_stream`: [`OpendalSource`] and its one-stream sequential reads;
//! - `remote_common`: the TLS set-up and the short-answer error both share;
//! - `spare_buffers`: buffers kept for reuse by the remote sources.

#[cfg(feature = "object-store")]
mod object_store_error;
#[cfg(feature = "object-store")]
mod object_store_source;
#[cfg(feature = "opendal")]
mod opendal_source;
#[cfg(feature = "opendal")]
mod opendal_stream;
mod remote_common;
mod spare_buffers;

#[cfg(feature = "object-store")]
pub use object_store_source::ObjectStoreSource;
#[cfg(feature = "opendal")]
pub use opendal_source::OpendalSource;
