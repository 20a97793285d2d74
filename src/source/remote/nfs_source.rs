use std::fmt;
use std::future::{ready, Future};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use nfs3_client::nfs3_types::mount::{self, dirpath};
use nfs3_client::nfs3_types::nfs3::{
    self, diropargs3, filename3, ftype3, nfs_fh3, FSINFO3args, GETATTR3args, LOOKUP3args,
    Nfs3Result,
};
use nfs3_client::nfs3_types::portmap::IPPROTO_TCP;
use nfs3_client::nfs3_types::rpc::opaque_auth;
use nfs3_client::nfs3_types::xdr_codec::Opaque;
use nfs3_client::{MountClient, MountError, PortmapError, PortmapperClient};
use tokio::task::JoinSet;

use crate::error::source_error::SourceError;
use crate::source::remote::nfs_connection::{credential, Connection, Pool};
use crate::source::remote::nfs_error;
use crate::source::remote::nfs_url::{NfsUrl, PORTMAPPER_PORT};
use crate::source::PositionalSource;

/// The largest READ asked for, whatever the server allows: larger READs gain little over
/// several in flight (4 MiB READs measured no faster on nfs-ganesha, whose `rtmax` is 64 MiB),
/// and one READ keeps one connection busy until its last byte.
const MAX_READ_SIZE: u32 = 1 << 20;

/// The READ size when the server does not say its maximum (FSINFO fails or answers 0).
const FALLBACK_READ_SIZE: u32 = 32 * 1024;

/// A [`PositionalSource`] over one file on an NFSv3 server, read over TCP from user space (no
/// kernel mount, no root). Requires the cargo feature `nfs`.
///
/// [`connect`](Self::connect) takes a URL, `nfs://HOST[:PORT]/EXPORT/path/to/file`, finds
/// the file (portmapper, MOUNT, LOOKUP) and asks its length (GETATTR); the length is fixed
/// from then on, and reads are cut at it. The source's
/// [`resource`](PositionalSource::resource) name is the URL.
///
/// # Reads
///
/// A read is split into READs of the server's largest READ size (its FSINFO `rtmax`), at most
/// 1 MiB, issued together; each READ goes out on a connection of its own, from a pool of up to
/// 4 per source (one call at a time per connection), so a read of several MiB, or several
/// reads of a read-ahead, keep several READs in flight. Each READ's data go from the socket
/// straight into their place in the buffer the read returns: no copy in between. A READ the
/// server answers short is continued. A reply shorter than the length said (the file shrank)
/// is an `UnexpectedEof` error, never short bytes.
///
/// # The URL
///
/// - Without `PORT`, the portmapper on `HOST:111` is asked for the NFS port (and for MOUNT's).
/// - MOUNT is asked on `mountport=` if given, else on the NFS port (servers that serve both
///   there), else the portmapper's, if that names the same NFS port.
/// - The export is the longest one of the server's export list that the path starts with;
///   the rest of the path is looked up in it, one LOOKUP per component. Percent-escapes are
///   decoded (names are bytes: they need not be UTF-8).
/// - Options: `mountport=P`; `connections=N` (READs in flight, 1 to 64, default 4);
///   `rsize=BYTES` (a smaller READ size); `uid=U`, `gid=G` (the credential: the process's own
///   user and group by default, nobody's outside Linux); `timeout=SECONDS` (for each call, and
///   for the whole of `connect`; default 30); `version=3` (accepted, as libnfs writes it).
///
/// The credential is AUTH_UNIX, from an unprivileged port: a Linux kernel server needs the
/// `insecure` export option. NFSv4, UDP, Kerberos and replies in several fragments are not
/// supported.
///
/// # Minimum Rust version
///
/// `nfs3_client` 0.9 needs rustc 1.88 or newer. Without the `nfs` feature this crate keeps its
/// own minimum (1.85).
///
/// # Errors
///
/// Every error is a [`SourceError`](crate::SourceError) that names the URL and, for reads, the
/// range, and whose kind says what happened: NFS status codes become the `io::ErrorKind` of the
/// same meaning (`NFS3ERR_NOENT` is `NotFound`, `NFS3ERR_ACCES` and `NFS3ERR_PERM`
/// `PermissionDenied`, `NFS3ERR_STALE` `StaleNetworkFileHandle`, `NFS3ERR_ISDIR` and
/// `NFS3ERR_NOTDIR` `IsADirectory` and `NotADirectory`); a server that is down is
/// `ConnectionRefused`, one that stops answering `TimedOut`, so
/// [`Retrying`](crate::layer::Retrying) knows what to retry. For example
/// `read of 1000 bytes at offset 0 from nfs://127.0.0.1:2049/export/f.bin: READ of 1000 bytes
/// at offset 0: NFS3ERR_ACCES`.
///
/// # Examples
///
/// ```no_run
/// use async_buffered_input::source::NfsSource;
/// use async_buffered_input::{AsyncBufferedInput, PositionalFetch, ReadAhead};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let source = NfsSource::connect("nfs://127.0.0.1:2049/export/index/_0.cfs?mountport=2050").await?;
/// let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::default());
/// let mut input = AsyncBufferedInput::new(fetch);
/// let magic = input.read_bytes_owned(4).await?;
/// # Ok(())
/// # }
/// ```
pub struct NfsSource {
    // Shared with the READs a read spawns, which outlive a borrow of `self`.
    file: Arc<File>,
}

/// The file a source reads, and the connections it reads it on.
struct File {
    url: String,
    handle: nfs_fh3,
    length: u64,
    read_size: u32,
    pool: Pool,
}

impl NfsSource {
    /// Finds the file at `url` (`nfs://HOST[:PORT]/EXPORT/path`, see [the
    /// URL](Self#the-url)) and asks its length.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a URL that does not parse, has another scheme or no file path; else
    /// an error that names the URL (see [Errors](Self#errors)): `NotFound` for a missing file
    /// or export, `PermissionDenied` for one the credential may not see, `IsADirectory` for a
    /// folder, `ConnectionRefused` when nothing listens on the port (or on the portmapper's),
    /// `TimedOut` when the whole took longer than the timeout.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future closes the connections it opened; nothing is shared.
    pub async fn connect(url: &str) -> io::Result<Self> {
        let parsed = NfsUrl::parse(url)?;
        let timeout = parsed.timeout;
        let file = tokio::time::timeout(timeout, open(url, &parsed))
            .await
            .unwrap_or_else(|_| {
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no answer in {timeout:?}"),
                ))
            })
            .map_err(|e| SourceError::wrap(format!("open {url}"), e))?;
        Ok(Self {
            file: Arc::new(file),
        })
    }
}

/// The file at `url`: its server's address, its export, its handle, length and READ size.
async fn open(url: &str, parsed: &NfsUrl) -> io::Result<File> {
    let ip = resolve(&parsed.host).await?;
    let nfs_port = match parsed.port {
        Some(port) => port,
        None => port_of(ip, nfs3::PROGRAM).await?,
    };
    let credential = credential(parsed.uid, parsed.gid);
    let (root, looked_up) = mount_export(parsed, ip, nfs_port, &credential).await?;
    let pool = Pool::new(
        SocketAddr::new(ip, nfs_port),
        credential,
        parsed.timeout,
        parsed.connections,
    );
    let mut client = pool.connect().await?;
    let mut handle = root;
    for name in &parsed.components[looked_up..] {
        let what = || format!("LOOKUP {:?}", String::from_utf8_lossy(name));
        let args = LOOKUP3args {
            what: diropargs3 {
                dir: handle,
                name: filename3(Opaque::borrowed(name)),
            },
        };
        handle = match client.lookup(&args).await {
            Ok(Nfs3Result::Ok(ok)) => ok.object,
            Ok(Nfs3Result::Err((status, _))) => return Err(nfs_error::status(what(), status)),
            Err(e) => return Err(nfs_error::rpc(what(), e)),
        };
    }
    let object = handle.clone();
    let attributes = match client.getattr(&GETATTR3args { object }).await {
        Ok(Nfs3Result::Ok(ok)) => ok.obj_attributes,
        Ok(Nfs3Result::Err((status, _))) => return Err(nfs_error::status("GETATTR", status)),
        Err(e) => return Err(nfs_error::rpc("GETATTR", e)),
    };
    match attributes.type_ {
        ftype3::NF3REG => {}
        ftype3::NF3DIR => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "a directory, not a file",
            ))
        }
        other => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not a regular file ({other:?})"),
            ))
        }
    }
    let fsroot = handle.clone();
    let rtmax = match client.fsinfo(&FSINFO3args { fsroot }).await {
        Ok(Nfs3Result::Ok(ok)) if ok.rtmax > 0 => ok.rtmax,
        _ => FALLBACK_READ_SIZE,
    };
    // (READs go on the pool's own connections: this one closes.)
    drop(client);
    Ok(File {
        url: url.to_owned(),
        handle,
        length: attributes.size,
        read_size: parsed.read_size.unwrap_or(MAX_READ_SIZE).min(rtmax),
        pool,
    })
}

/// The address of `host`: an IP address as is, a name through the resolver.
async fn resolve(host: &str) -> io::Result<IpAddr> {
    if let Ok(ip) = host.parse() {
        return Ok(ip);
    }
    let mut addrs = tokio::net::lookup_host((host, 0))
        .await
        .map_err(|e| nfs_error::socket(format_args!("resolve {host}"), e))?;
    addrs.next().map(|a| a.ip()).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("resolve {host}: no address"),
        )
    })
}

/// The TCP port of version 3 of `program` on `ip`, from its portmapper.
async fn port_of(ip: IpAddr, program: u32) -> io::Result<u16> {
    let what = || format!("portmapper {ip}:{PORTMAPPER_PORT}: GETPORT {program} v3/tcp");
    let connection = Connection::open(SocketAddr::new(ip, PORTMAPPER_PORT)).await?;
    match PortmapperClient::new(connection)
        .getport(program, 3, IPPROTO_TCP)
        .await
    {
        Ok(port) => Ok(port),
        Err(PortmapError::Rpc(e)) => Err(nfs_error::rpc(what(), e)),
        // Nothing serves it: as if nothing listened.
        Err(PortmapError::ProgramUnavailable) => Err(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            format!("{}: not registered", what()),
        )),
        Err(e) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", what()),
        )),
    }
}

/// Mounts the export that holds the file; returns its root handle and how many of the path's
/// components it took (the rest are looked up in it). MOUNT is asked where [the
/// URL](NfsSource#the-url) says.
async fn mount_export(
    parsed: &NfsUrl,
    ip: IpAddr,
    nfs_port: u16,
    credential: &opaque_auth<'static>,
) -> io::Result<(nfs_fh3, usize)> {
    let components = &parsed.components;
    if let Some(port) = parsed.mount_port {
        return mount_at(SocketAddr::new(ip, port), components, credential).await;
    }
    if parsed.port.is_some() {
        match mount_at(SocketAddr::new(ip, nfs_port), components, credential).await {
            // No MOUNT on the NFS port: ask the portmapper.
            Err(e) if e.kind() == io::ErrorKind::Unsupported => {}
            done => return done,
        }
        // The portmapper's MOUNT must be the same server's: with two servers on one host it
        // may name the other one's.
        let registered = port_of(ip, nfs3::PROGRAM).await?;
        if registered != nfs_port {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "no MOUNT on port {nfs_port}, and the portmapper's NFS server is on port \
                     {registered}: give ?mountport="
                ),
            ));
        }
    }
    let port = port_of(ip, mount::PROGRAM).await?;
    mount_at(SocketAddr::new(ip, port), components, credential).await
}

/// Mounts, at the MOUNT service at `addr`, the longest export in its list that holds the
/// file at `components` (or the file's folder, if none does or there is no list).
async fn mount_at(
    addr: SocketAddr,
    components: &[Vec<u8>],
    credential: &opaque_auth<'static>,
) -> io::Result<(nfs_fh3, usize)> {
    let connection = Connection::open(addr).await?;
    let mut client = MountClient::new_with_auth(connection, credential.clone(), Default::default());
    let folder = &components[..components.len() - 1];
    let listed = match client.export().await {
        Ok(exports) => exports
            .into_inner()
            .into_iter()
            .map(|node| {
                let path = node.ex_dir.0;
                path.split(|b| *b == b'/')
                    .filter(|c| !c.is_empty())
                    .map(<[u8]>::to_vec)
                    .collect::<Vec<_>>()
            })
            .filter(|export| folder.starts_with(export))
            .max_by_key(Vec::len),
        Err(e) if e.is_connection_reusable() && !is_no_mount(&e) => None,
        Err(e) => return Err(nfs_error::rpc(format_args!("MOUNT at {addr}"), e)),
    };
    let taken = listed.map_or(folder.len(), |export| export.len());
    let mut path = Vec::new();
    for c in &components[..taken] {
        path.push(b'/');
        path.extend_from_slice(c);
    }
    if path.is_empty() {
        path.push(b'/');
    }
    let what = || format!("MOUNT {}", String::from_utf8_lossy(&path));
    match client.mnt(dirpath(Opaque::borrowed(&path))).await {
        Ok(ok) => Ok((
            nfs_fh3 {
                data: Opaque::owned(ok.fhandle.0.into_owned()),
            },
            taken,
        )),
        Err(MountError::Denied(status)) => Err(nfs_error::mount_status(what(), status)),
        Err(MountError::Rpc(e)) => Err(nfs_error::rpc(what(), e)),
    }
}

/// Whether `e` says no MOUNT service answers there.
fn is_no_mount(e: &nfs3_client::RpcError) -> bool {
    matches!(
        e,
        nfs3_client::RpcError::ProgUnavail | nfs3_client::RpcError::ProgMismatch { .. }
    )
}

impl File {
    /// The bytes `[offset, end)`, `end <= length`, in READs of `read_size` issued together,
    /// each read straight into its part of one buffer (no copy: the parts are contiguous, and
    /// are joined without moving a byte).
    async fn read(self: Arc<Self>, offset: u64, end: u64) -> io::Result<Bytes> {
        let size = u64::from(self.read_size);
        let total = (end - offset) as usize;
        let mut rest = BytesMut::with_capacity(total);
        if end - offset <= size {
            self.read_exact(offset, total as u32, &mut rest).await?;
            return Ok(rest.freeze());
        }
        let mut reads = JoinSet::new();
        let mut count = 0;
        for at in (offset..end).step_by(size as usize) {
            let n = (end - at).min(size) as usize;
            // `rest` keeps the first `n` bytes of room, `tail` the room after them.
            let tail = rest.split_off(n);
            let mut part = std::mem::replace(&mut rest, tail);
            let file = Arc::clone(&self);
            let index = count;
            reads.spawn(async move {
                let done = file.read_exact(at, n as u32, &mut part).await;
                (index, done.map(|()| part))
            });
            count += 1;
        }
        let mut parts = vec![BytesMut::new(); count];
        while let Some(joined) = reads.join_next().await {
            let (index, part) = match joined {
                Ok(done) => done,
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                // The runtime is shutting down.
                Err(e) => return Err(io::Error::other(e)),
            };
            parts[index] = part?;
        }
        let mut parts = parts.into_iter();
        let mut bytes = parts.next().unwrap_or_default();
        for part in parts {
            // Contiguous with `bytes`: no copy.
            bytes.unsplit(part);
        }
        debug_assert_eq!(bytes.len(), total);
        Ok(bytes.freeze())
    }

    /// Exactly `count` bytes at `offset` (inside the length), appended to `dst` (which has
    /// room for them), continuing READs answered short.
    async fn read_exact(&self, offset: u64, count: u32, dst: &mut BytesMut) -> io::Result<()> {
        let start = dst.len();
        let mut got = 0;
        loop {
            let eof = self
                .pool
                .read(&self.handle, offset + u64::from(got), count - got, dst)
                .await?;
            let last = (dst.len() - start) as u32 - got;
            got += last;
            if got == count {
                return Ok(());
            }
            if eof || last == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the server sent {got} bytes at offset {offset}, not {count}: the file \
                         is shorter than its length, {}",
                        self.length
                    ),
                ));
            }
        }
    }
}

impl PositionalSource for NfsSource {
    /// The bytes `[offset, offset + len)`, cut at the length, in READs issued together (see
    /// [Reads](NfsSource#reads)); no READ at or past the end. Errors name the URL and the
    /// range.
    ///
    /// Dropping the future drops the READs in flight and their connections (the pool opens
    /// new ones).
    fn read_at(&self, offset: u64, len: usize) -> impl Future<Output = io::Result<Bytes>> + Send {
        let file = Arc::clone(&self.file);
        async move {
            let end = offset.saturating_add(len as u64).min(file.length);
            if offset >= end {
                return Ok(Bytes::new());
            }
            let context = format!("read of {len} bytes at offset {offset} from {}", file.url);
            file.read(offset, end)
                .await
                .map_err(|e| SourceError::wrap(context, e))
        }
    }

    /// The length from GETATTR at [`connect`](NfsSource::connect) (no request).
    fn len(&self) -> impl Future<Output = io::Result<u64>> + Send {
        ready(Ok(self.file.length))
    }

    /// The same length (no request).
    fn known_len(&self) -> Option<u64> {
        Some(self.file.length)
    }

    /// The URL the source was connected with.
    fn resource(&self) -> Option<String> {
        Some(self.file.url.clone())
    }
}

impl fmt::Debug for NfsSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NfsSource")
            .field("url", &self.file.url)
            .field("length", &self.file.length)
            .field("read_size", &self.file.read_size)
            .field("pool", &self.file.pool)
            .finish()
    }
}
