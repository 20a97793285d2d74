use std::fmt;
use std::future::{ready, Future};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_core::stream::BoxStream;
use opendal::layers::TimeoutLayer;
use opendal::Operator;

use crate::source::remote::opendal_error::{io_error, is_stale_ftp_reply, FTP_TRIES};
use crate::source::remote::remote_common::{
    install_crypto_provider, short_response, stream_when_polled,
};
use crate::source::remote::spare_buffers::SpareBuffers;
use crate::source::PositionalSource;

/// A [`PositionalSource`] over one file of an [OpenDAL](opendal) [`Operator`]: FTP, SFTP,
/// WebDAV, HDFS, GCS, Azure, a local folder, memory, and every other service OpenDAL has.
/// Requires the cargo feature `opendal`.
///
/// A program whose storage already is an `Operator` reads through it with this crate's
/// window, read-ahead, clones and slices, without wrapping anything by hand.
///
/// The length comes from one `stat` when the source is [opened](Self::open) (or from a hint,
/// [`with_length`](Self::with_length)) and is fixed from then on; reads are cut at that length
/// so they never ask past the end.
///
/// # Sequential reads: one stream
///
/// Every [`read_at`](PositionalSource::read_at) is one ranged read
/// (`operator.read_with(path).range(..)`). [`read_stream`](PositionalSource::read_stream) is
/// OpenDAL's byte stream of the file from an offset to its end (one transfer: a `RETR` over
/// FTP, a `GET` over WebDAV), so a [`PositionalFetch`](crate::PositionalFetch) with read-ahead
/// serves a long sequential run from one stream, as OpenDAL's own `Reader` reads, instead of
/// one transfer per chunk (see its docs for when it streams and when it goes back to ranged
/// reads). [`with_streaming(false)`](Self::with_streaming) keeps every read ranged.
///
/// # Minimum Rust version
///
/// OpenDAL 0.59 needs rustc 1.91 or newer. Without the `opendal` feature this crate keeps its
/// own minimum (1.85).
///
/// # Errors
///
/// Every error names the file (its [`resource`](PositionalSource::resource) name) and, for
/// reads, the byte range, and keeps a kind: OpenDAL's `NotFound`, `PermissionDenied`,
/// `IsADirectory`, `NotADirectory`, `AlreadyExists` become the `io::ErrorKind` of the same
/// name, `ConfigInvalid` becomes `InvalidInput`, `Unsupported` stays `Unsupported`,
/// `RangeNotSatisfied` (the file is shorter than its length said) is `UnexpectedEof`, and an
/// unexpected failure takes the kind of the I/O error that caused it (a refused connection is
/// `ConnectionRefused`), so [`Retrying`](crate::layer::Retrying) knows what to retry. Other
/// failures OpenDAL calls temporary are `Interrupted`; the rest are `Other`. OpenDAL's error
/// (with its operation and context) is the [source](std::error::Error::source).
///
/// # HTTP services
///
/// OpenDAL's HTTP-based services (WebDAV, S3, ...) need an HTTP transport. Operators made by
/// [`from_uri`](Self::from_uri) get their own; for an operator built by hand, enable OpenDAL's
/// default features in your own dependency (they install a process-wide one), or give it one
/// with `Operator::with_context`.
///
/// # Bytes at hand
///
/// [`try_read_at`](PositionalSource::try_read_at) is not implemented (it returns 0): OpenDAL
/// offers no way to ask a service, not even its memory service, for bytes without an async
/// call, so every read goes through [`read_at`](PositionalSource::read_at).
///
/// # Examples
///
/// ```no_run
/// use async_buffered_input::{PositionalFetch, ReadAhead};
/// use async_buffered_input::source::OpendalSource;
/// use async_buffered_input::AsyncBufferedInput;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// // Any operator the program already has:
/// let operator = opendal::Operator::new(opendal::services::Memory::default())
///     .map_err(std::io::Error::other)?;
/// operator.write("index/_0.cfs", vec![0u8; 1000]).await.map_err(std::io::Error::other)?;
/// let source = OpendalSource::open(operator, "index/_0.cfs").await?;
/// // Or one built from a URL: ftp://user:password@host:2121/index/_0.cfs
/// let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::default());
/// let mut input = AsyncBufferedInput::new(fetch);
/// let magic = input.read_bytes_owned(4).await?;
/// # Ok(())
/// # }
/// ```
pub struct OpendalSource {
    operator: Operator,
    // The path as OpenDAL takes it: relative to the operator's root.
    path: String,
    // What `resource()` returns: scheme, service name, root and path.
    name: String,
    length: u64,
    // Whether `read_stream` gives a stream (otherwise every read is ranged).
    streaming: bool,
    // Streams opened (polled), by this source and its clones: for tests.
    streams_opened: Arc<AtomicU64>,
}

impl OpendalSource {
    /// How long one request of an operator built by [`from_uri`](Self::from_uri) may take
    /// before it fails (`TimedOut`).
    pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

    /// How long one I/O step of such a request (a chunk of a body) may wait.
    pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(5);

    /// Opens the file at `uri`, with an operator built for it (each request bounded by
    /// 10 s and
    /// 5 s):
    ///
    /// - `ftp://[user[:password]@]host[:port]/path` (FTP, port 21 by default, anonymous if no
    ///   user), `ftps://…` for FTP over TLS;
    /// - `webdav://[user[:password]@]host[:port]/path`: a WebDAV server over plain HTTP,
    ///   `webdavs://…` over HTTPS;
    /// - `fs:///absolute/path`: a local file through OpenDAL's `fs` service.
    ///
    /// The source's name ([`resource`](PositionalSource::resource)) is the URI without its
    /// password. Percent-escapes in the path are decoded.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a URI that does not parse or has another scheme; OpenDAL's error
    /// (with the URI) if the operator cannot be built or the `stat` fails (`NotFound` for a
    /// missing file, `ConnectionRefused` for a server that is down).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future abandons the `stat`; nothing is shared.
    pub async fn from_uri(uri: &str) -> io::Result<Self> {
        let parsed = url::Url::parse(uri).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid URI {uri:?}: {e}"),
            )
        })?;
        let invalid =
            |what: &str| io::Error::new(io::ErrorKind::InvalidInput, format!("{what} in {uri:?}"));
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| invalid("a percent-escape that is not UTF-8"))
        };
        let path = decode(parsed.path())?;
        let path = path.trim_start_matches('/').to_owned();
        if path.is_empty() || path.ends_with('/') {
            return Err(invalid("no file path"));
        }
        let user = decode(parsed.username())?;
        let password = parsed.password().map(decode).transpose()?;
        let host = || {
            let host = parsed.host_str().ok_or_else(|| invalid("no host"))?;
            Ok::<_, io::Error>(match parsed.port() {
                Some(port) => format!("{host}:{port}"),
                None => host.to_owned(),
            })
        };
        let built = match parsed.scheme() {
            "ftp" | "ftps" => {
                let mut builder = opendal::services::Ftp::default()
                    .endpoint(&format!("{}://{}", parsed.scheme(), host()?))
                    .root("/");
                if !user.is_empty() {
                    builder = builder.user(&user);
                }
                if let Some(password) = &password {
                    builder = builder.password(password);
                }
                Operator::new(builder)
            }
            "webdav" | "webdavs" => {
                let http = if parsed.scheme() == "webdav" {
                    "http"
                } else {
                    "https"
                };
                let mut builder = opendal::services::Webdav::default()
                    .endpoint(&format!("{http}://{}", host()?))
                    .root("/");
                if !user.is_empty() {
                    builder = builder.username(&user);
                }
                if let Some(password) = &password {
                    builder = builder.password(password);
                }
                Operator::new(builder).map(with_http_transport)
            }
            "fs" => {
                if parsed.host_str().is_some_and(|h| !h.is_empty()) {
                    return Err(invalid("a host (use fs:///absolute/path)"));
                }
                Operator::new(opendal::services::Fs::default().root("/"))
            }
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "unsupported URI scheme {other:?} in {uri:?}: use ftp, ftps, webdav, webdavs or fs"
                    ),
                ))
            }
        };
        let mut name = parsed.clone();
        let _ = name.set_password(None);
        let name = name.to_string();
        let operator = built
            .map_err(|e| io_error(format!("operator for {name}"), e))?
            .layer(
                TimeoutLayer::new()
                    .with_timeout(Self::REQUEST_TIMEOUT)
                    .with_io_timeout(Self::IO_TIMEOUT),
            );
        Self::stat(operator, path, name).await
    }

    /// Opens the file at `path` (relative to the operator's root) of `operator`, asking its
    /// length with one `stat`. The source's name is `scheme://name/root/path` from the
    /// operator's info (`ftp:///data/blob.bin`; the name part is what the service calls its
    /// namespace: a bucket for S3, the operator's address for memory, empty for many); give a
    /// better one
    /// with [`with_name`](Self::with_name).
    ///
    /// # Errors
    ///
    /// OpenDAL's error, with the name, if the `stat` fails (`NotFound` for a missing file,
    /// `IsADirectory` for a directory).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future abandons the `stat`.
    pub async fn open(operator: Operator, path: impl Into<String>) -> io::Result<Self> {
        let path = path.into();
        let name = default_name(&operator, &path);
        Self::stat(operator, path, name).await
    }

    /// The source over `path` of `operator`, named `name`, with the length from one `stat`; a
    /// directory is an error.
    async fn stat(operator: Operator, path: String, name: String) -> io::Result<Self> {
        let meta = operator
            .stat(&path)
            .await
            .map_err(|e| io_error(format!("stat {name}"), e))?;
        if meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("stat {name}: a directory, not a file"),
            ));
        }
        Ok(Self {
            length: meta.content_length(),
            operator,
            path,
            name,
            streaming: true,
            streams_opened: Arc::default(),
        })
    }

    /// A source over a file whose length is already known (no `stat`): a length kept from a
    /// listing, or a hint. Reads end at `length`: a wrong hint makes the file look shorter, or
    /// a read past the real end fails with `UnexpectedEof`.
    pub fn with_length(operator: Operator, path: impl Into<String>, length: u64) -> Self {
        let path = path.into();
        let name = default_name(&operator, &path);
        Self {
            operator,
            path,
            name,
            length,
            streaming: true,
            streams_opened: Arc::default(),
        }
    }

    /// The same source named `name` in errors and by [`resource`](PositionalSource::resource)
    /// (for a [`Cached`](crate::cache::Cached) source, the name must identify the bytes).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The same source with sequential reads served from one stream (`true`, the default) or
    /// every read ranged (`false`): see [Sequential reads](Self#sequential-reads-one-stream).
    /// Ranged reads suit a source shared by readers that each read sequentially at their own
    /// place (they would take turns at opening streams), or a service whose streams cost
    /// more than its ranged reads.
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// How many streams this source and its clones have opened (polled at least once).
    #[cfg(feature = "test-util")]
    #[doc(hidden)] // a hook for this crate's tests, not part of the API
    pub fn streams_opened(&self) -> u64 {
        self.streams_opened.load(Ordering::Relaxed)
    }

    /// Whether sequential reads are served from one stream.
    pub fn is_streaming(&self) -> bool {
        self.streaming
    }

    /// The operator.
    pub fn operator(&self) -> &Operator {
        &self.operator
    }

    /// The file's path, relative to the operator's root.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The name that identifies the file in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file's length, from the `stat` at open (or the hint).
    pub fn length(&self) -> u64 {
        self.length
    }
}

/// `scheme://name/root/path`, from the operator's info.
fn default_name(operator: &Operator, path: &str) -> String {
    let info = operator.info();
    let root = info.root();
    let root = root.trim_end_matches('/');
    let root = root.trim_start_matches('/');
    let mut name = format!("{}://{}/", info.scheme(), info.name());
    if !root.is_empty() {
        name.push_str(root);
        name.push('/');
    }
    name.push_str(path.trim_start_matches('/'));
    name
}

/// `operator` with an HTTP transport of its own: reqwest, 2 s to connect (OpenDAL without its
/// default features installs no process-wide transport, and HTTP services fail without one).
fn with_http_transport(operator: Operator) -> Operator {
    install_crypto_provider();
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(2))
        .build()
        // Building fails only without a TLS provider, installed just above.
        .unwrap_or_default();
    let transport = opendal_http_transport_reqwest::ReqwestTransport::new(client);
    operator.with_context(
        opendal::OperationContext::new()
            .with_http_transport(opendal::HttpTransporter::new(transport)),
    )
}

impl PositionalSource for OpendalSource {
    /// The bytes `[offset, offset + len)`, cut at the file's length, in one ranged read; no
    /// request at or past the end. On an FTP operator, a read failing as `Unexpected` is tried up to 4 times
    /// in all: OpenDAL's FTP service can hand a read a connection with an earlier transfer's
    /// reply still unread (an OpenDAL issue; the retry works around it). A service that answers with fewer bytes than asked is an `UnexpectedEof`
    /// error (the file shrank, or the length hint was wrong).
    ///
    /// Errors name the file and the range.
    fn read_at(&self, offset: u64, len: usize) -> impl Future<Output = io::Result<Bytes>> + Send {
        let end = offset.saturating_add(len as u64).min(self.length);
        let start = offset.min(end);
        let operator = self.operator.clone();
        let path = self.path.clone();
        let name = self.name.clone();
        async move {
            if start == end {
                return Ok(Bytes::new());
            }
            let context = || {
                format!("read of {len} bytes at offset {offset} (bytes {start}..{end}) from {name}")
            };
            let mut tries = 1;
            let buffer = loop {
                match operator.read_with(&path).range(start..end).await {
                    Ok(buffer) => break buffer,
                    Err(e) if tries < FTP_TRIES && is_stale_ftp_reply(&operator, &e) => {
                        tries += 1;
                    }
                    Err(e) => return Err(io_error(context(), e)),
                }
            };
            let expected = (end - start) as usize;
            if buffer.len() != expected {
                return Err(short_response(context(), "service", buffer.len(), expected));
            }
            Ok(contiguous(buffer))
        }
    }

    /// OpenDAL's byte stream of the file from `offset` to its end (one `RETR` over FTP, one
    /// `GET` over WebDAV), opened when first polled; `None` if the source does not stream
    /// ([`with_streaming(false)`](OpendalSource::with_streaming)). Errors name the file.
    fn read_stream(&self, offset: u64) -> Option<BoxStream<'static, io::Result<Bytes>>> {
        if !self.streaming {
            return None;
        }
        let start = offset.min(self.length);
        if start == self.length {
            return Some(Box::pin(futures_util::stream::empty())); // no request
        }
        let (operator, path, length) = (self.operator.clone(), self.path.clone(), self.length);
        let context = format!("stream of bytes {start}..{length} from {}", self.name);
        let opened = Arc::clone(&self.streams_opened);
        let open = async move {
            opened.fetch_add(1, Ordering::Relaxed);
            let reader = operator.reader_with(&path).await;
            match reader {
                Ok(reader) => reader.into_bytes_stream(start..length).await,
                Err(e) => Err(e),
            }
            .map_err(|e| io_error(context, e))
        };
        Some(stream_when_polled(open, |e| e))
    }

    /// The name: the URI without its password, or `scheme://name/root/path`.
    fn resource(&self) -> Option<String> {
        Some(self.name.clone())
    }

    /// The length from the `stat` at open, or the hint (no request).
    fn len(&self) -> impl Future<Output = io::Result<u64>> + Send {
        ready(Ok(self.length))
    }

    /// The same length (no request).
    fn known_len(&self) -> Option<u64> {
        Some(self.length)
    }

    /// Drops the buffers kept for reuse (large reads are collected into buffers reused once
    /// their bytes are dropped: at most four per process).
    fn release_buffers(&self) {
        SPARE_BUFFERS.clear();
    }
}

/// `buffer` as one `Bytes`: its only chunk as it is, or its chunks copied into a reused buffer.
fn contiguous(buffer: opendal::Buffer) -> Bytes {
    use bytes::Buf;
    if buffer.chunk().len() == buffer.len() {
        return buffer.to_bytes(); // one chunk: no copy
    }
    let mut bytes = SPARE_BUFFERS.take(buffer.len());
    for chunk in buffer {
        bytes.extend_from_slice(&chunk);
    }
    SPARE_BUFFERS.keep(bytes)
}

/// The buffers ranged reads are collected into, reused once their bytes are dropped: one set
/// per process, so that what they keep idle is bounded however many sources there are (at
/// most four, as many as a default read-ahead has chunks).
static SPARE_BUFFERS: SpareBuffers = SpareBuffers::new();

impl Clone for OpendalSource {
    /// The same file of the same operator, with a stream of its own (none open yet), if this
    /// one streams.
    fn clone(&self) -> Self {
        Self {
            operator: self.operator.clone(),
            path: self.path.clone(),
            name: self.name.clone(),
            length: self.length,
            streaming: self.streaming,
            streams_opened: Arc::clone(&self.streams_opened),
        }
    }
}

impl fmt::Debug for OpendalSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpendalSource")
            .field("name", &self.name)
            .field("length", &self.length)
            .field("streaming", &self.streaming)
            .finish()
    }
}

#[cfg(test)]
mod tests;
