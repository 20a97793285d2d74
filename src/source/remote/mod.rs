//! Remote sources: object stores through `object_store`, other services through OpenDAL, NFSv3
//! servers through `nfs3_client`.
//!
//! - `object_store_source`, `object_store_error`: [`ObjectStoreSource`] and how its errors read;
//! - `opendal_source`, `opendal_error`: [`OpendalSource`] and its errors' kinds;
//! - `nfs_source`, `nfs_connection`, `nfs_channel`, `nfs_url`, `nfs_error`: [`NfsSource`], its pool of
//!   connections, its READ call (the data read straight into the buffer handed out), its URL,
//!   and the `io::ErrorKind` of each NFS status;
//! - `remote_common`: the TLS set-up and the short-answer error both share;
//! - `spare_buffers`: buffers kept for reuse by the remote sources.

#[cfg(feature = "nfs")]
mod nfs_channel;
#[cfg(feature = "nfs")]
mod nfs_connection;
#[cfg(feature = "nfs")]
mod nfs_error;
#[cfg(feature = "nfs")]
mod nfs_source;
#[cfg(feature = "nfs")]
mod nfs_url;
#[cfg(feature = "object-store")]
mod object_store_error;
#[cfg(feature = "object-store")]
mod object_store_source;
#[cfg(feature = "opendal")]
mod opendal_error;
#[cfg(feature = "opendal")]
mod opendal_source;
#[cfg(any(feature = "object-store", feature = "opendal"))]
mod remote_common;
#[cfg(any(feature = "object-store", feature = "opendal"))]
mod spare_buffers;

#[cfg(feature = "nfs")]
pub use nfs_source::NfsSource;
#[cfg(feature = "object-store")]
pub use object_store_source::ObjectStoreSource;
#[cfg(feature = "opendal")]
pub use opendal_source::OpendalSource;
