//! A `Cursor` with faults injected around it: the failing streams of the regression tests,
//! written once.

use std::io::{self, Cursor, ErrorKind, SeekFrom};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};

/// The faults of a [`Faulty`] stream. `Default` is a well-behaved `Cursor`.
#[derive(Clone, Debug)]
pub struct FaultyConfig {
    /// Reads that start at or past this position fail with [`read_error`](Self::read_error).
    pub fail_reads_from: Option<u64>,
    /// Only the first read that starts at or past
    /// [`fail_reads_from`](Self::fail_reads_from) fails; the reads after it do not.
    pub fail_once: bool,
    /// The kind and message of the injected read error (by default `Other`, "injected").
    pub read_error: (ErrorKind, &'static str),
    /// `Pending` (woken at once) on every other call of `poll_read` and `poll_complete`,
    /// counted together, starting with the first.
    pub pending_every_other: bool,
    /// Each seek's first `poll_complete` answers `Pending` (woken at once), like a file whose
    /// seeks run on a thread pool.
    pub seeks_pend_once: bool,
    /// A seek past this position is refused in `poll_complete` with `InvalidInput` and the
    /// position left where it was, as an operating system refuses a seek past its largest file.
    pub refuse_seeks_past: Option<u64>,
}

impl Default for FaultyConfig {
    fn default() -> Self {
        FaultyConfig {
            fail_reads_from: None,
            fail_once: false,
            read_error: (ErrorKind::Other, "injected"),
            pending_every_other: false,
            seeks_pend_once: false,
            refuse_seeks_past: None,
        }
    }
}

/// An in-memory stream that behaves as a `Cursor<Vec<u8>>` (seeks take effect at `start_seek`,
/// reads return all they can) but for the faults its [`FaultyConfig`] asks for: reads that
/// fail from a position, `Pending` every other call, seeks that pend once, seeks refused past
/// a position.
///
/// Unlike [`Hostile`](crate::Hostile) it keeps no seek in flight, so the position can be moved
/// behind the input's back through [`get_mut`](Self::get_mut) at any time.
///
/// # Examples
///
/// ```
/// use abi_testkit::{Faulty, FaultyConfig};
/// use std::io::ErrorKind;
/// use tokio::io::AsyncReadExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let cfg = FaultyConfig {
///     fail_reads_from: Some(4),
///     fail_once: true,
///     ..Default::default()
/// };
/// let mut stream = Faulty::new(vec![7u8; 10], cfg);
/// let mut buf = [0u8; 4];
/// stream.read_exact(&mut buf).await.unwrap();
/// assert_eq!(stream.read(&mut buf).await.unwrap_err().kind(), ErrorKind::Other);
/// assert_eq!(stream.read(&mut buf).await.unwrap(), 4);
/// # }
/// ```
#[derive(Debug)]
pub struct Faulty {
    cursor: Cursor<Vec<u8>>,
    cfg: FaultyConfig,
    /// `poll_read` and `poll_complete` calls, for `pending_every_other`.
    calls: u64,
    /// A seek started and not yet answered `Pending`, for `seeks_pend_once`.
    seek_to_pend: bool,
    /// The position before the last `start_seek`, restored when the seek is refused.
    before_seek: u64,
}

impl Faulty {
    /// A stream over `data` at position 0, with the faults of `cfg`.
    pub fn new(data: Vec<u8>, cfg: FaultyConfig) -> Self {
        Faulty {
            cursor: Cursor::new(data),
            cfg,
            calls: 0,
            seek_to_pend: false,
            before_seek: 0,
        }
    }

    /// The cursor; moving it is not seen as a seek.
    pub fn get_mut(&mut self) -> &mut Cursor<Vec<u8>> {
        &mut self.cursor
    }

    /// Whether this call of `poll_read` or `poll_complete` answers `Pending` (waking `cx`).
    fn pends(&mut self, cx: &mut Context<'_>) -> bool {
        if !self.cfg.pending_every_other {
            return false;
        }
        self.calls += 1;
        let pend = self.calls % 2 == 1;
        if pend {
            cx.waker().wake_by_ref();
        }
        pend
    }
}

impl AsyncRead for Faulty {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.pends(cx) {
            return Poll::Pending;
        }
        let cfg = &mut this.cfg;
        if cfg
            .fail_reads_from
            .is_some_and(|at| this.cursor.position() >= at)
        {
            if cfg.fail_once {
                cfg.fail_reads_from = None;
            }
            let (kind, message) = cfg.read_error;
            return Poll::Ready(Err(io::Error::new(kind, message)));
        }
        Pin::new(&mut this.cursor).poll_read(cx, buf)
    }
}

impl AsyncSeek for Faulty {
    fn start_seek(mut self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let this = &mut *self;
        this.seek_to_pend = this.cfg.seeks_pend_once;
        this.before_seek = this.cursor.position();
        Pin::new(&mut this.cursor).start_seek(position)
    }

    fn poll_complete(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let this = &mut *self;
        if this.pends(cx) {
            return Poll::Pending;
        }
        if std::mem::take(&mut this.seek_to_pend) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let target = this.cursor.position();
        if this
            .cfg
            .refuse_seeks_past
            .is_some_and(|limit| target > limit)
        {
            this.cursor.set_position(this.before_seek);
            return Poll::Ready(Err(io::Error::new(
                ErrorKind::InvalidInput,
                format!("seek to {target}: past the largest file"),
            )));
        }
        Pin::new(&mut this.cursor).poll_complete(cx)
    }
}
