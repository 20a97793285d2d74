//! NFS, MOUNT and RPC failures as `io::Error`s whose kind says what happened (the cause of the
//! [`SourceError`](crate::SourceError) that [`NfsSource`](super::NfsSource) returns).
//!
//! | NFS status | kind |
//! |---|---|
//! | `NOENT`, `NXIO`, `NODEV` | `NotFound` |
//! | `PERM`, `ACCES` | `PermissionDenied` |
//! | `STALE`, `BADHANDLE` | `StaleNetworkFileHandle` |
//! | `ISDIR`, `NOTDIR` | `IsADirectory`, `NotADirectory` |
//! | `INVAL`, `NAMETOOLONG`, `BADTYPE` | `InvalidInput` |
//! | `JUKEBOX` (try again later) | `ResourceBusy` |
//! | `NOTSUPP` | `Unsupported` |
//! | `IO`, `SERVERFAULT` and the rest | `Other` |
//!
//! MOUNT's statuses map the same way. A call that could not reach the server keeps the kind of
//! its socket error (`ConnectionRefused`, `ConnectionReset`, `TimedOut`); an RPC the server does
//! not offer is `Unsupported`, a credential it refuses `PermissionDenied`, and a reply that
//! does not decode `InvalidData`.

use std::fmt::Display;
use std::io::{self, ErrorKind};

use nfs3_client::nfs3_types::mount::mountstat3;
use nfs3_client::nfs3_types::nfs3::nfsstat3;
use nfs3_client::RpcError;

/// `what` (`LOOKUP "f.bin"`, `READ of …`) failed with NFS status `status`.
pub(super) fn status(what: impl Display, status: nfsstat3) -> io::Error {
    io::Error::new(status_kind(status), format!("{what}: {status}"))
}

/// `what` (`MOUNT /export`) failed with MOUNT status `status`.
pub(super) fn mount_status(what: impl Display, status: mountstat3) -> io::Error {
    io::Error::new(mount_kind(status), format!("{what}: {status}"))
}

/// `what` failed in the RPC layer: the transport, the credential, or the reply.
pub(super) fn rpc(what: impl Display, e: RpcError) -> io::Error {
    io::Error::new(rpc_kind(&e), format!("{what}: {e}"))
}

/// `what` failed with the socket error `e` (connecting, resolving): the same kind.
pub(super) fn socket(what: impl Display, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

fn status_kind(status: nfsstat3) -> ErrorKind {
    use nfsstat3::*;
    match status {
        NFS3ERR_NOENT | NFS3ERR_NXIO | NFS3ERR_NODEV => ErrorKind::NotFound,
        NFS3ERR_PERM | NFS3ERR_ACCES => ErrorKind::PermissionDenied,
        NFS3ERR_STALE | NFS3ERR_BADHANDLE => ErrorKind::StaleNetworkFileHandle,
        NFS3ERR_ISDIR => ErrorKind::IsADirectory,
        NFS3ERR_NOTDIR => ErrorKind::NotADirectory,
        NFS3ERR_INVAL | NFS3ERR_NAMETOOLONG | NFS3ERR_BADTYPE => ErrorKind::InvalidInput,
        NFS3ERR_JUKEBOX => ErrorKind::ResourceBusy,
        NFS3ERR_NOTSUPP => ErrorKind::Unsupported,
        _ => ErrorKind::Other,
    }
}

fn mount_kind(status: mountstat3) -> ErrorKind {
    use mountstat3::*;
    match status {
        MNT3ERR_NOENT => ErrorKind::NotFound,
        MNT3ERR_PERM | MNT3ERR_ACCES => ErrorKind::PermissionDenied,
        MNT3ERR_NOTDIR => ErrorKind::NotADirectory,
        MNT3ERR_INVAL | MNT3ERR_NAMETOOLONG => ErrorKind::InvalidInput,
        MNT3ERR_NOTSUPP => ErrorKind::Unsupported,
        _ => ErrorKind::Other,
    }
}

fn rpc_kind(e: &RpcError) -> ErrorKind {
    match e {
        // The server closed the connection in the middle of a reply.
        RpcError::Io(e) if e.kind() == ErrorKind::UnexpectedEof => ErrorKind::ConnectionReset,
        RpcError::Io(e) => e.kind(),
        RpcError::Auth(_) => ErrorKind::PermissionDenied,
        RpcError::ProgUnavail
        | RpcError::ProgMismatch { .. }
        | RpcError::ProcUnavail
        | RpcError::RpcMismatch { .. } => ErrorKind::Unsupported,
        RpcError::SystemErr => ErrorKind::Other,
        // A reply that does not decode, answers another call, or comes in fragments.
        _ => ErrorKind::InvalidData,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_have_the_kind_of_the_same_name() {
        for (s, kind) in [
            (nfsstat3::NFS3ERR_NOENT, ErrorKind::NotFound),
            (nfsstat3::NFS3ERR_ACCES, ErrorKind::PermissionDenied),
            (nfsstat3::NFS3ERR_PERM, ErrorKind::PermissionDenied),
            (nfsstat3::NFS3ERR_STALE, ErrorKind::StaleNetworkFileHandle),
            (nfsstat3::NFS3ERR_ISDIR, ErrorKind::IsADirectory),
            (nfsstat3::NFS3ERR_NOTDIR, ErrorKind::NotADirectory),
            (nfsstat3::NFS3ERR_IO, ErrorKind::Other),
        ] {
            let e = status("READ", s);
            assert_eq!(e.kind(), kind, "{s}");
            assert_eq!(e.to_string(), format!("READ: {s}"));
        }
        let e = mount_status("MOUNT /export", mountstat3::MNT3ERR_ACCES);
        assert_eq!(e.kind(), ErrorKind::PermissionDenied);
        assert_eq!(e.to_string(), "MOUNT /export: MNT3ERR_ACCES");
        assert_eq!(mount_kind(mountstat3::MNT3ERR_NOENT), ErrorKind::NotFound);
    }

    #[test]
    fn rpc_failures_keep_the_socket_kind() {
        let refused = io::Error::from(ErrorKind::ConnectionRefused);
        assert_eq!(
            rpc("READ", RpcError::Io(refused)).kind(),
            ErrorKind::ConnectionRefused
        );
        let eof = io::Error::from(ErrorKind::UnexpectedEof);
        assert_eq!(
            rpc("READ", RpcError::Io(eof)).kind(),
            ErrorKind::ConnectionReset
        );
        assert_eq!(
            rpc("MOUNT", RpcError::ProgUnavail).kind(),
            ErrorKind::Unsupported
        );
        assert_eq!(
            rpc("READ", RpcError::UnexpectedXid).kind(),
            ErrorKind::InvalidData
        );
    }
}
