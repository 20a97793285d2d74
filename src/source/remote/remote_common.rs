//! What the remote sources (`ObjectStoreSource`, `OpendalSource`) share: the TLS provider their
//! HTTP clients need, the error of a response shorter than asked, and (in tests) the check that
//! a server that is down fails fast.

use std::io;

use crate::error::source_error::SourceError;

/// Installs rustls' `ring` provider as the process default, unless one is already installed
/// (the HTTP clients of object stores and of WebDAV operators need one).
pub(crate) fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race with another thread installing one is fine. rustls 0.23.48 deprecates
        // ring's provider (it has no post-quantum key exchange); ring is kept on purpose: the
        // other provider, aws-lc-rs, costs a ~90 s C build (Cargo.toml).
        #[allow(deprecated)]
        let provider = rustls::crypto::ring::default_provider();
        let _ = provider.install_default();
    }
}

/// The error of a response of `got` bytes where `expected` were asked for: `UnexpectedEof`
/// (the object shrank, or the length hint was wrong), under `context`; `who` is what answered
/// ("server", "service").
pub(crate) fn short_response(context: String, who: &str, got: usize, expected: usize) -> io::Error {
    SourceError::wrap(
        context,
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the {who} sent {got} bytes, not {expected}"),
        ),
    )
}

/// Awaits `open`, which must fail within `bound` seconds; returns its error.
#[cfg(test)]
pub(crate) async fn fails_within<T: std::fmt::Debug>(
    bound: u64,
    open: impl std::future::Future<Output = io::Result<T>>,
) -> io::Error {
    let started = std::time::Instant::now();
    let e = open.await.unwrap_err();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(bound),
        "{:?}",
        started.elapsed()
    );
    e
}

/// A stream that makes its request (`open`) when first polled and then gives that request's
/// body, its errors made `io::Error`s by `error`: the remote sources' `read_stream`.
pub(crate) fn stream_when_polled<F, S, E>(
    open: F,
    error: impl FnMut(E) -> io::Error + Send + 'static,
) -> futures_core::stream::BoxStream<'static, io::Result<bytes::Bytes>>
where
    F: std::future::Future<Output = io::Result<S>> + Send + 'static,
    S: futures_core::Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
    E: 'static,
{
    use futures_util::{stream, StreamExt, TryStreamExt};
    stream::once(async move { open.await.map(|body| body.map_err(error)) })
        .try_flatten()
        .boxed()
}
