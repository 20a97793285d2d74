//! [`NfsSource`](super::NfsSource)'s connections to its server: TCP streams as `nfs3_client`
//! reads them (opening the file: LOOKUP, GETATTR, FSINFO), and the pool of connections its
//! READs take, each a [`Channel`] that reads the data straight into the caller's buffer.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use bytes::BytesMut;
use nfs3_client::io::{AsyncRead, AsyncWrite};
use nfs3_client::nfs3_types::nfs3::{nfs_fh3, READ3args};
use nfs3_client::nfs3_types::rpc::{auth_unix, opaque_auth};
use nfs3_client::nfs3_types::xdr_codec::Opaque;
use nfs3_client::Nfs3Client;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

use crate::source::remote::nfs_channel::{Channel, ReadReply};
use crate::source::remote::nfs_error;

/// One TCP connection to an RPC service (NFS, MOUNT, the portmapper), as `nfs3_client` reads
/// and writes it.
///
/// `nfs3_client`'s own tokio adapter returns `Ok(0)` at the end of the stream, and the crate's
/// `async_read_exact` then loops on it forever, at 100 % CPU, when a server closes the
/// connection (0.9.1). Here the end of the stream is a `ConnectionReset` error.
pub(super) struct Connection(TcpStream);

impl Connection {
    /// Connects to `addr`, with Nagle off (a call is one small write, then a wait).
    pub(super) async fn open(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|e| nfs_error::socket(format_args!("connect to {addr}"), e))?;
        stream.set_nodelay(true)?;
        Ok(Self(stream))
    }
}

impl AsyncRead for Connection {
    async fn async_read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf).await?;
        if n == 0 && !buf.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "the server closed the connection",
            ));
        }
        Ok(n)
    }
}

impl AsyncWrite for Connection {
    async fn async_write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.0.write(buf).await?;
        if n == 0 && !buf.is_empty() {
            return Err(io::Error::from(io::ErrorKind::WriteZero));
        }
        Ok(n)
    }
}

/// An NFS client on one connection: one call at a time (`&mut self`).
pub(super) type Client = Nfs3Client<Connection>;

/// The AUTH_UNIX credential of user `uid` in group `gid` (no other groups).
pub(super) fn credential(uid: u32, gid: u32) -> opaque_auth<'static> {
    opaque_auth::auth_unix(&auth_unix {
        stamp: 0,
        machinename: Opaque::owned(b"async-buffered-input".to_vec()),
        uid,
        gid,
        gids: Vec::new(),
    })
}

/// Connections to one NFS server for READs ([`Channel`]s), each carrying one call at a time, at
/// most `connections` at once: READs in flight beyond that wait for a connection.
///
/// A connection goes back to the pool only after a reply read in full, so the pool holds
/// connections at a message boundary only; a READ that fails in transport, times out or is
/// dropped mid-call drops its connection. A transport failure on a connection taken from the
/// pool (which the server may have closed while it was idle, or which a restarted server no
/// longer knows) empties the pool and is tried once more on a new connection.
pub(super) struct Pool {
    addr: SocketAddr,
    credential: opaque_auth<'static>,
    timeout: Duration,
    connections: usize,
    // Connections between calls. `idle.len() + slots taken <= connections`: a call holds a slot
    // while its connection is out of `idle`.
    idle: Mutex<Vec<Channel>>,
    slots: Semaphore,
}

impl Pool {
    /// A pool of up to `connections` connections to `addr`, calling as `credential`, each call
    /// (with its connect) bounded by `timeout`.
    pub(super) fn new(
        addr: SocketAddr,
        credential: opaque_auth<'static>,
        timeout: Duration,
        connections: usize,
    ) -> Self {
        Self {
            addr,
            credential,
            timeout,
            connections,
            idle: Mutex::new(Vec::with_capacity(connections)),
            slots: Semaphore::new(connections),
        }
    }

    /// A new connection to the server for `nfs3_client`'s calls, outside the pool (opening the
    /// file uses one for LOOKUP, GETATTR and FSINFO).
    pub(super) async fn connect(&self) -> io::Result<Client> {
        let connection = Connection::open(self.addr).await?;
        Ok(Nfs3Client::new_with_auth(
            connection,
            self.credential.clone(),
            opaque_auth::default(),
        ))
    }

    /// Puts `channel`, between calls, in the pool (or drops it if the pool is full).
    fn give(&self, channel: Channel) {
        let mut idle = self.idle();
        if idle.len() < self.connections {
            idle.push(channel);
        }
    }

    /// One READ of `count` bytes at `offset` of `file`, appended to `dst` (which has room for
    /// them): maybe fewer bytes, as the server chooses, and whether they end the file. After an
    /// error `dst` is as it was.
    pub(super) async fn read(
        &self,
        file: &nfs_fh3,
        offset: u64,
        count: u32,
        dst: &mut BytesMut,
    ) -> io::Result<bool> {
        let what = || format!("READ of {count} bytes at offset {offset}");
        let _slot = self
            .slots
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let args = READ3args {
            file: file.clone(),
            offset,
            count,
        };
        let start = dst.len();
        let mut retry = true;
        loop {
            let pooled = self.idle().pop();
            let reused = pooled.is_some();
            let call = async {
                let mut channel = match pooled {
                    Some(channel) => channel,
                    None => Channel::new(Connection::open(self.addr).await?.0),
                };
                let reply = channel.read(&self.credential, &args, &mut *dst).await;
                Ok::<_, io::Error>((channel, reply))
            };
            let result = tokio::time::timeout(self.timeout, call).await.map_err(|_| {
                io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{}: no answer in {:?}", what(), self.timeout),
                )
            });
            let (channel, reply) = match result {
                Ok(Ok(done)) => done,
                Ok(Err(e)) | Err(e) => {
                    dst.truncate(start);
                    return Err(e);
                }
            };
            match reply {
                Ok(ReadReply::Ok { eof }) => {
                    self.give(channel);
                    return Ok(eof);
                }
                Ok(ReadReply::Status(status)) => {
                    self.give(channel);
                    return Err(nfs_error::status(what(), status));
                }
                // The connection may be mid-reply: it is dropped, whatever the error.
                // Its siblings in the pool are likely dead too.
                Err(_) if reused && retry => {
                    dst.truncate(start);
                    self.idle().clear();
                    retry = false;
                }
                Err(e) => {
                    dst.truncate(start);
                    return Err(nfs_error::rpc(what(), e));
                }
            }
        }
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Channel>> {
        // A panic while the lock is held leaves a valid vector of idle connections.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("addr", &self.addr)
            .field("connections", &self.connections)
            .field("idle", &self.idle().len())
            .field("busy", &(self.connections - self.slots.available_permits()))
            .field("timeout", &self.timeout)
            .finish()
    }
}
