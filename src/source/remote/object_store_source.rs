use std::fmt;
use std::future::{poll_fn, ready, Future};
use std::io;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_core::stream::BoxStream;
use object_store::path::Path;
use object_store::{BackoffConfig, ClientOptions, GetOptions, ObjectStore, RetryConfig};

use crate::source::remote::object_store_error;
use crate::source::remote::remote_common::{
    install_crypto_provider, short_response, stream_when_polled,
};
use crate::source::remote::spare_buffers::SpareBuffers;
use crate::source::PositionalSource;

/// A [`PositionalSource`] over one object in an [`object_store`] store: S3 and S3-compatible
/// servers, plain HTTP(S) servers with `Range` support (nginx, Apache, WebDAV), and any other
/// store the crate supports. Requires the cargo feature `object-store`.
///
/// The length comes from one `HEAD` when the source is opened and is fixed from then on; each
/// [`read_at`](PositionalSource::read_at) is one ranged `GET` (cut at that length, so it never
/// asks past the end). Errors keep their kind where `object_store` gives one (`NotFound`) and
/// name the URL and the byte range.
///
/// # Memory
///
/// A response that arrives in several frames is copied into one buffer (a single frame is
/// handed out as it is). Up to four of those buffers (of responses of at least 128 KiB) are
/// kept **per process**, shared by every `ObjectStoreSource`, to reuse once the bytes handed
/// out of them are dropped, so that large read-ahead chunks do not take a fresh allocation
/// each, whose every page faults on first touch. So however many sources a process opens,
/// the buffers kept idle are at most four of the largest responses (16 MiB with the default
/// read-ahead's 4 MiB chunks); [`release_buffers`](PositionalSource::release_buffers)
/// (called by [`AsyncBufferedInput::release`](crate::AsyncBufferedInput::release)) drops them.
///
/// # Time to fail
///
/// Stores made by [`from_url`](Self::from_url) use [`client_options`](Self::client_options)
/// and [`retry_config`](Self::retry_config): a connection attempt gives up after 2 s, a
/// request after 5 s, and failed requests are retried at most twice, not after 3 s from the
/// first attempt. So a request to a server that is down (connection refused) fails within about
/// 1 s, and one to a server that stops answering mid-read within about 5 s (at most 8 s). A
/// failed read consumes nothing: the next read of the same range asks again, so an input
/// resumes once the server is back. Stores built by hand keep their own settings.
///
/// # Examples
///
/// ```no_run
/// use async_buffered_input::{PositionalFetch, ReadAhead};
/// use async_buffered_input::source::ObjectStoreSource;
/// use async_buffered_input::AsyncBufferedInput;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// // S3 credentials, region and endpoint come from the usual AWS_* variables.
/// let source = ObjectStoreSource::from_url("s3://my-bucket/index/_0.cfs").await?;
/// let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::default());
/// let mut input = AsyncBufferedInput::new(fetch);
/// let magic = input.read_bytes_owned(4).await?;
/// # Ok(())
/// # }
/// ```
pub struct ObjectStoreSource {
    store: Arc<dyn ObjectStore>,
    location: Path,
    // For messages: where the object is, as the user named it.
    url: String,
    length: u64,
}

impl ObjectStoreSource {
    /// Opens the object at `url`, with a store built for it and the bounded timeouts and
    /// retries described [above](Self#time-to-fail):
    ///
    /// - `http://host:port/path` or `https://…`: a plain HTTP server (ranged `GET`s, `HEAD`);
    /// - `s3://bucket/key`: S3, configured from the environment as
    ///   `AmazonS3Builder::from_env` does (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    ///   `AWS_REGION`, `AWS_ENDPOINT` for S3-compatible servers; path-style requests unless
    ///   `AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true`; an `http://` endpoint is allowed).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a URL that does not parse or has another scheme; the store's error
    /// (with the URL) if it cannot be built or the `HEAD` fails (`NotFound` for a missing
    /// object).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future abandons the `HEAD`; nothing is shared.
    pub async fn from_url(url: &str) -> io::Result<Self> {
        let (store, location) = Self::store_for_url_impl(url)?;
        Self::open(store, location, url).await
    }

    /// The store [`from_url`](Self::from_url) builds for `url`, and the object's path in it,
    /// without a request. Build it once and share it: every source opened on it with
    /// [`open`](Self::open) or [`with_length`](Self::with_length) then shares one client
    /// (one connection pool), which a [`Directory`](crate::lucene::Directory) does for all
    /// the files of a folder.
    ///
    /// # Errors
    ///
    /// As [`from_url`](Self::from_url), less the `HEAD`.
    pub(crate) fn store_for_url_impl(url: &str) -> io::Result<(Arc<dyn ObjectStore>, Path)> {
        let parsed = url::Url::parse(url).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid URL {url:?}: {e}"),
            )
        })?;
        let built = match parsed.scheme() {
            "http" | "https" => {
                let origin = parsed.origin().ascii_serialization();
                object_store::http::HttpBuilder::new()
                    .with_url(origin)
                    .with_client_options(Self::client_options_impl())
                    .with_retry(Self::retry_config_impl())
                    .build()
                    .map(|store| Arc::new(store) as Arc<dyn ObjectStore>)
            }
            "s3" => {
                if let Some(why) = missing_s3_credentials(|name| std::env::var(name).ok()) {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!("store for {url}: {why}"),
                    ));
                }
                let bucket = parsed.host_str().unwrap_or_default().to_owned();
                let endpoint = std::env::var("AWS_ENDPOINT")
                    .or_else(|_| std::env::var("AWS_ENDPOINT_URL"))
                    .unwrap_or_default();
                let allow_http = endpoint.starts_with("http://")
                    || std::env::var("AWS_ALLOW_HTTP").is_ok_and(|v| v == "true");
                object_store::aws::AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .with_client_options(Self::client_options_impl().with_allow_http(allow_http))
                    .with_retry(Self::retry_config_impl())
                    .build()
                    .map(|store| Arc::new(store) as Arc<dyn ObjectStore>)
            }
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("unsupported URL scheme {other:?} in {url:?}: use http, https or s3"),
                ))
            }
        };
        let store = built.map_err(|e| object_store_error::wrap(format!("store for {url}"), e))?;
        let location = Path::from_url_path(parsed.path())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{url}: {e}")))?;
        Ok((store, location))
    }

    /// [`store_for_url_impl`](Self::store_for_url_impl), for this crate's tests.
    #[cfg(feature = "test-util")]
    #[doc(hidden)] // a hook for this crate's tests, not part of the API
    pub fn store_for_url(url: &str) -> io::Result<(Arc<dyn ObjectStore>, Path)> {
        Self::store_for_url_impl(url)
    }

    /// Opens the object at `location` in `store`, asking its length with one `HEAD`. `url` only
    /// names the object in error messages.
    ///
    /// # Errors
    ///
    /// The store's error (with the URL) if the `HEAD` fails.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future abandons the `HEAD`.
    pub async fn open(
        store: Arc<dyn ObjectStore>,
        location: Path,
        url: impl Into<String>,
    ) -> io::Result<Self> {
        let url = url.into();
        let head = store
            .get_opts(&location, GetOptions::new().with_head(true))
            .await
            .map_err(|e| object_store_error::wrap(format!("HEAD {url}"), e))?;
        Ok(Self::with_length(store, location, url, head.meta.size))
    }

    /// A source over an object whose length is already known (no `HEAD`): from a listing
    /// (`list` on the store), a manifest, or an earlier `HEAD`.
    pub fn with_length(
        store: Arc<dyn ObjectStore>,
        location: Path,
        url: impl Into<String>,
        length: u64,
    ) -> Self {
        Self {
            store,
            location,
            url: url.into(),
            length,
        }
    }

    /// The client options [`from_url`](Self::from_url) uses: 2 s to connect, 5 s per request,
    /// plain `http://` allowed for HTTP stores (not for S3 unless the endpoint is `http://`).
    /// Also installs rustls' `ring` crypto provider as the process default if none is, which
    /// building a client needs.
    pub(crate) fn client_options_impl() -> ClientOptions {
        install_crypto_provider();
        ClientOptions::new()
            .with_allow_http(true)
            .with_connect_timeout(Duration::from_secs(2))
            .with_timeout(Duration::from_secs(5))
    }

    /// [`client_options_impl`](Self::client_options_impl), for this crate's tests.
    #[cfg(feature = "test-util")]
    #[doc(hidden)] // a hook for this crate's tests, not part of the API
    pub fn client_options() -> ClientOptions {
        Self::client_options_impl()
    }

    /// The retries [`from_url`](Self::from_url) uses: at most 2, backing off 100 ms then
    /// 200 ms (at most 500 ms), none started more than 3 s after the first attempt.
    pub(crate) fn retry_config_impl() -> RetryConfig {
        RetryConfig {
            backoff: BackoffConfig {
                init_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_millis(500),
                base: 2.0,
            },
            max_retries: 2,
            retry_timeout: Duration::from_secs(3),
        }
    }

    /// [`retry_config_impl`](Self::retry_config_impl), for this crate's tests.
    #[cfg(feature = "test-util")]
    #[doc(hidden)] // a hook for this crate's tests, not part of the API
    pub fn retry_config() -> RetryConfig {
        Self::retry_config_impl()
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The object's path in the store.
    pub fn location(&self) -> &Path {
        &self.location
    }

    /// The URL that names the object in messages.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The object's length, from the `HEAD` at open.
    pub fn length(&self) -> u64 {
        self.length
    }
}

/// Why an `s3://` store would have to ask a cloud metadata endpoint for credentials, or `None`
/// when `env` (the environment) gives it a way not to: keys (`AWS_ACCESS_KEY_ID` and
/// `AWS_SECRET_ACCESS_KEY`), unsigned requests (`AWS_SKIP_SIGNATURE=true`), a web identity
/// (`AWS_WEB_IDENTITY_TOKEN_FILE`), a container endpoint (`AWS_CONTAINER_CREDENTIALS_*`), or a
/// metadata endpoint named on purpose (`AWS_METADATA_ENDPOINT`). Without any of them
/// object_store's credential chain sends a request to 169.254.169.254, which stalls off a
/// cloud machine and must never leave a test machine: refused instead, with what to set.
fn missing_s3_credentials(env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
    let keys = set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY");
    let unsigned = env("AWS_SKIP_SIGNATURE").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let other = [
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_METADATA_ENDPOINT",
    ]
    .iter()
    .any(|name| set(name));
    (!(keys || unsigned || other)).then(|| {
        "no AWS credentials in the environment: set AWS_ACCESS_KEY_ID and \
         AWS_SECRET_ACCESS_KEY, or AWS_SKIP_SIGNATURE=true for unsigned requests (not asking \
         the cloud metadata endpoint 169.254.169.254; set AWS_METADATA_ENDPOINT to allow it)"
            .to_owned()
    })
}

impl PositionalSource for ObjectStoreSource {
    /// One ranged `GET` for `[offset, offset + len)`, cut at the object's length; no request at
    /// or past the end.
    ///
    /// Errors name the URL and the range (`bytes=A-B`, inclusive as in HTTP).
    fn read_at(&self, offset: u64, len: usize) -> impl Future<Output = io::Result<Bytes>> + Send {
        let end = offset.saturating_add(len as u64).min(self.length);
        let range: Range<u64> = offset.min(end)..end;
        let store = Arc::clone(&self.store);
        let location = self.location.clone();
        let url = self.url.clone();
        async move {
            if range.is_empty() {
                return Ok(Bytes::new());
            }
            let context = || {
                format!(
                    "GET {url} bytes={}-{} ({len} bytes at offset {offset})",
                    range.start,
                    range.end - 1
                )
            };
            let options = GetOptions::new().with_range(Some(range.clone()));
            let expected = (range.end - range.start) as usize;
            let result = match store.get_opts(&location, options).await {
                Ok(result) => collect(result.into_stream(), expected, &SPARE_BUFFERS).await,
                Err(e) => Err(e),
            };
            let bytes = result.map_err(|e| object_store_error::wrap(context(), e))?;
            if bytes.len() != expected {
                return Err(short_response(context(), "server", bytes.len(), expected));
            }
            Ok(bytes)
        }
    }

    /// One `GET` of `bytes=offset-` (to the length from the `HEAD`), its body as it arrives:
    /// the request starts when the stream is first polled. Errors name the URL and the range.
    fn read_stream(&self, offset: u64) -> Option<BoxStream<'static, io::Result<Bytes>>> {
        let range = offset.min(self.length)..self.length;
        if range.is_empty() {
            return Some(Box::pin(futures_util::stream::empty())); // no request
        }
        let (store, location) = (Arc::clone(&self.store), self.location.clone());
        let context = format!("streaming GET {} bytes={}-", self.url, range.start);
        let open_context = context.clone();
        let open = async move {
            let options = GetOptions::new().with_range(Some(range));
            match store.get_opts(&location, options).await {
                Ok(result) => Ok(result.into_stream()),
                Err(e) => Err(object_store_error::wrap(open_context, e)),
            }
        };
        Some(stream_when_polled(open, move |e| {
            object_store_error::wrap(context.clone(), e)
        }))
    }

    /// The URL.
    fn resource(&self) -> Option<String> {
        Some(self.url.clone())
    }

    /// The length from the `HEAD` at open (no request).
    fn len(&self) -> impl Future<Output = io::Result<u64>> + Send {
        ready(Ok(self.length))
    }

    /// The length from the `HEAD` that opened it, or the one it was given.
    fn known_len(&self) -> Option<u64> {
        Some(self.length)
    }

    /// Drops the buffers kept for reuse (see [Memory](Self#memory)).
    fn release_buffers(&self) {
        SPARE_BUFFERS.clear();
    }
}

/// Buffers of multi-frame responses, reused once their bytes are dropped: one set per process,
/// so that what they keep idle is bounded however many sources there are.
static SPARE_BUFFERS: SpareBuffers = SpareBuffers::new();

/// A response body as one `Bytes`: its only frame as it is, or its frames copied into a buffer
/// of `buffers` with room for `expected` bytes (what `GetResult::bytes` does, into a reused
/// buffer instead of a fresh one).
async fn collect(
    mut body: BoxStream<'static, object_store::Result<Bytes>>,
    expected: usize,
    buffers: &SpareBuffers,
) -> object_store::Result<Bytes> {
    let first = next(&mut body).await.transpose()?.unwrap_or_default();
    let Some(second) = next(&mut body).await.transpose()? else {
        return Ok(first);
    };
    let mut buf = buffers.take(expected.max(first.len() + second.len()));
    buf.extend_from_slice(&first);
    buf.extend_from_slice(&second);
    drop((first, second));
    while let Some(frame) = next(&mut body).await.transpose()? {
        buf.extend_from_slice(&frame);
    }
    Ok(buffers.keep(buf))
}

/// The body's next frame, if any.
async fn next(
    body: &mut BoxStream<'static, object_store::Result<Bytes>>,
) -> Option<object_store::Result<Bytes>> {
    poll_fn(|cx| body.as_mut().poll_next(cx)).await
}

impl fmt::Debug for ObjectStoreSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectStoreSource")
            .field("url", &self.url)
            .field("length", &self.length)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::missing_s3_credentials;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn s3_without_credentials_is_refused_not_sent_to_the_metadata_endpoint() {
        let why = missing_s3_credentials(env(&[("AWS_REGION", "us-east-1")])).unwrap();
        assert!(why.contains("AWS_ACCESS_KEY_ID"), "{why}");
        assert!(why.contains("169.254.169.254"), "{why}");
        // A key without its secret, or an empty one, is not credentials either.
        assert!(missing_s3_credentials(env(&[("AWS_ACCESS_KEY_ID", "k")])).is_some());
        assert!(missing_s3_credentials(env(&[("AWS_SKIP_SIGNATURE", "false")])).is_some());
        for ok in [
            &[("AWS_ACCESS_KEY_ID", "k"), ("AWS_SECRET_ACCESS_KEY", "s")][..],
            &[("AWS_SKIP_SIGNATURE", "true")],
            &[("AWS_WEB_IDENTITY_TOKEN_FILE", "/t")],
            &[("AWS_METADATA_ENDPOINT", "http://127.0.0.1:1")],
        ] {
            let vars: &'static [(&str, &str)] = Box::leak(ok.to_vec().into_boxed_slice());
            assert_eq!(missing_s3_credentials(env(vars)), None, "{ok:?}");
        }
    }

    use super::*;
    use crate::source::remote::remote_common::fails_within;

    #[tokio::test]
    async fn bad_urls_are_invalid_input() {
        for url in ["not a url", "ftp://host/x", "file:///tmp/x"] {
            let e = ObjectStoreSource::from_url(url).await.unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{url}: {e}");
            assert!(
                e.to_string().contains(url.split(':').next().unwrap()),
                "{e}"
            );
        }
    }

    #[tokio::test]
    async fn a_server_that_is_down_fails_fast_naming_the_url() {
        // Port 9 (discard) on loopback: nothing listens there in a test environment.
        let url = "http://127.0.0.1:9/missing.bin";
        let e = fails_within(3, ObjectStoreSource::from_url(url)).await;
        assert!(e.to_string().contains(url), "{e}");
    }
}
