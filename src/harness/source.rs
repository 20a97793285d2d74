use std::fmt;
use std::future::Future;
use std::io::{self, Cursor};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;

use super::box_positional_source::BoxPositionalSource;
use super::box_source::BoxSource;
use super::file_url::{file_url_path, scheme};
use super::format::significant;
use crate::source::{FileSource, MemorySource, PositionalReader, PositionalSource, SlowLink};

/// Where a [`Plan`](super::Plan) reads from: something that opens a fresh source, at offset 0,
/// for every cell of the run.
///
/// Each cell (one reader at one request size and capacity) gets its own freshly opened source,
/// so no reader profits from another's state, beyond what the operating system caches.
///
/// A source has two forms. Its *stream* ([`open`](Self::open), `AsyncRead + AsyncSeek`) is what
/// the classic readers read. Its *positional form* ([`open_positional`](Self::open_positional),
/// a [`PositionalSource`]) is what the
/// [read-ahead reader](super::ReaderKind::BufferedReadAhead) reads: files, memory, simulated
/// links and URLs have both; a [`custom`](Self::custom) source has one if
/// [`with_positional`](Self::with_positional) gives it one.
///
/// # Examples
///
/// ```
/// use async_buffered_input::harness::Source;
///
/// let local = Source::file("/var/tmp/segment.bin");
/// assert_eq!(local.path().unwrap().to_str(), Some("/var/tmp/segment.bin"));
///
/// let in_memory = Source::memory(vec![0u8; 1024]);
/// assert_eq!(in_memory.label(), "memory (1024 bytes)");
/// ```
#[derive(Clone)]
pub struct Source {
    label: String,
    kind: Kind,
    // The positional form given by `with_positional`; files and memory have their own.
    positional: Option<Arc<OpenPositionalFn>>,
    // For a file's own positional form: `FileSource::with_page_cache_reads`.
    page_cache_reads: bool,
}

type OpenFn = dyn Fn() -> BoxFuture<'static, io::Result<BoxSource>> + Send + Sync;
type OpenPositionalFn =
    dyn Fn() -> BoxFuture<'static, io::Result<BoxPositionalSource>> + Send + Sync;

#[derive(Clone)]
enum Kind {
    File(PathBuf),
    Memory(Bytes),
    Custom {
        path: Option<PathBuf>,
        open: Arc<OpenFn>,
    },
}

impl Source {
    /// A local file (or one on a mounted network filesystem), opened with tokio's
    /// [`File`](tokio::fs::File) for each cell; its positional form is a [`FileSource`].
    pub fn file(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        Self {
            label: path.display().to_string(),
            kind: Kind::File(path),
            positional: None,
            page_cache_reads: true,
        }
    }

    /// Bytes in memory, read through a `std::io::Cursor`: the readers' own cost, with no I/O.
    /// Its positional form is a [`MemorySource`].
    pub fn memory(data: impl Into<Bytes>) -> Self {
        let data = data.into();
        Self {
            label: format!("memory ({} bytes)", data.len()),
            kind: Kind::Memory(data),
            positional: None,
            page_cache_reads: true,
        }
    }

    /// Any source: `open` is called once per cell (and once more to find the length). The
    /// harness seeks what it returns to offset 0 before timing it, outside the counts. `label`
    /// names it in reports.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::harness::{BoxSource, Source};
    ///
    /// let source = Source::custom("ten sevens", || async {
    ///     Ok(Box::new(std::io::Cursor::new(vec![7u8; 10])) as BoxSource)
    /// });
    /// assert_eq!(source.label(), "ten sevens");
    /// assert!(source.path().is_none());
    /// ```
    pub fn custom<F, Fut>(label: impl Into<String>, open: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = io::Result<BoxSource>> + Send + 'static,
    {
        let open: Arc<OpenFn> = Arc::new(move || Box::pin(open()));
        Self {
            label: label.into(),
            kind: Kind::Custom { path: None, open },
            positional: None,
            page_cache_reads: true,
        }
    }

    /// Like [`custom`](Self::custom), for a source that reads the local file at `path` in its own
    /// way (through a simulated slow link, say): the plan's write phase writes that file.
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
    /// called once per cell of the [read-ahead reader](super::ReaderKind::BufferedReadAhead).
    /// It should read the same bytes as the stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::harness::{BoxSource, Source};
    /// use async_buffered_input::source::MemorySource;
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

    /// Whether the positional form of a [`file`](Self::file) source (its [`FileSource`]) does
    /// [page cache reads](FileSource#page-cache-reads-linux) (builder style; on by default, as
    /// in `FileSource`). Off, the read-ahead reader reads every chunk on tokio's blocking pool,
    /// as it would a file that is not cached. The label says so. Other sources ignore this.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::harness::Source;
    ///
    /// let source = Source::file("/var/tmp/segment.bin").page_cache_reads(false);
    /// assert_eq!(source.label(), "/var/tmp/segment.bin (page cache reads off)");
    /// ```
    #[must_use = "builder methods return the changed source"]
    pub fn page_cache_reads(mut self, on: bool) -> Self {
        if let Kind::File(path) = &self.kind {
            self.label = if on {
                path.display().to_string()
            } else {
                format!("{} (page cache reads off)", path.display())
            };
        }
        self.page_cache_reads = on;
        self
    }

    /// The local file at `path` behind a simulated network link: each request waits `latency`
    /// and all of a cell's requests share `bandwidth` bytes per second (0: no cap).
    ///
    /// Each cell opens the file as a [`FileSource`] behind its own [`SlowLink`], read through a
    /// [`PositionalReader`] without read-ahead, so every reader sees the same link from an idle
    /// start. The positional form is the same: a fresh `SlowLink` over a `FileSource`, which
    /// the read-ahead reader reads with read-ahead on. The link runs on `tokio::time`, so the
    /// run needs a tokio runtime with the time driver enabled.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::harness::Source;
    /// use std::time::Duration;
    ///
    /// let source = Source::slow_link("/mnt/data.bin", Duration::from_millis(2), 100_000_000);
    /// assert_eq!(source.label(), "/mnt/data.bin over a simulated link (2ms latency, 100 MB/s)");
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
        let link = move |file: PathBuf| async move {
            let source = open_file_source(&file).await?;
            Ok(SlowLink::new(source, latency, bandwidth))
        };
        let file = path.clone();
        Self::custom_file(label, path.clone(), move || {
            let opening = link(file.clone());
            async move { Ok(Box::new(PositionalReader::new(opening.await?)) as BoxSource) }
        })
        .with_positional(move || link(path.clone()))
    }

    /// The source a URL names:
    ///
    /// - `file:///path/to/file` (or `file://localhost/path/to/file`): that local file, as
    ///   [`file`](Self::file) (`%XX` escapes decoded), so a write phase can write it;
    /// - `http://`, `https://` and `s3://` URLs: the object, as
    ///   `Source::object_store`, in builds with the cargo feature `object-store`.
    ///
    /// Nothing is opened yet: a missing file or object is an error of the first open.
    ///
    /// # Errors
    ///
    /// - `InvalidInput`: no scheme, a scheme other than these, or a `file` URL that names
    ///   another host or has a query or a malformed escape;
    /// - `Unsupported`: an `http`, `https` or `s3` URL in a build without the feature
    ///   `object-store`, with a message that names the feature.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::harness::Source;
    ///
    /// let local = Source::from_url("file:///var/tmp/segment%201.bin").unwrap();
    /// assert_eq!(local.path().unwrap().to_str(), Some("/var/tmp/segment 1.bin"));
    /// assert!(Source::from_url("ftp://host/file").is_err());
    /// ```
    pub fn from_url(url: &str) -> io::Result<Self> {
        match scheme(url).as_deref() {
            Some("file") => Ok(Self::file(file_url_path(url)?)),
            #[cfg(feature = "object-store")]
            Some("http" | "https" | "s3") => Ok(Self::object_store(url)),
            #[cfg(not(feature = "object-store"))]
            Some(scheme @ ("http" | "https" | "s3")) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "cannot read {url}: {scheme} URLs need the cargo feature `object-store`, \
                     and this build was made without it"
                ),
            )),
            Some(other) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "unsupported URL scheme {other:?} in {url:?}: use file://, http://, https:// \
                     or s3:// (the last three with the cargo feature `object-store`)"
                ),
            )),
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{url:?} is not a URL: expected file://, http://, https:// or s3://"),
            )),
        }
    }

    /// The object at an `http://`, `https://` or `s3://` URL, read through an
    /// [`ObjectStoreSource`](crate::source::ObjectStoreSource). Requires the cargo feature
    /// `object-store`.
    ///
    /// Each cell opens the object with
    /// [`ObjectStoreSource::from_url`](crate::source::ObjectStoreSource::from_url) (a store of
    /// its own, so fresh connections, and one `HEAD`); S3 takes its credentials, region and
    /// endpoint from the `AWS_*` variables described there. The stream is a
    /// [`PositionalReader`] without read-ahead over it (one ranged `GET` per source read); the
    /// positional form is the `ObjectStoreSource` itself. The label is the URL; there is no
    /// [`path`](Self::path), so a write phase is refused.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::harness::Source;
    ///
    /// let source = Source::object_store("http://127.0.0.1:8080/data.bin");
    /// assert_eq!(source.label(), "http://127.0.0.1:8080/data.bin");
    /// assert!(source.path().is_none() && source.has_positional());
    /// ```
    #[cfg(feature = "object-store")]
    #[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
    pub fn object_store(url: impl Into<String>) -> Self {
        use crate::source::ObjectStoreSource;

        let url: Arc<str> = Arc::from(url.into());
        let stream_url = Arc::clone(&url);
        let positional_url = Arc::clone(&url);
        Self::custom(url.to_string(), move || {
            let url = Arc::clone(&stream_url);
            async move {
                let source = ObjectStoreSource::from_url(&url).await?;
                Ok(Box::new(PositionalReader::new(source)) as BoxSource)
            }
        })
        .with_positional(move || {
            let url = Arc::clone(&positional_url);
            async move { ObjectStoreSource::from_url(&url).await }
        })
    }

    /// The name reports give the source: the path of a file, or the label given.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The local file behind the source, if there is one: what a write phase writes.
    pub fn path(&self) -> Option<&Path> {
        match &self.kind {
            Kind::File(path) => Some(path),
            Kind::Memory(_) => None,
            Kind::Custom { path, .. } => path.as_deref(),
        }
    }

    /// Whether the source has a positional form, which the
    /// [read-ahead reader](super::ReaderKind::BufferedReadAhead) needs: every source but a
    /// [`custom`](Self::custom) one without [`with_positional`](Self::with_positional).
    pub fn has_positional(&self) -> bool {
        self.positional.is_some() || !matches!(self.kind, Kind::Custom { .. })
    }

    /// Opens a fresh source.
    ///
    /// # Errors
    ///
    /// For a file: `NotFound`, `PermissionDenied` and the like from opening it, and
    /// `IsADirectory` for a directory, each with a message naming the path. For a custom source:
    /// whatever its `open` returns.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops whatever it had opened.
    pub async fn open(&self) -> io::Result<BoxSource> {
        match &self.kind {
            Kind::File(path) => Ok(Box::new(open_file(path).await?)),
            Kind::Memory(data) => Ok(Box::new(Cursor::new(data.clone()))),
            Kind::Custom { open, .. } => open().await,
        }
    }

    /// Opens a fresh positional form of the source, for the
    /// [read-ahead reader](super::ReaderKind::BufferedReadAhead): a [`FileSource`] for a file,
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
        if let Some(open) = &self.positional {
            return open().await;
        }
        match &self.kind {
            Kind::File(path) => Ok(BoxPositionalSource::new(
                open_file_source(path)
                    .await?
                    .with_page_cache_reads(self.page_cache_reads),
            )),
            Kind::Memory(data) => Ok(BoxPositionalSource::new(MemorySource::new(data.clone()))),
            Kind::Custom { .. } => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{} has no positional form (Source::with_positional gives it one)",
                    self.label
                ),
            )),
        }
    }
}

/// Opens `path` as a [`FileSource`], with the errors of [`open_file`].
async fn open_file_source(path: &Path) -> io::Result<FileSource> {
    let file = open_file(path).await?.into_std().await;
    Ok(FileSource::from_std(file, path))
}

/// Opens `path` for reading, with errors that name it; a directory is an error here rather than
/// at the first read.
pub(crate) async fn open_file(path: &Path) -> io::Result<tokio::fs::File> {
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|e| io::Error::new(e.kind(), format!("cannot open {}: {e}", path.display())))?;
    let meta = file
        .metadata()
        .await
        .map_err(|e| io::Error::new(e.kind(), format!("cannot stat {}: {e}", path.display())))?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!(
                "cannot read {}: it is a directory, not a file",
                path.display()
            ),
        ));
    }
    Ok(file)
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            Kind::File(_) => "file",
            Kind::Memory(_) => "memory",
            Kind::Custom { .. } => "custom",
        };
        f.debug_struct("Source")
            .field("kind", &kind)
            .field("label", &self.label)
            .field("path", &self.path())
            .field("has_positional", &self.has_positional())
            .finish()
    }
}
