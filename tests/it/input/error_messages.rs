//! Errors say why in one line: printed with `{}`, an error the crate returns ends with its
//! cause's own text, a reporter that walks `source()` prints that cause once, and the kind is
//! the one the OS or the HTTP client saw. The HTTP cases start their own server on 127.0.0.1.

use std::io::{self, ErrorKind};

use abi_testkit::causes as chain;
use abi_testkit::Scripted;
use async_buffered_input::layer::Retrying;
use async_buffered_input::source::FileSource;
use async_buffered_input::PositionalFetch;
use async_buffered_input::SourceError;
use async_buffered_input::{AsyncBufferedInput, InputError};

/// The OS's text for a missing file ("No such file or directory (os error 2)" on Linux).
fn no_such_file() -> String {
    io::Error::from_raw_os_error(2).to_string()
}

#[tokio::test]
async fn a_missing_file_says_so_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("idx").join("nope.si");
    let expected = format!("open {}: {}", path.display(), no_such_file());

    let e = FileSource::open(&path).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(chain(&e), std::slice::from_ref(&expected));
    let detail = e.get_ref().unwrap().downcast_ref::<SourceError>().unwrap();
    assert_eq!(detail.cause().kind(), ErrorKind::NotFound);
    assert_eq!(detail.cause().raw_os_error(), Some(2));

    let e = AsyncBufferedInput::open(&path).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(chain(&e), [expected]);
    // `?` from `main` prints the Debug: one line, with the message.
    let debug = format!("{e:?}");
    assert!(
        !debug.contains('\n') && debug.contains("nope.si"),
        "{debug}"
    );
    assert!(debug.len() < 200, "{debug}");
}

/// 100 bytes of "f.bin" whose every request fails with the OS error `code`.
fn failing_from_the_first(code: i32) -> Scripted {
    Scripted::new(vec![7u8; 100])
        .named("f.bin")
        .fail_all()
        .error_with(move |r| {
            let cause = io::Error::from_raw_os_error(code);
            let context = format!("read of {} bytes at offset {} from f.bin", r.len, r.offset);
            SourceError::new(context, cause).into()
        })
}

/// `e` has the `kind` of the OS error `errno`, and its whole chain is one line: `before`, then
/// that OS error's message.
#[track_caller]
fn assert_os_failure(e: &io::Error, errno: i32, kind: ErrorKind, before: &str) {
    assert_eq!(e.kind(), kind);
    let cause = io::Error::from_raw_os_error(errno);
    assert_eq!(chain(e), [format!("{before}{cause}")]);
}

#[tokio::test]
async fn a_read_that_fails_in_the_source_ends_with_the_cause() {
    let source = failing_from_the_first(libc::ECONNRESET);
    let mut input = AsyncBufferedInput::with_capacity(16, PositionalFetch::new(source));
    input.seek_to(10);
    let e = input.read_u32().await.unwrap_err();
    assert_os_failure(
        &e,
        libc::ECONNRESET,
        ErrorKind::ConnectionReset,
        "f.bin: read_u32 of 4 bytes at position 10 failed: read of 16 bytes at offset 0 from \
         f.bin: ",
    );
    let payload = abi_testkit::input_error(&e);
    let cause = payload.cause().unwrap();
    assert_eq!(cause.kind(), ErrorKind::ConnectionReset);
    let detail = cause
        .get_ref()
        .unwrap()
        .downcast_ref::<SourceError>()
        .unwrap();
    assert_eq!(detail.cause().raw_os_error(), Some(libc::ECONNRESET));
}

#[tokio::test(start_paused = true)]
async fn retries_that_give_up_say_how_many_and_why() {
    let source = failing_from_the_first(libc::ETIMEDOUT);
    let source = Retrying::new(source).with_attempts(3);
    let mut input = AsyncBufferedInput::with_capacity(16, PositionalFetch::new(source));
    let e = input.read_byte().await.unwrap_err();
    assert_os_failure(
        &e,
        libc::ETIMEDOUT,
        ErrorKind::TimedOut,
        "f.bin: read_byte of 1 byte at position 0 failed: gave up after 3 attempts: read of 16 \
         bytes at offset 0 from f.bin: ",
    );
}

#[cfg(feature = "object-store")]
mod http {
    use super::*;
    use async_buffered_input::source::ObjectStoreSource;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server on 127.0.0.1 that answers every request with a 404 and nginx's HTML body;
    /// returns its address.
    async fn not_found_server() -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut request = [0u8; 4096];
                    let _ = conn.read(&mut request).await;
                    let body = "<html>\r\n<head><title>404 Not Found</title></head>\r\n\
                                <body>\r\n<center><h1>404 Not Found</h1></center>\r\n\
                                </body>\r\n</html>\r\n";
                    let head = format!(
                        "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = conn.write_all(head.as_bytes()).await;
                    let _ = conn.write_all(body.as_bytes()).await;
                });
            }
        });
        addr
    }

    /// A port on 127.0.0.1 nothing listens on (bound, then closed).
    async fn closed_port() -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap().port()
    }

    #[tokio::test]
    async fn a_404_says_404() {
        let addr = not_found_server().await;
        let url = format!("http://{addr}/nope.si");
        let e = ObjectStoreSource::from_url(&url).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert_eq!(chain(&e), [format!("HEAD {url}: 404 Not Found")]);
        let detail = e.get_ref().unwrap().downcast_ref::<SourceError>().unwrap();
        let cause = detail.cause();
        assert_eq!(cause.kind(), ErrorKind::NotFound);
        assert!(
            cause.get_ref().unwrap().is::<object_store::Error>(),
            "the client's own error is kept: {cause:?}"
        );
    }

    #[tokio::test]
    async fn a_refused_connection_is_connection_refused() {
        let port = closed_port().await;
        let url = format!("http://127.0.0.1:{port}/nope.si");
        let refused = io::Error::from_raw_os_error(libc::ECONNREFUSED);

        let e = ObjectStoreSource::from_url(&url).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ConnectionRefused, "{e}");
        assert_eq!(chain(&e), [format!("HEAD {url}: {refused}")]);

        // A read of an input over it: the input's message, then the request's, then why.
        let (store, path) = ObjectStoreSource::store_for_url(&url).unwrap();
        let source = ObjectStoreSource::with_length(store, path, url.clone(), 1000);
        let mut input = AsyncBufferedInput::with_capacity(100, PositionalFetch::new(source));
        let e = input.read_bytes_owned(10).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ConnectionRefused, "{e}");
        assert_eq!(
            chain(&e),
            [format!(
                "{url}: read_bytes_owned of 10 bytes at position 0 failed: GET {url} \
                 bytes=0-99 (100 bytes at offset 0): {refused}"
            )]
        );
    }
}

#[test]
fn the_payloads_can_cross_threads() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<SourceError>();
    send_sync::<InputError>();
}
