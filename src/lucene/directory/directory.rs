use std::collections::HashMap;
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

#[cfg(feature = "cache")]
use crate::cache::{BlockCache, Cached};
use crate::input::fetch::{PositionalFetch, ReadAhead};
use crate::input::AsyncBufferedInput;
use crate::lucene::codec::ID_LENGTH;
use crate::lucene::directory::backend::{Backend, Opened};
use crate::lucene::directory::compound_file::CompoundFile;
use crate::memory_budget::MemoryBudget;
use crate::source::{DynSource, PositionalSource};

/// A wrapper every source of a directory goes through (a limiter, retries, a simulated link).
type SourceLayer = dyn Fn(DynSource) -> DynSource + Send + Sync;

/// One index location whose files open by name: a local folder, a URL prefix on an HTTP
/// server, an `s3://bucket/prefix/` or any `object_store` location, in the manner of Lucene's
/// `Directory`.
///
/// It holds what its inputs share: one store client, the window size, the
/// [`ReadAhead`] default, a [`MemoryBudget`], a `BlockCache` (feature `cache`) and an optional
/// [source layer](Self::with_source_layer). [`open`](Self::open) gives an `AsyncBufferedInput<PositionalFetch<DynSource>>`
/// whatever the backend. Clones share all of it, the lengths learned so far included.
///
/// # Lengths
///
/// A [listing](Self::list) gives every file's length; the directory keeps them (and every
/// length it learns on opening a file), so opening a listed file asks the store no `HEAD` and
/// the input knows its length at once. Files are taken to be written once, as Lucene's are: a
/// file rewritten under the same name after it was listed keeps its old length here.
///
/// # Concurrency
///
/// What reads a whole index ([`verify_commit`](crate::lucene::verify_commit), the `.si` files of
/// [`SegmentInfos::read`](crate::lucene::SegmentInfos::read)) reads up to
/// [`concurrency`](Self::concurrency) files at once (default 8): on a remote store each file
/// costs at least a request's latency, and most of an index's files are small. The results,
/// and the error if any, are those of reading the files one after another. Memory: at most that
/// many inputs at once, each within its window and read-ahead (see `AsyncBufferedInput`'s
/// memory bound). The requests themselves still count against any
/// [`RequestLimiter`](crate::layer::RequestLimiter) given as a [source
/// layer](Self::with_source_layer).
///
/// # Errors
///
/// Every error names the file and the directory; a missing file is
/// [`NotFound`](io::ErrorKind::NotFound).
///
/// # Examples
///
/// ```
/// use async_buffered_input::lucene::Directory;
/// use async_buffered_input::ReadAhead;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// // A path; with the feature `object-store`, also "http://host/index/" or "s3://bucket/index/".
/// let dir = Directory::at("src")?.with_capacity(4096).with_read_ahead(Some(ReadAhead::default()));
/// let names = dir.list().await?;
/// assert!(names.contains(&"lib.rs".to_owned()));
/// let e = dir.open("missing.rs").await.unwrap_err();
/// assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
/// assert!(e.to_string().contains("missing.rs") && e.to_string().contains("src"), "{e}");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Directory {
    backend: Backend,
    // Lengths from listings and opens, by file name.
    lengths: Arc<Mutex<HashMap<String, u64>>>,
    // The window size of the inputs; `None`: `AsyncBufferedInput::DEFAULT_CAPACITY`.
    capacity: Option<usize>,
    read_ahead: Option<ReadAhead>,
    budget: Option<MemoryBudget>,
    #[cfg(feature = "cache")]
    cache: Option<BlockCache>,
    layer: Option<Arc<SourceLayer>>,
    // Files read at once by whole-index reads; at least 1.
    concurrency: usize,
}

impl Directory {
    /// Files read at once by whole-index reads, unless [set](Self::with_concurrency).
    const DEFAULT_CONCURRENCY: usize = 8;

    /// The local folder `path`. No I/O: a folder that does not exist fails at the first
    /// [`list`](Self::list) or [`open`](Self::open).
    pub fn local(path: impl Into<PathBuf>) -> Self {
        Self::with_backend(Backend::Local(path.into()))
    }

    /// The folder `location`: a path, or with the feature `object-store` a URL (`http://` or
    /// `https://` for a folder on an HTTP server, listed over WebDAV; `s3://bucket/prefix/`,
    /// configured from the environment as `ObjectStoreSource::from_url` says). A
    /// URL's store client is built here, once, and shared by every file. No request is made.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a URL that does not parse or whose scheme is not supported (any URL
    /// without the feature `object-store`); the store's error if it cannot be built.
    pub fn at(location: &str) -> io::Result<Self> {
        match location.split_once("://") {
            None => Ok(Self::local(location)),
            Some(("file", path)) => Ok(Self::local(path)),
            #[cfg(feature = "object-store")]
            Some(_) => {
                let base = format!("{}/", location.trim_end_matches('/'));
                let (store, prefix) = crate::source::ObjectStoreSource::store_for_url_impl(&base)?;
                Ok(Self::with_store(store, prefix, base))
            }
            #[cfg(not(feature = "object-store"))]
            Some((scheme, _)) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{location}: URLs ({scheme}://) need the cargo feature object-store"),
            )),
        }
    }

    /// The folder `prefix` in `store` (an empty path: the store's root). `base_url` names the
    /// folder in messages (a file is `{base_url}/{name}`). Every file opened shares `store`.
    #[cfg(feature = "object-store")]
    #[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
    pub fn with_store(
        store: Arc<dyn object_store::ObjectStore>,
        prefix: object_store::path::Path,
        base_url: impl Into<String>,
    ) -> Self {
        let base = base_url.into();
        let base = format!("{}/", base.trim_end_matches('/'));
        Self::with_backend(Backend::Store {
            store,
            prefix,
            base,
        })
    }

    /// Opens the file at `location` (a path or a URL, as [`at`](Self::at) takes them) in one
    /// call: a directory of its folder, then [`open`](Self::open) of its name.
    ///
    /// # Errors
    ///
    /// As [`at`](Self::at) and [`open`](Self::open).
    ///
    /// # Cancel safety
    ///
    /// As [`open`](Self::open).
    pub async fn open_location(
        location: &str,
    ) -> io::Result<AsyncBufferedInput<PositionalFetch<DynSource>>> {
        let (folder, name) = match location.rsplit_once('/') {
            Some(("", name)) => ("/", name),
            Some((folder, name)) => (folder, name),
            None => (".", location),
        };
        Self::at(folder)?.open(name).await
    }

    fn with_backend(backend: Backend) -> Self {
        Self {
            backend,
            lengths: Arc::default(),
            capacity: None,
            read_ahead: Some(ReadAhead::default()),
            budget: None,
            #[cfg(feature = "cache")]
            cache: None,
            layer: None,
            concurrency: Self::DEFAULT_CONCURRENCY,
        }
    }

    /// Sets the window size of the inputs it opens (default
    /// 8 KiB, as [`AsyncBufferedInput::new`](crate::AsyncBufferedInput::new)).
    #[must_use]
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = Some(capacity);
        self
    }

    /// Sets the read-ahead of the inputs it opens (default: [`ReadAhead::default()`]; `None`:
    /// none).
    #[must_use]
    pub fn with_read_ahead(mut self, read_ahead: Option<ReadAhead>) -> Self {
        self.read_ahead = read_ahead;
        self
    }

    /// Makes the inputs it opens share `budget` for their read-ahead.
    #[must_use]
    pub fn with_budget(mut self, budget: MemoryBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Reads every file through `cache`, keyed by the file's path or URL.
    #[cfg(feature = "cache")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cache")))]
    #[must_use]
    pub fn with_cache(mut self, cache: BlockCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Passes every file's source through `layer` when it is opened (after the cache, if
    /// any): retries, a request limiter, a simulated link. Each layer that boxes its source
    /// again costs one more boxed future per fetch.
    #[must_use]
    pub fn with_source_layer(
        mut self,
        layer: impl Fn(DynSource) -> DynSource + Send + Sync + 'static,
    ) -> Self {
        self.layer = Some(Arc::new(layer));
        self
    }

    /// Sets how many files whole-index reads (verifying a commit, reading its `.si` files) read
    /// at once (default 8; 1: one after another). See [Concurrency](Self#concurrency).
    ///
    /// # Panics
    ///
    /// If `files` is 0 (nothing could ever be read).
    #[must_use]
    pub fn with_concurrency(mut self, files: usize) -> Self {
        assert!(
            files > 0,
            "a Directory's concurrency must be at least 1 file"
        );
        self.concurrency = files;
        self
    }

    /// How many files whole-index reads read at once (see
    /// [`with_concurrency`](Self::with_concurrency)).
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// The folder, as messages name it: a path or a URL ending in `/`.
    pub fn location(&self) -> String {
        self.backend.location()
    }

    /// The names of the folder's files (not sub-folders), sorted, as Lucene's `listAll`.
    /// Remembers each one's length, so [`open`](Self::open) and [`length`](Self::length) of a
    /// listed file ask nothing more.
    ///
    /// # Errors
    ///
    /// The backend's error (`NotFound` for a folder that does not exist), naming the folder.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the listing is abandoned and nothing is remembered.
    pub async fn list(&self) -> io::Result<Vec<String>> {
        let listed = self.backend.list().await?;
        let mut names = Vec::with_capacity(listed.len());
        {
            let mut lengths = self.lengths();
            for (name, length) in listed {
                lengths.insert(name.clone(), length);
                names.push(name);
            }
        }
        names.sort_unstable();
        Ok(names)
    }

    /// The length of file `name`: the one learned from a listing or an open if there is one,
    /// otherwise asked of the backend (a `stat`, a `HEAD`) and remembered.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a name that is not a plain file name; the backend's error naming
    /// the file and the folder (`NotFound` for a missing file).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe.
    pub async fn length(&self, name: &str) -> io::Result<u64> {
        self.check_name(name)?;
        if let Some(&length) = self.lengths().get(name) {
            return Ok(length);
        }
        let length = self.backend.length(name).await?;
        self.lengths().insert(name.to_owned(), length);
        Ok(length)
    }

    /// Opens file `name` as an input with the directory's window size, read-ahead, budget,
    /// cache and layer. The input knows its length at once: no `HEAD` for a file whose length
    /// the directory knows, one otherwise (local files: one `stat` on opening).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a name that is not a plain file name (empty, `.`, `..`, or with a
    /// `/` or `\`); the backend's error naming the file and the folder (`NotFound` for a
    /// missing file).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a file opened after the future is dropped is closed.
    pub async fn open(
        &self,
        name: &str,
    ) -> io::Result<AsyncBufferedInput<PositionalFetch<DynSource>>> {
        self.check_name(name)?;
        let known = self.lengths().get(name).copied();
        let (source, length) = match self.backend.open(name, known).await? {
            Opened::Local(source, length) => (self.erase(source), length),
            #[cfg(feature = "object-store")]
            Opened::Store(source) => {
                let length = source.length();
                (self.erase(source), length)
            }
            Opened::Sub(input) => return Ok(*input),
        };
        self.lengths().insert(name.to_owned(), length);
        let mut fetch = PositionalFetch::new(source);
        fetch.set_read_ahead(self.read_ahead);
        if let Some(budget) = &self.budget {
            fetch = fetch.with_budget(budget.clone());
        }
        fetch.set_length(length);
        Ok(match self.capacity {
            Some(capacity) => AsyncBufferedInput::with_capacity(capacity, fetch),
            None => AsyncBufferedInput::new(fetch),
        })
    }

    /// Segment `segment`'s compound file (`.cfs` with its entries in `.cfe`,
    /// `Lucene50CompoundFormat`) as a directory of its sub-files, in the manner of Lucene's
    /// `CompoundDirectory`: [`list`](Self::list) names them (`_0.fdt`, ...),
    /// [`length`](Self::length) and [`open`](Self::open) take their names, with no I/O. `id` is
    /// the segment's id (a [`SegmentCommitInfo`](crate::lucene::SegmentCommitInfo)'s), which
    /// both files' headers must carry.
    ///
    /// Reading it verifies the `.cfe` whole (its CRC32 footer), checks the `.cfs`'s header and
    /// that every sub-file lies between it and the `.cfs`'s footer; the `.cfs`'s header is asked
    /// for while the `.cfe` is read. A sub-file opens as a slice of the `.cfs` (with this
    /// directory's window size and read-ahead), named in errors as "slice NAME \[a..b) of
    /// PATH"; each has its own footer
    /// ([`checksum_entire_file`](crate::lucene::codec::checksum_entire_file)), and
    /// [`verify_commit`](crate::lucene::verify_commit) checks them all, and the `.cfs`'s, in one
    /// pass over it. The directory it gives keeps this one's settings, and its sub-files the
    /// window size and read-ahead the `.cfs` was opened with (its `with_*` builders change
    /// nothing for them).
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open) for the `.cfe` and the `.cfs`; `InvalidData` with an
    /// [`InputError`](crate::InputError) (corruption) naming the file for a wrong header, id or
    /// `.cfe` checksum, a sub-file outside the `.cfs`, or a `.cfs` shorter than a footer. The
    /// directory it gives answers `NotFound`, naming the sub-file and the `.cfs`, for a name it
    /// does not hold.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is kept.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::lucene::{Directory, SegmentInfos};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let dir = Directory::local(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/lucene-index/index"));
    /// let commit = SegmentInfos::read_latest_commit(&dir).await?;
    /// let segment = commit.segments.iter().find(|s| s.compound).expect("a compound segment");
    /// let cfs = dir.open_compound(&segment.name, &segment.id).await?;
    /// let fields = format!("{}.fnm", segment.name);
    /// assert!(cfs.list().await?.contains(&fields));
    /// let mut fnm = cfs.open(&fields).await?;
    /// assert_eq!(fnm.read_u32().await?, 0x3fd7_6c17); // its own codec header
    /// # Ok(())
    /// # }
    /// ```
    pub async fn open_compound(&self, segment: &str, id: &[u8; ID_LENGTH]) -> io::Result<Self> {
        let cfs = self.compound_file(segment, id).await?;
        Ok(Self {
            backend: Backend::Compound(Arc::new(cfs)),
            lengths: Arc::default(),
            ..self.clone()
        })
    }

    /// Segment `segment`'s compound file, read (see [`open_compound`](Self::open_compound)).
    pub(crate) async fn compound_file(
        &self,
        segment: &str,
        id: &[u8; ID_LENGTH],
    ) -> io::Result<CompoundFile> {
        let cfe = self.open(&format!("{segment}.cfe")).await?;
        let cfs = self.open(&format!("{segment}.cfs")).await?;
        CompoundFile::read(cfe, cfs, segment, id).await
    }

    /// The known lengths, whatever a panicking holder left (a map of numbers stays valid).
    fn lengths(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        self.lengths.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `source` behind the cache and the layer, as one `DynSource`.
    fn erase<S: PositionalSource>(&self, source: S) -> DynSource {
        #[cfg(feature = "cache")]
        let source = match &self.cache {
            Some(cache) => DynSource::new(Cached::new(source, cache.clone())),
            None => DynSource::new(source),
        };
        #[cfg(not(feature = "cache"))]
        let source = DynSource::new(source);
        match &self.layer {
            Some(layer) => layer(source),
            None => source,
        }
    }

    /// `InvalidInput` unless `name` is a plain file name of this folder.
    fn check_name(&self, name: &str) -> io::Result<()> {
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\']) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{name:?} in {}: not a file name (empty, `.`, `..`, or with a `/` or `\\`)",
                    self.location()
                ),
            ));
        }
        Ok(())
    }
}

impl fmt::Debug for Directory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Directory")
            .field("location", &self.backend)
            .field("known_lengths", &self.lengths().len())
            .field("capacity", &self.capacity)
            .field("read_ahead", &self.read_ahead)
            .field("budget", &self.budget)
            .field("layer", &self.layer.is_some())
            .field("concurrency", &self.concurrency)
            .finish_non_exhaustive()
    }
}
