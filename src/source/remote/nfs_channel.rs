//! [`NfsSource`](super::NfsSource)'s READ call, made on a connection of its own pool without
//! `nfs3_client`: the reply's data go from the socket straight into the caller's buffer.
//!
//! `nfs3_client` reads a reply into a new zeroed buffer, then decodes the data into another
//! (`Opaque<'static>`): two passes over every byte besides the socket's, and two fresh
//! allocations per READ. Here the reply's head (RPC header, status, attributes, count, eof,
//! the data's length) is read and decoded by `nfs3_types` as `nfs3_client` does, and the data
//! are read into the buffer the bytes are handed out in: the socket's copy is the only one.

use std::io;

use bytes::{BufMut, BytesMut};
use nfs3_client::nfs3_types::nfs3::{self, nfsstat3, post_op_attr, READ3args, NFS_PROGRAM};
use nfs3_client::nfs3_types::rpc::{
    accept_stat_data, call_body, fragment_header, msg_body, opaque_auth, reply_body, rpc_msg,
    RPC_VERSION_2,
};
use nfs3_client::nfs3_types::xdr_codec::{Pack, Unpack};
use nfs3_client::RpcError;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The most of a reply read before its data is known to start: the RPC header with the
/// largest verifier (400 bytes), the status, the attributes (88), count, eof and the data's
/// length. Data within it are copied out of it (at most this many bytes per READ).
const HEAD: usize = 1024;

/// What the server answered a READ.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ReadReply {
    /// The bytes were appended to the buffer; whether they end the file.
    Ok {
        /// The server's eof flag.
        eof: bool,
    },
    /// The server refused the READ with this status (not `NFS3_OK`).
    Status(nfsstat3),
}

/// One TCP connection to an NFSv3 server making READ calls, one at a time, each reply read in
/// full (or the connection dropped), with the credential it was made with.
pub(super) struct Channel {
    stream: TcpStream,
    xid: u32,
}

impl Channel {
    /// A channel on `stream`, a new connection to the NFS server.
    pub(super) fn new(stream: TcpStream) -> Self {
        Self {
            stream,
            xid: fastrand_xid(),
        }
    }

    /// READs `args.count` bytes (or fewer, as the server chooses) and appends them to `dst`,
    /// which must have room for `args.count` more bytes (so that it never reallocates).
    ///
    /// After an `Err`, the connection may be in the middle of a reply: drop the channel. After
    /// an `Ok`, it is at a message boundary, and `dst` holds what it held plus the data (none
    /// for a [`ReadReply::Status`]).
    pub(super) async fn read(
        &mut self,
        credential: &opaque_auth<'static>,
        args: &READ3args,
        dst: &mut BytesMut,
    ) -> Result<ReadReply, RpcError> {
        debug_assert!(dst.capacity() - dst.len() >= args.count as usize);
        let xid = self.xid;
        self.xid = self.xid.wrapping_add(1);
        self.send(xid, credential, args).await?;

        let mut header = [0u8; 4];
        self.stream.read_exact(&mut header).await?;
        let header = fragment_header::from(header);
        if !header.eof() {
            return Err(RpcError::FragmentedReply);
        }
        let total = header.fragment_length() as usize;
        let mut head = [0u8; HEAD];
        let head = &mut head[..total.min(HEAD)];
        self.stream.read_exact(head).await?;
        let mut rest: &[u8] = head;

        let (reply, _) = rpc_msg::unpack(&mut rest)?;
        if reply.xid != xid {
            return Err(RpcError::UnexpectedXid);
        }
        match reply.body {
            msg_body::REPLY(reply_body::MSG_ACCEPTED(accepted)) => match accepted.reply_data {
                accept_stat_data::SUCCESS => {}
                other => {
                    return Err(RpcError::try_from(other).unwrap_or(RpcError::SystemErr));
                }
            },
            msg_body::REPLY(reply_body::MSG_DENIED(denied)) => return Err(RpcError::from(denied)),
            msg_body::CALL(_) => return Err(RpcError::UnexpectedCall),
        }
        let (status, _) = nfsstat3::unpack(&mut rest)?;
        let (_attributes, _) = post_op_attr::unpack(&mut rest)?;
        if status != nfsstat3::NFS3_OK {
            return self.finish(total, head.len() - rest.len(), ReadReply::Status(status));
        }
        let (count, _) = u32::unpack(&mut rest)?;
        let (eof, _) = bool::unpack(&mut rest)?;
        let (len, _) = u32::unpack(&mut rest)?;
        let at = head.len() - rest.len();
        let data = len as usize;
        let padded = data.next_multiple_of(4);
        // What follows the data's length is the data and its padding, nothing else; the data
        // are what was asked for at most, and what `count` says.
        if total - at != padded || len > args.count || count != len {
            return Err(RpcError::NotFullyParsed {
                buf: Vec::new(),
                pos: at as u64,
            });
        }
        let in_head = rest.len().min(data);
        dst.extend_from_slice(&rest[..in_head]);
        let mut left = data - in_head;
        while left > 0 {
            let n = self.stream.read_buf(&mut (&mut *dst).limit(left)).await?;
            if n == 0 {
                return Err(RpcError::Io(io::ErrorKind::UnexpectedEof.into()));
            }
            left -= n;
        }
        // The padding: what of it the head did not hold.
        let padding = padded - data;
        let padding_read = rest.len() - in_head;
        let mut pad = [0u8; 3];
        self.stream
            .read_exact(&mut pad[..padding - padding_read])
            .await?;
        Ok(ReadReply::Ok { eof })
    }

    /// The call: one fragment holding the RPC header and the READ's arguments.
    async fn send(
        &mut self,
        xid: u32,
        credential: &opaque_auth<'static>,
        args: &READ3args,
    ) -> Result<(), RpcError> {
        let call = rpc_msg {
            xid,
            body: msg_body::CALL(call_body {
                rpcvers: RPC_VERSION_2,
                prog: nfs3::PROGRAM,
                vers: nfs3::VERSION,
                proc: NFS_PROGRAM::NFSPROC3_READ as u32,
                cred: credential.borrow(),
                verf: opaque_auth::default(),
            }),
        };
        let len = call.packed_size() + args.packed_size();
        let mut buf = Vec::with_capacity(len + 4);
        let len = u32::try_from(len).map_err(|_| RpcError::WrongLength)?;
        fragment_header::new(len, true).pack(&mut buf)?;
        call.pack(&mut buf)?;
        args.pack(&mut buf)?;
        self.stream.write_all(&buf).await?;
        Ok(())
    }

    /// A reply without data whose head ends at `at`: the rest of it must have been read.
    fn finish(&self, total: usize, at: usize, reply: ReadReply) -> Result<ReadReply, RpcError> {
        if at != total {
            return Err(RpcError::NotFullyParsed {
                buf: Vec::new(),
                pos: at as u64,
            });
        }
        Ok(reply)
    }
}

/// A starting xid that differs between connections and processes (a server's duplicate-request
/// cache keys on it).
fn fastrand_xid() -> u32 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now()) as u32
}

#[cfg(test)]
mod tests {
    use nfs3_client::nfs3_types::nfs3::nfs_fh3;
    use nfs3_client::nfs3_types::xdr_codec::Opaque;
    use tokio::net::TcpListener;

    use super::*;

    /// How the fake server answers a call with xid `xid`: the reply's bytes after the fragment
    /// header, and the fragment header's last-fragment flag.
    type Answer = Box<dyn Fn(u32) -> (Vec<u8>, bool) + Send>;

    /// Whether an error is the one a case expects.
    type Expected = fn(&RpcError) -> bool;

    /// The accepted-reply header for `xid`: REPLY, MSG_ACCEPTED, an empty AUTH_NONE verifier,
    /// SUCCESS.
    fn accepted(xid: u32) -> Vec<u8> {
        [xid, 1, 0, 0, 0, 0]
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect()
    }

    /// A successful READ reply carrying `data` (with attributes if `attrs`), its eof flag set.
    fn ok_reply(xid: u32, data: &[u8], attrs: bool) -> Vec<u8> {
        let mut r = accepted(xid);
        r.extend(0u32.to_be_bytes()); // NFS3_OK
        if attrs {
            r.extend(1u32.to_be_bytes());
            r.extend(1u32.to_be_bytes()); // NF3REG
            r.extend([0u8; 80]);
        } else {
            r.extend(0u32.to_be_bytes());
        }
        r.extend((data.len() as u32).to_be_bytes()); // count
        r.extend(1u32.to_be_bytes()); // eof
        r.extend((data.len() as u32).to_be_bytes());
        r.extend(data);
        r.resize(r.len().next_multiple_of(4), 0);
        r
    }

    /// A server on 127.0.0.1 that answers each call on its first connection with `answers`,
    /// in turn, then closes it; and a channel connected to it.
    async fn serve(answers: Vec<Answer>) -> Channel {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            for answer in answers {
                let mut header = [0u8; 4];
                socket.read_exact(&mut header).await.unwrap();
                let len = u32::from_be_bytes(header) & 0x7fff_ffff;
                let mut call = vec![0u8; len as usize];
                socket.read_exact(&mut call).await.unwrap();
                let xid = u32::from_be_bytes(call[..4].try_into().unwrap());
                let (reply, last) = answer(xid);
                let mut header = reply.len() as u32;
                if last {
                    header |= 0x8000_0000;
                }
                socket.write_all(&header.to_be_bytes()).await.unwrap();
                socket.write_all(&reply).await.unwrap();
            }
        });
        Channel::new(TcpStream::connect(addr).await.unwrap())
    }

    fn args(count: u32) -> READ3args {
        READ3args {
            file: nfs_fh3 {
                data: Opaque::owned(vec![7; 8]),
            },
            offset: 0,
            count,
        }
    }

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 % 251) as u8).collect()
    }

    async fn read(
        channel: &mut Channel,
        count: u32,
        dst: &mut BytesMut,
    ) -> Result<ReadReply, RpcError> {
        dst.reserve(count as usize);
        let credential = opaque_auth::default();
        channel.read(&credential, &args(count), dst).await
    }

    #[tokio::test]
    async fn data_of_every_padding_in_and_past_the_head_land_in_the_buffer() {
        // 3 and 5 bytes fit the head with their padding; 5001 and 70_002 go past it, with
        // 3 and 2 bytes of padding; one channel, so each reply ends at a message boundary.
        let lens = [3usize, 5, 5001, 70_002, 0];
        let answers: Vec<Answer> = lens
            .iter()
            .enumerate()
            .map(|(i, &len)| -> Answer {
                Box::new(move |xid| (ok_reply(xid, &data(len), i % 2 == 0), true))
            })
            .collect();
        let mut channel = serve(answers).await;
        for len in lens {
            let mut dst = BytesMut::from(&b"kept"[..]);
            let reply = read(&mut channel, len as u32 + 10, &mut dst).await.unwrap();
            assert_eq!(reply, ReadReply::Ok { eof: true });
            assert_eq!(&dst[..4], b"kept");
            assert_eq!(&dst[4..], &data(len)[..], "{len} bytes");
        }
    }

    #[tokio::test]
    async fn a_refused_read_is_its_status_and_the_channel_goes_on() {
        let refused: Answer = Box::new(|xid| {
            let mut r = accepted(xid);
            r.extend(13u32.to_be_bytes()); // NFS3ERR_ACCES
            r.extend(0u32.to_be_bytes()); // no attributes
            (r, true)
        });
        let ok: Answer = Box::new(|xid| (ok_reply(xid, b"abcdefg", true), true));
        let mut channel = serve(vec![refused, ok]).await;
        let mut dst = BytesMut::new();
        let reply = read(&mut channel, 100, &mut dst).await.unwrap();
        assert_eq!(reply, ReadReply::Status(nfsstat3::NFS3ERR_ACCES));
        assert!(dst.is_empty());
        read(&mut channel, 100, &mut dst).await.unwrap();
        assert_eq!(&dst[..], b"abcdefg");
    }

    #[tokio::test]
    async fn replies_that_do_not_fit_the_call_are_errors() {
        // Another call's xid; more data than asked; fragments; a count that is not the data's.
        let cases: Vec<(Answer, Expected)> = vec![
            (
                Box::new(|xid| (ok_reply(xid.wrapping_add(1), b"abcd", false), true)),
                |e| matches!(e, RpcError::UnexpectedXid),
            ),
            (
                Box::new(|xid| (ok_reply(xid, &data(200), false), true)),
                |e| matches!(e, RpcError::NotFullyParsed { .. }),
            ),
            (
                Box::new(|xid| (ok_reply(xid, b"abcd", false), false)),
                |e| matches!(e, RpcError::FragmentedReply),
            ),
            (
                Box::new(|xid| {
                    let mut r = ok_reply(xid, b"abcd", false);
                    r[32..36].copy_from_slice(&3u32.to_be_bytes()); // count
                    (r, true)
                }),
                |e| matches!(e, RpcError::NotFullyParsed { .. }),
            ),
        ];
        for (i, (answer, expected)) in cases.into_iter().enumerate() {
            let mut channel = serve(vec![answer]).await;
            let mut dst = BytesMut::new();
            let e = read(&mut channel, 100, &mut dst).await.unwrap_err();
            assert!(expected(&e), "case {i}: {e:?}");
        }
    }

    #[tokio::test]
    async fn a_reply_cut_short_is_an_error_not_short_data() {
        // The reply says 100_000 bytes of data, the server sends 60_000 and closes.
        let cut: Answer = Box::new(|xid| {
            let mut r = ok_reply(xid, &data(100_000), false);
            let whole = r.len();
            r.truncate(whole - 40_000);
            // The fragment header must say the whole length: sent by hand below.
            (r, true)
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut call = [0u8; 4096];
            let n = socket.read(&mut call).await.unwrap();
            assert!(n > 8);
            let xid = u32::from_be_bytes(call[4..8].try_into().unwrap());
            let (reply, _) = cut(xid);
            let header = (reply.len() as u32 + 40_000) | 0x8000_0000;
            socket.write_all(&header.to_be_bytes()).await.unwrap();
            socket.write_all(&reply).await.unwrap();
        });
        let mut channel = Channel::new(TcpStream::connect(addr).await.unwrap());
        let mut dst = BytesMut::new();
        let e = read(&mut channel, 100_000, &mut dst).await.unwrap_err();
        assert!(
            matches!(&e, RpcError::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof),
            "{e:?}"
        );
    }
}
