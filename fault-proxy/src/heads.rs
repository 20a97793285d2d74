//! Reading one HTTP/1.1 message head off a connection, for the tiny servers and clients the
//! tests put on either side of the proxy.

use tokio::io::{AsyncRead, AsyncReadExt};

/// Reads from `conn` into `buf` until `buf` holds a whole message head (a request's or a
/// response's, up to its blank line), then takes the head and its blank line out of `buf` and
/// returns the head as text. What came after it stays in `buf`: the start of a body, or of a
/// pipelined request. `None` if the connection ends or fails first.
pub async fn read_head<R: AsyncRead + Unpin>(conn: &mut R, buf: &mut Vec<u8>) -> Option<String> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end + 4);
            return Some(head);
        }
        match conn.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}
