use std::fmt;
use std::fs::File;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};

use crate::error::source_error::SourceError;
use crate::source::PositionalSource;

/// A [`PositionalSource`] over a local file: each request is one positional read
/// (`pread`, `FileExt::read_at` on Unix; `seek_read` on Windows) on tokio's blocking pool.
///
/// Requests do not share a cursor, so any number can run at once, and clones of the source (it
/// is cheap to clone: the file is shared) read independently. A request costs one round trip to
/// the blocking pool (some 10–20 µs) on top of the read itself, which is why small requests
/// belong behind an [`AsyncBufferedInput`](crate::AsyncBufferedInput) and sequential ones behind
/// [`ReadAhead`](crate::ReadAhead).
///
/// # Page cache reads (Linux)
///
/// On Linux, [`try_read_at`](PositionalSource::try_read_at) reads on the calling thread with
/// `preadv2(RWF_NOWAIT)`, which copies what is in the page cache and returns at once instead of
/// waiting for the disk or the network. [`PositionalFetch`](crate::PositionalFetch) tries it
/// before anything else, straight into its caller's buffer, so a cached file is read like a
/// synchronous `read` would read it: one copy, no blocking-pool round trip. Bytes that are not
/// cached go the blocking pool's way as above (and the kernel's own read-ahead still starts).
/// File systems that do not support `RWF_NOWAIT` (tmpfs, FUSE mounts such as SSHFS; kernels
/// before 4.14) say so on the first try, and the source stops trying. Turn it off with
/// [`with_page_cache_reads(false)`](Self::with_page_cache_reads) to send every read to the
/// blocking pool; on other systems it is always off.
///
/// A cached read still runs on the async thread: a 1 MiB read is some 30–60 µs of copying, the
/// same as a synchronous `read` would cost.
///
/// The file's length is asked at every [`len`](PositionalSource::len) (readers cache it);
/// a file that changes while it is read gives whatever the OS gives.
///
/// The source keeps handles on the buffers of its last 8 answers (of at most 4 MiB each) and
/// reuses a buffer once its caller has dropped it, which saves zeroing and faulting in fresh
/// memory for every chunk of a sequential read. So up to 8 answers' worth of memory can stay
/// allocated while the source lives.
///
/// # Examples
///
/// ```
/// use async_buffered_input::source::{FileSource, PositionalSource};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// # let path = std::env::temp_dir().join(format!("abi-doc-file-source-{}", std::process::id()));
/// std::fs::write(&path, b"0123456789")?;
/// let source = FileSource::open(&path).await?;
/// assert_eq!(&source.read_at(3, 4).await?[..], b"3456");
/// assert_eq!(source.len().await?, 10);
/// # std::fs::remove_file(&path)?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct FileSource {
    file: Arc<File>,
    path: Arc<Path>,
    // Buffers of recent answers, reused once their callers have dropped them (so a read does
    // not pay for zeroing and faulting in a fresh allocation). At most `POOL_BUFFERS` of at
    // most `POOL_MAX_BYTES` each.
    pool: Arc<Mutex<Vec<Bytes>>>,
    // Whether `try_read_at` tries page cache reads (this handle's choice) ...
    page_cache_reads: bool,
    // ... and whether the file system refused them (shared: same file, same file system).
    nowait_unsupported: Arc<AtomicBool>,
}

const POOL_BUFFERS: usize = 8;
const POOL_MAX_BYTES: usize = 4 << 20;

impl FileSource {
    /// Opens the file at `path` for reading (on the blocking pool).
    ///
    /// # Errors
    ///
    /// The OS error of the open, with the path in the message.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops the file once the open finishes.
    pub async fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path: PathBuf = path.as_ref().to_path_buf();
        let opened = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || File::open(path)).await
        };
        match opened {
            Ok(Ok(file)) => Ok(Self::from_std(file, path)),
            Ok(Err(e)) => Err(SourceError::wrap(format!("open {}", path.display()), e)),
            Err(join) => Err(io::Error::other(format!(
                "open {}: the blocking task failed: {join}",
                path.display()
            ))),
        }
    }

    /// A source over a file already open for reading; `path` is only used in error messages.
    ///
    /// A file opened with `O_DIRECT` gets [page cache reads](Self#page-cache-reads-linux) off:
    /// its reads never come from the page cache, and `RWF_NOWAIT` does not keep a direct read
    /// from waiting for the device.
    pub fn from_std(file: File, path: impl Into<PathBuf>) -> Self {
        let page_cache_reads = cfg!(target_os = "linux") && !is_direct(&file);
        Self {
            file: Arc::new(file),
            path: Arc::from(path.into()),
            pool: Arc::default(),
            page_cache_reads,
            nowait_unsupported: Arc::default(),
        }
    }

    /// Turns [page cache reads](Self#page-cache-reads-linux) on or off (builder style). They
    /// are on by default on Linux; elsewhere this does nothing.
    #[must_use]
    pub fn with_page_cache_reads(mut self, on: bool) -> Self {
        self.page_cache_reads = on && cfg!(target_os = "linux");
        self
    }

    /// Whether [`try_read_at`](PositionalSource::try_read_at) tries page cache reads: on (the
    /// default on Linux) and not refused by the file system so far.
    pub fn page_cache_reads(&self) -> bool {
        self.page_cache_reads && !self.nowait_unsupported.load(Relaxed)
    }

    /// The path given when the source was made.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads up to `len` bytes at `offset`, continuing short reads until `len` bytes or the end.
/// Never allocates more than the file holds from `offset`.
fn read_fully_at(
    file: &File,
    pool: &Mutex<Vec<Bytes>>,
    offset: u64,
    len: usize,
) -> io::Result<Bytes> {
    let size = file.metadata()?.len();
    let want = size.saturating_sub(offset).min(len as u64) as usize;
    let mut buf = take_buffer(pool, want);
    let mut done = 0;
    while done < want {
        match pread(file, &mut buf[done..], offset + done as u64) {
            Ok(0) => break, // the file shrank
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(done);
    let bytes = buf.freeze();
    give_back(pool, &bytes);
    Ok(bytes)
}

/// A buffer of `len` initialized bytes: a pooled one nobody else holds any more, or a new one.
fn take_buffer(pool: &Mutex<Vec<Bytes>>, len: usize) -> BytesMut {
    let mut pool = pool.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = pool.iter().position(|b| b.len() >= len && b.is_unique()) {
        if let Ok(mut buf) = pool.swap_remove(i).try_into_mut() {
            buf.truncate(len);
            return buf;
        }
    }
    BytesMut::zeroed(len)
}

/// Keeps a handle on `bytes` to reuse its buffer once the caller drops it.
fn give_back(pool: &Mutex<Vec<Bytes>>, bytes: &Bytes) {
    if bytes.is_empty() || bytes.len() > POOL_MAX_BYTES {
        return;
    }
    let mut pool = pool.lock().unwrap_or_else(|e| e.into_inner());
    if pool.len() < POOL_BUFFERS {
        pool.push(bytes.clone());
    } else if let Some(i) = pool.iter().position(|b| b.is_unique()) {
        pool[i] = bytes.clone();
    }
}

/// Whether `file` was opened with `O_DIRECT` (false where that cannot be told).
#[cfg(target_os = "linux")]
fn is_direct(file: &File) -> bool {
    rustix::fs::fcntl_getfl(file).is_ok_and(|flags| flags.contains(rustix::fs::OFlags::DIRECT))
}

#[cfg(not(target_os = "linux"))]
fn is_direct(_file: &File) -> bool {
    false
}

/// What a page cache read gave.
#[cfg(target_os = "linux")]
enum Nowait {
    /// This many bytes (0: at or past the end).
    Read(usize),
    /// Nothing cached at `offset` (or a failure that a blocking read will report).
    NotNow,
    /// The file system or kernel does not do `RWF_NOWAIT` reads.
    Unsupported,
}

/// One `preadv2(RWF_NOWAIT)`: copies what the page cache holds at `offset`, never waits for I/O.
#[cfg(target_os = "linux")]
fn pread_nowait(file: &File, buf: &mut [u8], offset: u64) -> Nowait {
    use rustix::io::{Errno, ReadWriteFlags};
    // `u64::MAX` would mean "at the file's cursor" to `preadv2`, and a range ending past
    // `i64::MAX` is EINVAL: leave those to the blocking read, which answers them.
    let Some(room) = (i64::MAX as u64).checked_sub(offset) else {
        return Nowait::NotNow;
    };
    let len = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
    if len == 0 {
        return Nowait::NotNow;
    }
    loop {
        let mut iov = [std::io::IoSliceMut::new(&mut buf[..len])];
        return match rustix::io::preadv2(file, &mut iov, offset, ReadWriteFlags::NOWAIT) {
            Ok(n) => Nowait::Read(n),
            Err(Errno::INTR) => continue,
            // What kernels and file systems without `RWF_NOWAIT` reads say (tmpfs, FUSE,
            // Linux < 4.14: EOPNOTSUPP; Linux < 4.6: ENOSYS). Anything else (EINVAL for an
            // `O_DIRECT` file's alignment, EIO, ...) is about this read only.
            Err(Errno::OPNOTSUPP | Errno::NOSYS) => Nowait::Unsupported,
            Err(_) => Nowait::NotNow,
        };
    }
}

#[cfg(unix)]
fn pread(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn pread(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

impl PositionalSource for FileSource {
    /// One positional read on the blocking pool (continued if the OS reads short).
    ///
    /// Errors keep the OS error's kind and name the path, offset and length.
    fn read_at(&self, offset: u64, len: usize) -> impl Future<Output = io::Result<Bytes>> + Send {
        let file = Arc::clone(&self.file);
        let path = Arc::clone(&self.path);
        let pool = Arc::clone(&self.pool);
        async move {
            let read =
                tokio::task::spawn_blocking(move || read_fully_at(&file, &pool, offset, len)).await;
            let context = || {
                format!(
                    "read of {len} bytes at offset {offset} from {}",
                    path.display()
                )
            };
            match read {
                Ok(Ok(bytes)) => Ok(bytes),
                Ok(Err(e)) => Err(SourceError::wrap(context(), e)),
                Err(join) => Err(io::Error::other(format!(
                    "{}: the blocking task failed: {join}",
                    context()
                ))),
            }
        }
    }

    /// A [page cache read](FileSource#page-cache-reads-linux) into `buf`, if they are on and
    /// supported; 0 otherwise, when nothing at `offset` is cached, and at the end.
    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        if !self.page_cache_reads() || buf.is_empty() {
            return 0;
        }
        #[cfg(not(target_os = "linux"))]
        let _ = offset; // `page_cache_reads()` is always false there
        #[cfg(target_os = "linux")]
        match pread_nowait(&self.file, buf, offset) {
            Nowait::Read(n) => return n,
            Nowait::NotNow => {}
            Nowait::Unsupported => {
                tracing::debug!(path = %self.path.display(), "page cache reads unsupported");
                self.nowait_unsupported.store(true, Relaxed);
            }
        }
        0
    }

    /// The path.
    fn resource(&self) -> Option<String> {
        Some(self.path.display().to_string())
    }

    /// Drops the buffers kept from recent answers.
    fn release_buffers(&self) {
        self.pool.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The file's current length (one `fstat` on the blocking pool).
    fn len(&self) -> impl Future<Output = io::Result<u64>> + Send {
        let file = Arc::clone(&self.file);
        let path = Arc::clone(&self.path);
        async move {
            match tokio::task::spawn_blocking(move || file.metadata().map(|m| m.len())).await {
                Ok(Ok(len)) => Ok(len),
                Ok(Err(e)) => Err(SourceError::wrap(
                    format!("length of {}", path.display()),
                    e,
                )),
                Err(join) => Err(io::Error::other(format!(
                    "length of {}: the blocking task failed: {join}",
                    path.display()
                ))),
            }
        }
    }
}

impl fmt::Debug for FileSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileSource")
            .field("path", &self.path)
            .field("page_cache_reads", &self.page_cache_reads())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn missing_file_names_the_path() {
        let err = FileSource::open("/nonexistent/abi-missing")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(
            err.to_string().contains("/nonexistent/abi-missing"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn huge_requests_are_cut_to_the_file() {
        let path = std::env::temp_dir().join(format!("abi-file-source-{}", std::process::id()));
        std::fs::write(&path, [9u8; 10]).unwrap();
        let source = FileSource::open(&path).await.unwrap();
        assert_eq!(source.read_at(4, usize::MAX).await.unwrap().len(), 6);
        assert!(source.read_at(u64::MAX, 10).await.unwrap().is_empty());
        std::fs::remove_file(&path).unwrap();
    }
}
