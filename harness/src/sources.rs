//! Where a run's bytes come from: the [`Source`]s a plan reads, their forms (a stream,
//! [`BoxSource`]; a positional source, [`BoxPositionalSource`]; the raw form the limit row
//! reads; the reference form verification reads), and the URLs that name one.

use std::fmt;
use std::future::Future;
use std::io::{self, Cursor, SeekFrom};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use abi_testkit::SlowLink;
use async_buffered_input::source::{FileSource, MemorySource, PositionalSource};
use bytes::Bytes;
use tokio::io::AsyncSeekExt;
use url::Url;

use crate::boxed::{stream_of, BoxPositionalSource, BoxSource};
use crate::error::{context, not_a_file};
use crate::remote::Remote;
use crate::units::significant;

/// Where a [`Plan`](crate::Plan) reads from: something that opens a fresh source, at offset 0,
/// for every cell of the run.
///
/// Each cell (one reader at one request size and capacity) gets its own freshly opened source,
/// so no reader profits from another's state, beyond what the operating system caches.
///
/// A source has several forms:
///
/// - its *stream* ([`open`](Self::open), `AsyncRead + AsyncSeek`), what the classic readers
///   read;
/// - its *positional form* ([`open_positional`](Self::open_positional), a
///   [`PositionalSource`]), what the [read-ahead reader](crate::ReaderKind::BufferedReadAhead)
///   reads: files, memory, simulated links and URLs have one; a [`custom`](Self::custom) source
///   has one if [`with_positional`](Self::with_positional) gives it one;
/// - its *raw form*, what the limit row reads: plain `read` calls of 1 MiB on a file (as `dd`
///   makes), copies out of memory, 1 MiB requests to a positional source, or 1 MiB reads of
///   the stream;
/// - its *streaming form*, what the stream row reads: one streaming read of the whole file
///   through the source's own streaming call (tokio's `File` read to its end; object_store's
///   `get` stream; OpenDAL's bytes stream; a custom source's stream read to its end). NFS, a
///   simulated link, a custom source with a positional form and an `O_DIRECT` file have none:
///   their reads are requests, and their limit is the limit row alone;
/// - its *reference form*, what the verification passes compare against when the file does not
///   hold the harness's pattern: the same bytes, read straight, without a simulated link or
///   `O_DIRECT`.
///
/// A source has a short [`name`](Self::name) for the table's source column (`ext4`,
/// `fuse.sshfs`, `http`, `s3`, or one given with [`named`](Self::named)) and a
/// [`label`](Self::label) that says exactly what it reads.
///
/// # Examples
///
/// ```
/// use throughput_harness::Source;
///
/// let local = Source::file("/var/tmp/segment.bin");
/// assert_eq!(local.path().unwrap().to_str(), Some("/var/tmp/segment.bin"));
///
/// let in_memory = Source::memory(vec![0u8; 1024]).named("ram");
/// assert_eq!(in_memory.label(), "memory (1024 bytes)");
/// assert_eq!(in_memory.name(), "ram");
/// ```
#[derive(Clone)]
pub struct Source {
    label: String,
    name: Option<String>,
    kind: Kind,
    // The positional form given by `with_positional`; the other kinds have their own.
    positional: Option<Arc<OpenPositionalFn>>,
    // For a file's own positional form: `FileSource::with_page_cache_reads`.
    page_cache_reads: bool,
    // For a file: open it with `O_DIRECT`.
    direct: bool,
    // Hedging and a request limiter for the positional form (`with_remote`).
    remote: Option<Remote>,
    // For an OpenDAL location: what the OpenDAL readers open.
    #[cfg(feature = "opendal")]
    pub(crate) opendal: Option<Arc<crate::opendal::Location>>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
type OpenFn = dyn Fn() -> BoxFuture<io::Result<BoxSource>> + Send + Sync;
type OpenPositionalFn = dyn Fn() -> BoxFuture<io::Result<BoxPositionalSource>> + Send + Sync;

#[derive(Clone)]
enum Kind {
    File(PathBuf),
    Memory(Bytes),
    SlowLink {
        path: PathBuf,
        latency: Duration,
        bandwidth: u64,
    },
    #[cfg(feature = "object-store")]
    ObjectStore(Arc<str>),
    Custom {
        path: Option<PathBuf>,
        open: Arc<OpenFn>,
    },
}

/// How the stream row reads a source: one streaming read of the whole file through the source's
/// own streaming call, read to its end (see [`Source`]'s streaming form).
pub(crate) enum StreamForm {
    /// A local file (or one on a mount) read with tokio's `File`, `read` after `read` into one
    /// buffer until the end of the file, as `read_to_end` does.
    File(PathBuf),
    /// The source's stream ([`Source::open`]), read the same way: memory, and custom sources
    /// without a positional form.
    Stream,
    /// One `GET` of the whole object (object_store's `get`), its body consumed chunk by chunk.
    #[cfg(feature = "object-store")]
    Object(Arc<str>),
    /// OpenDAL's reader of the whole file as a bytes stream (`reader` then `into_bytes_stream`).
    #[cfg(feature = "opendal")]
    Opendal(Arc<str>),
}

/// How the limit row reads a source straight (see [`Source`]'s raw form).
pub(crate) enum Raw {
    /// A local file: `read` calls on a blocking thread, like `dd`.
    File { path: PathBuf, direct: bool },
    /// Copies out of memory.
    Memory(Bytes),
    /// Requests to the positional form.
    Positional,
    /// Reads of the stream.
    Stream,
}

impl Source {
    /// A local file (or one on a mounted network filesystem), opened with tokio's
    /// [`File`](tokio::fs::File) for each cell; its positional form is a [`FileSource`].
    pub fn file(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        Self::of_kind(path.display().to_string(), Kind::File(path))
    }

    /// Bytes in memory, read through a `std::io::Cursor`: the readers' own cost, with no I/O.
    /// Its positional form is a [`MemorySource`].
    pub fn memory(data: impl Into<Bytes>) -> Self {
        let data = data.into();
        Self::of_kind(format!("memory ({} bytes)", data.len()), Kind::Memory(data))
    }

    /// Any source: `open` is called once per cell (and once more to find the length). The
    /// harness seeks what it returns to where the cell starts before timing it, outside the
    /// counts. `label` names it in reports.
    ///
    /// # Examples
    ///
    /// ```
    /// use throughput_harness::{BoxSource, Source};
    ///
    /// let source = Source::custom("ten sevens", || async {
    ///     Ok(Box::new(std::io::Cursor::new(vec![7u8; 10])) as BoxSource)
    /// });
    /// assert_eq!(source.label(), "ten sevens");
    /// assert_eq!(source.name(), "custom");
    /// assert!(source.path().is_none());
    /// ```
    pub fn custom<F, Fut>(label: impl Into<String>, open: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = io::Result<BoxSource>> + Send + 'static,
    {
        let open: Arc<OpenFn> = Arc::new(move || Box::pin(open()));
        Self::of_kind(label.into(), Kind::Custom { path: None, open })
    }

    /// Like [`custom`](Self::custom), for a source that reads the local file at `path` in its own
    /// way: the plan's write phase writes that file.
    pub fn custom_file<F, Fut>(label: impl Into<String>, path: impl Into<PathBuf>, open: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = io::Result<BoxSource>> + Send + 'static,
    {
        let mut source = Self::custom(label, open);
        if let Kind::Custom { path: p, .. } = &mut source.kind {
            *p = Some(path.into());
        }
        source
    }

    /// Gives the source a positional form (builder style), replacing any it had: `open` is
    /// called once per cell of the [read-ahead reader](crate::ReaderKind::BufferedReadAhead).
    /// It should read the same bytes as the stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::source::MemorySource;
    /// use throughput_harness::{BoxSource, Source};
    ///
    /// let data = vec![7u8; 10];
    /// let stream = data.clone();
    /// let source = Source::custom("ten sevens", move || {
    ///     let data = stream.clone();
    ///     async move { Ok(Box::new(std::io::Cursor::new(data)) as BoxSource) }
    /// })
    /// .with_positional(move || {
    ///     let data = data.clone();
    ///     async move { Ok(MemorySource::new(data)) }
    /// });
    /// assert!(source.has_positional());
    /// ```
    #[must_use = "builder methods return the changed source"]
    pub fn with_positional<F, Fut, P>(mut self, open: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = io::Result<P>> + Send + 'static,
        P: PositionalSource,
    {
        let open: Arc<OpenPositionalFn> = Arc::new(move || {
            let opening = open();
            Box::pin(async move { opening.await.map(BoxPositionalSource::new) })
        });
        self.positional = Some(open);
        self
    }

    /// The short name of the source in the table's source column (builder style): `local`,
    /// `nfs`, `s3`. Without one, the source is named after what it is (see
    /// [`name`](Self::name)).
    #[must_use = "builder methods return the changed source"]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Whether the positional form of a [`file`](Self::file) source (its [`FileSource`]) does
    /// [page cache reads](FileSource#page-cache-reads-linux) (builder style; on by default, as
    /// in `FileSource`). Off, the read-ahead reader reads every chunk on tokio's blocking pool,
    /// as it would a file that is not cached. The label says so. Other sources ignore this.
    ///
    /// # Examples
    ///
    /// ```
    /// use throughput_harness::Source;
    ///
    /// let source = Source::file("/var/tmp/segment.bin").page_cache_reads(false);
    /// assert_eq!(source.label(), "/var/tmp/segment.bin (page cache reads off)");
    /// ```
    #[must_use = "builder methods return the changed source"]
    pub fn page_cache_reads(mut self, on: bool) -> Self {
        self.page_cache_reads = on;
        self.relabel();
        self
    }

    /// Whether a [`file`](Self::file) source is opened with `O_DIRECT` (Linux; builder style,
    /// off by default), so that every read reaches the storage or the server: for NFS, whose
    /// client keeps file data in the page cache and accepts unaligned direct reads. Local file
    /// systems usually refuse unaligned direct reads (`InvalidInput`). The label says
    /// `(O_DIRECT)`. The verification passes still read the file normally. Other sources
    /// ignore this.
    ///
    /// # Examples
    ///
    /// ```
    /// use throughput_harness::Source;
    ///
    /// let source = Source::file("/mnt/nfs/f").direct(true);
    /// assert_eq!(source.label(), "/mnt/nfs/f (O_DIRECT)");
    /// ```
    #[must_use = "builder methods return the changed source"]
    pub fn direct(mut self, on: bool) -> Self {
        self.direct = on;
        self.relabel();
        self
    }

    /// The local file at `path` behind a simulated network link: each request waits `latency`
    /// and all of a cell's requests share `bandwidth` bytes per second (0: no cap).
    ///
    /// Each cell opens the file as a [`FileSource`] behind its own [`SlowLink`], read as a
    /// stream with no window of its own (every stream read is one request on the link), so
    /// every reader sees the same link from an idle start. The positional form is the same: a
    /// fresh `SlowLink` over a `FileSource`, which the read-ahead reader reads with read-ahead
    /// on. The limit row reads 1 MiB requests on a link of its own. The link runs on
    /// `tokio::time`, so the run needs a tokio runtime with the time driver enabled.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use throughput_harness::Source;
    ///
    /// let source = Source::slow_link("/mnt/data.bin", Duration::from_millis(2), 100_000_000);
    /// assert_eq!(source.label(), "/mnt/data.bin over a simulated link (2ms latency, 100 MB/s)");
    /// assert_eq!(source.name(), "link");
    /// ```
    pub fn slow_link(path: impl Into<PathBuf>, latency: Duration, bandwidth: u64) -> Self {
        let path = path.into();
        let cap = if bandwidth == 0 {
            "no bandwidth cap".to_string()
        } else {
            format!("{} MB/s", significant(bandwidth as f64 / 1e6, 3))
        };
        let label = format!(
            "{} over a simulated link ({latency:?} latency, {cap})",
            path.display()
        );
        Self::of_kind(
            label,
            Kind::SlowLink {
                path,
                latency,
                bandwidth,
            },
        )
    }

    /// The source a URL names:
    ///
    /// - `file:///path/to/file` (or `file://localhost/path/to/file`): that local file, as
    ///   [`file`](Self::file) (`%XX` escapes decoded), so a write phase can write it;
    /// - `http://`, `https://` and `s3://` URLs: the object, as
    ///   `Source::object_store`, in builds with the cargo feature `object-store`;
    /// - `ftp://`, `ftps://`, `webdav://` and `webdavs://` URLs: the file, through an OpenDAL
    ///   operator (`OpendalSource`), in builds with the cargo feature `opendal`; a query
    ///   (`?concurrent=4&chunk=4MiB`) tunes the tuned OpenDAL reader;
    /// - `nfs://host[:port]/export/path` URLs: the file on an NFSv3 server (`NfsSource`, its
    ///   options in the query), in builds with the cargo feature `nfs`.
    ///
    /// Nothing is opened yet: a missing file or object is an error of the first open.
    ///
    /// # Errors
    ///
    /// - `InvalidInput`: not a URL, a scheme other than these, or a `file` URL that names
    ///   another host or has a query or a fragment;
    /// - `Unsupported`: an `http`, `https` or `s3` URL in a build without the feature
    ///   `object-store` (an OpenDAL URL without `opendal`, an `nfs` one without `nfs`), with a
    ///   message that names the feature.
    ///
    /// # Examples
    ///
    /// ```
    /// use throughput_harness::Source;
    ///
    /// let local = Source::from_url("file:///var/tmp/segment%201.bin").unwrap();
    /// assert_eq!(local.path().unwrap().to_str(), Some("/var/tmp/segment 1.bin"));
    /// assert!(Source::from_url("gopher://host/file").is_err());
    /// ```
    pub fn from_url(url: &str) -> io::Result<Self> {
        let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidInput, message);
        let parsed = Url::parse(url).map_err(|e| match e {
            url::ParseError::RelativeUrlWithoutBase => invalid(format!(
                "{url:?} is not a URL: expected file://, http://, https:// or s3://"
            )),
            e => invalid(format!("invalid URL {url:?}: {e}")),
        })?;
        match parsed.scheme() {
            "file" => Ok(Self::file(file_url_path(url, &parsed)?)),
            #[cfg(feature = "object-store")]
            "http" | "https" | "s3" => Ok(Self::object_store(url)),
            #[cfg(not(feature = "object-store"))]
            scheme @ ("http" | "https" | "s3") => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "cannot read {url}: {scheme} URLs need the cargo feature `object-store`, \
                     and this build was made without it"
                ),
            )),
            #[cfg(feature = "opendal")]
            "ftp" | "ftps" | "webdav" | "webdavs" => Self::opendal(url),
            #[cfg(not(feature = "opendal"))]
            scheme @ ("ftp" | "ftps" | "webdav" | "webdavs") => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "cannot read {url}: {scheme} URLs need the cargo feature `opendal`, \
                     and this build was made without it"
                ),
            )),
            #[cfg(feature = "nfs")]
            "nfs" => Ok(Self::nfs(url)),
            #[cfg(not(feature = "nfs"))]
            "nfs" => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "cannot read {url}: nfs URLs need the cargo feature `nfs`, and this build \
                     was made without it"
                ),
            )),
            other => Err(invalid(format!(
                "unsupported URL scheme {other:?} in {url:?}: use file://, http://, https:// \
                 or s3:// (the last three with the cargo feature `object-store`), ftp://, \
                 ftps://, webdav://, webdavs:// (with the cargo feature `opendal`), or nfs:// \
                 (with the cargo feature `nfs`)"
            ))),
        }
    }

    /// The object at an `http://`, `https://` or `s3://` URL, read through an
    /// [`ObjectStoreSource`](async_buffered_input::source::ObjectStoreSource). Requires the
    /// cargo feature `object-store`.
    ///
    /// Each cell opens the object with
    /// [`ObjectStoreSource::from_url`](async_buffered_input::source::ObjectStoreSource::from_url)
    /// (a store of its own, so fresh connections, and one `HEAD`); S3 takes its credentials,
    /// region and endpoint from the `AWS_*` variables described there. The stream reads it with
    /// no window of its own (one ranged `GET` per stream read); the positional form is the
    /// `ObjectStoreSource` itself, shared by a cell's tasks. The label is the URL, the name its
    /// scheme; there is no [`path`](Self::path), so a write phase skips it.
    ///
    /// # Examples
    ///
    /// ```
    /// use throughput_harness::Source;
    ///
    /// let source = Source::object_store("http://127.0.0.1:8080/data.bin");
    /// assert_eq!(source.label(), "http://127.0.0.1:8080/data.bin");
    /// assert_eq!(source.name(), "http");
    /// assert!(source.path().is_none() && source.has_positional());
    /// ```
    #[cfg(feature = "object-store")]
    pub fn object_store(url: impl Into<String>) -> Self {
        let url: Arc<str> = Arc::from(url.into());
        Self::of_kind(url.to_string(), Kind::ObjectStore(url))
    }

    /// What the source reads, as reports spell it out: the path of a file (with `(O_DIRECT)` or
    /// `(page cache reads off)` when they apply), a URL, or the label given.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The short name of the source in the table: the one given with [`named`](Self::named), or
    /// else, for a file, its file system's type as `/proc/mounts` gives it (`ext4`, `tmpfs`,
    /// `fuse.sshfs`, `nfs4`; `file` where that is unknown); `link` for a simulated link;
    /// `memory`; the URL's scheme (`http`, `https`, `s3`); `custom`.
    pub fn name(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        match &self.kind {
            Kind::File(path) => file_system_type(path).unwrap_or_else(|| "file".into()),
            Kind::Memory(_) => "memory".into(),
            Kind::SlowLink { .. } => "link".into(),
            #[cfg(feature = "object-store")]
            Kind::ObjectStore(url) => url.split("://").next().unwrap_or("url").to_string(),
            Kind::Custom { .. } => "custom".into(),
        }
    }

    /// The local file behind the source, if there is one: what a write phase writes.
    pub fn path(&self) -> Option<&Path> {
        match &self.kind {
            Kind::File(path) | Kind::SlowLink { path, .. } => Some(path),
            Kind::Memory(_) => None,
            #[cfg(feature = "object-store")]
            Kind::ObjectStore(_) => None,
            Kind::Custom { path, .. } => path.as_deref(),
        }
    }

    /// The source an OpenDAL URL names (`ftp://`, `webdav://`, …; see `opendal.rs`): its stream
    /// reads it with one ranged request per read (an `OpendalSource` without streaming, so that
    /// the unbuffered reader and the limit row make the requests they ask for, as over HTTP), its
    /// positional form is the `OpendalSource` itself (sequential reads from one stream).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a query other than `concurrent=N` and `chunk=SIZE`.
    #[cfg(feature = "opendal")]
    fn opendal(url: &str) -> io::Result<Self> {
        let (location, label) = crate::opendal::parse(url)?;
        let scheme = url.split("://").next().unwrap_or("opendal").to_owned();
        let (stream_uri, positional_uri) = (location.uri.clone(), location.uri.clone());
        let mut source = Source::custom(label, move || {
            let uri = stream_uri.clone();
            async move {
                let source = crate::opendal::open(&uri).await?.with_streaming(false);
                Ok(stream_of(Arc::new(source)))
            }
        })
        .with_positional(move || {
            let uri = positional_uri.clone();
            async move { crate::opendal::open(&uri).await }
        })
        .named(scheme);
        source.opendal = Some(Arc::new(location));
        Ok(source)
    }

    /// The file at an `nfs://` URL, read through an
    /// [`NfsSource`](async_buffered_input::source::NfsSource) that each cell connects anew
    /// (fresh connections). The stream reads it with no window of its own (one read, so a few
    /// READs, per stream read); the positional form is the `NfsSource` itself, shared by a
    /// cell's tasks. The label is the URL, the name `nfs`; there is no [`path`](Self::path).
    #[cfg(feature = "nfs")]
    fn nfs(url: &str) -> Self {
        use async_buffered_input::source::NfsSource;
        let (stream_url, positional_url): (Arc<str>, Arc<str>) = (url.into(), url.into());
        Source::custom(url, move || {
            let url = Arc::clone(&stream_url);
            async move { Ok(stream_of(Arc::new(NfsSource::connect(&url).await?))) }
        })
        .with_positional(move || {
            let url = Arc::clone(&positional_url);
            async move { NfsSource::connect(&url).await }
        })
        .named("nfs")
    }

    /// Whether the source is an OpenDAL location (`ftp://`, `webdav://`, in builds with the
    /// cargo feature `opendal`), which the OpenDAL readers need.
    pub(crate) fn is_opendal(&self) -> bool {
        #[cfg(feature = "opendal")]
        return self.opendal.is_some();
        #[cfg(not(feature = "opendal"))]
        return false;
    }

    /// Whether the source has a positional form, which the
    /// [read-ahead reader](crate::ReaderKind::BufferedReadAhead) needs: every source but a
    /// [`custom`](Self::custom) one without [`with_positional`](Self::with_positional).
    pub fn has_positional(&self) -> bool {
        self.positional.is_some() || !matches!(self.kind, Kind::Custom { .. })
    }

    /// Opens a fresh stream of the source, at offset 0.
    ///
    /// # Errors
    ///
    /// For a file: `NotFound`, `PermissionDenied` and the like from opening it, and
    /// `IsADirectory` for a directory, each with a message naming the path. For an object: the
    /// store's error naming the URL. For a custom source: whatever its `open` returns.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops whatever it had opened.
    pub async fn open(&self) -> io::Result<BoxSource> {
        match &self.kind {
            Kind::File(path) if self.direct => Ok(Box::new(tokio::fs::File::from_std(
                open_direct(path).await?,
            ))),
            Kind::File(path) => Ok(Box::new(open_file(path).await?)),
            Kind::Memory(data) => Ok(Box::new(Cursor::new(data.clone()))),
            Kind::SlowLink { .. } => Ok(stream_of(Arc::new(self.open_link().await?))),
            #[cfg(feature = "object-store")]
            Kind::ObjectStore(url) => Ok(stream_of(Arc::new(open_object(url).await?))),
            Kind::Custom { open, .. } => open().await,
        }
    }

    /// Opens a fresh positional form of the source, for the
    /// [read-ahead reader](crate::ReaderKind::BufferedReadAhead): a [`FileSource`] for a file,
    /// a [`MemorySource`] for memory, a [`SlowLink`] over a `FileSource` for a
    /// [simulated link](Self::slow_link), the `ObjectStoreSource` for an
    /// [object store](Self::from_url), or what [`with_positional`](Self::with_positional) gave.
    ///
    /// # Errors
    ///
    /// `Unsupported` for a custom source without a positional form (the message names it);
    /// otherwise as [`open`](Self::open).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops whatever it had opened.
    pub async fn open_positional(&self) -> io::Result<BoxPositionalSource> {
        let source = self.open_positional_plain().await?;
        Ok(match &self.remote {
            Some(remote) => remote.wrap(source),
            None => source,
        })
    }

    /// Reads the positional form through `remote` (hedged reads, a request limiter): the
    /// read-ahead and cached readers then see a remote store as a service would read it.
    pub(crate) fn with_remote(mut self, remote: Remote) -> Self {
        self.remote = Some(remote);
        self
    }

    /// The hedging and request limiter of the positional form, if any.
    pub(crate) fn remote(&self) -> Option<&Remote> {
        self.remote.as_ref()
    }

    /// Whether this is a URL source (HTTP, S3): `--hedge auto` hedges those, and the
    /// object_store `BufReader` reader reads only those.
    pub(crate) fn is_remote_store(&self) -> bool {
        self.object_store_url().is_some()
    }

    /// The URL of an object-store source (HTTP, S3), `None` for the others.
    pub(crate) fn object_store_url(&self) -> Option<&str> {
        match &self.kind {
            #[cfg(feature = "object-store")]
            Kind::ObjectStore(url) => Some(url),
            _ => None,
        }
    }

    async fn open_positional_plain(&self) -> io::Result<BoxPositionalSource> {
        if let Some(open) = &self.positional {
            return open().await;
        }
        match &self.kind {
            Kind::File(path) if self.direct => Ok(BoxPositionalSource::new(FileSource::from_std(
                open_direct(path).await?,
                path,
            ))),
            Kind::File(path) => Ok(BoxPositionalSource::new(
                open_file_source(path)
                    .await?
                    .with_page_cache_reads(self.page_cache_reads),
            )),
            Kind::Memory(data) => Ok(BoxPositionalSource::new(MemorySource::new(data.clone()))),
            Kind::SlowLink { .. } => Ok(BoxPositionalSource::new(self.open_link().await?)),
            #[cfg(feature = "object-store")]
            Kind::ObjectStore(url) => Ok(BoxPositionalSource::new(open_object(url).await?)),
            Kind::Custom { .. } => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{} has no positional form (Source::with_positional gives it one)",
                    self.label
                ),
            )),
        }
    }

    /// Opens the source's reference form: the same bytes read straight, as the verification
    /// passes compare with them when the file does not hold the harness's pattern. A file (a
    /// simulated link's too, an `O_DIRECT` one too) is opened as a plain [`FileSource`];
    /// memory and objects as their positional form; a custom source as its positional form if
    /// it has one, its stream otherwise.
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open).
    pub(crate) async fn open_reference(&self) -> io::Result<Reference> {
        match &self.kind {
            Kind::File(path) | Kind::SlowLink { path, .. } => Ok(Reference::Positional(
                BoxPositionalSource::new(open_file_source(path).await?),
            )),
            Kind::Custom { .. } if !self.has_positional() => {
                Ok(Reference::Stream(self.open().await?))
            }
            _ => Ok(Reference::Positional(self.open_positional().await?)),
        }
    }

    // ----- crate helpers -----

    /// How the limit row reads the source straight.
    pub(crate) fn raw(&self) -> Raw {
        match &self.kind {
            Kind::File(path) => Raw::File {
                path: path.clone(),
                direct: self.direct,
            },
            Kind::Memory(data) => Raw::Memory(data.clone()),
            Kind::Custom { .. } if !self.has_positional() => Raw::Stream,
            _ => Raw::Positional,
        }
    }

    /// How the stream row reads the source, or why it has no streaming call.
    pub(crate) fn stream_form(&self) -> Result<StreamForm, &'static str> {
        #[cfg(feature = "opendal")]
        if let Some(location) = &self.opendal {
            return Ok(StreamForm::Opendal(location.uri.clone()));
        }
        match &self.kind {
            Kind::File(_) if self.direct => {
                Err("O_DIRECT reads need aligned buffers: the limit row's reads are the stream")
            }
            Kind::File(path) => Ok(StreamForm::File(path.clone())),
            Kind::Memory(_) => Ok(StreamForm::Stream),
            Kind::SlowLink { .. } => Err("a simulated link serves requests, not streams"),
            #[cfg(feature = "object-store")]
            Kind::ObjectStore(url) => Ok(StreamForm::Object(url.clone())),
            Kind::Custom { .. } if !self.has_positional() => Ok(StreamForm::Stream),
            // NFS, and other custom sources read by requests.
            Kind::Custom { .. } => Err("its reads are requests (NFS READs have no streaming call)"),
        }
    }

    /// The source's length: a seek to the end of a freshly opened stream.
    pub(crate) async fn length(&self) -> io::Result<u64> {
        let mut source = self.open().await?;
        source
            .seek(SeekFrom::End(0))
            .await
            .map_err(|e| context(e, format!("cannot find the length of {}", self.label)))
    }

    /// A freshly opened stream at `offset` (the seek is made before counting starts).
    pub(crate) async fn open_at(&self, offset: u64) -> io::Result<BoxSource> {
        let mut source = self.open().await?;
        source
            .seek(SeekFrom::Start(offset))
            .await
            .map_err(|e| context(e, format!("cannot seek {} to {offset}", self.label)))?;
        Ok(source)
    }

    // ----- private helpers -----

    fn of_kind(label: String, kind: Kind) -> Self {
        Self {
            label,
            name: None,
            kind,
            positional: None,
            page_cache_reads: true,
            direct: false,
            remote: None,
            #[cfg(feature = "opendal")]
            opendal: None,
        }
    }

    /// A file's label: its path, and the options that change how it is read.
    fn relabel(&mut self) {
        if let Kind::File(path) = &self.kind {
            let mut label = path.display().to_string();
            if self.direct {
                label.push_str(" (O_DIRECT)");
            }
            if !self.page_cache_reads {
                label.push_str(" (page cache reads off)");
            }
            self.label = label;
        }
    }

    /// A fresh simulated link over the file.
    async fn open_link(&self) -> io::Result<SlowLink<FileSource>> {
        let Kind::SlowLink {
            path,
            latency,
            bandwidth,
        } = &self.kind
        else {
            unreachable!("open_link is only called on a simulated link");
        };
        let source = open_file_source(path).await?;
        Ok(SlowLink::new(source, *latency, *bandwidth))
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            Kind::File(_) => "file",
            Kind::Memory(_) => "memory",
            Kind::SlowLink { .. } => "slow link",
            #[cfg(feature = "object-store")]
            Kind::ObjectStore(_) => "object store",
            Kind::Custom { .. } => "custom",
        };
        f.debug_struct("Source")
            .field("kind", &kind)
            .field("name", &self.name())
            .field("label", &self.label)
            .field("path", &self.path())
            .field("has_positional", &self.has_positional())
            .finish()
    }
}

/// The opened form of the source that verification compares with (see
/// [`Source::open_reference`]).
pub(crate) enum Reference {
    /// Ranges read with `read_at`.
    Positional(BoxPositionalSource),
    /// Ranges read by a seek and `read_exact`.
    Stream(BoxSource),
}

/// Opens `path` as a [`FileSource`], with the errors of [`open_file`].
async fn open_file_source(path: &Path) -> io::Result<FileSource> {
    let file = open_file(path).await?.into_std().await;
    Ok(FileSource::from_std(file, path))
}

/// Opens `path` for reading, with errors that name it; a directory is an error here rather than
/// at the first read.
async fn open_file(path: &Path) -> io::Result<tokio::fs::File> {
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|e| context(e, format!("cannot open {}", path.display())))?;
    let meta = file
        .metadata()
        .await
        .map_err(|e| context(e, format!("cannot stat {}", path.display())))?;
    if meta.is_dir() {
        return Err(not_a_file("read", path));
    }
    Ok(file)
}

/// Opens `path` for reading with `O_DIRECT` (Linux), with errors that name it.
#[cfg(target_os = "linux")]
async fn open_direct(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;

    let file = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&file)
            .map_err(|e| context(e, format!("cannot open {} with O_DIRECT", file.display())))
    })
    .await
    .map_err(io::Error::other)?
}

#[cfg(not(target_os = "linux"))]
async fn open_direct(path: &Path) -> io::Result<std::fs::File> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "cannot open {} with O_DIRECT: it needs Linux",
            path.display()
        ),
    ))
}

/// Opens the object at `url`, with errors that name it.
#[cfg(feature = "object-store")]
pub(crate) async fn open_object(
    url: &str,
) -> io::Result<async_buffered_input::source::ObjectStoreSource> {
    async_buffered_input::source::ObjectStoreSource::from_url(url)
        .await
        .map_err(|e| context(e, format!("cannot open {url}")))
}

/// The type of the file system holding `path` (or, for a file not written yet, its folder), as
/// `/proc/mounts` names it: the mount point that is the longest prefix of the path wins.
fn file_system_type(path: &Path) -> Option<String> {
    let resolved = std::fs::canonicalize(path)
        .or_else(|_| {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            std::fs::canonicalize(parent.unwrap_or(Path::new(".")))
        })
        .ok()?;
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mount_type(&mounts, &resolved)
}

/// The type of the mount of `/proc/mounts` (`text`) that holds the absolute path `path`.
fn mount_type(text: &str, path: &Path) -> Option<String> {
    let mut best: Option<(usize, &str)> = None;
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let (Some(_device), Some(point), Some(kind)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        // Spaces and the like are octal escapes in /proc/mounts (`\040`).
        let point = unescape_octal(point);
        let point = Path::new(&point);
        if path.starts_with(point) {
            let depth = point.components().count();
            if best.is_none_or(|(d, _)| depth >= d) {
                best = Some((depth, kind));
            }
        }
    }
    best.map(|(_, kind)| kind.to_string())
}

/// `a\040b` as `a b`: the escapes of `/proc/mounts`.
fn unescape_octal(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match escape {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The local path of the `file` URL `url` (parsed from `text`): `file:///abs/path` or
/// `file://localhost/abs/path`, with `%XX` escapes decoded.
fn file_url_path(text: &str, url: &Url) -> io::Result<PathBuf> {
    let invalid = |why: String| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid file URL {text:?}: {why}"),
        )
    };
    if let Some(host) = url
        .host_str()
        .filter(|host| !host.is_empty() && *host != "localhost")
    {
        return Err(invalid(format!(
            "it names the host {host:?}; only local files can be read (file:///path or \
             file://localhost/path)"
        )));
    }
    // `to_file_path` would drop them silently: `?` and `#` in a file name must be escaped.
    let stray = match (url.query(), url.fragment()) {
        (Some(_), _) => Some('?'),
        (None, Some(_)) => Some('#'),
        (None, None) => None,
    };
    if let Some(c) = stray {
        return Err(invalid(format!(
            "a query or fragment ({c:?}) has no meaning for a local file; escape it as %{:02X}",
            c as u32
        )));
    }
    url.to_file_path()
        .map_err(|()| invalid("expected file:///path/to/file".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "opendal")]
    #[test]
    fn an_opendal_url_is_a_source_with_a_location() {
        let s =
            Source::from_url("ftp://u:pw@127.0.0.1:2121/d/f.bin?concurrent=8&chunk=1MiB").unwrap();
        let location = s.opendal.as_ref().unwrap();
        assert_eq!(location.tuning.concurrent, 8);
        assert_eq!(&*location.uri, "ftp://u:pw@127.0.0.1:2121/d/f.bin");
        assert_eq!(s.label(), "ftp://u@127.0.0.1:2121/d/f.bin");
        assert_eq!(s.name(), "ftp");
        assert!(s.has_positional() && s.path().is_none());
        assert!(Source::from_url("ftp://h/f?gap=1").is_err());
    }

    #[cfg(feature = "nfs")]
    #[test]
    fn an_nfs_url_is_a_source_named_nfs() {
        let url = "nfs://127.0.0.1:2049/export/f.bin?mountport=2050";
        let s = Source::from_url(url).unwrap();
        assert_eq!((s.label(), s.name().as_str()), (url, "nfs"));
        assert!(s.has_positional() && s.path().is_none());
    }

    #[cfg(not(feature = "nfs"))]
    #[test]
    fn an_nfs_url_names_the_feature_it_needs() {
        let err = Source::from_url("nfs://127.0.0.1/export/f.bin").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::Unsupported);
        assert!(err.to_string().contains("cargo feature `nfs`"), "{err}");
    }

    #[test]
    fn a_boxed_source_keeps_its_name_and_description() {
        let memory = async_buffered_input::source::MemorySource::new(vec![0u8; 10]);
        let boxed = BoxPositionalSource::new(memory.clone());
        assert_eq!(boxed.description(), memory.description());
        assert_eq!(boxed.description(), "memory (10 bytes)");
        assert_eq!(boxed.resource(), None);
    }

    fn path_of(text: &str) -> io::Result<PathBuf> {
        match Source::from_url(text)?.path() {
            Some(path) => Ok(path.to_path_buf()),
            None => panic!("{text}: not a local file"),
        }
    }

    #[test]
    fn file_urls_are_decoded_local_paths() {
        for (url, path) in [
            ("file:///tmp/a.bin", "/tmp/a.bin"),
            ("FILE:///tmp/a.bin", "/tmp/a.bin"),
            ("file://localhost/tmp/a%20b%25.bin", "/tmp/a b%.bin"),
            ("file://LOCALHOST/tmp/a.bin", "/tmp/a.bin"),
            ("file:///caf%C3%A9", "/café"),
        ] {
            assert_eq!(path_of(url).unwrap(), PathBuf::from(path), "{url}");
        }
    }

    #[test]
    fn remote_hosts_queries_and_fragments_are_refused() {
        for (url, needle) in [
            ("file://server/share/f", "names the host \"server\""),
            ("file:///tmp/x?y", "escape it as %3F"),
            ("file:///tmp/x#y", "escape it as %23"),
        ] {
            let err = path_of(url).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{url}");
            assert!(err.to_string().contains(needle), "{url}: {err}");
            assert!(err.to_string().contains(url), "{url}: {err}");
        }
    }

    #[test]
    fn what_is_not_a_url_or_not_a_known_scheme_is_refused() {
        for (text, needle) in [
            ("data.bin", "\"data.bin\" is not a URL"),
            ("/tmp/a:b", "is not a URL"),
            ("1http://x", "is not a URL"),
            ("gopher://host/file", "unsupported URL scheme \"gopher\""),
            ("http://[::1/f", "invalid URL"),
        ] {
            let err = Source::from_url(text).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{text}");
            assert!(err.to_string().contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn the_mount_holding_a_path_names_its_file_system() {
        let mounts = "overlay / overlay rw 0 0\n\
                      proc /proc proc rw 0 0\n\
                      tmpfs /tmp tmpfs rw 0 0\n\
                      root@127.0.0.1:/x /tmp/a\\040b fuse.sshfs rw 0 0\n";
        let of = |p: &str| mount_type(mounts, Path::new(p));
        assert_eq!(of("/home/f").as_deref(), Some("overlay"));
        assert_eq!(of("/tmp/f").as_deref(), Some("tmpfs"));
        assert_eq!(of("/tmp/a b/f").as_deref(), Some("fuse.sshfs"));
        assert_eq!(
            of("/tmp/a bc/f").as_deref(),
            Some("tmpfs"),
            "whole components only"
        );
        assert_eq!(mount_type("", Path::new("/x")), None);
    }

    #[test]
    fn names_default_to_what_the_source_is() {
        assert_eq!(Source::memory(vec![1u8]).name(), "memory");
        assert_eq!(Source::memory(vec![1u8]).named("ram").name(), "ram");
        assert_eq!(Source::slow_link("/x", Duration::ZERO, 0).name(), "link");
        let file = Source::file(std::env::temp_dir().join("abi-no-such-file.bin"));
        assert!(!file.name().is_empty());
        assert_eq!(
            Source::file("/f")
                .direct(true)
                .page_cache_reads(false)
                .label(),
            "/f (O_DIRECT) (page cache reads off)"
        );
    }

    #[tokio::test]
    async fn a_positional_source_as_a_stream_makes_one_request_per_read() {
        use abi_testkit::CountingPositional;
        use tokio::io::AsyncReadExt;

        let data: Vec<u8> = (0..100u8).collect();
        let counted = Arc::new(CountingPositional::new(MemorySource::new(data.clone())));
        let mut stream = stream_of(Arc::clone(&counted));
        let mut buf = [0u8; 30];
        for expected in [&data[..30], &data[30..60], &data[60..90]] {
            assert_eq!(stream.read(&mut buf).await.unwrap(), 30);
            assert_eq!(&buf[..], expected);
        }
        assert_eq!(stream.read(&mut buf[..1]).await.unwrap(), 1);
        assert_eq!(buf[0], 90);
        assert_eq!((counted.requests(), counted.bytes()), (4, 91));
        assert_eq!(stream.seek(SeekFrom::End(-5)).await.unwrap(), 95);
        assert_eq!(stream.read(&mut buf).await.unwrap(), 5);
        assert_eq!(buf[..5], data[95..]);
        assert_eq!(stream.read(&mut buf).await.unwrap(), 0);
        assert_eq!((counted.requests(), counted.jumps()), (5, 1));
        assert_eq!(counted.length_requests(), 1);
    }
}
